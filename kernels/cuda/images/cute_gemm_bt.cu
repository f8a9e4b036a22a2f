/* cute_gemm_bt.cu: gemm_bt (C = A * B^T, f32) written with CUTLASS's CuTe
 * tensors, for the CUTLASS/CuTe recipe of docs/images.md.  It is built by
 * nvcc into a cubin outside kgate and run as a precompiled arm (image =):
 *
 *   nvcc -cubin -arch=sm_90a -std=c++17 -O3 --expt-relaxed-constexpr \
 *        -I$CUTLASS_DIR/include kernels/cuda/images/cute_gemm_bt.cu -o build/images/cute_gemm_bt.cubin
 *
 * Plan entry (an f32 case; the image is built for f32 inputs):
 *   image = build/images/cute_gemm_bt.cubin   entry = cute_gemm_bt
 *   grid = ceildiv(N, 16), ceildiv(M, 16)      block = 16, 16
 *   args = A, B, C, M, N, K
 *
 * CuTe's templates stay inside the kernel; kgate finds the entry by the
 * unmangled name of the extern "C" __global__ function.  One thread per
 * output element, as kernels/cuda/gemm_bt_naive.cu, through CuTe layouts:
 * A (M, K) and B (N, K) row-major, C (M, N) row-major. */
#include <cute/tensor.hpp>

extern "C" __global__ void cute_gemm_bt(const float *__restrict__ A, const float *__restrict__ B,
                                        float *__restrict__ C, int M, int N, int K)
{
    using namespace cute;
    Tensor mA = make_tensor(make_gmem_ptr(A), make_shape(M, K), make_stride(K, Int<1>{}));
    Tensor mB = make_tensor(make_gmem_ptr(B), make_shape(N, K), make_stride(K, Int<1>{}));
    Tensor mC = make_tensor(make_gmem_ptr(C), make_shape(M, N), make_stride(N, Int<1>{}));
    const int n = blockIdx.x * blockDim.x + threadIdx.x;
    const int m = blockIdx.y * blockDim.y + threadIdx.y;
    if (m >= M || n >= N) return;
    Tensor rowA = mA(m, _);   /* a view of row m of A: (K) */
    Tensor rowB = mB(n, _);
    float acc = 0.0f;
    for (int k = 0; k < K; ++k) acc = fmaf(rowA(k), rowB(k), acc);
    mC(m, n) = acc;
}

// empty_graph.cu: the hand-written reference for kgate's timing floor.
//
// Captures one launch of an empty kernel into a CUDA graph on a
// non-blocking stream, replays it with events around each replay, and
// prints the median event-to-event time over many replays.  kgate's CUDA
// backend does the same through the driver API; docs/cuda-backend.md
// compares the two in one run (kgate may add at most 2%).
//   nvcc -O2 -arch=sm_90 -o empty_graph empty_graph.cu
//   ./empty_graph [replays]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>

__global__ void empty_kernel() {}

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
    std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); return 1; } } while (0)

int main(int argc, char **argv)
{
    int n = argc > 1 ? std::atoi(argv[1]) : 2000;
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    cudaGraph_t g;
    cudaGraphExec_t ge;
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    empty_kernel<<<1, 1, 0, s>>>();
    CK(cudaStreamEndCapture(s, &g));
    CK(cudaGraphInstantiate(&ge, g, 0));
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    for (int i = 0; i < 200; i++) CK(cudaGraphLaunch(ge, s));
    CK(cudaStreamSynchronize(s));
    std::vector<float> t(n);
    for (int i = 0; i < n; i++) {
        CK(cudaEventRecord(a, s));
        CK(cudaGraphLaunch(ge, s));
        CK(cudaEventRecord(b, s));
        CK(cudaEventSynchronize(b));
        CK(cudaEventElapsedTime(&t[i], a, b));
    }
    std::sort(t.begin(), t.end());
    std::printf("empty_graph: replays %d median_us %.4f p10_us %.4f p90_us %.4f\n", n, 1e3 * t[n / 2],
                1e3 * t[n / 10], 1e3 * t[n * 9 / 10]);
    return 0;
}

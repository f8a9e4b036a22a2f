/* gemm_bt_blocked.c: a cache-blocked CPU gemm_bt, C = A * B^T, float32
 * accumulation.
 *
 * B is converted once per call to float32 panels of NR columns (k-major,
 * zero-padded), A one block of MC rows at a time to panels of MR rows.
 * K is walked in chunks of KC so that one B panel chunk (KC x NR) stays
 * in L1 while the MR x NR register tile runs over the A block; partial
 * sums go to a float32 scratch tile of MC rows, and only the last pass
 * stores C (through KGATE_STORE).  All scratch is allocated per call and
 * freed before returning: nothing survives from one call to the next.
 * Without memory for the scratch it falls back to the plain loop.
 *
 * Uses GCC/Clang vector extensions (4 x float), which every target of
 * those compilers lowers to its SIMD unit or to scalar code. */
#include <stdlib.h>
#include "kgate/kernel.h"

void kernel(const kg_kargs *a);

#define MR 4
#define NR 8
#define MC 64
#define KC 256

typedef float v4f __attribute__((vector_size(16)));

/* n contiguous elements of p starting at off, converted to float32 */
static void gemm_blk_load_row(const void *p, int dt, int64_t off, int64_t n, float *dst)
{
    if (dt == KG_KDT_F32) {
        memcpy(dst, (const float *)p + off, (size_t)n * sizeof(float));
    } else if (dt == KG_KDT_F16) {
        const uint16_t *s = (const uint16_t *)p + off;
        for (int64_t k = 0; k < n; k++) dst[k] = kg_f16_to_f32(s[k]);
    } else {
        const uint16_t *s = (const uint16_t *)p + off;
        for (int64_t k = 0; k < n; k++) dst[k] = kg_bf16_to_f32(s[k]);
    }
}

/* rows [r0, r0 + nrows) of a row-major [rows, K] input into panels of w
 * rows: dst[(p*K + k)*w + r]; rows past `rows` are zeros. */
static void gemm_blk_pack(const void *src, int dt, int64_t rows, int64_t K, int64_t r0,
                          int64_t nrows, int w, float *dst, float *tmp)
{
    for (int64_t r = 0; r < nrows; r++) {
        int64_t p = r / w, rr = r % w;
        float *panel = dst + p * K * w;
        if (r0 + r < rows) {
            gemm_blk_load_row(src, dt, (r0 + r) * K, K, tmp);
            for (int64_t k = 0; k < K; k++) panel[k * w + rr] = tmp[k];
        } else {
            for (int64_t k = 0; k < K; k++) panel[k * w + rr] = 0.0f;
        }
    }
}

static v4f gemm_blk_ld(const float *p)
{
    v4f v;
    memcpy(&v, p, sizeof v);
    return v;
}

static void gemm_blk_st(float *p, v4f v)
{
    memcpy(p, &v, sizeof v);
}

/* cs[r*ldc + c] += sum_k ap[k*MR + r] * bp[k*NR + c] for the MR x NR tile */
static void gemm_blk_micro(int64_t kc, const float *ap, const float *bp, float *cs, int64_t ldc)
{
    v4f c00 = { 0 }, c01 = { 0 }, c10 = { 0 }, c11 = { 0 };
    v4f c20 = { 0 }, c21 = { 0 }, c30 = { 0 }, c31 = { 0 };
    for (int64_t k = 0; k < kc; k++) {
        v4f b0 = gemm_blk_ld(bp + k * NR), b1 = gemm_blk_ld(bp + k * NR + 4);
        const float *av = ap + k * MR;
        v4f a0 = { av[0], av[0], av[0], av[0] };
        v4f a1 = { av[1], av[1], av[1], av[1] };
        v4f a2 = { av[2], av[2], av[2], av[2] };
        v4f a3 = { av[3], av[3], av[3], av[3] };
        c00 += a0 * b0; c01 += a0 * b1;
        c10 += a1 * b0; c11 += a1 * b1;
        c20 += a2 * b0; c21 += a2 * b1;
        c30 += a3 * b0; c31 += a3 * b1;
    }
    v4f acc[MR][2] = { { c00, c01 }, { c10, c11 }, { c20, c21 }, { c30, c31 } };
    for (int r = 0; r < MR; r++) {
        float *row = cs + r * ldc;
        gemm_blk_st(row, gemm_blk_ld(row) + acc[r][0]);
        gemm_blk_st(row + 4, gemm_blk_ld(row + 4) + acc[r][1]);
    }
}

static void gemm_blk_plain(const kg_kargs *a)
{
    float *C = a->out[0];
    for (int64_t i = 0; i < a->M; i++)
        for (int64_t j = 0; j < a->N; j++) {
            float acc = 0.0f;
            for (int64_t k = 0; k < a->K; k++)
                acc += kg_load(a->in[0], a->dtype, i * a->K + k) *
                       kg_load(a->in[1], a->dtype, j * a->K + k);
            KGATE_STORE(&C[i * a->N + j], acc);
        }
}

void kernel(const kg_kargs *a)
{
    int64_t M = a->M, N = a->N, K = a->K;
    int dt = a->dtype;
    float *C = a->out[0];
    int64_t npan = (N + NR - 1) / NR, npad = npan * NR;
    float *bp = malloc((size_t)(npad * K) * sizeof(float));
    float *ap = malloc((size_t)(MC * K) * sizeof(float));
    float *cs = malloc((size_t)(MC * npad) * sizeof(float));
    float *tmp = malloc((size_t)K * sizeof(float));
    if (bp == NULL || ap == NULL || cs == NULL || tmp == NULL) {
        gemm_blk_plain(a);
        goto done;
    }
    gemm_blk_pack(a->in[1], dt, N, K, 0, npad, NR, bp, tmp);
    for (int64_t ic = 0; ic < M; ic += MC) {
        int64_t mc = M - ic < MC ? M - ic : MC;
        int64_t mpan = (mc + MR - 1) / MR;
        gemm_blk_pack(a->in[0], dt, M, K, ic, mpan * MR, MR, ap, tmp);
        memset(cs, 0, (size_t)(mpan * MR * npad) * sizeof(float));
        for (int64_t pc = 0; pc < K; pc += KC) {
            int64_t kc = K - pc < KC ? K - pc : KC;
            for (int64_t jp = 0; jp < npan; jp++)
                for (int64_t ip = 0; ip < mpan; ip++)
                    gemm_blk_micro(kc, ap + (ip * K + pc) * MR, bp + (jp * K + pc) * NR,
                                   cs + ip * MR * npad + jp * NR, npad);
        }
        for (int64_t i = 0; i < mc; i++)
            for (int64_t j = 0; j < N; j++) KGATE_STORE(&C[(ic + i) * N + j], cs[i * npad + j]);
    }
done:
    free(bp);
    free(ap);
    free(cs);
    free(tmp);
}

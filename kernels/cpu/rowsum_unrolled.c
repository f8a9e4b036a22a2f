/* rowsum_unrolled.c: rowsum with eight independent float32 accumulators
 * per row, so that the additions pipeline (and vectorise) instead of
 * waiting on one dependency chain.  The partial sums are combined
 * pairwise at the end; any summation order stays within the oracle's
 * bound, which holds for every order.  Each dtype gets its own loop so
 * that the dtype test is not inside the hot loop. */
#include "kgate/kernel.h"

void kernel(const kg_kargs *a);

#define LANES 8

static float rowsum_combine(float s[LANES])
{
    for (int w = LANES / 2; w > 0; w /= 2)
        for (int l = 0; l < w; l++) s[l] += s[l + w];
    return s[0];
}

#define ROWSUM_ROW(LOAD)                                              \
    do {                                                              \
        float s[LANES] = { 0 };                                       \
        int64_t j = 0;                                                \
        for (; j + LANES <= N; j += LANES)                            \
            for (int l = 0; l < LANES; l++) s[l] += LOAD(row + j + l); \
        for (; j < N; j++) s[j % LANES] += LOAD(row + j);             \
        acc = rowsum_combine(s);                                      \
    } while (0)

#define LOAD_F32(p) (*(p))
#define LOAD_F16(p) kg_f16_to_f32(*(p))
#define LOAD_BF16(p) kg_bf16_to_f32(*(p))

void kernel(const kg_kargs *a)
{
    float *Y = a->out[0];
    int64_t M = a->M, N = a->N;
    for (int64_t i = 0; i < M; i++) {
        float acc;
        if (a->dtype == KG_KDT_F32) {
            const float *row = (const float *)a->in[0] + i * N;
            ROWSUM_ROW(LOAD_F32);
        } else if (a->dtype == KG_KDT_F16) {
            const uint16_t *row = (const uint16_t *)a->in[0] + i * N;
            ROWSUM_ROW(LOAD_F16);
        } else {
            const uint16_t *row = (const uint16_t *)a->in[0] + i * N;
            ROWSUM_ROW(LOAD_BF16);
        }
        KGATE_STORE(&Y[i], acc);
    }
}

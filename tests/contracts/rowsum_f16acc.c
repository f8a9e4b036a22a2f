/* rowsum_f16acc.c: precision cheat: an f32 rowsum that accumulates in
 * float16, as a kernel built on packed half adds does: each input is
 * rounded to f16, 256 lanes each sum every 256th element in f16 (rounded
 * after every addition, to nearest even), and the lanes are combined
 * pairwise in f16.  Under the f32 contract it must be INCORRECT; with
 * `precision = f16acc` it is admitted.  Built with -DWRONG_SHORT_ROWS
 * (tests/contracts/heldout-weak.kg) it adds 1 to the sum of a row of one
 * element, which held-out shapes with N = 1 must still catch. */
#include "kgate/kernel.h"
void kernel(const kg_kargs *a);

#define LANES 256

static uint16_t h_add(uint16_t x, uint16_t y)
{
    return kg_f32_to_f16(kg_f16_to_f32(x) + kg_f16_to_f32(y));
}

void kernel(const kg_kargs *a)
{
    float *Y = a->out[0];
    for (int64_t i = 0; i < a->M; i++) {
        uint16_t lane[LANES];
        for (int l = 0; l < LANES; l++) lane[l] = 0;
        for (int64_t j = 0; j < a->N; j++)
            lane[j % LANES] = h_add(lane[j % LANES], kg_f32_to_f16(kg_load(a->in[0], a->dtype, i * a->N + j)));
        for (int w = LANES / 2; w >= 1; w /= 2)
            for (int l = 0; l < w; l++) lane[l] = h_add(lane[l], lane[l + w]);
#ifdef WRONG_SHORT_ROWS
        if (a->N == 1) lane[0] = h_add(lane[0], kg_f32_to_f16(1.0f));
#endif
        KGATE_STORE(&Y[i], kg_f16_to_f32(lane[0]));
    }
}

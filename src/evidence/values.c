/* values.c: an output's elements against reference and bounds
 * (values.h). */
#include <math.h>
#include <string.h>
#include "evidence/values.h"
#include "kgate/gen.h"

static const uint32_t poison_words[2] = { 0x7fdeffadu, 0xffa57f8bu };

uint32_t kg_poison_word(int pattern)
{
    return poison_words[pattern & 1];
}

double kg_value_at(const void *p, kg_dtype dt, int64_t e, uint64_t *bits)
{
    const unsigned char *b = (const unsigned char *)p + (size_t)e * kg_dtype_size(dt);
    switch (dt) {
    case KG_DT_F32: {
        uint32_t u;
        float f;
        memcpy(&u, b, 4);
        memcpy(&f, b, 4);
        *bits = u;
        return (double)f;
    }
    case KG_DT_F64: {
        double v;
        memcpy(bits, b, 8);
        memcpy(&v, b, 8);
        return v;
    }
    case KG_DT_I32: {
        int32_t i;
        uint32_t u;
        memcpy(&i, b, 4);
        memcpy(&u, b, 4);
        *bits = u;
        return (double)i;
    }
    case KG_DT_I8:
        *bits = b[0];
        return (double)(int8_t)b[0];
    case KG_DT_E4M3:
    case KG_DT_E5M2:
        *bits = b[0];
        return (double)kg_gen_fp8_to_f32(b[0], (int32_t)dt);
    default: {
        uint16_t h;
        memcpy(&h, b, 2);
        *bits = h;
        return (double)(dt == KG_DT_F16 ? kg_gen_f16_to_f32(h) : kg_gen_bf16_to_f32(h));
    }
    }
}

int kg_value_is_poison(uint64_t bits, kg_dtype dt)
{
    size_t w = kg_dtype_size(dt);
    for (int k = 0; k < 2; k++) {
        uint64_t p = poison_words[k];
        if (w == 8) {
            if (bits == (p | p << 32)) return 1;
        } else if (w == 4) {
            if (bits == p) return 1;
        } else if (bits == (p & 0xffffu) || bits == (p >> 16)) {
            return 1;
        }
    }
    return 0;
}

void kg_values_compare(kg_dtype dt, int64_t n, const double *ref, const double *bound, const void *out,
                       kg_values_cmp *r)
{
    memset(r, 0, sizeof *r);
    r->worst = r->worst_bad = r->first_nf = -1;
    double worst_bad_rel = 0.0;
    for (int64_t e = 0; e < n; e++) {
        uint64_t bits;
        double got = kg_value_at(out, dt, e, &bits);
        double want = ref[e];
        if (!isfinite(want)) {
            /* a non-finite reference must be matched exactly */
            int same = isnan(want) ? isnan(got) : got == want;
            if (!same) {
                r->nbad++;
                if (r->worst_bad < 0) {
                    r->worst_bad = e;
                    worst_bad_rel = (double)INFINITY;
                }
            }
            continue;
        }
        if (!isfinite(got)) {
            r->nnan++;
            r->nbad++;
            if (r->first_nf < 0) {
                r->first_nf = e;
                r->first_nf_val = got;
                r->first_nf_poison = kg_value_is_poison(bits, dt);
            }
            continue;
        }
        double abs_err = fabs(got - want);
        /* an exact bound (integer outputs) gives 0 or +Inf, never NaN */
        double rel = bound[e] > 0.0 ? abs_err / bound[e] : abs_err > 0.0 ? (double)INFINITY : 0.0;
        if (abs_err > r->max_abs) r->max_abs = abs_err;
        if (rel > r->max_rel || r->worst < 0) {
            r->max_rel = rel;
            r->worst = e;
        }
        if (abs_err > bound[e]) {
            r->nbad++;
            if (r->worst_bad < 0 || rel > worst_bad_rel) {
                r->worst_bad = e;
                worst_bad_rel = rel;
            }
        }
    }
    r->pass = r->nbad == 0;
}

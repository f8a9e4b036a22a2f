/* mix.c: a test op (tests/cli/plan_dtypes.sh) with six inputs and four
 * outputs, one of every dtype kgate gives a declared op's tensors:
 *
 *     y0 (f64) = 2 a + b      a f64, b i32
 *     y1 (i32) = b + 3 c      c i8
 *     y2 (f32) = d e          d e5m2, e e4m3 (exact in float32)
 *     y3 (f16) = f + e        f f16
 *
 * over N elements in 8 rows of the generator. */
#include <math.h>
#include <stdio.h>
#include "kgate/op.h"

static void mix_sizes(const kg_case *c, int64_t in_elems[], int64_t out_elems[])
{
    for (int i = 0; i < 6; i++) in_elems[i] = kg_op_var_i(c, "N", 0);
    for (int o = 0; o < 4; o++) out_elems[o] = kg_op_var_i(c, "N", 0);
}

static void mix_rows(const kg_case *c, int64_t rows[])
{
    (void)c;
    for (int i = 0; i < 6; i++) rows[i] = 8;
}

static kg_dtype mix_in_dtype(const kg_case *c, int i)
{
    (void)c;
    static const kg_dtype dt[6] = { KG_DT_F64, KG_DT_I32, KG_DT_I8, KG_DT_E5M2, KG_DT_E4M3, KG_DT_F16 };
    return dt[i];
}

static kg_dtype mix_out_dtype(const kg_case *c, int o)
{
    (void)c;
    static const kg_dtype dt[4] = { KG_DT_F64, KG_DT_I32, KG_DT_F32, KG_DT_F16 };
    return dt[o];
}

static int mix_admissible(const kg_case *c, char *why, size_t cap)
{
    if (kg_op_var_i(c, "N", 0) < 8 || kg_op_var_i(c, "N", 0) % 8 != 0 || kg_op_var_i(c, "N", 0) > KG_OPS_MAX_ELEMS) {
        snprintf(why, cap, "N = %lld must be a positive multiple of 8", (long long)kg_op_var_i(c, "N", 0));
        return 1;
    }
    return 0;
}

static int mix_reference(const kg_case *c, const double *const in[], double *const out[], kg_err *err)
{
    (void)err;
    for (int64_t e = 0; e < kg_op_var_i(c, "N", 0); e++) {
        out[0][e] = 2.0 * in[0][e] + in[1][e];
        out[1][e] = in[1][e] + 3.0 * in[2][e];
        out[2][e] = in[3][e] * in[4][e];
        out[3][e] = in[5][e] + in[4][e];
    }
    return KG_OK;
}

static void mix_bound(const kg_case *c, const double *const in[], const double *ref, int o, double *bound)
{
    (void)in;
    for (int64_t e = 0; e < kg_op_var_i(c, "N", 0); e++) {
        double r = fabs(ref[e]);
        switch (o) {
        case 0: bound[e] = 0x1p-52 * r + 1e-300; break;                   /* one float64 rounding */
        case 1: bound[e] = 0.0; break;                                    /* integers: exact */
        case 2: bound[e] = 0x1p-24 * r + 1e-30; break;                    /* exact, or one rounding */
        default: bound[e] = (0x1p-11 + 0x1p-23) * r + 0x1p-25; break;     /* float32, then float16 */
        }
    }
}

static double mix_flops(const kg_case *c)
{
    return 6.0 * (double)kg_op_var_i(c, "N", 0);
}

static double mix_min_bytes(const kg_case *c)
{
    return (8 + 4 + 1 + 1 + 1 + 2 + 8 + 4 + 4 + 2) * (double)kg_op_var_i(c, "N", 0);
}

const kg_op kgate_op = {
    .abi = KG_OP_ABI,
    .name = "mix",
    .summary = "four outputs of every output dtype from six inputs of every input dtype",
    .vars = "N",
    .nin = 6, .nout = 4,
    .in_names = { "a", "b", "c", "d", "e", "f" },
    .out_names = { "y0", "y1", "y2", "y3" },
    .sizes = mix_sizes,
    .out_dtype = mix_out_dtype,
    .admissible = mix_admissible,
    .reference = mix_reference,
    .bound = mix_bound,
    .flops = mix_flops,
    .min_bytes = mix_min_bytes,
    .in_rows = mix_rows,
    .in_dtype = mix_in_dtype,
};

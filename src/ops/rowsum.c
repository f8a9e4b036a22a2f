/* rowsum.c: the rowsum op, Y[i] = sum_j X[i,j].
 *
 * Input X[M,N] (M rows of N), row-major in the case dtype; output Y[M]
 * in float32.  The reference sums in float64 (exact enough: the inputs
 * are float32-representable and the bound adds the reference's own
 * error).
 *
 * This file does not generate inputs or compare outputs (oracle.c). */
#include <math.h>
#include <stdio.h>
#include "ops/ops_internal.h"
#include "ops/shapes.h"

static void rowsum_sizes(const kg_case *c, int64_t in_elems[], int64_t out_elems[])
{
    const int64_t M = kg_op_var_i(c, "M", -1), N = kg_op_var_i(c, "N", -1);
    in_elems[0] = M * N;
    out_elems[0] = M;
}

static void rowsum_rows(const kg_case *c, int64_t rows[])
{
    const int64_t M = kg_op_var_i(c, "M", -1);
    rows[0] = M;
}

static kg_dtype rowsum_out_dtype(const kg_case *c, int o)
{
    (void)c; (void)o;
    return KG_DT_F32;
}

static int rowsum_reference(const kg_case *c, const double *const in[], double *const out[],
                            kg_err *err)
{
    const int64_t M = kg_op_var_i(c, "M", -1), N = kg_op_var_i(c, "N", -1);
    (void)err;
    const double *x = in[0];
    for (int64_t i = 0; i < M; i++) {
        double acc = 0.0;
        for (int64_t j = 0; j < N; j++) acc += x[i * N + j];
        out[0][i] = acc;
    }
    return KG_OK;
}


static void rowsum_bound_ct(const kg_case *c, const kg_contract *ct, const double *const in[],
                            const double *ref, int o, double *bound)
{
    const int64_t M = kg_op_var_i(c, "M", -1), N = kg_op_var_i(c, "N", -1);
    (void)o;
    const double *x = in[0];
    /* under the tf32 contract on f32 inputs: the exact error of each conversion */
    const int tf32 = c->dtype == KG_DT_F32 && ct != NULL && ct->precision == KG_PREC_TF32
                     && !(ct->tolerance > 0.0);
    for (int64_t i = 0; i < M; i++) {
        double s = 0.0, q = 0.0, rn = 0.0, rz = 0.0, re = 0.0;
        for (int64_t j = 0; j < N; j++) {
            double v = x[i * N + j];
            s += fabs(v);
            q += v * v;
            if (tf32) {
                rn += kg_ops_tf32(v, KG_TF32_RNA) - v;
                rz += kg_ops_tf32(v, KG_TF32_RZ) - v;
                re += kg_ops_tf32(v, KG_TF32_RNE) - v;
            }
        }
        kg_sum_elem e = { .absdot = s, .l2 = sqrt(q), .ref = ref[i], .rowscale = s, .n = N,
                          .factors = 1, .tf32_in = fmax(fmax(fabs(rn), fabs(rz)), fabs(re)), .tf32_known = tf32 };
        bound[i] = kg_ops_bound_sum(&e, ct, c->dtype, KG_DT_F32);
    }
}

static void rowsum_bound(const kg_case *c, const double *const in[], const double *ref, int o,
                         double *bound)
{
    rowsum_bound_ct(c, NULL, in, ref, o, bound);
}

static double rowsum_flops(const kg_case *c)
{
    const int64_t M = kg_op_var_i(c, "M", -1), N = kg_op_var_i(c, "N", -1);
    return (double)M * (double)N;
}

static double rowsum_min_bytes(const kg_case *c)
{
    const int64_t M = kg_op_var_i(c, "M", -1), N = kg_op_var_i(c, "N", -1);
    return (double)M * (double)N * (c->dtype == KG_DT_F32 ? 4.0 : 2.0)
           + (double)M * 4.0;
}

const kg_op kg_op_rowsum = {
    .abi = KG_OP_ABI,
    .name = "rowsum",
    .summary = "Y[M] (f32) = sum over each row of X[M,N] in the case dtype",
    .vars = "M N",
    .nin = 1, .nout = 1,
    .in_names = { "X" },
    .out_names = { "Y" },
    .shape = kg_ops_rowreduce_shape,
    .sizes = rowsum_sizes,
    .out_dtype = rowsum_out_dtype,
    .admissible = kg_ops_rows_admissible,
    .reference = rowsum_reference,
    .bound = rowsum_bound,
    .flops = rowsum_flops,
    .min_bytes = rowsum_min_bytes,
    .in_rows = rowsum_rows,
    .out_cols = NULL,
    .ws_bytes = NULL,
    .scalars = "M N",
    .bound_ct = rowsum_bound_ct,
};

/* shapes.c: see shapes.h. */
#include <stdio.h>
#include <string.h>
#include "ops/shapes.h"

/* Each name of vars ("M N K") is an integer variable of c, at least 1. */
int kg_ops_check_dims(const kg_case *c, const char *vars, char *why, size_t cap)
{
    for (const char *p = vars; *p != '\0';) {
        while (*p == ' ') p++;
        const char *b = p;
        while (*p != '\0' && *p != ' ') p++;
        char name[KG_VAR_NAME_MAX];
        size_t l = (size_t)(p - b);
        if (l == 0 || l >= sizeof name) continue;
        memcpy(name, b, l);
        name[l] = '\0';
        int64_t v = kg_op_var_i(c, name, -1);
        if (v < 1) {
            snprintf(why, cap, "%s must be >= 1 (got %lld)", name, (long long)v);
            return 1;
        }
    }
    return 0;
}

kg_dtype kg_ops_out_f32(const kg_case *c, int o)
{
    (void)c; (void)o;
    return KG_DT_F32;
}

int kg_ops_rows_admissible(const kg_case *c, char *why, size_t cap)
{
    const int64_t M = kg_op_var_i(c, "M", -1), N = kg_op_var_i(c, "N", -1);
    if (kg_ops_check_dims(c, "M N", why, cap)) return 1;
    if (M > KG_OPS_MAX_ELEMS || N > KG_OPS_MAX_ELEMS || M * N > KG_OPS_MAX_ELEMS) {
        snprintf(why, cap, "M*N must be <= 2^28 (M=%lld N=%lld)", (long long)M,
                 (long long)N);
        return 1;
    }
    return 0;
}

int64_t kg_ops_rows_cols(const kg_case *c, int o)
{
    const int64_t N = kg_op_var_i(c, "N", -1);
    (void)o;
    return N;
}

static int row_input_shape(const kg_case *c, int i, int64_t dims[])
{
    const int64_t M = kg_op_var_i(c, "M", -1), N = kg_op_var_i(c, "N", -1);
    if (i > 0) {
        dims[0] = N;
        return 1;
    }
    dims[0] = M;
    dims[1] = N;
    return 2;
}

int kg_ops_rowwise_shape(const kg_case *c, int out, int i, int64_t dims[])
{
    return row_input_shape(c, out ? 0 : i, dims);
}

int kg_ops_rowreduce_shape(const kg_case *c, int out, int i, int64_t dims[])
{
    if (!out) return row_input_shape(c, i, dims);
    dims[0] = kg_op_var_i(c, "M", -1);
    return 1;
}

/* noop.c: the noop op: no inputs, no outputs, nothing to compute.
 *
 * It exists to measure the timing floor of a backend (e.g. a CUDA graph
 * of one empty kernel, docs/cuda-backend.md).  With no outputs, no
 * admission check can fail it, so a noop case says nothing about
 * correctness: use it for floors only, never as evidence about a kernel.
 *
 * This file does not generate inputs or compare outputs (oracle.c). */
#include "ops/ops_internal.h"

static void noop_sizes(const kg_case *c, int64_t in_elems[], int64_t out_elems[])
{
    (void)c; (void)in_elems; (void)out_elems;
}

static kg_dtype noop_out_dtype(const kg_case *c, int o)
{
    (void)c; (void)o;
    return KG_DT_F32;
}

static int noop_admissible(const kg_case *c, char *why, size_t cap)
{
    (void)c; (void)why; (void)cap;
    return 0;
}

static int noop_reference(const kg_case *c, const double *const in[], double *const out[], kg_err *err)
{
    (void)c; (void)in; (void)out; (void)err;
    return KG_OK;
}

static void noop_bound(const kg_case *c, const double *const in[], const double *ref, int o, double *bound)
{
    (void)c; (void)in; (void)ref; (void)o; (void)bound;
}

static double noop_zero(const kg_case *c)
{
    (void)c;
    return 0.0;
}

const kg_op kg_op_noop = {
    .abi = KG_OP_ABI,
    .name = "noop",
    .summary = "no inputs, no outputs: for measuring a backend's timing floor only",
    .vars = "",
    .nin = 0, .nout = 0,
    .sizes = noop_sizes,
    .out_dtype = noop_out_dtype,
    .admissible = noop_admissible,
    .reference = noop_reference,
    .bound = noop_bound,
    .flops = noop_zero,
    .min_bytes = noop_zero,
    .scalars = "",
};

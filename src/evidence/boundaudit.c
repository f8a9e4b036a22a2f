/* boundaudit.c: the audit of an op's bound (boundaudit.h; the derivation
 * of the mutation's size is in docs/ops.md, "The bound audit").
 *
 * The audit takes no number from the op it audits but the reference and
 * the bound under test: the dtypes' accuracies below are the audit's own
 * table, the reduction length comes from the op's flops, and the scale of
 * an element from the reference around it. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "evidence/boundaudit.h"
#include "evidence/values.h"
#include "kgate/gen.h"
#include "kgate/philox.h"

/* What an honest kernel may lose on an input of dtype dt, relative to its
 * row's scale: the declared accuracy of kgate's bounds (docs/admission.md),
 * whose largest multiple an honest op may claim. */
static double input_accuracy(kg_dtype dt)
{
    switch (dt) {
    case KG_DT_F16: return 2e-3;
    case KG_DT_BF16: return 2e-2;
    case KG_DT_E4M3: return 1.25e-1;
    case KG_DT_E5M2: return 2.5e-1;
    case KG_DT_I32: case KG_DT_I8: return 0.0;
    default: return 1e-4;   /* f32, and f64 (float32 values) */
    }
}

/* The last rounding of a result stored in dtype dt. */
static double output_rounding(kg_dtype dt)
{
    switch (dt) {
    case KG_DT_F16: return ldexp(1.0, -11);
    case KG_DT_BF16: return ldexp(1.0, -8);
    case KG_DT_F64: return ldexp(1.0, -53);
    case KG_DT_I32: case KG_DT_I8: return 0.0;
    default: return ldexp(1.0, -24);
    }
}

void kg_bound_audit_budget(const kg_dtype *in_dt, int nin, kg_dtype out_dt, const kg_contract *ct, double flops,
                           double out_elems, double row_len, kg_audit_budget *b)
{
    double eps = output_rounding(out_dt);
    for (int i = 0; i < nin; i++) eps = fmax(eps, input_accuracy(in_dt[i]));
    double acc = ldexp(1.0, -24);
    if (ct != NULL) {
        if (ct->tolerance > 0.0) eps = fmax(eps, ct->tolerance);
        if (ct->precision == KG_PREC_TF32) eps = fmax(eps, ldexp(1.0, -9));   /* two factors truncated: 2^-10 each */
        if (ct->precision == KG_PREC_F16ACC) acc = ldexp(1.0, -11);
        if (ct->precision == KG_PREC_BF16ACC) acc = ldexp(1.0, -8);
    }
    b->eps_in = eps;
    b->eps_acc = acc;
    double k = out_elems > 0.0 && flops > 0.0 ? flops / (2.0 * out_elems) : 1.0;
    if (!isfinite(k) || k < 1.0) k = 1.0;
    b->k = isfinite(row_len) && row_len > k ? row_len : k;
}

double kg_bound_audit_delta(const kg_audit_budget *b)
{
    double r = KG_AUDIT_C * sqrt(b->k) * (b->eps_in + b->eps_acc * b->k);
    return r < 1.0 ? r : 1.0;
}

/* 64 random bits for draw j of the audit's seed. */
static uint64_t draw(uint64_t seed, uint64_t j, uint32_t what)
{
    const uint32_t key[2] = { (uint32_t)seed, (uint32_t)(seed >> 32) };
    const uint32_t ctr[4] = { (uint32_t)j, (uint32_t)(j >> 32), what, 0x62617564u /* "baud" */ };
    uint32_t out[4];
    kg_philox4x32(ctr, key, out);
    return (uint64_t)out[0] | (uint64_t)out[1] << 32;
}

/* The rows and columns the grid is laid over: rows of cols elements, or
 * one row when the output has no (fitting) columns. */
static void shape(const kg_audit_in *in, int64_t *rows, int64_t *cols)
{
    int64_t c = in->cols;
    if (c <= 0 || c > in->elems || in->elems % c != 0) c = in->elems;
    *cols = c;
    *rows = c > 0 ? in->elems / c : 0;
}

/* Position j of the audit: the grid's blocks first (KG_AUDIT_PER_BLOCK in
 * each, in block order), then KG_AUDIT_RANDOM over the whole output. */
static int64_t position(const kg_audit_in *in, int64_t rows, int64_t cols, int64_t gr, int64_t gc, int64_t j)
{
    uint64_t r = draw(in->seed, (uint64_t)j, 1), c = draw(in->seed, (uint64_t)j, 2);
    int64_t nblock = gr * gc * KG_AUDIT_PER_BLOCK;
    if (j >= nblock) return (int64_t)(r % (uint64_t)in->elems);
    int64_t blk = j / KG_AUDIT_PER_BLOCK, bi = blk / gc, bj = blk % gc;
    int64_t r0 = bi * rows / gr, r1 = (bi + 1) * rows / gr, c0 = bj * cols / gc, c1 = (bj + 1) * cols / gc;
    int64_t row = r0 + (int64_t)(r % (uint64_t)(r1 - r0)), col = c0 + (int64_t)(c % (uint64_t)(c1 - c0));
    return row * cols + col;
}

static double absmax(const double *v, int64_t n)
{
    double m = 0.0;
    for (int64_t e = 0; e < n; e++)
        if (isfinite(v[e]) && fabs(v[e]) > m) m = fabs(v[e]);
    return m;
}

/* The largest |ref| of row `row`, remembered for the rows already seen. */
typedef struct row_cache {
    int n;
    int64_t row[KG_AUDIT_GRID * KG_AUDIT_GRID * KG_AUDIT_PER_BLOCK + KG_AUDIT_RANDOM];
    double max[KG_AUDIT_GRID * KG_AUDIT_GRID * KG_AUDIT_PER_BLOCK + KG_AUDIT_RANDOM];
} row_cache;

/* The element's scale: the largest |ref| of its row (rows of 16 elements
 * or more; else of its aligned block of 64), and never below 1/16 of the
 * output's, so that a zero or nearly cancelled row is mutated by an amount
 * of the output's size. */
static double scale_at(const kg_audit_in *in, int64_t rows, int64_t cols, double s_out, int64_t e, row_cache *rc)
{
    double s;
    if (rows == 1) {
        s = s_out;
    } else if (cols >= 16) {
        int64_t row = e / cols;
        s = -1.0;
        for (int i = 0; i < rc->n && s < 0.0; i++)
            if (rc->row[i] == row) s = rc->max[i];
        if (s < 0.0) {
            s = absmax(in->ref + row * cols, cols);
            if (rc->n < (int)(sizeof rc->row / sizeof rc->row[0])) {
                rc->row[rc->n] = row;
                rc->max[rc->n++] = s;
            }
        }
    } else {
        int64_t b0 = e / 64 * 64, len = in->elems - b0 < 64 ? in->elems - b0 : 64;
        s = absmax(in->ref + b0, len);
    }
    return fmax(s, s_out / 16.0);
}

/* The value v as stored in dtype dt, in buf (8 bytes). */
static void store(double v, kg_dtype dt, unsigned char *buf)
{
    if (dt == KG_DT_F64) {
        memcpy(buf, &v, sizeof v);
    } else if (dt == KG_DT_I32) {
        double r = fmin(fmax(nearbyint(v), -2147483647.0), 2147483647.0);
        int32_t i = (int32_t)r;
        memcpy(buf, &i, sizeof i);
    } else {
        kg_gen_store((int32_t)dt, buf, 0, (float)v);
    }
}

void kg_bound_audit(const kg_audit_in *in, kg_audit_res *res)
{
    memset(res, 0, sizeof *res);
    res->loosest = -1;
    res->rel = kg_bound_audit_delta(&in->budget);
    if (in->elems <= 0 || in->ref == NULL || in->bound == NULL) return;
    double s_out = absmax(in->ref, in->elems);
    if (!(s_out > 0.0)) return;
    int64_t rows, cols;
    shape(in, &rows, &cols);
    int64_t gr = rows < KG_AUDIT_GRID ? rows : KG_AUDIT_GRID;
    int64_t gc_max = rows == 1 ? KG_AUDIT_GRID * KG_AUDIT_GRID : KG_AUDIT_GRID;
    int64_t gc = cols < gc_max ? cols : gc_max;
    int64_t total = gr * gc * KG_AUDIT_PER_BLOCK + KG_AUDIT_RANDOM;
    row_cache *rc = calloc(1, sizeof *rc);
    if (rc == NULL) return;
    for (int64_t j = 0; j < total; j++) {
        int64_t e = position(in, rows, cols, gr, gc, j);
        double ref = in->ref[e];
        if (!isfinite(ref)) continue;
        double delta = res->rel * scale_at(in, rows, cols, s_out, e, rc);
        if (in->dtype == KG_DT_I32 && delta < 1.0) delta = 1.0;   /* the smallest error of an integer */
        double sign = (draw(in->seed, (uint64_t)j, 3) & 1) ? 1.0 : -1.0;
        unsigned char buf[8] = { 0 };
        store(ref + sign * delta, in->dtype, buf);
        uint64_t bits;
        double stored = kg_value_at(buf, in->dtype, 0, &bits);
        kg_values_cmp v;
        kg_values_compare(in->dtype, 1, &in->ref[e], &in->bound[e], buf, &v);
        res->tried++;
        if (v.pass) res->admitted++;
        else res->rejected++;
        double moved = fabs(stored - ref);
        double ratio = moved > 0.0 ? in->bound[e] / moved : (double)INFINITY;
        if (res->loosest < 0 || ratio > res->loosest_ratio) {
            res->loosest = e;
            res->loosest_ratio = ratio;
            res->loosest_delta = moved;
            res->loosest_bound = in->bound[e];
        }
    }
    free(rc);
    res->weak = res->tried > 0 && (double)res->admitted > KG_AUDIT_MAX_ADMITTED * (double)res->tried;
}

void kg_bound_audit_text(const kg_audit_in *in, const kg_audit_res *res, const char *name, char *buf, size_t cap)
{
    if (res->tried == 0) {
        snprintf(buf, cap, "bound audit of %s: no finite nonzero reference value to scale a mutation by; "
                 "nothing tried", name);
        return;
    }
    int64_t rows, cols;
    shape(in, &rows, &cols);
    char at[96];
    if (rows > 1)
        snprintf(at, sizeof at, "element %lld (row %lld, col %lld)", (long long)res->loosest,
                 (long long)(res->loosest / cols), (long long)(res->loosest % cols));
    else
        snprintf(at, sizeof at, "element %lld", (long long)res->loosest);
    const kg_audit_budget *b = &in->budget;
    int n = snprintf(buf, cap, "bound audit of %s: %d mutations of %.3g x the local scale (K %.6g, eps %.3g + "
                     "%.3g per term, C %g): %d rejected, %d admitted (%.2f%%; at most %g%%); loosest at %s: bound "
                     "%.3g for a mutation of %.3g", name, res->tried, res->rel, b->k, b->eps_in, b->eps_acc,
                     KG_AUDIT_C, res->rejected, res->admitted, 100.0 * res->admitted / res->tried,
                     100.0 * KG_AUDIT_MAX_ADMITTED, at, res->loosest_bound, res->loosest_delta);
    if (res->weak && n >= 0 && (size_t)n < cap)
        snprintf(buf + n, cap - (size_t)n, ": the bound admits errors no correct kernel makes, so the op is "
                 "weak-bounded (tighten its bound, or set bound_audit = off)");
}

void kg_bound_audit_record(const kg_audit_in *in, const kg_audit_res *res, const char *name, int off, int ct_weak,
                           int *pass, char *detail, size_t cap)
{
    char text[512];
    kg_bound_audit_text(in, res, name, text, sizeof text);
    *pass = !res->weak || off || ct_weak;
    if (ct_weak)
        snprintf(detail, cap, "not audited: the arm's contract is too weak for this case, and every comparison "
                 "under it fails; for the record, %.380s", text);
    else if (off)
        snprintf(detail, cap, "not audited (bound_audit = off); for the record, %.440s", text);
    else
        snprintf(detail, cap, "%s", text);
}

uint64_t kg_bound_audit_seed(uint64_t check_seed, int o)
{
    return check_seed ^ (0x9e3779b97f4a7c15ull * (uint64_t)(o + 1));   /* 2^64 / golden ratio */
}

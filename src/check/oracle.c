/* oracle.c: inputs, references, bounds and the admission checks on host
 * memory (see kgate/oracle.h).
 *
 * Inputs come from the counter-based generator in kgate/philox.h, are
 * rounded to the case dtype, and the float64 copies the reference reads
 * are decoded from the rounded bits, so the reference sees exactly what
 * the kernel sees.  Outputs are poisoned with NaN patterns before a run,
 * guarded by a canary after their end, and compared element by element
 * against the op's bound, with NaN and Inf failing explicitly.
 *
 * This module does no timing and knows no backend or device memory. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kgate/oracle.h"
#include "kgate/gen.h"
#include "kgate/philox.h"
#include "evidence/values.h"

static size_t dt_size(kg_dtype dt)
{
    return kg_dtype_size(dt);
}

static const char *dt_name(kg_dtype dt)
{
    return kg_dtype_name(dt);
}

_Static_assert(KG_GEN_F64 == KG_DT_F64 && KG_GEN_I32 == KG_DT_I32 && KG_GEN_I8 == KG_DT_I8 &&
               KG_GEN_E4M3 == KG_DT_E4M3 && KG_GEN_E5M2 == KG_DT_E5M2 && KG_GEN_NDTYPES == KG_DT_COUNT,
               "kgate/gen.h's dtypes are kg_dtype's");
static double decode(const void *p, kg_dtype dt, int64_t e, uint64_t *bits)
{
    return kg_value_at(p, dt, e, bits);
}

uint64_t kg_checksum(const void *p, size_t n)
{
    const unsigned char *b = p;
    uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a 64 offset basis */
    for (size_t i = 0; i < n; i++) {
        h ^= b[i];
        h *= 0x100000001b3ull;           /* FNV-1a 64 prime */
    }
    return h;
}

void kg_poison(void *buf, size_t bytes, int pattern)
{
    if (buf == NULL) return;
    unsigned char w[4];
    uint32_t word = kg_poison_word(pattern ? 1 : 0);
    memcpy(w, &word, 4);
    unsigned char *b = buf;
    for (size_t i = 0; i < bytes; i++) b[i] = w[i & 3];
}

size_t kg_guard_bytes(void)
{
    return (size_t)KG_GUARD_ELEMS * 4;
}

/* "KGATEGRD" with the position folded in, so that a shifted copy of the
 * canary (a kernel writing one element late) does not look intact. */
static unsigned char guard_byte(size_t i)
{
    static const char tag[8] = { 'K', 'G', 'A', 'T', 'E', 'G', 'R', 'D' };
    return (unsigned char)((unsigned char)tag[i & 7] ^ (unsigned char)(i >> 3));
}

void kg_guard_fill(void *guard)
{
    if (guard == NULL) return;
    unsigned char *g = guard;
    for (size_t i = 0; i < kg_guard_bytes(); i++) g[i] = guard_byte(i);
}

long kg_guard_verify(const void *guard)
{
    if (guard == NULL) return 0;
    const unsigned char *g = guard;
    for (size_t i = 0; i < kg_guard_bytes(); i++)
        if (g[i] != guard_byte(i)) return (long)i;
    return -1;
}

#define KG_CT_MAX 8  /* distinct reduced contracts kept per case data */

struct kg_ct_bounds {
    int n;
    kg_contract ct[KG_CT_MAX];
    double *bound[KG_CT_MAX][KG_MAX_OUT];
    char weak[KG_CT_MAX][KG_MAX_OUT][256];  /* "" or why the contract is too weak */
};

static void ct_free(struct kg_ct_bounds *cb)
{
    if (cb == NULL) return;
    for (int i = 0; i < cb->n; i++)
        for (int o = 0; o < KG_MAX_OUT; o++) free(cb->bound[i][o]);
    free(cb);
}

void kg_oracle_release(kg_case_data *d)
{
    if (d == NULL) return;
    ct_free(d->ctb);
    for (int i = 0; i < KG_MAX_IN; i++) {
        free(d->in[i]);
        free(d->in64[i]);
    }
    for (int o = 0; o < KG_MAX_OUT; o++) {
        free(d->ref[o]);
        free(d->bound[o]);
    }
    memset(d, 0, sizeof *d);
}

/* ---- structured row classes (docs/admission.md, "Inputs") ----
 *
 * Interior rows (neither the first, all zero, nor the last, at four times
 * the scale) of an input of three rows or more get a class.  The layout
 * is decided by the seed: interior row r (1 <= r <= R = rows - 2) sits at
 * position pos = (a (r - 1) + b) mod R, a bijection (gcd(a, R) = 1), and
 * the rows at positions below `nclass` get class list[(pos + rot) mod C],
 * so that every applicable class appears (when R >= C) at places a kernel
 * cannot learn; the others stay i.i.d.  a, b and rot come from one Philox
 * block of the seed and the stream. */

#define ROW_TAG_LAYOUT 0x726f776cu   /* "rowl": the layout block */
#define ROW_CONST_MAX ((int64_t)1 << 16) /* longest row that gets a (near-)constant class */

static const char *const row_class_names[KG_ROW_NCLASSES] = {
    "iid", "zero-ends", "sparse", "zero-runs", "constant", "wide", "negative", "near-constant"
};

const char *kg_oracle_row_class_name(int cls)
{
    return cls >= 0 && cls < KG_ROW_NCLASSES ? row_class_names[cls] : "?";
}

/* The classes that apply to rows of `cols` elements for op classes `set`. */
static int row_class_list(unsigned set, int64_t cols, int list[KG_ROW_NCLASSES])
{
    int n = 0;
    for (int c = 1; c < KG_ROW_NCLASSES; c++) {
        if (!(set & KG_ROW_BIT(c))) continue;
        if (c == KG_ROW_ZERO_ENDS && cols < 3) continue;      /* needs an interior */
        if ((c == KG_ROW_SPARSE || c == KG_ROW_ZERO_RUNS) && cols < 4) continue;
        /* a sum of n equal 4-bit values times 4-bit values is exact in
         * float32 for n <= 2^16 (kg_gen_const, kgate/gen.h); longer constant rows
         * would round the same way at every step, outside the random
         * rounding model the probabilistic bound assumes */
        if ((c == KG_ROW_CONSTANT || c == KG_ROW_NEAR_CONSTANT) && (cols < 2 || cols > ROW_CONST_MAX))
            continue;
        if (c == KG_ROW_WIDE && cols < 2) continue;
        list[n++] = c;
    }
    return n;
}

static uint64_t gcd64(uint64_t a, uint64_t b)
{
    while (b != 0) {
        uint64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

_Static_assert(KG_GEN_ZERO_ENDS == KG_ROW_ZERO_ENDS && KG_GEN_SPARSE == KG_ROW_SPARSE &&
               KG_GEN_ZERO_RUNS == KG_ROW_ZERO_RUNS && KG_GEN_CONSTANT == KG_ROW_CONSTANT &&
               KG_GEN_WIDE == KG_ROW_WIDE && KG_GEN_NEGATIVE == KG_ROW_NEGATIVE &&
               KG_GEN_NEAR_CONSTANT == KG_ROW_NEAR_CONSTANT && KG_GEN_NCLASSES == KG_ROW_NCLASSES &&
               KG_GEN_IID == KG_ROW_IID, "kgate/gen.h's row classes are kgate/op.h's");
_Static_assert(KG_GEN_F32 == KG_DT_F32 && KG_GEN_F16 == KG_DT_F16 && KG_GEN_BF16 == KG_DT_BF16,
               "kgate/gen.h's 16- and 32-bit dtypes are kg_dtype's");

int kg_oracle_gen_spec(const kg_case_data *d, int stream, uint64_t seed, kg_gen_spec *s)
{
    if (d == NULL || d->op == NULL || d->kase == NULL || stream < 0 || stream >= d->nin) return KG_EINTERNAL;
    int64_t rows[KG_MAX_IN];
    for (int i = 0; i < KG_MAX_IN; i++) rows[i] = 1;
    if (d->op->in_rows) d->op->in_rows(d->kase, rows);
    memset(s, 0, sizeof *s);
    s->seed = seed;
    s->stream = (uint32_t)stream;
    s->n = d->in_elems[stream];
    s->rows = rows[stream];
    s->per_row = s->rows > 0 ? s->n / s->rows : s->n;
    s->dtype = (int32_t)d->in_dtype[stream];
    s->scale = (float)d->kase->scale;
    /* the layout of the classes (see above) */
    s->R = s->rows - 2;
    if (s->R < 1) return KG_OK;
    int list[KG_ROW_NCLASSES];
    s->C = row_class_list(d->op->row_classes ? d->op->row_classes : KG_ROWS_DEFAULT, s->per_row, list);
    for (int c = 0; c < s->C; c++) s->list[c] = list[c];
    if (s->C == 0) return KG_OK;
    /* a quarter of the interior rows, at least one per class where they fit */
    s->nclass = s->R < s->C ? s->R : (s->R / 4 > s->C ? s->R / 4 : s->C);
    uint32_t r[4];
    kg_gen_block(seed, 0, (uint32_t)stream, ROW_TAG_LAYOUT, r);
    uint64_t R = (uint64_t)s->R;
    s->a = 1 + (((uint64_t)r[1] << 32 | r[0]) % R);
    while (gcd64(s->a, R) != 1) s->a = s->a % R + 1;
    s->b = ((uint64_t)r[3] << 32 | r[2]) % R;
    s->rot = (uint64_t)r[2] % (uint64_t)s->C;
    return KG_OK;
}

int kg_oracle_row_class(const kg_case_data *d, int stream, int64_t row)
{
    kg_gen_spec s;
    if (kg_oracle_gen_spec(d, stream, d != NULL ? d->seed : 0, &s) != KG_OK) return KG_ROW_IID;
    return kg_gen_class(&s, row);
}

double kg_oracle_row_len(const kg_case_data *d)
{
    int64_t rows[KG_MAX_IN];
    for (int i = 0; i < KG_MAX_IN; i++) rows[i] = 1;
    if (d->op->in_rows) d->op->in_rows(d->kase, rows);
    double len = 1.0;
    for (int i = 0; i < d->nin; i++) {
        double r = (double)(d->in_elems[i] / (rows[i] > 0 ? rows[i] : 1));
        if (r > len) len = r;
    }
    return len;
}

void kg_oracle_generate(const kg_gen_spec *s, void *dst)
{
    kg_gen_all(s, dst);
}

/* Fills input `stream` of d (kgate/gen.h), and its float64 copy. */
static void generate(kg_case_data *d, int stream)
{
    kg_gen_spec s;
    kg_oracle_gen_spec(d, stream, d->seed, &s);
    kg_oracle_generate(&s, d->in[stream]);
    kg_dtype dt = d->in_dtype[stream];
    uint64_t dummy;
    for (int64_t e = 0; e < s.n; e++) d->in64[stream][e] = decode(d->in[stream], dt, e, &dummy);
}

static int all_within(const double *ref, const double *bound, int64_t n, const double *vals,
                      double constant)
{
    for (int64_t e = 0; e < n; e++) {
        double v = vals ? vals[e] : constant;
        if (!(fabs(v - ref[e]) <= bound[e])) return 0;
    }
    return 1;
}

/* The row mean of ref over rows of `cols` elements, broadcast: 1 when it
 * passes every element. */
static int row_mean_passes(const double *ref, const double *bound, int64_t n, int64_t cols,
                           double *first_mean)
{
    if (cols <= 0 || cols > n) cols = n;
    for (int64_t r0 = 0; r0 < n; r0 += cols) {
        int64_t len = n - r0 < cols ? n - r0 : cols;
        double mean = 0.0;
        for (int64_t e = 0; e < len; e++) mean += ref[r0 + e];
        mean /= (double)len;
        if (r0 == 0) *first_mean = mean;
        if (!all_within(ref + r0, bound + r0, len, NULL, mean)) return 0;
    }
    return 1;
}

static int trivial_with(const kg_case_data *d, int o, const double *bound, char *why, size_t cap);

int kg_oracle_trivial(const kg_case_data *d, int o, char *why, size_t cap)
{
    if (d == NULL || o < 0 || o >= d->nout || d->ref[o] == NULL) return 0;
    return trivial_with(d, o, d->bound[o], why, cap);
}

static int trivial_with(const kg_case_data *d, int o, const double *bound, char *why, size_t cap)
{
    const double *ref = d->ref[o];
    int64_t n = d->out_elems[o];
    if (all_within(ref, bound, n, NULL, 0.0)) {
        snprintf(why, cap, "an all-zero output %s would pass", d->op->out_names[o]);
        return 1;
    }
    for (int i = 0; i < d->nin; i++) {
        if (d->in_elems[i] >= n && all_within(ref, bound, n, d->in64[i], 0.0)) {
            snprintf(why, cap, "a copy of input %s as output %s would pass",
                     d->op->in_names[i], d->op->out_names[o]);
            return 1;
        }
    }
    if (n > 1) {
        int64_t cols = d->op->out_cols ? d->op->out_cols(d->kase, o) : 0;
        if (cols <= 1) cols = n; /* one element per row: the mean of the whole output */
        double mean = 0.0;
        if (row_mean_passes(ref, bound, n, cols, &mean)) {
            snprintf(why, cap, "the row mean broadcast as output %s (first row %g) would pass",
                     d->op->out_names[o], mean);
            return 1;
        }
    }
    return 0;
}

void kg_oracle_encode(const double *v, int64_t n, kg_dtype dt, void *buf)
{
    for (int64_t e = 0; e < n; e++) {
        if (dt == KG_DT_F64) {
            ((double *)buf)[e] = v[e];
        } else if (dt == KG_DT_I32 || dt == KG_DT_I8) {
            /* the value itself (not the generator's unit), rounded to
             * nearest even and saturated */
            double lim = dt == KG_DT_I8 ? 127.0 : 2147483647.0;
            double r = isnan(v[e]) ? 0.0 : fmin(fmax(nearbyint(v[e]), -lim), lim);
            if (dt == KG_DT_I8) ((int8_t *)buf)[e] = (int8_t)r;
            else ((int32_t *)buf)[e] = (int32_t)r;
        } else {
            kg_gen_store((int32_t)dt, buf, e, (float)v[e]);
        }
    }
}

/* v as a kernel storing it in dtype dt would leave it. */
static double stored_as(double v, kg_dtype dt)
{
    unsigned char b[8];
    uint64_t bits;
    kg_oracle_encode(&v, 1, dt, b);
    return decode(b, dt, 0, &bits);
}

int kg_oracle_stale(const kg_case_data *d, const kg_case_data *other, int o, char *why,
                    size_t cap)
{
    if (d == NULL || other == NULL || o < 0 || o >= d->nout || o >= other->nout ||
        d->ref[o] == NULL || other->ref[o] == NULL || other->out_elems[o] != d->out_elems[o])
        return 0;
    kg_dtype dt = d->out_dtype[o];
    for (int64_t e = 0; e < d->out_elems[o]; e++) {
        /* the previous output as a kernel would have stored it */
        double v = stored_as(other->ref[o][e], dt);
        if (!(fabs(v - d->ref[o][e]) <= d->bound[o][e])) return 0;
    }
    snprintf(why, cap, "the previous check's output %s (seed %#llx) would pass",
             d->op->out_names[o], (unsigned long long)other->seed);
    return 1;
}

int kg_oracle_prepare(const kg_case *c, uint64_t seed, kg_case_data *d, kg_err *err)
{
    int rc = KG_OK;
    if (d == NULL || c == NULL) return kg_errorf(err, KG_EINTERNAL, "kg_oracle_prepare: NULL");
    memset(d, 0, sizeof *d);
    const kg_op *op = kg_op_find(c->op);
    if (op == NULL) {
        rc = kg_errorf(err, KG_EINPUT, "case '%s': unknown op '%s'", c->name, c->op);
        goto done;
    }
    if ((int)c->dtype < 0 || (int)c->dtype >= KG_DT_COUNT) {
        rc = kg_errorf(err, KG_EINPUT, "case '%s': unsupported dtype %d", c->name, (int)c->dtype);
        goto done;
    }
    char why[256];
    if (op->admissible(c, why, sizeof why)) {
        rc = kg_errorf(err, KG_EINADMISSIBLE, "case '%s' (%s): %s", c->name, op->name, why);
        goto done;
    }
    if (!(c->scale > 0.0) || !isfinite(c->scale) || c->scale > (double)FLT_MAX / 4.0) {
        rc = kg_errorf(err, KG_EINPUT, "case '%s': scale %g must be positive and finite in float32",
                       c->name, c->scale);
        goto done;
    }
    d->op = op;
    d->kase = c;
    d->seed = seed;
    d->nin = op->nin;
    d->nout = op->nout;
    op->sizes(c, d->in_elems, d->out_elems);
    int64_t rows[KG_MAX_IN];
    for (int i = 0; i < KG_MAX_IN; i++) rows[i] = 1;
    if (op->in_rows) op->in_rows(c, rows);

    for (int i = 0; i < d->nin; i++) {
        d->in_dtype[i] = op->in_dtype != NULL ? op->in_dtype(c, i) : c->dtype;
        if ((int)d->in_dtype[i] < 0 || (int)d->in_dtype[i] >= KG_DT_COUNT) {
            rc = kg_errorf(err, KG_EINPUT, "case '%s': op %s gives input %s dtype %d (use f32, f16, bf16, f64, "
                           "i32, i8, e4m3 or e5m2)", c->name, op->name, op->in_names[i], (int)d->in_dtype[i]);
            goto done;
        }
    }
    for (int i = 0; i < d->nin; i++) {
        size_t n = (size_t)d->in_elems[i];
        d->in_bytes[i] = n * dt_size(d->in_dtype[i]);
        d->in[i] = malloc(d->in_bytes[i] ? d->in_bytes[i] : 1);
        d->in64[i] = malloc((n ? n : 1) * sizeof(double));
        if (d->in[i] == NULL || d->in64[i] == NULL) {
            rc = kg_errorf(err, KG_ENOMEM, "case '%s': no memory for input %s (%zu elements)",
                           c->name, op->in_names[i], n);
            goto done;
        }
        generate(d, i);
        int nonzero = 0, finite = 1;
        for (size_t e = 0; e < n; e++) {
            if (d->in64[i][e] != 0.0) nonzero = 1;
            if (!isfinite(d->in64[i][e])) finite = 0;
        }
        if (!finite) {
            rc = kg_errorf(err, KG_EINPUT, "case '%s': input %s overflows %s at scale %g "
                           "(lower scale)", c->name, op->in_names[i], dt_name(d->in_dtype[i]), c->scale);
            goto done;
        }
        if (!nonzero) {
            rc = kg_errorf(err, KG_EINPUT, "case '%s': input %s is all zero in %s at scale %g "
                           "(raise scale)", c->name, op->in_names[i], dt_name(d->in_dtype[i]), c->scale);
            goto done;
        }
        d->in_sum[i] = kg_checksum(d->in[i], d->in_bytes[i]);
    }
    for (int o = 0; o < d->nout; o++) {
        size_t n = (size_t)d->out_elems[o];
        d->out_dtype[o] = op->out_dtype(c, o);
        kg_dtype odt = d->out_dtype[o];
        if (odt != KG_DT_F32 && odt != KG_DT_F16 && odt != KG_DT_BF16 && odt != KG_DT_F64 && odt != KG_DT_I32) {
            rc = kg_errorf(err, KG_EINPUT, "case '%s': op %s gives output %s dtype %s (outputs are f32, f16, "
                           "bf16, f64 or i32)", c->name, op->name, op->out_names[o], dt_name(odt));
            goto done;
        }
        d->out_bytes[o] = n * dt_size(d->out_dtype[o]);
        d->ref[o] = malloc((n ? n : 1) * sizeof(double));
        d->bound[o] = malloc((n ? n : 1) * sizeof(double));
        if (d->ref[o] == NULL || d->bound[o] == NULL) {
            rc = kg_errorf(err, KG_ENOMEM, "case '%s': no memory for output %s (%zu elements)",
                           c->name, op->out_names[o], n);
            goto done;
        }
    }
    rc = op->reference(c, (const double *const *)d->in64, d->ref, err);
    if (rc != KG_OK) goto done;
    for (int o = 0; o < d->nout; o++) {
        op->bound(c, (const double *const *)d->in64, d->ref[o], o, d->bound[o]);
        for (int64_t e = 0; e < d->out_elems[o]; e++) {
            /* a float32 accumulator must hold every partial sum; an f64
             * output needs a finite reference, an i32 one a reference
             * inside int32 */
            kg_dtype odt = d->out_dtype[o];
            double lim = odt == KG_DT_F64 ? DBL_MAX / 2 : odt == KG_DT_I32 ? 2147483647.0 : (double)FLT_MAX / 2;
            if (!(fabs(d->ref[o][e]) < lim) || !(d->bound[o][e] < (odt == KG_DT_F64 ? DBL_MAX : (double)FLT_MAX))) {
                rc = kg_errorf(err, KG_EINPUT, "case '%s': output %s overflows %s at scale %g "
                               "(lower scale)", c->name, op->out_names[o],
                               odt == KG_DT_F64 ? "float64" : odt == KG_DT_I32 ? "int32" : "float32", c->scale);
                goto done;
            }
        }
        /* a weak case is not an error: the worker reports it */
        if (kg_oracle_trivial(d, o, why, sizeof why)) {
            d->weak[o] = 1;
            if (d->weak_why[0] == '\0')
                snprintf(d->weak_why, sizeof d->weak_why, "%.160s, so the check cannot tell a kernel "
                         "from a shortcut (change the shape or scale)", why);
        }
    }
done:
    if (rc != KG_OK) kg_oracle_release(d);
    return rc;
}

int kg_oracle_refill(kg_case_data *d, uint64_t seed)
{
    if (d == NULL || d->op == NULL || d->kase == NULL) return KG_EINTERNAL;
    d->seed = seed;
    for (int i = 0; i < d->nin; i++) {
        generate(d, i);
        d->in_sum[i] = kg_checksum(d->in[i], d->in_bytes[i]);
    }
    /* the references, bounds and contract bounds are of other inputs now */
    ct_free(d->ctb);
    d->ctb = NULL;
    d->stale = 1;
    return KG_OK;
}

/* 64 random bits for index i of stream (seed, stream). */
static uint64_t draw64(uint64_t seed, uint32_t stream, uint64_t i)
{
    const uint32_t key[2] = { (uint32_t)seed, (uint32_t)(seed >> 32) };
    const uint32_t ctr[4] = { (uint32_t)i, (uint32_t)(i >> 32), stream, 0x6b677077u };
    uint32_t out[4];
    kg_philox4x32(ctr, key, out);
    return (uint64_t)out[0] | (uint64_t)out[1] << 32;
}

int kg_oracle_perturb(kg_case_data *d, uint64_t pseed, int count, int64_t *where_in, int *which_in, kg_err *err)
{
    if (d == NULL || d->op == NULL || d->stale || count < 1)
        return kg_errorf(err, KG_EINTERNAL, "kg_oracle_perturb: no prepared data");
    if (d->nin < 1)
        return kg_errorf(err, KG_EINTERNAL, "kg_oracle_perturb: op %s has no inputs to perturb", d->op->name);
    const kg_case *c = d->kase;
    for (int j = 0; j < count; j++) {
        /* an input with elements, and an element of it; its new value is a
         * fresh draw of the same distribution that differs from the old */
        int i = (int)(draw64(pseed, 0x70657274u, (uint64_t)j * 2) % (uint64_t)d->nin);
        for (int t = 0; t < d->nin && d->in_elems[i] == 0; t++) i = (i + 1) % d->nin;
        if (d->in_elems[i] == 0) return kg_errorf(err, KG_EINTERNAL, "kg_oracle_perturb: no input elements");
        int64_t e = (int64_t)(draw64(pseed, 0x70657274u, (uint64_t)j * 2 + 1) % (uint64_t)d->in_elems[i]);
        double old = d->in64[i][e], v = old;
        kg_dtype dt = d->in_dtype[i];
        for (uint64_t t = 0; t < 16 && v == old; t++) {
            double u = (double)kg_philox_uniform(pseed, 0x70657274u + 1u + (uint32_t)j, t);
            double mag = fabs(old) > 0 ? fabs(old) : c->scale;
            double cand = (u < 0 ? -1.0 : 1.0) * mag * (0.5 + fabs(u));
            kg_oracle_encode(&cand, 1, dt, (char *)d->in[i] + (size_t)e * dt_size(dt));
            uint64_t bits;
            v = decode(d->in[i], dt, e, &bits);
        }
        d->in64[i][e] = v;
        if (where_in != NULL) where_in[j] = e;
        if (which_in != NULL) which_in[j] = i;
    }
    for (int i = 0; i < d->nin; i++) d->in_sum[i] = kg_checksum(d->in[i], d->in_bytes[i]);
    int rc = d->op->reference(c, (const double *const *)d->in64, d->ref, err);
    if (rc != KG_OK) return rc;
    for (int o = 0; o < d->nout; o++) d->op->bound(c, (const double *const *)d->in64, d->ref[o], o, d->bound[o]);
    ct_free(d->ctb);
    d->ctb = NULL;
    return KG_OK;
}

/* "element 1234 (row 3, col 17)" or "element 5 (row 5)" */
static void where(const kg_case_data *d, int o, int64_t e, char *buf, size_t cap)
{
    int64_t cols = d->op->out_cols ? d->op->out_cols(d->kase, o) : 0;
    int64_t orow = cols > 0 ? e / cols : e, ocol = cols > 0 ? e % cols : 0;
    if (cols > 0)
        snprintf(buf, cap, "element %lld (row %lld, col %lld)", (long long)e,
                 (long long)orow, (long long)ocol);
    else
        snprintf(buf, cap, "element %lld", (long long)e);
    /* the structured class of the input rows the element depends on: an
     * output row that is an input's row (the row ops, A of the GEMMs), an
     * output column that is an input's row (B of gemm_bt) */
    int64_t rows[KG_MAX_IN];
    for (int i = 0; i < KG_MAX_IN; i++) rows[i] = 1;
    if (d->op->in_rows) d->op->in_rows(d->kase, rows);
    int64_t nrows_out = cols > 0 ? d->out_elems[o] / cols : d->out_elems[o];
    for (int i = 0; i < d->nin && i < 2; i++) {
        int64_t r = -1;
        if (i == 0 && rows[0] == nrows_out) r = orow;
        else if (i == 1 && cols > 0 && rows[1] == cols && rows[1] > 1) r = ocol;
        int cls = r >= 0 ? kg_oracle_row_class(d, i, r) : KG_ROW_IID;
        if (cls == KG_ROW_IID) continue;
        size_t len = strlen(buf);
        snprintf(buf + len, cap - len, " [%s row %lld: %s]", d->op->in_names[i], (long long)r,
                 kg_oracle_row_class_name(cls));
    }
}

void kg_oracle_compare(const kg_case_data *d, int o, const void *out, kg_check *res)
{
    if (res == NULL) return;
    memset(res, 0, sizeof *res);
    res->worst = -1;
    if (d == NULL || d->op == NULL || o < 0 || o >= d->nout || out == NULL) {
        snprintf(res->msg, sizeof res->msg, "no output to compare");
        res->nbad = 1;
        return;
    }
    kg_dtype dt = d->out_dtype[o];
    const double *ref = d->ref[o], *bound = d->bound[o];
    kg_values_cmp v;
    kg_values_compare(dt, d->out_elems[o], ref, bound, out, &v);
    res->pass = v.pass;
    res->max_abs = v.max_abs;
    res->max_rel = v.max_rel;
    res->worst = v.worst;
    res->nbad = v.nbad;
    res->nnan = v.nnan;
    if (res->pass) return;
    char at[160];
    if (v.first_nf >= 0) {
        where(d, o, v.first_nf, at, sizeof at);
        snprintf(res->msg, sizeof res->msg, "%s at %s%s; %lld non-finite, %lld elements over bound",
                 isnan(v.first_nf_val) ? "NaN" : "Inf", at,
                 v.first_nf_poison ? " (still the poison pattern: never written)" : "",
                 (long long)res->nnan, (long long)res->nbad);
        return;
    }
    uint64_t bits;
    where(d, o, v.worst_bad, at, sizeof at);
    double got = decode(out, dt, v.worst_bad, &bits);
    char tail[96];
    snprintf(tail, sizeof tail, "; %lld elements over bound", (long long)res->nbad);
    snprintf(res->msg, sizeof res->msg, "%.120s: got %.9g%s, want %.9g \xc2\xb1 %.3g%.32s", at, got,
             kg_value_is_poison(bits, dt) ? " (poison: never written)" : "", ref[v.worst_bad], bound[v.worst_bad],
             tail);
}

/* The bounds of contract ct in d's cache, computed on first use. */
static int ct_bounds(const kg_case_data *d, const kg_contract *ct, int *slot, kg_err *err)
{
    struct kg_ct_bounds *cb = d->ctb;
    if (cb != NULL)
        for (int i = 0; i < cb->n; i++)
            if (cb->ct[i].precision == ct->precision && cb->ct[i].tolerance == ct->tolerance) {
                *slot = i;
                return KG_OK;
            }
    if (d->op->bound_ct == NULL)
        return kg_errorf(err, KG_EINPUT, "op %s has no reduced precision contract", d->op->name);
    if (cb == NULL) {
        cb = calloc(1, sizeof *cb);
        if (cb == NULL) return kg_errorf(err, KG_ENOMEM, "out of memory (contract bounds)");
        ((kg_case_data *)d)->ctb = cb; /* the cache is not part of d's value */
    }
    if (cb->n == KG_CT_MAX)
        return kg_errorf(err, KG_EINTERNAL, "more than %d precision contracts on case %s",
                         KG_CT_MAX, d->kase->name);
    int i = cb->n;
    for (int o = 0; o < d->nout; o++) {
        int64_t n = d->out_elems[o];
        cb->bound[i][o] = malloc((size_t)(n ? n : 1) * sizeof(double));
        if (cb->bound[i][o] == NULL) {
            for (int q = 0; q < o; q++) free(cb->bound[i][q]);
            return kg_errorf(err, KG_ENOMEM, "out of memory (contract bounds)");
        }
        d->op->bound_ct(d->kase, ct, (const double *const *)d->in64, d->ref[o], o, cb->bound[i][o]);
        char why[120];
        cb->weak[i][o][0] = '\0';
        if (trivial_with(d, o, cb->bound[i][o], why, sizeof why)) {
            char name[48];
            kg_contract_text(ct, d->kase->dtype, name, sizeof name);
            snprintf(cb->weak[i][o], sizeof cb->weak[i][o], "contract %.40s is too weak for this case: %.120s",
                     name, why);
        }
    }
    cb->ct[i] = *ct;
    cb->n++;
    *slot = i;
    return KG_OK;
}

int kg_oracle_bounds_ct(const kg_case_data *d, const kg_contract *ct, int o, const double **bound, int *weak,
                        kg_err *err)
{
    if (d == NULL || d->op == NULL || o < 0 || o >= d->nout)
        return kg_errorf(err, KG_EINTERNAL, "no output %d to bound", o);
    if (kg_contract_is_default(ct)) {
        *bound = d->bound[o];
        *weak = 0;
        return KG_OK;
    }
    int slot = -1, rc = ct_bounds(d, ct, &slot, err);
    if (rc != KG_OK) return rc;
    *bound = d->ctb->bound[slot][o];
    *weak = d->ctb->weak[slot][o][0] != '\0';
    return KG_OK;
}

int kg_oracle_compare_ct(const kg_case_data *d, const kg_contract *ct, int o, const void *out,
                         kg_check *res, kg_err *err)
{
    if (kg_contract_is_default(ct) || d == NULL || d->op == NULL || o < 0 || o >= d->nout) {
        kg_oracle_compare(d, o, out, res);
        return KG_OK;
    }
    int slot = -1, rc = ct_bounds(d, ct, &slot, err);
    if (rc != KG_OK) return rc;
    kg_case_data view = *d;  /* the same data with the contract's bounds */
    view.bound[o] = d->ctb->bound[slot][o];
    kg_oracle_compare(&view, o, out, res);
    if (d->ctb->weak[slot][o][0] != '\0') {
        /* over the bounds too: that is the failure to name first */
        res->weak = res->pass;
        if (res->pass) {
            res->nbad = 1;
            snprintf(res->msg, sizeof res->msg, "%s", d->ctb->weak[slot][o]);
        } else {
            size_t len = strlen(res->msg);
            snprintf(res->msg + len, sizeof res->msg - len, "; and the %s", d->ctb->weak[slot][o]);
        }
        res->pass = 0;
    }
    return KG_OK;
}

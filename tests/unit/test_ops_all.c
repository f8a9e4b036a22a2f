/* test_ops_all.c: every op with its honest CPU kernel, and the weak-case
 * detection.
 *
 * For each op: the honest kernel in kernels/cpu/, compiled as the CPU
 * backend compiles it, passes at ten or more shapes (ragged tails
 * included) in f32, f16 and bf16, and its numerical negative
 * (KGATE_NEGATIVE=1) fails every one of them; no case in the list is weak
 * (zeros, a copy of an input, the row mean and the output of another seed
 * all fail); degenerate shapes are reported as weak; the preconditions
 * name what they violate; bytes and flops are what the op declares. */
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "check.h"
#include "kernel_load.h"
#include "kgate/kernel.h"
#include "kgate/oracle.h"


static char tmpdir[256];

static kg_case mk(const char *op, kg_dtype dt, int64_t M, int64_t N, int64_t K, int64_t splits)
{
    kg_case c;
    memset(&c, 0, sizeof c);
    snprintf(c.name, sizeof c.name, "%s_%lldx%lldx%lld", op, (long long)M, (long long)N,
             (long long)K);
    snprintf(c.op, sizeof c.op, "%s", op);
    c.dtype = dt;
    c.M = M; c.N = N; c.K = K;
    c.splits = splits;
    c.eps = 1e-5;
    c.scale = 1.0;
    c.primary = 1;
    c.line = 1;
    return c;
}

static const char *dtn(kg_dtype dt)
{
    return dt == KG_DT_F32 ? "f32" : dt == KG_DT_F16 ? "f16" : "bf16";
}


/* Runs fn on d as the worker does (poisoned output and workspace, guard,
 * input checksums) and fills res for output 0.  Returns pass. */
static int run_checked(kernel_fn fn, const kg_case_data *d, int pattern, kg_check *res,
                       char *why, size_t cap)
{
    size_t ob = d->out_bytes[0];
    size_t wb = d->op->ws_bytes ? d->op->ws_bytes(d->kase) : 0;
    unsigned char *out = malloc(ob + kg_guard_bytes());
    unsigned char *ws = wb ? malloc(wb) : NULL;
    int pass = 0;
    why[0] = '\0';
    if (out == NULL || (wb && ws == NULL)) goto done;
    kg_poison(out, ob, pattern);
    kg_guard_fill(out + ob);
    if (ws) kg_poison(ws, wb, pattern);
    kg_kargs a;
    memset(&a, 0, sizeof a);
    a.abi = KG_KARGS_ABI;
    a.dtype = (int)d->kase->dtype;
    for (int i = 0; i < d->nin; i++) a.in[i] = d->in[i];
    a.out[0] = out;
    a.ws = ws;
    a.ws_bytes = wb;
    a.M = d->kase->M; a.N = d->kase->N; a.K = d->kase->K;
    a.splits = d->kase->splits; a.eps = d->kase->eps;
    fn(&a);
    kg_oracle_compare(d, 0, out, res);
    pass = res->pass;
    if (kg_guard_verify(out + ob) != -1) { pass = 0; snprintf(why, cap, "guard"); }
    for (int i = 0; i < d->nin; i++)
        if (kg_checksum(d->in[i], d->in_bytes[i]) != d->in_sum[i]) { pass = 0; snprintf(why, cap, "input"); }
    if (!res->pass) snprintf(why, cap, "%s", res->msg);
done:
    free(out);
    free(ws);
    return pass;
}

typedef struct opt {
    const char *op, *kernel;
    const int64_t (*shapes)[4]; /* M N K splits */
    int nshapes;
} opt;

static void test_op(const opt *t)
{
    char path[256];
    snprintf(path, sizeof path, "kernels/cpu/%s.c", t->kernel);
    kernel_fn fn = kg_test_load_kernel(path, 0, tmpdir), neg = kg_test_load_kernel(path, 1, tmpdir);
    if (fn == NULL || neg == NULL) return;
    kg_dtype dts[3] = { KG_DT_F32, KG_DT_F16, KG_DT_BF16 };
    int ran = 0;
    for (int s = 0; s < t->nshapes; s++)
        for (int k = 0; k < 3; k++) {
            const int64_t *sh = t->shapes[s];
            kg_case c = mk(t->op, dts[k], sh[0], sh[1], sh[2], sh[3]);
            kg_case_data d, other;
            kg_err err = { 0 };
            int rc = kg_oracle_prepare(&c, (uint64_t)(7 + s * 3 + k), &d, &err);
            CHECK_MSG(rc == KG_OK, "%s %s: %s", c.name, dtn(dts[k]), err.msg);
            if (rc != KG_OK) continue;
            rc = kg_oracle_prepare(&c, (uint64_t)(1000 + s * 3 + k), &other, &err);
            CHECK(rc == KG_OK);
            char why[300];
            CHECK_MSG(!d.weak[0], "%s %s is weak: %s", c.name, dtn(dts[k]), d.weak_why);
            CHECK_MSG(!kg_oracle_stale(&d, &other, 0, why, sizeof why), "%s %s: %s", c.name,
                      dtn(dts[k]), why);
            kg_check res;
            int pass = run_checked(fn, &d, s & 1, &res, why, sizeof why);
            CHECK_MSG(pass, "%s on %s %s: %s (max err/bound %.3g)", t->kernel, c.name,
                      dtn(dts[k]), why, res.max_rel);
            pass = run_checked(fn, &other, 1 - (s & 1), &res, why, sizeof why);
            CHECK_MSG(pass, "%s on %s %s (second seed): %s", t->kernel, c.name, dtn(dts[k]), why);
            pass = run_checked(neg, &d, s & 1, &res, why, sizeof why);
            CHECK_MSG(!pass, "%s negative passed on %s %s", t->kernel, c.name, dtn(dts[k]));
            kg_oracle_release(&d);
            kg_oracle_release(&other);
            ran++;
        }
    CHECK_MSG(ran >= 30, "%s: %d runs", t->op, ran);
}

static void test_honest_kernels(void)
{
    static const int64_t gemm[][4] = {
        { 2, 2, 1, 1 }, { 7, 5, 3, 1 }, { 33, 65, 17, 1 }, { 64, 64, 64, 1 },
        { 2, 64, 31, 1 }, { 65, 2, 9, 1 }, { 3, 9, 2, 1 }, { 67, 71, 259, 1 },
        { 5, 13, 513, 1 }, { 20, 37, 1000, 1 }, { 3, 5, 4096, 1 } };
    static const int64_t splitk[][4] = {
        { 2, 2, 2, 2 }, { 7, 5, 3, 3 }, { 33, 65, 17, 4 }, { 64, 64, 64, 8 },
        { 2, 64, 31, 5 }, { 65, 2, 9, 9 }, { 3, 9, 2, 1 }, { 67, 71, 259, 7 },
        { 5, 13, 513, 16 }, { 20, 37, 1000, 3 }, { 3, 5, 4096, 64 } };
    static const int64_t rows[][4] = {
        { 2, 2, -1, -1 }, { 3, 5, -1, -1 }, { 7, 33, -1, -1 }, { 33, 65, -1, -1 },
        { 64, 64, -1, -1 }, { 2, 1000, -1, -1 }, { 100, 3, -1, -1 }, { 3, 4099, -1, -1 },
        { 17, 16, -1, -1 }, { 9, 1023, -1, -1 }, { 4, 20000, -1, -1 } };
    /* a long row's maximum saturates at the dtype's largest value below
     * the scale, the same for every seed (the stale check flags those
     * cases as weak): rowmax rows stay short */
    static const int64_t maxrows[][4] = {
        { 2, 2, -1, -1 }, { 3, 5, -1, -1 }, { 7, 33, -1, -1 }, { 33, 65, -1, -1 },
        { 64, 64, -1, -1 }, { 100, 3, -1, -1 }, { 17, 16, -1, -1 }, { 9, 63, -1, -1 },
        { 40, 7, -1, -1 }, { 5, 31, -1, -1 }, { 64, 129, -1, -1 } };
    int nm = (int)(sizeof maxrows / sizeof maxrows[0]);
    int ng = (int)(sizeof gemm / sizeof gemm[0]);
    int nr = (int)(sizeof rows / sizeof rows[0]);
    opt ts[] = {
        { "gemm_nt", "gemm_nt_naive", gemm, ng },
        { "gemm_splitk", "gemm_splitk_naive", splitk, ng },
        { "rowmax", "rowmax_naive", maxrows, nm },
        { "softmax", "softmax_naive", rows, nr },
        { "layernorm", "layernorm_naive", rows, nr },
        { "rmsnorm", "rmsnorm_naive", rows, nr },
    };
    for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++) test_op(&ts[i]);
}

/* A case where a shortcut passes is prepared and flagged, not refused. */
static void test_weak(void)
{
    kg_case_data d, other;
    kg_err err = { 0 };
    kg_case c = mk("rowmax", KG_DT_F32, 16, 1, -1, -1); /* max of one element: a copy */
    CHECK(kg_oracle_prepare(&c, 1, &d, &err) == KG_OK);
    CHECK(d.weak[0] == 1);
    CHECK_STR_CONTAINS(d.weak_why, "a copy of input X");
    kg_oracle_release(&d);
    c = mk("softmax", KG_DT_F16, 8, 1, -1, -1); /* every output is 1 */
    CHECK(kg_oracle_prepare(&c, 1, &d, &err) == KG_OK);
    CHECK(d.weak[0] == 1);
    CHECK_STR_CONTAINS(d.weak_why, "row mean");
    kg_oracle_release(&d);
    c = mk("rmsnorm", KG_DT_F32, 4, 8, -1, -1);
    CHECK(kg_oracle_prepare(&c, 1, &d, &err) == KG_OK);
    CHECK(d.weak[0] == 0 && d.weak_why[0] == '\0');
    kg_oracle_release(&d);
    /* a long bf16 row's maximum saturates: the previous output passes */
    /* (two rows: no structured rows, whose maxima differ by seed) */
    c = mk("rowmax", KG_DT_BF16, 2, 20000, -1, -1);
    CHECK(kg_oracle_prepare(&c, 1, &d, &err) == KG_OK);
    CHECK(kg_oracle_prepare(&c, 2, &other, &err) == KG_OK);
    char why0[300];
    CHECK(kg_oracle_stale(&d, &other, 0, why0, sizeof why0) == 1);
    kg_oracle_release(&d);
    kg_oracle_release(&other);
    /* an output that does not depend on the seed: the previous output passes */
    c = mk("softmax", KG_DT_F32, 4, 1, -1, -1);
    CHECK(kg_oracle_prepare(&c, 1, &d, &err) == KG_OK);
    CHECK(kg_oracle_prepare(&c, 2, &other, &err) == KG_OK);
    char why[300];
    CHECK(kg_oracle_stale(&d, &other, 0, why, sizeof why) == 1);
    CHECK_STR_CONTAINS(why, "previous check's output Y");
    kg_oracle_release(&d);
    kg_oracle_release(&other);
    c = mk("softmax", KG_DT_F32, 4, 64, -1, -1);
    CHECK(kg_oracle_prepare(&c, 1, &d, &err) == KG_OK);
    CHECK(kg_oracle_prepare(&c, 2, &other, &err) == KG_OK);
    CHECK(kg_oracle_stale(&d, &other, 0, why, sizeof why) == 0);
    kg_oracle_release(&d);
    kg_oracle_release(&other);
}

static void test_contracts(void)
{
    /* every registered op speaks the ABI of kgate/op.h, and the registry
     * finds it by name */
    int nops = 0;
    const kg_op *const *all = kg_op_all(&nops);
    CHECK(nops >= 9);
    for (int i = 0; i < nops; i++) {
        CHECK_MSG(all[i]->abi == KG_OP_ABI, "op %s has abi %d", all[i]->name, all[i]->abi);
        CHECK(kg_op_find(all[i]->name) == all[i]);
    }
    const char *names[] = { "gemm_nt", "gemm_splitk", "rowmax", "softmax", "layernorm", "rmsnorm" };
    for (int i = 0; i < 6; i++) {
        const kg_op *op = kg_op_find(names[i]);
        CHECK_MSG(op != NULL, "op %s missing", names[i]);
        if (op == NULL) continue;
        CHECK(op->scalars != NULL && strstr(op->scalars, "M") != NULL);
        CHECK(op->in_names[0] != NULL && op->out_names[0] != NULL);
    }
    kg_case c = mk("gemm_splitk", KG_DT_F32, 8, 4, 16, 0);
    char why[256];
    const kg_op *sk = kg_op_find("gemm_splitk");
    CHECK(sk->admissible(&c, why, sizeof why) == 1);
    CHECK_STR_CONTAINS(why, "splits must be >= 1 and <= K");
    c.splits = 17;
    CHECK(sk->admissible(&c, why, sizeof why) == 1);
    c.splits = 4;
    CHECK(sk->admissible(&c, why, sizeof why) == 0);
    CHECK(sk->ws_bytes(&c) == 4 * 8 * 4 * sizeof(float));
    CHECK(sk->min_bytes(&c) == (8.0 * 16 + 4.0 * 16) * 4 + 8.0 * 4 * 4);
    CHECK(sk->flops(&c) == 2.0 * 8 * 4 * 16 + 3.0 * 8 * 4);
    CHECK_STR_CONTAINS(sk->scalars, "splits");
    c = mk("gemm_nt", KG_DT_BF16, 3, 5, 7, -1);
    CHECK(kg_op_find("gemm_nt")->min_bytes(&c) == (3.0 * 7 + 7.0 * 5) * 2 + 3.0 * 5 * 4);
    c = mk("layernorm", KG_DT_F16, 10, 20, -1, -1);
    const kg_op *ln = kg_op_find("layernorm");
    CHECK(ln->nin == 3 && strcmp(ln->in_names[1], "gamma") == 0 && strcmp(ln->in_names[2], "beta") == 0);
    CHECK(ln->min_bytes(&c) == (200.0 + 40.0) * 2 + 200.0 * 4);
    CHECK_STR_CONTAINS(ln->scalars, "eps");
    c.eps = 0.0;
    CHECK(ln->admissible(&c, why, sizeof why) == 1);
    CHECK_STR_CONTAINS(why, "eps must be > 0");
    c = mk("rmsnorm", KG_DT_F32, 10, 20, -1, -1);
    CHECK(kg_op_find("rmsnorm")->min_bytes(&c) == (200.0 + 20.0) * 4 + 200.0 * 4);
    c = mk("softmax", KG_DT_F32, 0, 20, -1, -1);
    CHECK(kg_op_find("softmax")->admissible(&c, why, sizeof why) == 1);
    CHECK_STR_CONTAINS(why, "M must be >= 1");
    c = mk("rowmax", KG_DT_BF16, 10, 20, -1, -1);
    CHECK(kg_op_find("rowmax")->min_bytes(&c) == 200.0 * 2 + 10.0 * 4);

    /* gemm_nt's reference reads B as [K,N]: compare with a plain loop */
    c = mk("gemm_nt", KG_DT_F32, 5, 7, 9, -1);
    kg_case_data d;
    kg_err err = { 0 };
    CHECK(kg_oracle_prepare(&c, 3, &d, &err) == KG_OK);
    double maxd = 0.0;
    for (int i = 0; i < 5; i++)
        for (int j = 0; j < 7; j++) {
            double s = 0.0;
            for (int k = 0; k < 9; k++) s += d.in64[0][i * 9 + k] * d.in64[1][k * 7 + j];
            maxd = fmax(maxd, fabs(s - d.ref[0][i * 7 + j]));
        }
    CHECK(maxd < 1e-12);
    kg_oracle_release(&d);
}

/* kg_op_shape: the built-in ops' tensors as their rows and columns */
static void test_shapes(void)
{
    int64_t d[KG_OP_MAX_DIMS];
    char why[200] = "";
    kg_case c = mk("gemm_bt", KG_DT_F32, 6, 5, 7, -1);
    const kg_op *op = kg_op_find("gemm_bt");
    CHECK(kg_op_shape(op, &c, 0, 0, d, why, sizeof why) == 2 && d[0] == 6 && d[1] == 7);
    CHECK(kg_op_shape(op, &c, 0, 1, d, why, sizeof why) == 2 && d[0] == 5 && d[1] == 7);
    CHECK(kg_op_shape(op, &c, 1, 0, d, why, sizeof why) == 2 && d[0] == 6 && d[1] == 5);
    CHECK(kg_op_shape(op, &c, 1, 1, d, why, sizeof why) == 0 && strstr(why, "no tensor output 1") != NULL);
    c = mk("rowsum", KG_DT_F32, 4, 9, -1, -1);
    op = kg_op_find("rowsum");
    CHECK(kg_op_shape(op, &c, 0, 0, d, why, sizeof why) == 2 && d[0] == 4 && d[1] == 9);
    CHECK(kg_op_shape(op, &c, 1, 0, d, why, sizeof why) == 1 && d[0] == 4);
    /* one row stays a matrix of one row (a held-out M = 1), every built-in op with data has .shape */
    c = mk("rowsum", KG_DT_F32, 1, 9, -1, -1);
    CHECK(kg_op_shape(op, &c, 0, 0, d, why, sizeof why) == 2 && d[0] == 1 && d[1] == 9);
    c = mk("layernorm", KG_DT_F32, 1, 9, -1, -1);
    op = kg_op_find("layernorm");
    CHECK(kg_op_shape(op, &c, 0, 0, d, why, sizeof why) == 2 && d[0] == 1 && d[1] == 9);
    CHECK(kg_op_shape(op, &c, 0, 2, d, why, sizeof why) == 1 && d[0] == 9);
    CHECK(kg_op_shape(op, &c, 1, 0, d, why, sizeof why) == 2 && d[0] == 1 && d[1] == 9);
    c = mk("gemm_nt", KG_DT_F32, 1, 5, 7, -1);
    op = kg_op_find("gemm_nt");
    CHECK(kg_op_shape(op, &c, 0, 1, d, why, sizeof why) == 2 && d[0] == 7 && d[1] == 5);
    CHECK(kg_op_shape(op, &c, 1, 0, d, why, sizeof why) == 2 && d[0] == 1 && d[1] == 5);
    const char *names[] = { "gemm_bt", "gemm_nt", "gemm_splitk", "rowsum", "rowmax", "softmax", "layernorm",
                            "rmsnorm" };
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) CHECK(kg_op_find(names[k])->shape != NULL);
}

int main(void)
{
    const char *base = getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s/kgate-test-ops-XXXXXX", base && *base ? base : "/tmp");
    if (mkdtemp(tmpdir) == NULL) {
        perror("mkdtemp");
        return 1;
    }
    test_shapes();
    test_contracts();
    test_weak();
    test_honest_kernels();
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", tmpdir);
    return kg_test_finish("test_ops_all");
}

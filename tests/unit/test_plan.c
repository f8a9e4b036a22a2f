/* test_plan.c: the plan parser (src/plan/plan.c): a full plan and its
 * canonical form, defaults, the hash, every error path (code, file name,
 * line, offending text), source resolution, and a fuzz loop that must
 * never crash and whose accepted plans must round-trip. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/sha.h>

#include "check.h"
#include "kgate/plan.h"
#include "kgate/backend.h"

/* A minimal valid plan; error tests append lines after line 7. */
#define HEAD                                                                   \
    "[case a]\n"          /* 1 */                                              \
    "op = gemm_bt\n"      /* 2 */                                              \
    "dtype = f32\n"       /* 3 */                                              \
    "[arm base]\n"        /* 4 */                                              \
    "op = gemm_bt\n"      /* 5 */                                              \
    "role = baseline\n"   /* 6 */                                              \
    "source = k.c\n"      /* 7 */

static kg_plan *parse_ok(const char *text, const char *name)
{
    kg_err err = {0};
    kg_plan *p = NULL;
    int rc = kg_plan_parse(text, strlen(text), name, "/base", &p, &err);
    CHECK_MSG(rc == KG_OK && p != NULL, "rc %d: %s", rc, err.msg);
    return rc == KG_OK ? p : NULL;
}

/* Parses text (len bytes) as "bad.kg" and checks the error: KG_EINPUT, no
 * plan, and "bad.kg:LINE: " and "'OFFENDING'" in the one-line message. */
static void expect_err_n(const char *text, size_t len, int line, const char *offending, int at)
{
    kg_err err = {0};
    kg_plan *p = (kg_plan *)&err; /* must be reset to NULL */
    int rc = kg_plan_parse(text, len, "dir/bad.kg", "dir", &p, &err);
    char where[64], quoted[512];
    snprintf(where, sizeof where, "dir/bad.kg:%d: ", line);
    snprintf(quoted, sizeof quoted, "'%s'", offending);
    kg_test_checked++;
    if (rc != KG_EINPUT || p != NULL || err.code != KG_EINPUT ||
        strncmp(err.msg, where, strlen(where)) != 0 || strstr(err.msg, quoted) == NULL ||
        strchr(err.msg, '\n') != NULL || strstr(err.msg, " (") == NULL) {
        kg_test_failed++;
        fprintf(stderr, "test_plan.c:%d: expected error at %s with %s, got rc %d: %s\n", at,
                where, quoted, rc, err.msg);
    }
    if (rc == KG_OK) kg_plan_free(p);
}
#define EXPECT_ERR(text, line, off) expect_err_n((text), strlen(text), (line), (off), __LINE__)

static char *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *b = malloc(1 << 16);
    *len = b ? fread(b, 1, (1 << 16) - 1, f) : 0;
    fclose(f);
    return b;
}

static void test_full_plan(void)
{
    kg_err err = {0};
    kg_plan *p = NULL;
    int rc = kg_plan_load("tests/plans/full.kg", &p, &err);
    CHECK_MSG(rc == KG_OK, "%s", err.msg);
    if (rc != KG_OK) return;
    const kg_campaign *c = &p->campaign;
    CHECK(strcmp(c->name, "gemm-full") == 0);
    CHECK(strcmp(c->backend, "fake") == 0);
    CHECK(c->device == 1 && c->warmup == 2 && c->samples == 12 && c->rounds == 4);
    CHECK(c->processes == 3 && c->pack == 2 && c->rotate == 4);
    CHECK(c->interleave == KG_INTERLEAVE_BLOCK && c->l2 == KG_L2_COLD);
    CHECK(c->inputs == KG_INPUTS_FRESH);
    CHECK(c->seed == UINT64_MAX);
    CHECK(c->alpha == 0.025);
    CHECK(c->margin == 0.05 && c->equivalence == 0.01);
    CHECK(c->control_margin == 0.0025 && c->order_min == 0.003);
    CHECK(c->timeout_s == 120.5 && c->quiet_s == 1.5);
    CHECK(c->line == 4);

    CHECK(p->ncases == 3 && p->narms == 4);
    if (p->ncases != 3 || p->narms != 4) goto done;
    const kg_case *s = &p->cases[0];
    CHECK(strcmp(s->name, "small") == 0 && strcmp(s->op, "gemm_bt") == 0);
    CHECK(s->dtype == KG_DT_F32 && s->M == 64 && s->N == 128 && s->K == 256 && s->splits == 2);
    CHECK(s->eps == 1e-6 && s->scale == 0.5 && s->primary == 0 && s->line == 26);
    CHECK(p->cases[1].dtype == KG_DT_BF16 && p->cases[1].M == 4096 && p->cases[1].splits == -1);
    CHECK(p->cases[2].dtype == KG_DT_F16 && p->cases[2].K == -1);

    const kg_arm *naive = &p->arms[0], *blocked = &p->arms[1], *ctl = &p->arms[2];
    CHECK(naive->role == KG_ROLE_BASELINE && naive->trusted == 1);
    CHECK(strcmp(naive->entry, "gemm_bt_naive") == 0);
    CHECK(strcmp(naive->defines, "TILE=16 USE_FMA") == 0);
    CHECK(strcmp(naive->grid, "(N + 15) / 16, (M + 15) / 16, 1") == 0);
    CHECK(strcmp(naive->args, "A, B, C, M, N, K") == 0);
    CHECK(blocked->role == KG_ROLE_CANDIDATE);
    CHECK(strcmp(blocked->cases, "small,big") == 0); /* spacing normalised */
    CHECK(strcmp(blocked->parity, "naive") == 0);
    CHECK(blocked->fake_ns == 1500.25 && blocked->fake_noise == 0.02);
    CHECK(blocked->fake_drift == -0.001 && blocked->fake_first == 0.01);
    CHECK(blocked->fake_crash == 1 && blocked->fake_hang == 2 && blocked->fake_wrong == 1);
    /* the control carries a copy of its baseline's kernel */
    CHECK(ctl->role == KG_ROLE_CONTROL && strcmp(ctl->of, "naive") == 0);
    CHECK(strcmp(ctl->source, naive->source) == 0);
    CHECK(strcmp(ctl->entry, "gemm_bt_naive") == 0);
    CHECK(strcmp(ctl->defines, naive->defines) == 0 && strcmp(ctl->cflags, naive->cflags) == 0);
    CHECK(strcmp(ctl->grid, naive->grid) == 0 && strcmp(ctl->block, naive->block) == 0);
    CHECK(strcmp(ctl->shared, naive->shared) == 0 && strcmp(ctl->args, naive->args) == 0);
    CHECK(strcmp(p->arms[3].builtin, "ref") == 0);

    CHECK(p->gate.rule == KG_GATE_CLASSIC && p->gate.min_reduction == 0.1);
    CHECK(p->gate.all_cases == 1 && p->gate.require_order == 0 && p->gate.require_control == 0);

    /* canonical: fractions as decimals, controls without inherited keys */
    CHECK_STR_CONTAINS(p->canonical, "[campaign]\nname = gemm-full\nbackend = fake\n");
    CHECK_STR_CONTAINS(p->canonical, "alpha = 0.025\n");
    CHECK_STR_CONTAINS(p->canonical, "control_margin = 0.0025\n");
    CHECK_STR_CONTAINS(p->canonical, "fake_ns = 2000\n");
    CHECK_STR_CONTAINS(p->canonical, "[arm ctl]\nop = gemm_bt\nrole = control\nof = naive\nfake_ns");
    CHECK_STR_CONTAINS(p->canonical, "\n[gate]\nrule = classic\nmin_reduction = 0.1\n");
    CHECK(strchr(p->canonical, ';') == NULL && strchr(p->canonical, '%') == NULL);
    const char *cs = strstr(p->canonical, "[case small]"), *cb = strstr(p->canonical, "[case big]");
    const char *an = strstr(p->canonical, "[arm naive]"), *g = strstr(p->canonical, "[gate]");
    CHECK(cs && cb && an && g && cs < cb && cb < an && an < g);

    /* the canonical text parses to itself */
    kg_plan *q = parse_ok(p->canonical, "elsewhere/other.kg");
    if (q) {
        CHECK(strcmp(q->canonical, p->canonical) == 0);
        CHECK(strcmp(q->hash, p->hash) == 0);
        kg_plan_free(q);
    }

    /* hash: SHA-256 of the canonical text, lowercase hex */
    unsigned char md[SHA256_DIGEST_LENGTH];
    SHA256((const unsigned char *)p->canonical, strlen(p->canonical), md);
    char hex[65];
    for (int i = 0; i < SHA256_DIGEST_LENGTH; i++) snprintf(hex + 2 * i, 3, "%02x", md[i]);
    CHECK(strcmp(hex, p->hash) == 0);

    /* lookups */
    CHECK(kg_plan_find_case(p, "big") == 1 && kg_plan_find_case(p, "nope") == -1);
    CHECK(kg_plan_find_arm(p, "ctl") == 2 && kg_plan_find_arm(p, "small") == -1);
    CHECK(kg_plan_find_arm(NULL, "ctl") == -1);
    CHECK(kg_plan_arm_applies(p, 0, 0) && kg_plan_arm_applies(p, 0, 1));
    CHECK(!kg_plan_arm_applies(p, 0, 2));           /* rowsum case, gemm_bt arm */
    CHECK(kg_plan_arm_applies(p, 1, 0) && kg_plan_arm_applies(p, 1, 1));
    CHECK(kg_plan_arm_applies(p, 3, 2) && !kg_plan_arm_applies(p, 3, 0));
    CHECK(!kg_plan_arm_applies(p, 9, 0) && !kg_plan_arm_applies(p, 0, -1));

    /* sources resolve against the plan's folder */
    char path[KG_PATH_MAX];
    kg_err e2 = {0};
    CHECK(strstr(p->base_dir, "tests/plans") != NULL && p->base_dir[0] == '/');
    rc = kg_plan_source_path(p, 0, path, sizeof path, &e2);
    CHECK_MSG(rc == KG_OK, "%s", e2.msg);
    CHECK_STR_CONTAINS(path, "tests/plans/kernels/noop.c");
    kg_err_clear(&e2);
    rc = kg_plan_source_path(p, 2, path, sizeof path, &e2); /* control: its baseline's file */
    CHECK(rc == KG_OK);
    CHECK_STR_CONTAINS(path, "tests/plans/kernels/noop.c");
    kg_err_clear(&e2);
    rc = kg_plan_source_path(p, 3, path, sizeof path, &e2); /* builtin: no source */
    CHECK(rc == KG_EINPUT);
    CHECK_STR_CONTAINS(e2.msg, "tests/plans/full.kg:");
    kg_err_clear(&e2);
    rc = kg_plan_source_path(p, 0, path, 8, &e2); /* too small a buffer */
    CHECK(rc == KG_EINPUT);
done:
    kg_plan_free(p);
}

static void test_defaults(void)
{
    kg_plan *p = parse_ok(HEAD, "some/dir/my.plan.kg");
    if (!p) return;
    const kg_campaign *c = &p->campaign;
    CHECK(strcmp(c->name, "my.plan") == 0); /* the file's stem */
    CHECK(strcmp(c->backend, "auto") == 0 && c->device == 0);
    CHECK(c->warmup == 3 && c->samples == 10 && c->rounds == 5 && c->processes == 2);
    CHECK(c->pack == 1 && c->interleave == KG_INTERLEAVE_SAMPLE && c->seed == 1);
    CHECK(c->alpha == 0.05 && c->margin == 0.005 && c->equivalence == 0.01);
    CHECK(c->control_margin == 0.0025 && c->order_min == 0.0025);
    CHECK(c->timeout_s == 600 && c->l2 == KG_L2_WARM && c->inputs == KG_INPUTS_FRESH);
    CHECK(c->rotate == 1 && c->quiet_s == 30 && c->max_load == 0 && c->repeats == 3 && c->forbid[0] == 0 && c->line == 0);
    const kg_case *k = &p->cases[0];
    CHECK(k->M == -1 && k->N == -1 && k->K == -1 && k->splits == -1);
    CHECK(k->eps == 1e-5 && k->scale == 1.0 && k->primary == 1 && k->line == 1);
    const kg_arm *a = &p->arms[0];
    CHECK(strcmp(a->entry, "kernel") == 0 && a->trusted == 0 && a->line == 4);
    CHECK(a->fake_ns == 1000 && a->fake_noise == 0.01 && a->fake_drift == 0);
    CHECK(a->fake_first == 0 && a->fake_crash == -1 && a->fake_hang == -1 && a->fake_wrong == 0);
    CHECK(a->cases[0] == '\0' && a->parity[0] == '\0' && a->of[0] == '\0');
    CHECK(p->gate.rule == KG_GATE_INTERVAL && p->gate.min_reduction == 0.005);
    CHECK(p->gate.all_cases == 0 && p->gate.require_order == 1 && p->gate.require_control == 1);
    CHECK(p->gate.line == 0);
    CHECK(strcmp(p->path, "some/dir/my.plan.kg") == 0 && strcmp(p->base_dir, "/base") == 0);
    /* defaults are explicit in the canonical form; unset dims are left out */
    CHECK_STR_CONTAINS(p->canonical, "samples = 10\n");
    CHECK_STR_CONTAINS(p->canonical, "timeout = 600\n");
    CHECK_STR_CONTAINS(p->canonical, "quiet = 30\n");
    CHECK_STR_CONTAINS(p->canonical, "eps = 1e-05\n");
    CHECK_STR_CONTAINS(p->canonical, "\n[gate]\nrule = interval\nmin_reduction = 0.005\n");
    CHECK(strstr(p->canonical, "M =") == NULL && strstr(p->canonical, "splits") == NULL);
    kg_plan_free(p);

    /* min_reduction follows the campaign's margin unless given */
    p = parse_ok("[campaign]\nmargin = 3%\n" HEAD, "x.kg");
    if (p) {
        CHECK(p->campaign.margin == 0.03 && p->gate.min_reduction == 0.03);
        kg_plan_free(p);
    }
    p = parse_ok("[campaign]\nmargin = 3%\n" HEAD "[gate]\nmin_reduction = 0.1\n", "x.kg");
    if (p) {
        CHECK(p->gate.min_reduction == 0.1 && p->gate.line == 10);
        kg_plan_free(p);
    }
    /* odd spellings of values */
    p = parse_ok("[campaign]\nseed = +0\nalpha = 0.1%\nquiet = 0x10\n" HEAD
                 "trusted = true\nfake_wrong = 1\n", "x.kg");
    if (p) {
        CHECK(p->campaign.seed == 0 && p->campaign.alpha == 0.001 && p->campaign.quiet_s == 16);
        CHECK(p->arms[0].trusted == 1 && p->arms[0].fake_wrong == 1);
        kg_plan_free(p);
    }
    /* a stem with characters a name may not hold */
    p = parse_ok(HEAD, "my plan!.kg");
    if (p) {
        CHECK(strcmp(p->campaign.name, "my_plan_") == 0);
        kg_plan_free(p);
    }
    /* CRLF line ends, BOM, blank-prefixed lines, ':' separator, comments */
    p = parse_ok("\xef\xbb\xbf; c\r\n[case a]  # c\r\n  op: gemm_bt\r\n\tdtype = f32 ; c\r\n"
                 "[arm base]\r\nop = gemm_bt\r\nrole = baseline # c\r\nsource = k.c\r\n",
                 "crlf.kg");
    if (p) {
        CHECK(p->cases[0].dtype == KG_DT_F32 && p->arms[0].role == KG_ROLE_BASELINE);
        CHECK(p->arms[0].line == 5);
        kg_plan_free(p);
    }
    /* names at the length limit are not truncated */
    char text[1024];
    const char *n63 = "n23456789012345678901234567890123456789012345678901234567890123";
    snprintf(text, sizeof text, "[case %s]\nop = gemm_bt\ndtype = f16\n[arm %s]\nop = gemm_bt\n"
             "role = baseline\nbuiltin = ref\ncases = %s\n", n63, n63, n63);
    p = parse_ok(text, "x.kg");
    if (p) {
        CHECK(strcmp(p->cases[0].name, n63) == 0 && strcmp(p->arms[0].name, n63) == 0);
        kg_plan_free(p);
    }
}

static void test_hash(void)
{
    kg_plan *a = parse_ok("[campaign]\nname = h\nmargin = 0.02\n" HEAD, "a.kg");
    kg_plan *b = parse_ok("; same plan, other spelling\n[campaign]\n  margin=2%   \n"
                          "name =  h\n\n" HEAD "# trailing comment\n", "b.kg");
    kg_plan *c = parse_ok("[campaign]\nname = h\nmargin = 0.03\n" HEAD, "a.kg");
    kg_plan *d = parse_ok("[campaign]\nname = h\nmargin = 0.02\n" HEAD, "a.kg");
    if (a && b && c && d) {
        CHECK(strlen(a->hash) == 64 && strspn(a->hash, "0123456789abcdef") == 64);
        CHECK(strcmp(a->hash, d->hash) == 0);       /* stable */
        CHECK(strcmp(a->canonical, b->canonical) == 0);
        CHECK(strcmp(a->hash, b->hash) == 0);       /* spelling does not matter */
        CHECK(strcmp(a->hash, c->hash) != 0);       /* a value does */
    }
    kg_plan_free(a);
    kg_plan_free(b);
    kg_plan_free(c);
    kg_plan_free(d);
    kg_plan_free(NULL);
}

/* kg_plan_smoke: the smoke run's numbers and key, a canonical text of its
 * own that parses back to itself, and the same smoke plan from a plan that
 * says smoke = yes; a plain plan's canonical form never names the key. */
static void test_smoke(void)
{
    kg_plan *a = parse_ok("[campaign]\nname = s\nprocesses = 6\nrounds = 9\nsamples = 40\nquiet = 30\n" HEAD, "s.kg");
    kg_plan *y = parse_ok("[campaign]\nname = s\nprocesses = 6\nrounds = 9\nsamples = 40\nquiet = 30\n"
                          "smoke = yes\n" HEAD, "s.kg");
    kg_err err = {0};
    if (a == NULL || y == NULL) goto done;
    char plain[65];
    snprintf(plain, sizeof plain, "%s", a->hash);
    CHECK(strstr(a->canonical, "smoke") == NULL);
    CHECK(y->campaign.smoke == 1 && y->campaign.processes == 6); /* the key alone shrinks nothing */
    CHECK_MSG(kg_plan_smoke(a, &err) == KG_OK, "%s", err.msg);
    CHECK(a->campaign.smoke == 1 && a->campaign.processes == KG_SMOKE_PROCESSES &&
          a->campaign.rounds == KG_SMOKE_ROUNDS && a->campaign.samples == KG_SMOKE_SAMPLES &&
          a->campaign.warmup == KG_SMOKE_WARMUP && a->campaign.looks == 1 && a->campaign.quiet_s == 0);
    CHECK(strcmp(a->hash, plain) != 0);
    CHECK(strstr(a->canonical, "\nsmoke = yes\n") != NULL && strstr(a->canonical, "\nprocesses = 1\n") != NULL);
    kg_plan *back = parse_ok(a->canonical, "canon.kg");
    if (back != NULL) CHECK(strcmp(back->hash, a->hash) == 0);
    /* idempotent, and a plan that says smoke = yes comes to the same run */
    char once[65];
    snprintf(once, sizeof once, "%s", a->hash);
    CHECK(kg_plan_smoke(a, &err) == KG_OK && strcmp(a->hash, once) == 0);
    CHECK(kg_plan_smoke(y, &err) == KG_OK && strcmp(y->hash, once) == 0);
    if (back != NULL) CHECK(kg_plan_smoke(back, &err) == KG_OK && strcmp(back->hash, once) == 0);
    kg_plan_free(back);
    CHECK(kg_plan_smoke(NULL, &err) == KG_EINTERNAL);
done:
    kg_plan_free(a);
    kg_plan_free(y);
}

static void test_errors(void)
{
    /* sections */
    EXPECT_ERR(HEAD "[cases b]\n", 8, "[cases b]");
    EXPECT_ERR(HEAD "[case b\nop = gemm_bt\n", 8, "[case b");
    EXPECT_ERR("[case foo\n", 1, "[case foo");
    EXPECT_ERR(HEAD "[case]\n", 8, "[case]");
    EXPECT_ERR(HEAD "[case b/c]\n", 8, "[case b/c]");
    EXPECT_ERR(HEAD "[case b] x\n", 8, "[case b] x");
    EXPECT_ERR(HEAD "[gate x]\n", 8, "[gate x]");
    EXPECT_ERR(HEAD "[case a]\n", 8, "[case a]");
    EXPECT_ERR(HEAD "[arm base]\n", 8, "[arm base]");
    EXPECT_ERR("[campaign]\n" HEAD "[campaign]\n", 9, "[campaign]");
    EXPECT_ERR(HEAD "[gate]\n[gate]\n", 9, "[gate]");
    EXPECT_ERR("[case n234567890123456789012345678901234567890123456789012345678901234]\n", 1,
               "[case n234567890123456789012345678901234567890123456789012345678901234]");
    /* keys */
    EXPECT_ERR(HEAD "colour = red\n", 8, "colour");
    EXPECT_ERR("[campaign]\nsample = 3\n" HEAD, 2, "sample");
    EXPECT_ERR("[gate]\nmin_reduction = 1%\nrequire = yes\n" HEAD, 3, "require");
    EXPECT_ERR(HEAD "source = other.c\n", 8, "source = other.c");
    EXPECT_ERR("samples = 3\n" HEAD, 1, "samples = 3");
    EXPECT_ERR(HEAD "just words\n", 8, "just words");
    EXPECT_ERR(HEAD "entry =\n", 8, "entry =");
    EXPECT_ERR(HEAD "entry = ;x\n", 8, "entry = ;x");
    EXPECT_ERR(HEAD "entry=;x\n", 8, "entry=;x");
    /* missing required keys */
    EXPECT_ERR("[case a]\ndtype = f32\n[arm b]\nop = gemm_bt\nrole = baseline\nsource = k.c\n", 1,
               "[case a]");
    EXPECT_ERR("[case a]\nop = gemm_bt\n[arm b]\nop = gemm_bt\nrole = baseline\nsource = k.c\n", 1,
               "[case a]");
    EXPECT_ERR(HEAD "[arm c]\nsource = k.c\n", 8, "[arm c]");
    EXPECT_ERR(HEAD "[arm c]\nop = gemm_bt\n", 8, "[arm c]");
    EXPECT_ERR(HEAD "builtin = ref\n", 8, "builtin = ref");
    EXPECT_ERR(HEAD "of = base\n", 8, "of = base");
    /* control arms */
    EXPECT_ERR(HEAD "[arm c]\nop = gemm_bt\nrole = control\n", 8, "[arm c]");
    EXPECT_ERR(HEAD "[arm c]\nop = gemm_bt\nrole = control\nof = nobody\n", 11, "nobody");
    EXPECT_ERR(HEAD "[arm c]\nop = gemm_bt\nsource = k.c\n[arm d]\nop = gemm_bt\n"
               "role = control\nof = c\n", 14, "of = c");
    EXPECT_ERR(HEAD "[case r]\nop = rowsum\ndtype = f32\n[arm rb]\nop = rowsum\nrole = baseline\n"
               "builtin = ref\n[arm c]\nop = rowsum\nrole = control\nof = base\n", 18, "of = base");
    static const char *const inherited[] = {"source = x.c", "builtin = ref", "entry = k2",
                                            "defines = A=1", "cflags = -O2", "grid = 1, 1, 1",
                                            "trusted = yes"};
    for (size_t i = 0; i < sizeof inherited / sizeof inherited[0]; i++) {
        char t[512];
        snprintf(t, sizeof t, HEAD "[arm c]\nop = gemm_bt\nrole = control\nof = base\n%s\n",
                 inherited[i]);
        expect_err_n(t, strlen(t), 12, inherited[i], __LINE__);
    }
    /* a control runs where its baseline runs: in the worker when the
     * baseline is trusted, else in an arm host of its own */
    for (int tr = 0; tr < 2; tr++) {
        char t[512];
        snprintf(t, sizeof t, HEAD "trusted = %s\n[arm c]\nop = gemm_bt\nrole = control\nof = base\n",
                 tr ? "yes" : "no");
        kg_plan *cp = parse_ok(t, "ctl.kg");
        if (cp != NULL) CHECK(cp->arms[1].trusted == tr && cp->arms[0].trusted == tr);
        kg_plan_free(cp);
    }
    /* numbers and words */
    static const struct { const char *kv, *off; } bad[] = {
        {"samples = 1x", "1x"}, {"samples = 0", "0"}, {"samples = ", "samples ="},
        {"warmup = -1", "-1"}, {"rounds = 0", "0"}, {"processes = 0", "0"}, {"pack = 0", "0"},
        {"rotate = 0", "0"}, {"device = -1", "-1"}, {"samples = 99999999999", "99999999999"},
        {"samples = 1.5", "1.5"}, {"seed = -1", "-1"}, {"seed = 18446744073709551616",
        "18446744073709551616"}, {"seed = 0x10", "0x10"}, {"alpha = 0.5", "0.5"},
        {"alpha = 0", "0"}, {"alpha = 50%", "50%"}, {"alpha = five", "five"}, {"alpha = %", "%"},
        {"alpha = nan", "nan"}, {"margin = 1", "1"}, {"margin = -1%", "-1%"},
        {"equivalence = 2%%", "2%%"}, {"control_margin = 1e400", "1e400"},
        {"order_min = 0.1.1", "0.1.1"}, {"timeout = 0", "0"}, {"timeout = inf", "inf"},
        {"quiet = -1", "-1"}, {"backend = opencl", "opencl"}, {"interleave = random", "random"},
        {"l2 = hot", "hot"}, {"inputs = stale", "stale"}, {"name = a b", "a b"},
        {"backend = CPU", "CPU"},
        /* durations and counts have sane bounds; no NaN, infinity or subnormal */
        {"timeout = 1e-320", "1e-320"}, {"timeout = 0.5", "0.5"}, {"timeout = 604801", "604801"},
        {"timeout = nan", "nan"}, {"timeout = -inf", "-inf"}, {"quiet_timeout = 0.5", "0.5"},
        {"quiet_timeout = 1e9", "1e9"}, {"quiet = 86401", "86401"}, {"quiet = 4e-310", "4e-310"},
        {"warm = 601", "601"}, {"warm = -1", "-1"}, {"samples = 100001", "100001"},
        {"rounds = 10001", "10001"}, {"processes = 10001", "10001"}, {"pack = 100001", "100001"},
        {"warmup = 100001", "100001"}, {"device = 4096", "4096"}, {"repeats = 101", "101"},
        {"max_load = inf", "inf"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char t[512];
        snprintf(t, sizeof t, "[campaign]\n%s\n" HEAD, bad[i].kv);
        expect_err_n(t, strlen(t), 2, bad[i].off, __LINE__);
    }
    static const struct { const char *kv, *off; } bad_case[] = {
        {"M = 0", "0"}, {"N = -5", "-5"}, {"K = x", "x"}, {"splits = 0", "0"},
        {"eps = 0", "0"}, {"scale = -1", "-1"}, {"primary = maybe", "maybe"},
        {"dtype = f128", "f128"}, {"op = gemm bt", "gemm bt"}, {"eps = 1e-310", "1e-310"},
        {"scale = 5e-324", "5e-324"}};
    for (size_t i = 0; i < sizeof bad_case / sizeof bad_case[0]; i++) {
        char t[512];
        snprintf(t, sizeof t, "[case b]\nop = gemm_bt\n%s\n" HEAD, bad_case[i].kv);
        /* dtype and op are repeated in the first case: duplicate key */
        int dup = strncmp(bad_case[i].kv, "op", 2) == 0;
        if (dup) snprintf(t, sizeof t, "[case b]\n%s\n" HEAD, bad_case[i].kv);
        expect_err_n(t, strlen(t), dup ? 2 : 3, bad_case[i].off, __LINE__);
    }
    static const struct { const char *kv, *off; } bad_arm[] = {
        {"fake_first = 11", "11"}, {"trusted = si", "si"}, {"entry = 9lives", "9lives"},
        {"fake_ns = 0", "0"}, {"fake_noise = -0.1", "-0.1"}, {"fake_crash = -2", "-2"},
        {"fake_hang = x", "x"}, {"fake_wrong = 2", "2"}, {"cases = a,,a", ""},
        {"cases = a b", "a b"}, {"parity = x y", "x y"}};
    for (size_t i = 0; i < sizeof bad_arm / sizeof bad_arm[0]; i++) {
        char t[512];
        snprintf(t, sizeof t, HEAD "%s\n", bad_arm[i].kv);
        expect_err_n(t, strlen(t), 8, bad_arm[i].off, __LINE__);
    }
    EXPECT_ERR(HEAD "[arm c]\nop = gemm_bt\nrole = boss\n", 10, "boss");
    EXPECT_ERR(HEAD "[gate]\nrule = strict\n", 9, "strict");
    EXPECT_ERR(HEAD "[gate]\ncases = some\n", 9, "some");
    EXPECT_ERR(HEAD "[gate]\nmin_reduction = 100%\n", 9, "100%");
    EXPECT_ERR(HEAD "[gate]\nrequire_order = perhaps\n", 9, "perhaps");
    /* duplicates */
    EXPECT_ERR(HEAD "role = candidate\n", 8, "role = candidate");
    EXPECT_ERR("[campaign]\nseed = 1\nseed = 2\n" HEAD, 3, "seed = 2");
    /* references between sections */
    EXPECT_ERR(HEAD "cases = a, ghost\n", 8, "ghost");
    EXPECT_ERR(HEAD "[case r]\nop = rowsum\ndtype = f32\n[arm rb]\nop = rowsum\nrole = baseline\n"
               "builtin = ref\ncases = a\n", 15, "a");
    EXPECT_ERR(HEAD "parity = ghost\n", 8, "ghost");
    EXPECT_ERR(HEAD "parity = base\n", 8, "base");
    EXPECT_ERR(HEAD "[case r]\nop = rowsum\ndtype = f32\n", 8, "r");
    EXPECT_ERR(HEAD "cases = a\n[case b]\nop = gemm_bt\ndtype = f16\n", 9, "b");
    EXPECT_ERR("[case a]\nop = gemm_bt\ndtype = f32\n[arm c]\nop = gemm_bt\nsource = k.c\n", 1, "a");
    /* empty and incomplete plans */
    EXPECT_ERR("", 1, "");
    EXPECT_ERR("\n\n; only a comment\n   \n", 1, "");
    EXPECT_ERR("[campaign]\nsamples = 3\n", 1, "[campaign]");
    EXPECT_ERR("[case a]\nop = gemm_bt\ndtype = f32\n", 1, "[case a]");
    EXPECT_ERR("[arm base]\nop = gemm_bt\nrole = baseline\nsource = k.c\n", 1, "[arm base]");
    /* junk */
    expect_err_n(HEAD "op\0= x\n", sizeof(HEAD "op\0= x\n") - 1, 8, "op\\x00= x", __LINE__);
    EXPECT_ERR(HEAD "source = \xff\xfe.c\n", 8, "source = \\xff\\xfe.c");
    EXPECT_ERR("[case a]\nop = gemm_bt\x01\n", 2, "op = gemm_bt\\x01");
    EXPECT_ERR(HEAD "source = \xc0\x80.c\n", 8, "source = \\xc0\\x80.c");
    EXPECT_ERR(HEAD "source = \xed\xa0\x80.c\n", 8, "source = \\xed\\xa0\\x80.c");
    EXPECT_ERR(HEAD "source = a\rb\n", 8, "source = a\\x0db");
    EXPECT_ERR("\x7f" "ELF\x02\x01\x01", 1, "\\x7fELF\\x02\\x01\\x01");
    /* a line too long for libinih */
    char t[600];
    memset(t, 'x', sizeof t);
    memcpy(t, HEAD "cflags = ", strlen(HEAD "cflags = "));
    t[300] = '\n';
    t[301] = '\0';
    kg_err err = {0};
    kg_plan *p = NULL;
    int rc = kg_plan_parse(t, strlen(t), "long.kg", ".", &p, &err);
    CHECK(rc == KG_EINPUT && p == NULL);
    CHECK_STR_CONTAINS(err.msg, "long.kg:8: line too long: 'cflags = xxx");
    /* an arm's compiler options are bounded at plan time (KG_ARM_MAX_FLAGS):
     * 40 defines and 24 flags pass, 40 and 30 fail at the cflags line */
    char defs[200] = "", flags[200] = "", plan[600];
    for (int i = 0; i < 40; i++) strcat(defs, i ? " D" : "D");
    for (int i = 0; i < 30; i++) strcat(flags, i ? " -g" : "-g");
    snprintf(plan, sizeof plan, HEAD "defines = %s\ncflags = %.*s\n", defs, 24 * 3 - 1, flags);
    kg_plan *ok = parse_ok(plan, "flags.kg");
    CHECK(ok != NULL);
    kg_plan_free(ok);
    snprintf(plan, sizeof plan, HEAD "defines = %s\ncflags = %s\n", defs, flags);
    p = NULL;
    memset(&err, 0, sizeof err);
    CHECK(kg_plan_parse(plan, strlen(plan), "flags.kg", ".", &p, &err) == KG_EINPUT);
    CHECK_STR_CONTAINS(err.msg, "flags.kg:9: too many compiler options: 'cflags = -g -g");
    CHECK_STR_CONTAINS(err.msg, "hold 70 words; at most 64");
}

/* The bounds of durations and counts: the edges are accepted, and a value
 * past one names the bound in the message. */
static void test_bounds(void)
{
    static const char *const ok[] = {
        "timeout = 1", "timeout = 604800", "quiet_timeout = 1", "quiet = 0", "quiet = 86400", "warm = 0",
        "warm = 600", "samples = 100000", "rounds = 10000", "processes = 10000", "inputs = resident\npack = 100000",
        "warmup = 100000", "device = 4095"};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        char t[512];
        snprintf(t, sizeof t, "[campaign]\n%s\n" HEAD, ok[i]);
        kg_plan *p = parse_ok(t, "edge.kg");
        kg_plan_free(p);
    }
    static const struct { const char *kv, *says; } msg[] = {
        {"timeout = 0.5", "[1, 604800]"}, {"timeout = 1e-320", "subnormal"},
        {"samples = 100001", "[1, 100000]"}, {"processes = 0", "[1, 10000]"},
        {"quiet_timeout = 0", "[1, 604800]"}, {"alpha = 0.6", "allowed: (0, 0.5)"},
        {"max_load = 2e6", "allowed: [0, 1000000]"}};
    for (size_t i = 0; i < sizeof msg / sizeof msg[0]; i++) {
        char t[512];
        snprintf(t, sizeof t, "[campaign]\n%s\n" HEAD, msg[i].kv);
        kg_err err = {0};
        kg_plan *p = NULL;
        CHECK(kg_plan_parse(t, strlen(t), "b.kg", ".", &p, &err) == KG_EINPUT);
        CHECK_STR_CONTAINS(err.msg, msg[i].says);
    }
}

static void test_files(void)
{
    kg_err err = {0};
    kg_plan *p = NULL;
    int rc = kg_plan_load("tests/plans/bad_unterminated.kg", &p, &err);
    CHECK(rc == KG_EINPUT && p == NULL);
    CHECK_STR_CONTAINS(err.msg, "tests/plans/bad_unterminated.kg:3: ");
    CHECK_STR_CONTAINS(err.msg, "'[case foo'");
    kg_err_clear(&err);
    rc = kg_plan_load("tests/plans/bad_binary.kg", &p, &err);
    CHECK(rc == KG_EINPUT && p == NULL);
    CHECK_STR_CONTAINS(err.msg, "tests/plans/bad_binary.kg:4: ");
    CHECK_STR_CONTAINS(err.msg, "'op = gemm\\x00bt'");
    kg_err_clear(&err);
    rc = kg_plan_load("tests/plans/no_such_plan.kg", &p, &err);
    CHECK(rc == KG_EIO && p == NULL);
    CHECK_STR_CONTAINS(err.msg, "tests/plans/no_such_plan.kg");
    kg_err_clear(&err);

    /* the example of docs/plan-format.md, kept here verbatim */
    rc = kg_plan_load("tests/plans/example.kg", &p, &err);
    CHECK_MSG(rc == KG_OK, "%s", err.msg);
    if (rc == KG_OK) {
        CHECK(strcmp(p->campaign.name, "gemm_bt_blocked") == 0);
        CHECK(p->ncases == 2 && p->narms == 3);
        CHECK(strcmp(p->arms[2].source, "kernels/cpu/gemm_bt_naive.c") == 0);
        /* the source does not exist next to the fixture: an error naming plan and line */
        char path[KG_PATH_MAX];
        kg_err_clear(&err);
        rc = kg_plan_source_path(p, 1, path, sizeof path, &err);
        CHECK(rc == KG_EINPUT && path[0] == '\0');
        char where[64];
        snprintf(where, sizeof where, "tests/plans/example.kg:%d: ", p->arms[1].line);
        CHECK_STR_CONTAINS(err.msg, where);
        CHECK_STR_CONTAINS(err.msg, "kernels/cpu/gemm_bt_blocked.c");
        kg_plan_free(p);
    }
}

/* The complete example of docs/plan-format.md (its first ```ini block)
 * parses, and is the same plan as tests/plans/example.kg. */
static void test_doc_example(void)
{
    size_t len = 0;
    char *doc = read_all("docs/plan-format.md", &len);
    CHECK(doc != NULL);
    if (!doc) return;
    doc[len] = '\0';
    char *start = strstr(doc, "```ini\n");
    char *end = start ? strstr(start + 7, "\n```") : NULL;
    CHECK(start != NULL && end != NULL);
    if (start && end) {
        start += 7;
        kg_plan *p = NULL, *q = NULL;
        kg_err err = {0};
        int rc = kg_plan_parse(start, (size_t)(end - start) + 1, "docs/example.kg", "docs", &p,
                               &err);
        CHECK_MSG(rc == KG_OK, "%s", err.msg);
        rc = kg_plan_load("tests/plans/example.kg", &q, &err);
        CHECK_MSG(rc == KG_OK, "%s", err.msg);
        if (p && q) CHECK(strcmp(p->hash, q->hash) == 0);
        kg_plan_free(p);
        kg_plan_free(q);
    }
    free(doc);
}

static void test_names(void)
{
    CHECK(strcmp(kg_dtype_name(KG_DT_F32), "f32") == 0);
    CHECK(strcmp(kg_dtype_name(KG_DT_F16), "f16") == 0);
    CHECK(strcmp(kg_dtype_name(KG_DT_BF16), "bf16") == 0);
    CHECK(kg_dtype_size(KG_DT_F32) == 4 && kg_dtype_size(KG_DT_F16) == 2);
    CHECK(kg_dtype_size(KG_DT_BF16) == 2);
    CHECK(strcmp(kg_role_name(KG_ROLE_BASELINE), "baseline") == 0);
    CHECK(strcmp(kg_role_name(KG_ROLE_CANDIDATE), "candidate") == 0);
    CHECK(strcmp(kg_role_name(KG_ROLE_CONTROL), "control") == 0);
    CHECK(strcmp(kg_role_name(KG_ROLE_REFERENCE), "reference") == 0);
}

/* ---- fuzz ---------------------------------------------------------------- */

static uint64_t rng_state = 0x9e3779b97f4a7c15u;
static uint64_t rng(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* -DPLAN_FUZZ_SCALE=100 for a long run */
#ifndef PLAN_FUZZ_SCALE
#define PLAN_FUZZ_SCALE 1
#endif

static int fuzz_accepted, fuzz_rejected;

/* Whatever the input, parsing returns a plan or a one-line input error;
 * an accepted plan's canonical text parses to itself. */
static void fuzz_one(const char *input, size_t len)
{
    kg_err err = {0};
    kg_plan *p = NULL;
    /* an exact-size, unterminated copy: ASan sees any read past the end */
    char *buf = malloc(len ? len : 1);
    if (!buf) return;
    memcpy(buf, input, len);
    int rc = kg_plan_parse(buf, len, "fuzz.kg", ".", &p, &err);
    free(buf);
    if (rc == KG_OK) {
        fuzz_accepted++;
        kg_plan *q = NULL;
        kg_err e2 = {0};
        int rc2 = kg_plan_parse(p->canonical, strlen(p->canonical), "fuzz.kg", ".", &q, &e2);
        CHECK_MSG(rc2 == KG_OK, "canonical rejected: %s\n%s", e2.msg, p->canonical);
        if (rc2 == KG_OK) {
            CHECK_MSG(strcmp(p->canonical, q->canonical) == 0, "not a fixed point:\n%s\n--\n%s",
                      p->canonical, q->canonical);
            kg_plan_free(q);
        }
        kg_plan_free(p);
    } else {
        fuzz_rejected++;
        CHECK_MSG(rc == KG_EINPUT && p == NULL, "rc %d", rc);
        CHECK_MSG(strncmp(err.msg, "fuzz.kg:", 8) == 0 && strchr(err.msg, '\n') == NULL,
                  "%s", err.msg);
    }
}


/* Axes: {a, b} lists expand a section into variants BASE[AXIS=VALUE,...]
 * (the first axis slowest), the canonical form holds the variants and
 * parses to itself, and a cases list names a case with axes by its base. */
static void test_axes(void)
{
    const char *text =
        "[campaign]\nname = ax\nbackend = fake\n"
        "[case sq]\nop = gemm_bt\ndtype = {f32, bf16}\nM = {96, 256}\nN = 8\nK = 8\n"
        "[case one]\nop = gemm_bt\ndtype = f32\nM = 3\nN = 8\nK = 8\n"
        "[arm base]\nop = gemm_bt\nrole = baseline\nbuiltin = ref\n"
        "[arm fma]\nop = gemm_bt\nbuiltin = ref\ndefines = PITCH={36, 40} PIPE=0\n"
        "cflags = -DSPLITS={1,2} -O2\ncases = sq\n"
        "[arm c]\nop = gemm_bt\nrole = control\nof = base\nfake_ns = {900, 1000}\n"
        "[gate]\n";
    kg_plan *p = parse_ok(text, "ax.kg");
    if (!p) return;
    static const char *const cases[] = {"sq[dtype=f32,M=96]", "sq[dtype=f32,M=256]", "sq[dtype=bf16,M=96]",
                                        "sq[dtype=bf16,M=256]", "one"};
    static const char *const arms[] = {"base", "fma[PITCH=36,SPLITS=1]", "fma[PITCH=36,SPLITS=2]",
                                       "fma[PITCH=40,SPLITS=1]", "fma[PITCH=40,SPLITS=2]", "c[fake_ns=900]",
                                       "c[fake_ns=1000]"};
    CHECK(p->ncases == 5 && p->narms == 7);
    for (int i = 0; i < 5 && i < p->ncases; i++) CHECK_MSG(strcmp(p->cases[i].name, cases[i]) == 0, "%s", p->cases[i].name);
    for (int i = 0; i < 7 && i < p->narms; i++) CHECK_MSG(strcmp(p->arms[i].name, arms[i]) == 0, "%s", p->arms[i].name);
    if (p->ncases == 5 && p->narms == 7) {
        CHECK(p->cases[2].dtype == KG_DT_BF16 && p->cases[2].M == 96 && p->cases[1].M == 256);
        CHECK_MSG(strcmp(p->arms[3].defines, "PITCH=40 PIPE=0") == 0, "%s", p->arms[3].defines);
        CHECK_MSG(strcmp(p->arms[3].cflags, "-DSPLITS=1 -O2") == 0, "%s", p->arms[3].cflags);
        CHECK(p->arms[6].fake_ns == 1000.0 && p->arms[6].role == KG_ROLE_CONTROL);
        /* cases = sq: every variant of sq, not the case one */
        CHECK(kg_plan_arm_applies(p, 1, 0) && kg_plan_arm_applies(p, 1, 3) && !kg_plan_arm_applies(p, 1, 4));
        CHECK(kg_plan_arm_applies(p, 0, 4));
        CHECK(kg_plan_name_base(p->arms[1].name) == 3 && kg_plan_name_base("base") == 0);
        CHECK(kg_plan_name_base("x[") == 0 && kg_plan_name_base("[A=1]") == 0);
        char axes[256];
        CHECK(kg_plan_axes_text(p, 1, 2, axes, sizeof axes) == 4);
        CHECK_MSG(strcmp(axes, "PITCH = 36, 40; SPLITS = 1, 2") == 0, "%s", axes);
        CHECK(kg_plan_axes_text(p, 0, 0, axes, sizeof axes) == 4);
        CHECK_MSG(strcmp(axes, "dtype = f32, bf16; M = 96, 256") == 0, "%s", axes);
        CHECK(kg_plan_axes_text(p, 1, 0, axes, sizeof axes) == 0 && axes[0] == '\0');
    }
    CHECK_STR_CONTAINS(p->canonical, "\n[arm fma[PITCH=40,SPLITS=2]]\nop = gemm_bt\n");
    CHECK_STR_CONTAINS(p->canonical, "defines = PITCH=40 PIPE=0\ncflags = -DSPLITS=2 -O2\ncases = sq\n");
    CHECK(strchr(p->canonical, '{') == NULL);
    kg_plan *q = parse_ok(p->canonical, "other.kg");
    if (q) {
        CHECK(strcmp(q->canonical, p->canonical) == 0 && strcmp(q->hash, p->hash) == 0);
        kg_plan_free(q);
    }
    /* spelling does not matter; the values' order does */
    char *alt = malloc(strlen(text) + 64);
    if (alt) {
        strcpy(alt, text);
        char *d = strstr(alt, "PITCH={36, 40}");
        memcpy(d, "PITCH={ 36,40}", 14);
        kg_plan *r = parse_ok(alt, "alt.kg");
        if (r) CHECK(strcmp(r->hash, p->hash) == 0);
        kg_plan_free(r);
        d = strstr(alt, "PITCH={ 36,40}");
        memcpy(d, "PITCH={40, 36}", 14);
        r = parse_ok(alt, "alt.kg");
        if (r) CHECK(strcmp(r->hash, p->hash) != 0 && strcmp(r->arms[1].name, "fma[PITCH=40,SPLITS=1]") == 0);
        kg_plan_free(r);
        free(alt);
    }
    kg_plan_free(p);
    /* a cases list naming one variant: the comma inside its brackets separates nothing */
    const char *one =
        "[case sq]\nop = gemm_bt\ndtype = {f32, bf16}\nM = {96, 256}\nN = 8\nK = 8\n"
        "[case one]\nop = gemm_bt\ndtype = f32\nM = 3\nN = 8\nK = 8\n"
        "[arm base]\nop = gemm_bt\nrole = baseline\nbuiltin = ref\n"
        "[arm v]\nop = gemm_bt\nbuiltin = ref\ncases = sq[dtype=bf16,M=96] , one\n";
    p = parse_ok(one, "one.kg");
    if (p) {
        CHECK(p->narms == 2 && p->ncases == 5);
        if (p->narms == 2 && p->ncases == 5) {
            CHECK_MSG(strcmp(p->arms[1].cases, "sq[dtype=bf16,M=96],one") == 0, "%s", p->arms[1].cases);
            CHECK(kg_plan_arm_applies(p, 1, 2) && kg_plan_arm_applies(p, 1, 4));
            CHECK(!kg_plan_arm_applies(p, 1, 0) && !kg_plan_arm_applies(p, 1, 3));
        }
        kg_plan_free(p);
    }
    /* errors */
    EXPECT_ERR(HEAD "[arm c]\nop = gemm_bt\nsource = k.c\nfake_ns = {1, 1}\n", 11, "1");
    EXPECT_ERR(HEAD "[arm c]\nop = gemm_bt\nsource = k.c\nfake_ns = {}\n", 11, "fake_ns = {}");
    EXPECT_ERR(HEAD "[arm c]\nop = gemm_bt\nsource = {k.c, j.c}\n", 10, "source = {k.c, j.c}");
    EXPECT_ERR(HEAD "[arm c]\nop = gemm_bt\nsource = k.c\nfake_ns = {1, 2}\n[arm c[fake_ns=2]]\nop = gemm_bt\n"
               "source = k.c\n", 12, "c[fake_ns=2]");
    EXPECT_ERR(HEAD "[arm c]\nop = gemm_bt\nsource = k.c\ndefines = X {1, 2}\n", 11, "defines = X {1, 2}");
    EXPECT_ERR(HEAD "[case b]\nop = gemm_bt\ndtype = f32\nM = {1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17}\n"
               "N = {1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16}\n", 8, "[case b]");
    EXPECT_ERR("[campaign]\nseed = {1, 2}\n" HEAD, 2, "seed = {1, 2}");
    EXPECT_ERR(HEAD "[arm c[A=1]]\nop = gemm_bt\nsource = k.c\nfake_ns = {1, 2}\n", 11, "fake_ns = {1, 2}");
    EXPECT_ERR(HEAD "[case b]\nop = gemm_bt\ndtype = f32\nM = {1, x}\n", 11, "x");
}

static void test_fuzz(void)
{
    static const char alphabet[] = "[]=:;#% \t\n\r\x00\xff\xc3\xa9" "abcdefgmnoprsu_.-0123456789eM";
    static const char *const tokens[] = {
        "0", "-1", "1", "2%", "0.5", "1e308", "nan", "yes", "no", "f16", "bf16", "baseline",
        "control", "candidate", "reference", "naive", "blocked", "small", "big", "rows",
        "gemm_bt", "rowsum", "[", "]", ";", "#", " ", "=", "\n", "\n[arm x]\n", "\n[case y]\n",
        "of", "role", "cases", "parity", "\xff", "%", "\n[gate]\n", "small,big", "0x1p-3", "{1, 2}", "{", "}",
        "x[A=1]", "[M=1,N=2]", "PITCH={1,2}"};
    char buf[4096];
    size_t base_len = 0;
    char *base = read_all("tests/plans/full.kg", &base_len);
    CHECK(base != NULL && base_len > 100);
    if (!base) return;
    for (int it = 0; it < 1500 * PLAN_FUZZ_SCALE; it++) { /* random bytes, biased to INI syntax */
        size_t n = rng() % 400;
        for (size_t i = 0; i < n; i++)
            buf[i] = rng() % 4 ? alphabet[rng() % (sizeof alphabet - 1)] : (char)rng();
        fuzz_one(buf, n);
    }
    for (int it = 0; it < 3000 * PLAN_FUZZ_SCALE; it++) { /* mutations of a valid plan */
        size_t n = base_len;
        memcpy(buf, base, n);
        int edits = 1 + (int)(rng() % 4);
        for (int e = 0; e < edits; e++) {
            size_t at = n ? rng() % n : 0;
            switch (rng() % 6) {
            case 0: if (n) buf[at] = (char)rng(); break;
            case 1: if (n) buf[at] = alphabet[rng() % (sizeof alphabet - 1)]; break;
            case 2: { /* delete a run */
                size_t k = rng() % 40;
                if (at + k > n) k = n - at;
                memmove(buf + at, buf + at + k, n - at - k);
                n -= k;
                break;
            }
            case 3: case 4: { /* insert a token */
                const char *t = tokens[rng() % (sizeof tokens / sizeof tokens[0])];
                size_t k = strlen(t);
                if (n + k < sizeof buf) {
                    memmove(buf + at + k, buf + at, n - at);
                    memcpy(buf + at, t, k);
                    n += k;
                }
                break;
            }
            default: { /* replace the value of a line with a token */
                char *eq = memchr(buf + at, '=', n - at);
                if (!eq) break;
                char *nl = memchr(eq, '\n', n - (size_t)(eq - buf));
                size_t vstart = (size_t)(eq - buf) + 2, vend = nl ? (size_t)(nl - buf) : n;
                if (vstart > vend) break;
                const char *t = tokens[rng() % 22];
                size_t k = strlen(t);
                if (n - (vend - vstart) + k >= sizeof buf) break;
                memmove(buf + vstart + k, buf + vend, n - vend);
                memcpy(buf + vstart, t, k);
                n = n - (vend - vstart) + k;
                break;
            }
            }
        }
        fuzz_one(buf, n);
    }
    free(base);
    fprintf(stderr, "test_plan: fuzz: %d accepted, %d rejected\n", fuzz_accepted, fuzz_rejected);
    /* both outcomes occurred, so the round-trip property was exercised */
    CHECK_MSG(fuzz_accepted > 50 && fuzz_rejected > 1000, "accepted %d rejected %d",
              fuzz_accepted, fuzz_rejected);
}

/* The plan's backend words and the backend registry agree: "auto" is a
 * choice, every other word a backend of the registry, and a plan takes
 * each of them. */
static void test_backend_words(void)
{
    CHECK(strcmp(kg_plan_backends[0], "auto") == 0 && !kg_backend_known("auto"));
    int n = 0;
    for (int i = 1; kg_plan_backends[i] != NULL; i++, n++) {
        CHECK(kg_backend_known(kg_plan_backends[i]));
        char text[256];
        snprintf(text, sizeof text, "[campaign]\nbackend = %s\n[case c]\nop = rowsum\ndtype = f32\nM = 4\nN = 4\n"
                 "[arm a]\nop = rowsum\nrole = baseline\nbuiltin = numpy\n", kg_plan_backends[i]);
        kg_plan *p = NULL;
        kg_err e = { 0 };
        CHECK(kg_plan_parse(text, strlen(text), "words.kg", ".", &p, &e) == KG_OK);
        CHECK(p != NULL && strcmp(p->campaign.backend, kg_plan_backends[i]) == 0);
        kg_plan_free(p);
    }
    CHECK(n == 3);
    CHECK(!kg_backend_known("opencl"));
}

/* A plan of n rowsum arms (a baseline, candidates, and a control of the
 * baseline when ctrl), with a [campaign] of the given keys. */
static void design_plan(char *t, size_t cap, const char *campaign, int n, int ctrl)
{
    int len = snprintf(t, cap, "[campaign]\nbackend = fake\n%s[case a]\nop = rowsum\ndtype = f32\nM = 4\nN = 16\n"
                       "[arm base]\nop = rowsum\nrole = baseline\nsource = k.c\n", campaign);
    for (int i = 1; i < n - ctrl; i++)
        len += snprintf(t + len, cap - (size_t)len, "[arm c%d]\nop = rowsum\nsource = k.c\n", i);
    if (ctrl) snprintf(t + len, cap - (size_t)len, "[arm ctrl]\nop = rowsum\nrole = control\nof = base\n");
}

/* Parses a design: KG_OK with *p, or the message in msg. */
static int design_parse(const char *t, int recorded, kg_plan **p, char *msg, size_t cap)
{
    kg_err err = {0};
    *p = NULL;
    int rc = recorded ? kg_plan_parse_recorded(t, strlen(t), "d.kg", "/base", p, &err)
                      : kg_plan_parse(t, strlen(t), "d.kg", "/base", p, &err);
    snprintf(msg, cap, "%s", err.msg);
    return rc;
}

/* The design rules (src/plan/check.c, plan_design): processes and every
 * look complete the load-order square with at least 2 processes per
 * direction per look, or the plan is refused at the key's line naming the
 * smallest processes that work; a recorded folder's plan is read with the
 * note kgate gave such a design before the rule. */
static void test_design(void)
{
    char t[2048], msg[KG_ERR_MSG_MAX];
    kg_plan *p = NULL;
    /* three arms, processes 2: refused at line 3 (processes), fix 3 */
    design_plan(t, sizeof t, "processes = 2\n", 3, 1);
    CHECK(design_parse(t, 0, &p, msg, sizeof msg) == KG_EINPUT && p == NULL);
    CHECK_STR_CONTAINS(msg, "d.kg:3: processes do not complete the load-order square: 'processes = 2'");
    CHECK_STR_CONTAINS(msg, "use processes = 3 (a multiple of 3)");
    /* recorded: the note of the earlier kgate, word for word */
    CHECK(design_parse(t, 1, &p, msg, sizeof msg) == KG_OK && p != NULL);
    if (p != NULL) {
        CHECK(p->nnotes == 1 && p->campaign.processes == 2);
        if (p->nnotes == 1)
            CHECK_STR_CONTAINS(p->notes[0], "processes = 2 per direction does not complete the load-order square of 3 "
                               "arms: some arms take the first load slot more often than others, and a slot effect "
                               "biases them (use a multiple of 3, or leave processes out)");
        kg_plan_free(p);
    }
    /* 4 arms, processes 5: the next multiple, 8 */
    design_plan(t, sizeof t, "processes = 5\n", 4, 1);
    CHECK(design_parse(t, 0, &p, msg, sizeof msg) == KG_EINPUT);
    CHECK_STR_CONTAINS(msg, "use processes = 8 (a multiple of 4)");
    /* one process per direction: no interval, no claim, accepted under the
     * interval gate; the classic gate can pass on one, so it is refused */
    design_plan(t, sizeof t, "processes = 1\n", 3, 1);
    p = parse_ok(t, "d.kg");
    CHECK(p == NULL || p->nnotes == 0);
    kg_plan_free(p);
    size_t l = strlen(t);
    snprintf(t + l, sizeof t - l, "[gate]\nrule = classic\n");
    CHECK(design_parse(t, 0, &p, msg, sizeof msg) == KG_EINPUT);
    CHECK_STR_CONTAINS(msg, "use processes = 3");
    /* D-S1: 2 arms, processes 4 in 4 looks: one per direction per look, refused at looks (line 4) */
    design_plan(t, sizeof t, "processes = 4\nlooks = 4\n", 2, 0);
    CHECK(design_parse(t, 0, &p, msg, sizeof msg) == KG_EINPUT);
    CHECK_STR_CONTAINS(msg, "d.kg:4: looks leave fewer than 2 processes per direction per look: 'looks = 4'");
    CHECK_STR_CONTAINS(msg, "use processes = 8, or fewer looks");
    CHECK(design_parse(t, 1, &p, msg, sizeof msg) == KG_OK && p != NULL);
    if (p != NULL) {
        CHECK(p->nnotes == 1);
        if (p->nnotes == 1)
            CHECK_STR_CONTAINS(p->notes[0], "looks = 4: each look adds 1 processes per direction, which do not "
                               "complete the load-order square of 2 arms");
        kg_plan_free(p);
    }
    /* three arms, 6 in 3 looks: 2 per look, not the square of 3; fix 9 */
    design_plan(t, sizeof t, "processes = 6\nlooks = 3\n", 3, 1);
    CHECK(design_parse(t, 0, &p, msg, sizeof msg) == KG_EINPUT);
    CHECK_STR_CONTAINS(msg, "looks do not complete the load-order square");
    CHECK_STR_CONTAINS(msg, "use processes = 9 (each look 3 per direction)");
    /* looks that do not divide processes: refused in both modes */
    design_plan(t, sizeof t, "processes = 8\nlooks = 3\n", 2, 0);
    CHECK(design_parse(t, 0, &p, msg, sizeof msg) == KG_EINPUT);
    CHECK_STR_CONTAINS(msg, "looks must divide processes");
    CHECK_STR_CONTAINS(msg, "use processes = 12");
    CHECK(design_parse(t, 1, &p, msg, sizeof msg) == KG_EINPUT);
    CHECK_STR_CONTAINS(msg, "looks must divide processes");
    /* left out: the smallest that completes every look's square */
    design_plan(t, sizeof t, "looks = 2\n", 3, 1);
    p = parse_ok(t, "d.kg");
    CHECK(p == NULL || p->campaign.processes == 6);
    kg_plan_free(p);
    design_plan(t, sizeof t, "looks = 4\n", 2, 0);
    p = parse_ok(t, "d.kg");
    CHECK(p == NULL || p->campaign.processes == 8);
    kg_plan_free(p);
    design_plan(t, sizeof t, "", 4, 1);
    p = parse_ok(t, "d.kg");
    CHECK(p == NULL || p->campaign.processes == 4);
    kg_plan_free(p);
    /* accepted designs: the square and its multiples, 2 per look */
    design_plan(t, sizeof t, "processes = 9\nlooks = 3\n", 3, 1);
    p = parse_ok(t, "d.kg");
    kg_plan_free(p);
    design_plan(t, sizeof t, "processes = 8\nlooks = 4\n", 2, 0);
    p = parse_ok(t, "d.kg");
    kg_plan_free(p);
}

int main(void)
{
    test_full_plan();
    test_defaults();
    test_hash();
    test_smoke();
    test_errors();
    test_bounds();
    test_files();
    test_doc_example();
    test_names();
    test_axes();
    test_backend_words();
    test_fuzz();
    test_design();
    return kg_test_finish("test_plan");
}

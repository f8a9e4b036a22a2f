/* check.c: the checks after parsing: every section whole and
 * consistent (required keys, what an arm's keys may combine, the names
 * they refer to), the campaign's gates against its own control, the arms'
 * requires on the cases they run; the defaults computed late; the notes
 * a plan carries to its reader.  Not here: ops and backends; whether an
 * op exists, which variables it needs and whether a backend can run an
 * arm are checked against the op registry by kg_plan_check_ops
 * (kgate/op.h, src/ops/ops.c). */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "plan/plan_impl.h"
#include "plan/expr.h"

static const char *arm_key_name(int ki) { return plan_keys[ki].key; }

/* Whitespace-separated words of s. */
static int count_tokens(const char *s)
{
    int n = 0;
    for (const char *p = s; *p;) {
        while (*p == ' ' || *p == '\t') p++;
        if (*p == '\0') break;
        n++;
        while (*p != '\0' && *p != ' ' && *p != '\t') p++;
    }
    return n;
}

static void check_required(plan_ctx *ctx, int sec, int idx, const char *name, int line)
{
    key_lines *kl = plan_section_lines(ctx, sec, idx);
    for (int i = 0; i < plan_nkeys; i++) {
        if (plan_keys[i].sec != sec || !(plan_keys[i].flags & F_REQ) || kl->at[i]) continue;
        char h[KG_NAME_MAX + 16];
        plan_header_text(h, sizeof h, plan_sec_names[sec], name);
        plan_perr(ctx, line, "missing required key", h, strlen(h), "add '%s = ...' (%s)",
             plan_keys[i].key, plan_keys[i].help);
        return;
    }
}

/* "" or, when name is the base of arms with axes, "; arm 'fma' has axes: name one
 * variant, e.g. fma[PITCH=36]", for the messages of keys that name one arm. */
static const char *variant_hint(const kg_plan *plan, const char *name, char *buf, size_t cap)
{
    buf[0] = '\0';
    size_t n = strlen(name);
    for (int a = 0; a < plan->narms; a++)
        if (kg_plan_name_base(plan->arms[a].name) == n && strncmp(plan->arms[a].name, name, n) == 0) {
            snprintf(buf, cap, "; arm '%s' has axes: name one variant, e.g. %s", name, plan->arms[a].name);
            break;
        }
    return buf;
}

/* A message about the key given on line `line`, quoting that line. */
__attribute__((format(printf, 4, 5)))
static void perr_at(plan_ctx *ctx, int line, const char *problem, const char *fix_fmt, ...)
{
    char fix[512];
    va_list ap;
    va_start(ap, fix_fmt);
    vsnprintf(fix, sizeof fix, fix_fmt, ap);
    va_end(ap);
    size_t l;
    const char *t = plan_line_text(ctx, line, &l);
    plan_perr(ctx, line, problem, t, l, "%s", fix);
}

/* The line arm a gave key `key` on (0: not given). */
static int arm_line(const plan_ctx *ctx, int a, const char *key)
{
    return ctx->arm_lines[a].at[plan_key_index(SEC_ARM, key)];
}

/* A control names a baseline of its op in `of` and sets no kernel key of
 * its own: it takes its baseline's. */
static void check_control(plan_ctx *ctx, int a, const char *h)
{
    kg_plan *plan = ctx->plan;
    const kg_arm *arm = &plan->arms[a];
    const key_lines *kl = &ctx->arm_lines[a];
    int of_line = arm_line(ctx, a, "of");
    if (!of_line) {
        plan_perr(ctx, arm->line, "control arm without 'of'", h, strlen(h),
                  "add 'of = NAME' naming the baseline arm it replicates");
        return;
    }
    for (int i = 0; i < plan_nkeys; i++)
        if (plan_keys[i].sec == SEC_ARM && (plan_keys[i].flags & F_INHERIT) && kl->at[i]) {
            perr_at(ctx, kl->at[i], "control arm sets its own kernel",
                    "a control takes '%s' from its 'of' arm; remove it", arm_key_name(i));
            return;
        }
    int o = kg_plan_find_arm(plan, arm->of);
    if (o < 0) {
        char hint[2 * KG_NAME_MAX + 64];
        plan_perr(ctx, of_line, "unknown arm", arm->of, strlen(arm->of), "'of' must name a baseline arm of this plan%s",
                  variant_hint(plan, arm->of, hint, sizeof hint));
    } else if (plan->arms[o].role != KG_ROLE_BASELINE) {
        perr_at(ctx, of_line, "'of' names an arm that is not a baseline",
                "arm '%s' has role %s; a control replicates a baseline", arm->of, kg_role_name(plan->arms[o].role));
    } else if (strcmp(plan->arms[o].op, arm->op) != 0) {
        perr_at(ctx, of_line, "'of' names an arm of another op", "arm '%s' implements %s, this arm %s", arm->of,
                plan->arms[o].op, arm->op);
    }
}

/* Any other arm has one kernel: a source, an image or a builtin, and no
 * `of`. */
static void check_kernel(plan_ctx *ctx, int a, const char *h)
{
    const kg_arm *arm = &ctx->plan->arms[a];
    int of = arm_line(ctx, a, "of"), src = arm_line(ctx, a, "source");
    int bi = arm_line(ctx, a, "builtin"), img = arm_line(ctx, a, "image");
    if (of)
        perr_at(ctx, of, "'of' on an arm that is not a control", "remove it, or set role = control");
    else if (!src && !bi && !img)
        plan_perr(ctx, arm->line, "arm has no kernel", h, strlen(h),
                  "add 'source = PATH', 'image = PATH' (a precompiled kernel) or 'builtin = NAME'");
    else if (src && bi)
        perr_at(ctx, bi, "arm has both source and builtin", "keep one of them");
    else if (img && (src || bi))
        perr_at(ctx, img, src ? "arm has both source and image" : "arm has both builtin and image",
                "keep one of them: 'source' is compiled by kgate, 'image' is a kernel compiled before");
}

/* An image: of a kind a backend loads, and compiled before (no compiler
 * options). */
static void check_image(plan_ctx *ctx, int a)
{
    const kg_arm *arm = &ctx->plan->arms[a];
    int img = arm_line(ctx, a, "image"), def = arm_line(ctx, a, "defines"), cfl = arm_line(ctx, a, "cflags");
    if (!img) return;
    if (kg_image_kind_of(arm->image) == KG_IMAGE_NONE)
        perr_at(ctx, img, "unknown kind of image", "an image's name ends in .so (a shared object, cpu backend) or "
                ".cubin, .ptx or .fatbin (cuda backend)");
    else if (def || cfl)
        perr_at(ctx, def ? def : cfl, "compiler options on a precompiled arm", "an image is not compiled by kgate: "
                "remove '%s' and pass it to the compiler that built the image", def ? "defines" : "cflags");
}

/* call and compile belong to library arms (compile to torch's); the
 * compiler options a backend passes are bounded (KG_ARM_MAX_FLAGS). */
static void check_options(plan_ctx *ctx, int a)
{
    const kg_arm *arm = &ctx->plan->arms[a];
    int call = arm_line(ctx, a, "call"), comp = arm_line(ctx, a, "compile");
    int library = strcmp(arm->builtin, "torch") == 0 || strcmp(arm->builtin, "numpy") == 0;
    if ((call || comp) && !library && arm->role != KG_ROLE_CONTROL) {
        perr_at(ctx, call ? call : comp, "a library key on an arm that is not a library arm",
                "'%s' needs 'builtin = torch' or 'builtin = numpy' (docs/library-arms.md)", call ? "call" : "compile");
        return;
    }
    if (comp && arm->compile && strcmp(arm->builtin, "torch") != 0) {
        perr_at(ctx, comp, "compile = yes on a numpy arm", "torch.compile needs 'builtin = torch'");
        return;
    }
    int def = arm_line(ctx, a, "defines"), cfl = arm_line(ctx, a, "cflags");
    int nflags = count_tokens(arm->defines) + count_tokens(arm->cflags);
    if (nflags > KG_ARM_MAX_FLAGS)
        perr_at(ctx, cfl ? cfl : def ? def : arm->line, "too many compiler options",
                "defines and cflags of arm '%s' hold %d words; at most %d", arm->name, nflags, KG_ARM_MAX_FLAGS);
}

/* `cases` lists cases of this plan (a case with axes by its name, or one
 * variant), each of the arm's op. */
static void check_cases_list(plan_ctx *ctx, int a)
{
    const kg_plan *plan = ctx->plan;
    const kg_arm *arm = &plan->arms[a];
    int line = arm_line(ctx, a, "cases");
    for (const char *p = line ? arm->cases : ""; *p != '\0';) {
        size_t l = plan_list_item(p);
        char nm[KG_NAME_MAX];
        snprintf(nm, sizeof nm, "%.*s", (int)l, p);
        int found = 0;
        for (int c = 0; c < plan->ncases; c++) {
            if (!plan_item_names(p, l, plan->cases[c].name)) continue;
            found = 1;
            if (strcmp(plan->cases[c].op, arm->op) != 0) {
                plan_perr(ctx, line, "case of another op", nm, strlen(nm), "case '%s' is %s, arm '%s' implements %s",
                          plan->cases[c].name, plan->cases[c].op, arm->name, arm->op);
                return;
            }
        }
        if (!found) {
            plan_perr(ctx, line, "unknown case", nm, strlen(nm),
                      "'cases' must list [case NAME] sections of this plan (a case with axes by its name, for all "
                      "its variants, or one variant by its expanded name)");
            return;
        }
        if (p[l] != ',') break;
        p += l + 1;
    }
}

/* `parity` names another arm of the same op; precision and tolerance
 * exclude each other. */
static void check_parity_precision(plan_ctx *ctx, int a)
{
    const kg_plan *plan = ctx->plan;
    const kg_arm *arm = &plan->arms[a];
    int line = arm_line(ctx, a, "parity");
    if (line) {
        int o = kg_plan_find_arm(plan, arm->parity);
        if (o < 0 || o == a) {
            char hint[2 * KG_NAME_MAX + 64];
            plan_perr(ctx, line, o < 0 ? "unknown arm" : "parity with itself", arm->parity, strlen(arm->parity),
                      "'parity' must name another arm of this plan%s",
                      variant_hint(plan, arm->parity, hint, sizeof hint));
            return;
        }
        if (strcmp(plan->arms[o].op, arm->op) != 0) {
            plan_perr(ctx, line, "parity with an arm of another op", arm->parity, strlen(arm->parity),
                      "arm '%s' implements %s, this arm %s", arm->parity, plan->arms[o].op, arm->op);
            return;
        }
    }
    int tol = arm_line(ctx, a, "tolerance");
    if (arm_line(ctx, a, "precision") && tol)
        plan_perr(ctx, tol, "both precision and tolerance", "tolerance", 9,
                  "give 'precision' (an error analysis) or 'tolerance' (a declared error), not both");
}

/* Arm a, whole and consistent; the first problem is the message. */
static void check_arm(plan_ctx *ctx, int a)
{
    const kg_arm *arm = &ctx->plan->arms[a];
    char h[KG_NAME_MAX + 16];
    plan_header_text(h, sizeof h, "arm", arm->name);
    check_required(ctx, SEC_ARM, a, arm->name, arm->line);
    if (!ctx->failed) {
        if (arm->role == KG_ROLE_CONTROL) check_control(ctx, a, h);
        else check_kernel(ctx, a, h);
    }
    if (!ctx->failed) check_image(ctx, a);
    if (!ctx->failed) check_options(ctx, a);
    if (!ctx->failed && arm->role != KG_ROLE_CONTROL) plan_check_pycall(ctx, a);
    if (!ctx->failed) check_cases_list(ctx, a);
    if (!ctx->failed) check_parity_precision(ctx, a);
}

/* Campaign name from the plan file's stem: "dir/gemm.kg" -> "gemm". */
static void stem_name(const char *path, char *out, size_t cap)
{
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    size_t n = strlen(b);
    const char *dot = strrchr(b, '.');
    if (dot != NULL && dot != b) n = (size_t)(dot - b);
    if (n > cap - 1) n = cap - 1;
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)b[i];
        out[o++] = (c < 0x80 && (isalnum(c) || c == '_' || c == '.' || c == '-')) ? (char)c : '_';
    }
    out[o] = '\0';
    if (o == 0) snprintf(out, cap, "plan");
}

static void plan_note(kg_plan *plan, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* An arm's `requires`: its syntax, and a note for every case of the plan
 * the arm runs on that does not meet it: the arm is INADMISSIBLE there,
 * recorded by the worker before any load or launch (a failed
 * `admissible` check), never skipped as if it passed. */
static void check_requires(plan_ctx *ctx, int a)
{
    kg_plan *plan = ctx->plan;
    const kg_arm *arm = &plan->arms[a];
    if (arm->requires[0] == '\0') return;
    int k_req = plan_key_index(SEC_ARM, "requires");
    int src = arm->role == KG_ROLE_CONTROL ? kg_plan_find_arm(plan, arm->of) : a;
    int line = src >= 0 && ctx->arm_lines[src].at[k_req] ? ctx->arm_lines[src].at[k_req] : arm->line;
    size_t l;
    const char *t = plan_line_text(ctx, line, &l);
    kg_err e = { 0 };
    if (kg_expr_check_conds("requires", arm->requires, &e) != KG_OK) {
        plan_perr(ctx, line, "bad requires", t, l, "%s", e.msg);
        return;
    }
    for (int c = 0; c < plan->ncases; c++) {
        if (!kg_plan_arm_applies(plan, a, c)) continue;
        int ok = 1;
        char failed[KG_TEXT_MAX + 64];
        kg_err_clear(&e);
        if (kg_expr_eval_conds("requires", arm->requires, &plan->cases[c], &ok, failed, sizeof failed, &e) !=
            KG_OK) {
            plan_perr(ctx, line, "requires cannot be evaluated on a case", t, l, "case '%s': %s", plan->cases[c].name,
                 e.msg);
            return;
        }
        if (!ok)
            plan_note(plan, "arm '%s' is INADMISSIBLE on case '%s': its requires %s does not hold; it is not run "
                            "there (restrict it with 'cases = ...' to leave the case out)", arm->name,
                      plan->cases[c].name, failed);
    }
}

/* A case must be runnable by a baseline: one that meets its requires. */
static void check_case_baselines(plan_ctx *ctx)
{
    kg_plan *plan = ctx->plan;
    for (int c = 0; c < plan->ncases && !ctx->failed; c++) {
        int found = 0, line = 0;
        char failed[KG_TEXT_MAX + 64] = "";
        for (int a = 0; a < plan->narms && !found; a++) {
            const kg_arm *arm = &plan->arms[a];
            if (arm->role != KG_ROLE_BASELINE || !kg_plan_arm_applies(plan, a, c)) continue;
            int ok = 1;
            kg_err e = { 0 };
            if (arm->requires[0] != '\0' &&
                kg_expr_eval_conds("requires", arm->requires, &plan->cases[c], &ok, failed, sizeof failed, &e) !=
                    KG_OK)
                ok = 0;
            found = ok;
            if (!ok && line == 0) line = arm->line;
        }
        if (!found && line > 0) {
            size_t l;
            const char *t = plan_line_text(ctx, plan->cases[c].line, &l);
            plan_perr(ctx, plan->cases[c].line, "no baseline arm of the case meets its requires", t, l,
                 "case '%s': %s does not hold for the baseline on line %d (from the plan or its kernel contract); "
                 "add a baseline that runs this shape, or change the case", plan->cases[c].name, failed, line);
        }
    }
}

static void plan_note(kg_plan *plan, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void plan_note(kg_plan *plan, const char *fmt, ...)
{
    if (plan->nnotes >= KG_PLAN_MAX_NOTES) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(plan->notes[plan->nnotes++], KG_PLAN_NOTE_MAX, fmt, ap);
    va_end(ap);
}

/* Refuses the plan at line ln (the key's line, or 1 when the key is left
 * out) with the fix naming the smallest processes that work. */
static void design_refuse(plan_ctx *ctx, const char *key, const char *problem, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void design_refuse(plan_ctx *ctx, const char *key, const char *problem, const char *fmt, ...)
{
    int ln = ctx->camp_lines.at[plan_key_index(SEC_CAMPAIGN, key)];
    size_t l;
    const char *t = plan_line_text(ctx, ln > 0 ? ln : 1, &l);
    char fix[KG_ERR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(fix, sizeof fix, fmt, ap);
    va_end(ap);
    plan_perr(ctx, ln > 0 ? ln : 1, problem, t, l, "%s", fix);
}

/* The notes an earlier kgate gave a design it ran and the plan check now
 * refuses, word for word (a recorded folder's report.md holds them); looks
 * that do not divide processes were refused then too. */
static void design_recorded(plan_ctx *ctx, int sq)
{
    kg_plan *plan = ctx->plan;
    int P = plan->campaign.processes, K = plan->campaign.looks;
    if (sq > 1 && P % sq != 0 && plan->campaign.screen)
        plan_note(plan, "screen = yes: processes = %d per direction does not complete the load-order square of %d "
                        "arms; the ranking may carry a slot effect, the confirmation plan completes it", P, sq);
    else if (sq > 1 && P % sq != 0)
        plan_note(plan, "processes = %d per direction does not complete the load-order square of %d arms: some "
                        "arms take the first load slot more often than others, and a slot effect biases them (use a "
                        "multiple of %d, or leave processes out)", P, sq, sq);
    if (K > 1 && P % K != 0) {
        design_refuse(ctx, "looks", "looks must divide processes", "processes = %d per direction: use looks that "
                      "divide it, or processes a multiple of %d", P, K);
        return;
    }
    if (K > 1 && sq > 1 && (P / K) % sq != 0)
        plan_note(plan, "looks = %d: each look adds %d processes per direction, which do not complete the load-order "
                        "square of %d arms, so an interim analysis sees some arms in the first load slot more often "
                        "than others (use processes a multiple of %d)", K, P / K, sq, K * sq);
}

/* The design's processes per direction: every look (the whole campaign
 * when looks = 1) completes the load-order square of every case
 * (kg_plan_square), so that no arm takes the first load slot more often
 * than another in any analysis, and a look has at least 2 processes per
 * direction, the least an interval needs (one process per direction
 * under the interval gate is exempt: it makes no claim).  Left out,
 * processes is the smallest such number; given, it is refused unless it
 * is one, with the smallest that works named (raising it would run a
 * campaign other than the one the plan declares).  A recorded plan
 * (kg_plan_parse_recorded) gets the notes of design_recorded instead.
 * Returns nonzero when refused. */
static int plan_design(plan_ctx *ctx)
{
    kg_plan *plan = ctx->plan;
    int sq = kg_plan_square(plan), K = plan->campaign.looks > 1 ? plan->campaign.looks : 1;
    /* per direction per look: a multiple of the square, and at least 2 */
    int step = sq >= 2 ? sq : 2;
    if (sq > KG_PLAN_MAX_PROCESSES / K) {
        design_refuse(ctx, "processes", "no design completes the load-order square",
                      "the cases' numbers of arms need a multiple of %d processes per direction%s, more than %d: give "
                      "the cases the same arms, or split the plan", sq, K > 1 ? " per look" : "",
                      KG_PLAN_MAX_PROCESSES);
        return 1;
    }
    if (!ctx->camp_lines.at[plan_key_index(SEC_CAMPAIGN, "processes")]) {
        plan->campaign.processes = K * step;
        return 0;
    }
    int P = plan->campaign.processes, need = K * step, fix = (P + need - 1) / need * need;
    if (ctx->recorded) {
        design_recorded(ctx, sq);
        return ctx->failed;
    }
    if (K == 1) {
        /* one process per direction has no interval: every verdict is
         * INCONCLUSIVE and the interval gate cannot pass, so no slot
         * effect can bias a claim (the classic gate can pass on one) */
        if (P % sq == 0 || (P == 1 && plan->gate.rule == KG_GATE_INTERVAL)) return 0;
        fix = (P + sq - 1) / sq * sq;
        if (plan->campaign.screen && P >= 2) {
            /* exploration: a slot effect may move the ranking; the
             * confirmation plan (kgate screen) completes the square */
            plan_note(plan, "screen = yes: processes = %d per direction does not complete the load-order square of %d "
                            "arms; the ranking may carry a slot effect, the confirmation plan completes it", P, sq);
            return 0;
        }
        design_refuse(ctx, "processes", "processes do not complete the load-order square",
                      "processes = %d per direction with %d arms: some arms take the first load slot more often than "
                      "others, and a slot effect biases them; use processes = %d (a multiple of %d), or leave "
                      "processes out", P, sq, fix, sq);
        return 1;
    }
    if (P % K != 0) {
        design_refuse(ctx, "looks", "looks must divide processes",
                      "processes = %d per direction in %d looks; use processes = %d (each look %d per direction), "
                      "or other looks", P, K, fix, step);
        return 1;
    }
    if (P / K < 2) {
        design_refuse(ctx, "looks", "looks leave fewer than 2 processes per direction per look",
                      "processes = %d per direction in %d looks gives %d per look, and a look needs 2 for an "
                      "interval; use processes = %d, or fewer looks", P, K, P / K, fix);
        return 1;
    }
    if ((P / K) % sq != 0) {
        design_refuse(ctx, "looks", "looks do not complete the load-order square",
                      "processes = %d per direction in %d looks adds %d per look, which does not complete the square "
                      "of %d arms, so a look sees some arms in the first load slot more often than others; use "
                      "processes = %d (each look %d per direction), or other looks", P, K, P / K, sq, fix, step);
        return 1;
    }
    return 0;
}

/* Gates the plan's own control cannot support are refused; a zero margin
 * is allowed and noted. */
static void plan_notes(plan_ctx *ctx)
{
    kg_plan *plan = ctx->plan;
    const kg_campaign *cp = &plan->campaign;
    int has_control = 0;
    for (int a = 0; a < plan->narms; a++) has_control |= plan->arms[a].role == KG_ROLE_CONTROL;
    if (has_control && plan->gate.require_control && plan->gate.min_reduction < cp->control_margin) {
        int ln = ctx->gate_lines.at[plan_key_index(SEC_GATE, "min_reduction")];
        if (ln == 0) ln = ctx->camp_lines.at[plan_key_index(SEC_CAMPAIGN, "margin")];
        if (ln == 0) ln = ctx->camp_lines.at[plan_key_index(SEC_CAMPAIGN, "control_margin")];
        size_t l;
        const char *t = plan_line_text(ctx, ln > 0 ? ln : 1, &l);
        plan_perr(ctx, ln > 0 ? ln : 1, "the gate asks for less than the plan's control can support", t, l,
             "the gate's min_reduction %.3g%% is below control_margin %.3g%%, the difference two loads of one "
             "kernel may show: raise min_reduction (or margin) to at least control_margin",
             100.0 * plan->gate.min_reduction, 100.0 * cp->control_margin);
        return;
    }
    if (plan_design(ctx) != 0) return;
    if (cp->margin == 0.0)
        plan_note(plan, "margin = 0: any interval above zero is FASTER, and an offset of 0.055%% between two loads "
                        "of one kernel (measured on an H200) is enough for a false one; the default is 0.5%% "
                        "(docs/statistics.md)");
    if (cp->bound_audit_off)
        plan_note(plan, "bound_audit = off: the ops' bounds were not audited, so an op whose bound admits errors no "
                        "correct kernel makes is gated on (its bound: rows of checks/, \"bound:OUTPUT\"; docs/ops.md, "
                        "\"The bound audit\")");
}

/* A message at line 1, for what the whole plan lacks. */
static void perr_plan(plan_ctx *ctx, const char *problem, const char *fix)
{
    size_t l;
    const char *t = plan_line_text(ctx, 1, &l);
    plan_perr(ctx, 1, problem, t, l, "%s", fix);
}

void plan_check_nonempty(plan_ctx *ctx)
{
    if (ctx->nsections == 0)
        perr_plan(ctx, "empty plan", "a plan needs [case NAME] and [arm NAME] sections; see docs/plan-format.md");
}

void plan_check_sections(plan_ctx *ctx)
{
    kg_plan *plan = ctx->plan;
    if (plan->ncases == 0) {
        perr_plan(ctx, "plan has no cases", "add a [case NAME] section with op and dtype");
        return;
    }
    if (plan->narms == 0) {
        perr_plan(ctx, "plan has no arms", "add an [arm NAME] section with op and source");
        return;
    }
    for (int o = 0; o < plan->nops && !ctx->failed; o++) plan_check_op(ctx, o);
    for (int c = 0; c < plan->ncases && !ctx->failed; c++)
        check_required(ctx, SEC_CASE, c, plan->cases[c].name, plan->cases[c].line);
    for (int a = 0; a < plan->narms && !ctx->failed; a++) check_arm(ctx, a);
}

/* The campaign's own line of key `key`, or 0. */
static int camp_line(const plan_ctx *ctx, const char *key)
{
    return ctx->camp_lines.at[plan_key_index(SEC_CAMPAIGN, key)];
}

void plan_check_campaign(plan_ctx *ctx)
{
    kg_plan *plan = ctx->plan;
    size_t l;
    if (plan->campaign.inputs == KG_INPUTS_FRESH && plan->campaign.pack > KG_PLAN_MAX_FRESH_PACK) {
        /* every operation of a sample reads inputs of its own */
        int ln = camp_line(ctx, "pack");
        const char *t = plan_line_text(ctx, ln, &l);
        plan_perr(ctx, ln, "inputs = fresh holds an input set per operation of a sample", t, l,
                  "use pack <= %d, or inputs = resident (whose samples reuse their inputs)", KG_PLAN_MAX_FRESH_PACK);
        return;
    }
    if (plan->campaign.reference[0] != '\0') {
        int ra = kg_plan_find_arm(plan, plan->campaign.reference);
        if (ra < 0 || plan->arms[ra].role != KG_ROLE_BASELINE) {
            int ln = camp_line(ctx, "reference");
            const char *t = plan_line_text(ctx, ln, &l);
            char hint[2 * KG_NAME_MAX + 64];
            plan_perr(ctx, ln, ra < 0 ? "reference names no arm" : "reference names an arm that is not a baseline",
                      t, l, "name an arm with role = baseline, or remove the key to compare with every baseline%s",
                      variant_hint(plan, plan->campaign.reference, hint, sizeof hint));
            return;
        }
    }
    for (int c = 0; c < plan->ncases && !ctx->failed; c++) {
        int found = 0;
        for (int a = 0; a < plan->narms && !found; a++)
            found = plan->arms[a].role == KG_ROLE_BASELINE && kg_plan_arm_applies(plan, a, c);
        if (!found)
            plan_perr(ctx, plan->cases[c].line, "case has no baseline arm", plan->cases[c].name,
                      strlen(plan->cases[c].name), "add an arm with op = %s and role = baseline that runs this case",
                      plan->cases[c].op);
    }
}

/* A control is a second instance of its baseline's kernel: it takes
 * every inherited key of its `of` arm. */
static void inherit_controls(kg_plan *plan)
{
    for (int a = 0; a < plan->narms; a++) {
        kg_arm *arm = &plan->arms[a];
        if (arm->role != KG_ROLE_CONTROL) continue;
        const kg_arm *of = &plan->arms[kg_plan_find_arm(plan, arm->of)];
        for (int i = 0; i < plan_nkeys; i++) {
            const plan_key *k = &plan_keys[i];
            if (k->sec == SEC_ARM && (k->flags & F_INHERIT))
                memcpy(plan_field_ptr(arm, k), plan_field_cptr(of, k), k->size);
        }
    }
}

void plan_complete(plan_ctx *ctx)
{
    kg_plan *plan = ctx->plan;
    if (!camp_line(ctx, "name")) stem_name(plan->path, plan->campaign.name, sizeof plan->campaign.name);
    if (!ctx->gate_lines.at[plan_key_index(SEC_GATE, "min_reduction")])
        plan->gate.min_reduction = plan->campaign.margin;
    plan_notes(ctx);
    inherit_controls(plan);
    for (int a = 0; a < plan->narms && !ctx->failed; a++) check_requires(ctx, a);
    if (!ctx->failed) check_case_baselines(ctx);
}

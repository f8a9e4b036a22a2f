/* compare.c: `kgate compare A B [C ...]`, read only (compare.h,
 * docs/compare.md).
 *
 * For each folder, in order: the integrity of the files it reads
 * (SHA256SUMS, kg_verify_sums; all of verify with full_verify), the
 * folder loaded (kg_evidence_load) and analysed as `kgate report` does
 * (kg_report_analyse), its identity (meta.json) against the first
 * folder's.  Then cases are matched by op, dtype and variables (not by
 * name), arms by name, and for every (case, arm) of the first folder:
 *   - the level of the arm in each campaign, kg_arm_result.level: per
 *     process the mean over rounds of the log round medians, per
 *     direction the mean over processes, the two directions averaged;
 *   - the change of campaign X against the first, kg_change_compute:
 *     the difference of the levels, campaigns unpaired, a Welch interval;
 *     the verdict kg_change_verdict against the margin;
 *   - the within-campaign paired ratio to the arm's baseline (e^theta of
 *     its contrast, the campaign's own analysis), and the change of that
 *     ratio between the campaigns by the same unpaired rule.
 * The main table is the last folder against the first; with three
 * folders or more a trend table follows, every folder against the first.
 *
 * Nothing is written anywhere; the text goes to the caller's buffer. */
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "verify/compare.h"
#include "plan/frozen.h"
#include "kgate/evidence.h"
#include "kgate/stats.h"
#include "report/report.h"
#include "base/safefs.h"
#include "base/util.h"
#include "verify/verify.h"

typedef struct folder {
    const char *dir;
    char label[16];
    kg_evidence ev;
    int have_ev;
    kg_analysis an;
    int have_an;
    json_t *meta, *env;
    kg_compare_ident id;
    const char *started;
    char **keys;          /* per case: op, dtype and variables */
    int *match;           /* per case of the first folder: this folder's case, -1 */
} folder;

/* A (case, arm) of the first folder, and where it is in each folder. */
typedef struct crow {
    int c[KG_COMPARE_MAX_DIRS], a[KG_COMPARE_MAX_DIRS];   /* -1: not there */
} crow;

/* One campaign against the first on one row. */
typedef struct pair {
    int present;          /* the arm runs on the case in both */
    int timed;            /* both ok, each with a level: the change below */
    kg_change lvl;
    kg_verdict v;
    char verdict[48];     /* the verdict's name, or why there is none ("INCORRECT in B") */
    int has_rel;          /* the arm's ratio to the same baseline in both */
    kg_change rel;
    kg_verdict rv;
    char why[160];        /* no change although both are ok: why */
} pair;

/* ---- small services ---- */

static const char *jstr(json_t *o, const char *key)
{
    const char *s = o != NULL ? json_string_value(json_object_get(o, key)) : NULL;
    return s != NULL ? s : "";
}

static json_t *jnum(double x)
{
    return isfinite(x) ? json_real(x) : json_null();
}

static const kg_arm_result *res_of(const folder *f, int c, int a)
{
    return &f->an.res[(size_t)c * (size_t)f->an.narms + (size_t)a];
}

/* Per cent with a sign, two decimals: "+1.23%". */
static void pct(char *buf, size_t cap, double x)
{
    if (!isfinite(x)) snprintf(buf, cap, "-");
    else snprintf(buf, cap, "%+.2f%%", 100.0 * x);
}

/* A time in µs from ns, with three or four significant digits. */
static void usec(char *buf, size_t cap, double ns)
{
    double us = ns / 1000.0;
    if (!isfinite(us)) snprintf(buf, cap, "-");
    else if (us < 10.0) snprintf(buf, cap, "%.3f", us);
    else if (us < 100.0) snprintf(buf, cap, "%.2f", us);
    else if (us < 1000.0) snprintf(buf, cap, "%.1f", us);
    else snprintf(buf, cap, "%.0f", us);
}

/* Appends s to sb with the characters a markdown table cell cannot hold
 * escaped. */
static void md_cell(kg_sb *sb, const char *s)
{
    for (; *s; s++) {
        if (*s == '|') kg_sb_puts(sb, "\\|");
        else if (*s == '\n') kg_sb_puts(sb, " ");
        else kg_sb_printf(sb, "%c", *s);
    }
}

/* "; " between the parts of a note. */
static void note_add(kg_sb *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note_add(kg_sb *sb, const char *fmt, ...)
{
    if (sb->len > 0) kg_sb_puts(sb, "; ");
    va_list ap;
    va_start(ap, fmt);
    kg_sb_vprintf(sb, fmt, ap);
    va_end(ap);
}

/* The files the comparison reads are hashed: all but the saved outputs,
 * the builds and the workers' logs (which it does not read). */
static int compare_reads(const char *rel)
{
    return strncmp(rel, "outputs/", 8) != 0 && strncmp(rel, "build/", 6) != 0 && strncmp(rel, "logs/", 5) != 0;
}

/* The section "[arm NAME]" of a canonical plan, as a text of its own
 * (the section line and its keys); NULL when absent (caller frees). */
static char *arm_section(const char *canonical, const char *name)
{
    char head[KG_NAME_MAX + 16];
    snprintf(head, sizeof head, "[arm %s]\n", name);
    const char *p = canonical;
    size_t hl = strlen(head);
    while ((p = strstr(p, head)) != NULL && !(p == canonical || p[-1] == '\n')) p += hl;
    if (p == NULL) return NULL;
    const char *end = strstr(p + hl, "\n\n");
    size_t len = end != NULL ? (size_t)(end - p) + 1 : strlen(p);
    char *s = malloc(len + 1);
    if (s == NULL) return NULL;
    memcpy(s, p, len);
    s[len] = '\0';
    return s;
}

/* kg_frozen_diff of two sections, without the "[arm NAME] " of each key. */
static void section_diff(const char *a, const char *b, const char *name, kg_sb *out)
{
    kg_sb d = { 0 };
    kg_frozen_diff(a, b, &d);
    if (d.buf == NULL) return;
    char prefix[KG_NAME_MAX + 16];
    snprintf(prefix, sizeof prefix, "[arm %s] ", name);
    size_t pl = strlen(prefix);
    for (const char *p = d.buf; *p;) {
        if (strncmp(p, prefix, pl) == 0) {
            p += pl;
            continue;
        }
        kg_sb_printf(out, "%c", *p++);
    }
    kg_sb_free(&d);
}

/* The source SHA-256 environment.json records for arm name, "" if none. */
static const char *source_sha(const folder *f, const char *name)
{
    json_t *src = f->env != NULL ? json_object_get(json_object_get(f->env, "sources"), name) : NULL;
    return jstr(src, "sha256");
}

/* ---- identity ---- */

void kg_compare_device_model(const char *device, char *buf, size_t cap)
{
    if (device == NULL) device = "";
    size_t n = strlen(device);
    const char *p = strstr(device, " ("), *q = strstr(device, ", ");
    if (p != NULL && (size_t)(p - device) < n) n = (size_t)(p - device);
    if (q != NULL && (size_t)(q - device) < n) n = (size_t)(q - device);
    snprintf(buf, cap, "%.*s", (int)n, device);
}

static const char *nz(const char *s)
{
    return s != NULL && s[0] != '\0' ? s : "unknown";
}

int kg_compare_identity(const kg_compare_ident *a, const kg_compare_ident *b, const kg_compare_opts *o,
                        kg_sb *notes, kg_err *err)
{
    char ma[256], mb[256];
    kg_compare_device_model(a->device, ma, sizeof ma);
    kg_compare_device_model(b->device, mb, sizeof mb);
    int backend_differs = strcmp(nz(a->backend), nz(b->backend)) != 0;
    int model_differs = backend_differs || strcmp(ma, mb) != 0;
    int device_differs = model_differs || strcmp(nz(a->device), nz(b->device)) != 0;
    int host_differs = strcmp(nz(a->host), nz(b->host)) != 0;
    if (model_differs && !o->allow_device)
        return kg_errorf(err, KG_EINPUT,
                         "%s (%s) ran on another device than %s (%s): %s is %s: %s, %s is %s: %s (device models "
                         "'%s' and '%s'): the times of two devices are not a change of the code; --allow-device "
                         "compares them anyway",
                         b->label, b->dir, a->label, a->dir, a->label, nz(a->backend), nz(a->device), b->label,
                         nz(b->backend), nz(b->device), ma, mb);
    if (o->same_device && (device_differs || host_differs))
        return kg_errorf(err, KG_EINPUT,
                         "--same-device: %s (%s) ran on %s: %s on host %s, %s (%s) on %s: %s on host %s; leave out "
                         "--same-device to compare campaigns of the same device model",
                         a->label, a->dir, nz(a->backend), nz(a->device), nz(a->host), b->label, b->dir,
                         nz(b->backend), nz(b->device), nz(b->host));
    if (strcmp(nz(a->version), nz(b->version)) != 0 && !o->allow_version)
        return kg_errorf(err, KG_EINPUT,
                         "%s (%s) was written by kgate %s and %s (%s) by kgate %s: the protocol that measured them "
                         "may differ between versions; --allow-version compares them anyway",
                         b->label, b->dir, nz(b->version), a->label, a->dir, nz(a->version));
    if (model_differs)
        kg_sb_printf(notes, "%s ran on another device than %s (--allow-device): %s: %s against %s: %s\n", b->label,
                     a->label, nz(b->backend), nz(b->device), nz(a->backend), nz(a->device));
    else if (device_differs)
        kg_sb_printf(notes, "%s's device is the same model as %s's, described differently: '%s' against '%s'\n",
                     b->label, a->label, nz(b->device), nz(a->device));
    if (host_differs && !o->same_device)
        kg_sb_printf(notes, "%s ran on host %s, %s on host %s\n", b->label, nz(b->host), a->label, nz(a->host));
    if (strcmp(nz(a->version), nz(b->version)) != 0)
        kg_sb_printf(notes, "%s was written by kgate %s, %s by kgate %s (--allow-version)\n", b->label,
                     nz(b->version), a->label, nz(a->version));
    else if (strcmp(nz(a->git_sha), nz(b->git_sha)) != 0)
        kg_sb_printf(notes, "%s was written by kgate %s at git %s, %s at git %s\n", b->label, nz(b->version),
                     nz(b->git_sha), a->label, nz(a->git_sha));
    return notes->oom ? kg_errorf(err, KG_ENOMEM, "compare: out of memory") : KG_OK;
}

/* ---- loading ---- */

static void folder_free(folder *f)
{
    if (f->keys != NULL && f->have_ev)
        for (int c = 0; c < f->ev.plan->ncases; c++) free(f->keys[c]);
    free(f->keys);
    free(f->match);
    json_decref(f->meta);
    json_decref(f->env);
    if (f->have_an) kg_analysis_free(&f->an);
    if (f->have_ev) kg_evidence_free(&f->ev);
    memset(f, 0, sizeof *f);
}

static int folder_load(folder *f, const kg_compare_opts *o, kg_err *err)
{
    char path[KG_PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/plan.kg", f->dir);
    if (!kg_path_exists(path))
        return kg_errorf(err, KG_EINPUT, "%s (%s): not an evidence folder (no plan.kg): give folders that kgate run "
                         "wrote", f->label, f->dir);
    /* integrity first: nothing of a folder that fails it is used */
    kg_sb probs = { 0 };
    int nbad = 0, nhashed = 0, rc;
    kg_err ve = { 0 };
    rc = o->full_verify ? kg_verify_dir(f->dir, &probs, &nbad, &ve)
                        : kg_verify_sums(f->dir, compare_reads, &probs, &nbad, &nhashed, &ve);
    if (rc != KG_OK) {
        kg_sb_free(&probs);
        return kg_errorf(err, rc == KG_EUSAGE ? KG_EINPUT : rc, "%s (%s): %s", f->label, f->dir, ve.msg);
    }
    if (nbad > 0) {
        /* the first problem that is not a note */
        const char *line = probs.buf != NULL ? probs.buf : "";
        while (strncmp(line, "note: ", 6) == 0 && strchr(line, '\n') != NULL) line = strchr(line, '\n') + 1;
        int len = (int)strcspn(line, "\n");
        rc = kg_errorf(err, KG_EINPUT,
                       "%s (%s) fails its integrity check: %.*s%s: a folder that does not match its %s is not "
                       "compared (kgate verify %s names every problem)",
                       f->label, f->dir, len, line, nbad > 1 ? " (and more)" : "",
                       o->full_verify ? "evidence" : "SHA256SUMS", f->dir);
        kg_sb_free(&probs);
        return rc;
    }
    kg_sb_free(&probs);
    if ((rc = kg_evidence_load(f->dir, &f->ev, err)) != KG_OK) return rc;
    f->have_ev = 1;
    json_error_t je;
    f->meta = json_loads(f->ev.meta_json, 0, &je);
    if (!json_is_object(f->meta))
        return kg_errorf(err, KG_EINPUT, "%s/meta.json:%d: not a JSON object (%s)", f->dir, je.line, je.text);
    if (json_is_true(json_object_get(f->meta, "check_only")))
        return kg_errorf(err, KG_EINPUT, "%s (%s): a kgate check folder has no timings: compare folders of kgate run",
                         f->label, f->dir);
    snprintf(path, sizeof path, "%s/environment.json", f->dir);
    char *text = NULL;
    if (kg_path_exists(path)) {
        if ((rc = kg_read_file_cap(path, KG_CAP_TEXT, &text, NULL, err)) != KG_OK) return rc;
        f->env = json_loads(text, 0, &je);
        free(text);
        if (!json_is_object(f->env))
            return kg_errorf(err, KG_EINPUT, "%s:%d: not a JSON object (%s)", path, je.line, je.text);
    }
    if ((rc = kg_report_analyse(&f->ev, &f->an, err)) != KG_OK) return rc;
    f->have_an = 1;
    f->id = (kg_compare_ident){ .label = f->label, .dir = f->dir, .backend = jstr(f->meta, "backend"),
                                .device = jstr(f->meta, "device"), .host = jstr(f->meta, "host"),
                                .version = jstr(f->meta, "kgate_version"), .git_sha = jstr(f->meta, "kgate_git_sha") };
    f->started = jstr(f->meta, "started_utc");
    const kg_plan *plan = f->ev.plan;
    f->keys = calloc((size_t)plan->ncases + 1, sizeof *f->keys);
    if (f->keys == NULL) return kg_errorf(err, KG_ENOMEM, "compare: out of memory");
    for (int c = 0; c < plan->ncases; c++) {
        kg_sb k = { 0 };
        kg_sb_printf(&k, "%s, %s, ", plan->cases[c].op, kg_dtype_name(plan->cases[c].dtype));
        kg_report_case_vars(&k, &f->ev, c);
        if (k.oom || k.buf == NULL) {
            kg_sb_free(&k);
            return kg_errorf(err, KG_ENOMEM, "compare: out of memory");
        }
        f->keys[c] = k.buf;
    }
    return KG_OK;
}

/* The first folder's cases matched in folder f: by key, in plan order
 * among cases that share one. */
static int match_cases(const folder *first, folder *f, kg_err *err)
{
    int nf = f->ev.plan->ncases, n0 = first->ev.plan->ncases;
    int *used = calloc((size_t)nf + 1, sizeof *used);
    f->match = malloc(((size_t)n0 + 1) * sizeof *f->match);
    if (used == NULL || f->match == NULL) {
        free(used);
        return kg_errorf(err, KG_ENOMEM, "compare: out of memory");
    }
    for (int i = 0; i < n0; i++) {
        f->match[i] = -1;
        for (int j = 0; j < nf && f->match[i] < 0; j++)
            if (!used[j] && strcmp(first->keys[i], f->keys[j]) == 0) {
                f->match[i] = j;
                used[j] = 1;
            }
    }
    free(used);
    return KG_OK;
}

/* ---- one campaign against the first on a row ---- */

static int arm_on(const folder *f, int c, int a)
{
    return c >= 0 && a >= 0 && res_of(f, c, a)->state != KG_ARM_ABSENT;
}

static void pair_compute(const folder *fa, int ca, int aa, const folder *fb, int cb, int ab, const kg_compare_opts *o,
                         pair *p)
{
    memset(p, 0, sizeof *p);
    p->v = KG_VERDICT_INCONCLUSIVE;
    if (!arm_on(fa, ca, aa) || !arm_on(fb, cb, ab)) {
        snprintf(p->verdict, sizeof p->verdict, "not in %s", arm_on(fa, ca, aa) ? fb->label : fa->label);
        return;
    }
    p->present = 1;
    const kg_arm_result *ra = res_of(fa, ca, aa), *rb = res_of(fb, cb, ab);
    const folder *bad = ra->state != KG_ARM_OK ? fa : rb->state != KG_ARM_OK ? fb : NULL;
    if (bad != NULL) {
        const kg_arm_result *r = bad == fa ? ra : rb;
        snprintf(p->verdict, sizeof p->verdict, "%s in %s", kg_verdict_name(r->verdict), bad->label);
        return;
    }
    bad = ra->impossible ? fa : rb->impossible ? fb : NULL;
    if (bad != NULL) {
        snprintf(p->verdict, sizeof p->verdict, "INVALID in %s", bad->label);
        snprintf(p->why, sizeof p->why, "its timing in %s is impossible (%s)", bad->label,
                 (bad == fa ? ra : rb)->physics);
        return;
    }
    if (!ra->has_level || !rb->has_level) {
        snprintf(p->verdict, sizeof p->verdict, "NO DATA");
        snprintf(p->why, sizeof p->why, "no timed process in both directions in %s",
                 !ra->has_level ? fa->label : fb->label);
        return;
    }
    kg_err e = { 0 };
    kg_change_compute(&ra->level, &rb->level, o->alpha, &p->lvl, &e);
    p->timed = 1;
    p->v = kg_change_verdict(&p->lvl, o->margin);
    snprintf(p->verdict, sizeof p->verdict, "%s", kg_verdict_name(p->v));
    if (!p->lvl.has_interval)
        snprintf(p->why, sizeof p->why, "no interval: %s has fewer than 2 processes in a direction",
                 !ra->level.has_interval ? fa->label : fb->label);
    /* the paired ratio to the same baseline in both campaigns */
    if (ra->role != KG_ROLE_BASELINE && rb->role != KG_ROLE_BASELINE && ra->has_effect && rb->has_effect
        && ra->contrast_arm >= 0 && rb->contrast_arm >= 0
        && strcmp(fa->ev.plan->arms[ra->contrast_arm].name, fb->ev.plan->arms[rb->contrast_arm].name) == 0) {
        kg_err e2 = { 0 };
        kg_change_compute(&ra->eff, &rb->eff, o->alpha, &p->rel, &e2);
        p->has_rel = 1;
        p->rv = kg_change_verdict(&p->rel, o->margin);
    }
}

/* "0.970 → 0.968 vs base", the arm's paired ratio to its baseline in the
 * two campaigns; "baseline" for one. */
static void ratio_text(const folder *fa, int ca, int aa, const folder *fb, int cb, int ab, char *buf, size_t cap)
{
    const kg_arm_result *ra = res_of(fa, ca, aa), *rb = res_of(fb, cb, ab);
    if (ra->role == KG_ROLE_BASELINE && rb->role == KG_ROLE_BASELINE) {
        snprintf(buf, cap, "baseline");
        return;
    }
    char x[32] = "-", y[32] = "-";
    if (ra->state == KG_ARM_OK && ra->has_effect) snprintf(x, sizeof x, "%.3f", exp(ra->eff.theta));
    if (rb->state == KG_ARM_OK && rb->has_effect) snprintf(y, sizeof y, "%.3f", exp(rb->eff.theta));
    const char *na = ra->contrast_arm >= 0 ? fa->ev.plan->arms[ra->contrast_arm].name : "";
    const char *nb = rb->contrast_arm >= 0 ? fb->ev.plan->arms[rb->contrast_arm].name : "";
    if (strcmp(na, nb) == 0 || nb[0] == '\0') snprintf(buf, cap, "%s → %s vs %s", x, y, na[0] ? na : "-");
    else if (na[0] == '\0') snprintf(buf, cap, "%s → %s vs %s", x, y, nb);
    else snprintf(buf, cap, "%s vs %s → %s vs %s", x, na, y, nb);
}

/* The note of the main pair: what changed for the row besides its time. */
static void row_note(const folder *fa, int ca, int aa, const folder *fb, int cb, int ab, const pair *p, kg_sb *note)
{
    const kg_plan *pa = fa->ev.plan, *pb = fb->ev.plan;
    if (ca >= 0 && cb >= 0 && strcmp(pa->cases[ca].name, pb->cases[cb].name) != 0)
        note_add(note, "case named %s in %s", pb->cases[cb].name, fb->label);
    if (aa < 0 || ab < 0) return;
    const char *name = pa->arms[aa].name;
    const char *sa = source_sha(fa, name), *sb = source_sha(fb, name);
    if (sa[0] != '\0' && sb[0] != '\0' && strcmp(sa, sb) != 0)
        note_add(note, "source changed (sha256 %.12s → %.12s)", sa, sb);
    char *xa = arm_section(pa->canonical, name), *xb = arm_section(pb->canonical, name);
    if (xa != NULL && xb != NULL && strcmp(xa, xb) != 0) {
        kg_sb d = { 0 };
        section_diff(xa, xb, name, &d);
        if (d.buf != NULL) note_add(note, "plan: %s", d.buf);
        kg_sb_free(&d);
    }
    free(xa);
    free(xb);
    if (p->why[0] != '\0') note_add(note, "%s", p->why);
    if (p->has_rel && (p->rv == KG_VERDICT_FASTER || p->rv == KG_VERDICT_SLOWER)) {
        char c[32], lo[32], hi[32];
        pct(c, sizeof c, p->rel.change);
        pct(lo, sizeof lo, p->rel.change_lo);
        pct(hi, sizeof hi, p->rel.change_hi);
        const kg_arm_result *ra = res_of(fa, ca, aa);
        note_add(note, "relative to %s: %s %s [%s, %s]", pa->arms[ra->contrast_arm].name, kg_verdict_name(p->rv), c,
                 lo, hi);
    }
}

/* ---- the comparison ---- */

typedef struct cmp {
    folder *f;
    int n;
    const kg_compare_opts *o;
    crow *rows;
    int nrows;
    kg_sb notes;          /* campaign-level notes, one per line */
    kg_sb unmatched;      /* what was not compared, one per line */
} cmp;

static void case_desc(const folder *f, int c, kg_sb *sb)
{
    kg_sb_printf(sb, "%s (%s)", f->ev.plan->cases[c].name, f->keys[c]);
}

static int build_rows(cmp *m, kg_err *err)
{
    const folder *first = &m->f[0];
    const kg_plan *p0 = first->ev.plan;
    m->rows = calloc((size_t)p0->ncases * (size_t)p0->narms + 1, sizeof *m->rows);
    if (m->rows == NULL) return kg_errorf(err, KG_ENOMEM, "compare: out of memory");
    for (int i = 0; i < p0->ncases; i++) {
        for (int j = 0; j < i; j++)
            if (strcmp(first->keys[i], first->keys[j]) == 0) {
                kg_sb_printf(&m->notes, "cases %s and %s of %s have the same op, dtype and variables: they are "
                             "matched with the other folders' in plan order\n", p0->cases[j].name, p0->cases[i].name,
                             first->label);
                break;
            }
        for (int a = 0; a < p0->narms; a++) {
            if (!arm_on(first, i, a)) continue;
            crow *r = &m->rows[m->nrows++];
            for (int k = 0; k < m->n; k++) {
                const folder *f = &m->f[k];
                int c = k == 0 ? i : f->match[i];
                int b = c >= 0 ? kg_plan_find_arm(f->ev.plan, p0->arms[a].name) : -1;
                r->c[k] = c;
                r->a[k] = arm_on(f, c, b) ? b : -1;
                if (k > 0 && c >= 0 && r->a[k] < 0)
                    kg_sb_printf(&m->unmatched, "arm %s of %s on case %s: not in %s\n", p0->arms[a].name,
                                 first->label, p0->cases[i].name, f->label);
            }
        }
    }
    /* what the other folders have that the first has not */
    for (int k = 1; k < m->n; k++) {
        const folder *f = &m->f[k];
        const kg_plan *pf = f->ev.plan;
        int *hit = calloc((size_t)pf->ncases + 1, sizeof *hit);
        if (hit == NULL) return kg_errorf(err, KG_ENOMEM, "compare: out of memory");
        for (int i = 0; i < p0->ncases; i++) {
            if (f->match[i] >= 0) {
                hit[f->match[i]] = 1;
                continue;
            }
            kg_sb_puts(&m->unmatched, "case ");
            case_desc(first, i, &m->unmatched);
            kg_sb_printf(&m->unmatched, " of %s: not in %s\n", first->label, f->label);
        }
        for (int c = 0; c < pf->ncases; c++) {
            if (!hit[c]) {
                kg_sb_puts(&m->unmatched, "case ");
                case_desc(f, c, &m->unmatched);
                kg_sb_printf(&m->unmatched, " of %s: not in %s\n", f->label, first->label);
                continue;
            }
            for (int b = 0; b < pf->narms; b++)
                if (arm_on(f, c, b)) {
                    int i0 = -1;
                    for (int i = 0; i < p0->ncases && i0 < 0; i++)
                        if (f->match[i] == c) i0 = i;
                    int a0 = kg_plan_find_arm(p0, pf->arms[b].name);
                    if (!arm_on(first, i0, a0))
                        kg_sb_printf(&m->unmatched, "arm %s of %s on case %s: not in %s\n", pf->arms[b].name,
                                     f->label, pf->cases[c].name, first->label);
                }
        }
        free(hit);
    }
    /* the main table needs a case and an arm in common */
    const folder *last = &m->f[m->n - 1];
    int common_case = 0, common = 0;
    for (int i = 0; i < p0->ncases; i++) common_case += last->match[i] >= 0;
    for (int r = 0; r < m->nrows; r++) common += m->rows[r].a[m->n - 1] >= 0;
    if (common_case == 0) {
        kg_sb a = { 0 }, b = { 0 };
        for (int i = 0; i < p0->ncases && i < 4; i++) {
            if (i) kg_sb_puts(&a, "; ");
            case_desc(first, i, &a);
        }
        for (int i = 0; i < last->ev.plan->ncases && i < 4; i++) {
            if (i) kg_sb_puts(&b, "; ");
            case_desc(last, i, &b);
        }
        int rc = kg_errorf(err, KG_EINPUT,
                           "%s (%s) and %s (%s) have no case in common (cases are matched by op, dtype and "
                           "variables, not by name): %s has %s%s; %s has %s%s",
                           first->label, first->dir, last->label, last->dir, first->label, a.buf ? a.buf : "none",
                           p0->ncases > 4 ? "; ..." : "", last->label, b.buf ? b.buf : "none",
                           last->ev.plan->ncases > 4 ? "; ..." : "");
        kg_sb_free(&a);
        kg_sb_free(&b);
        return rc;
    }
    if (common == 0)
        return kg_errorf(err, KG_EINPUT, "%s (%s) and %s (%s) share cases but no arm on them (arms are matched by "
                         "name)", first->label, first->dir, last->label, last->dir);
    return KG_OK;
}

/* f's canonical plan with each case matched to one of the first
 * folder's under another name renamed to that name (caller frees), so
 * that the plans' difference lists keys, not renamed sections; the
 * renames are appended to renamed ("wide2 (A's wide)"). */
static char *canonical_renamed(const folder *first, const folder *f, kg_sb *renamed)
{
    kg_sb t = { 0 };
    kg_sb_puts(&t, f->ev.plan->canonical);
    for (int i = 0; i < first->ev.plan->ncases && t.buf != NULL; i++) {
        int c = f->match[i];
        if (c < 0 || strcmp(f->ev.plan->cases[c].name, first->ev.plan->cases[i].name) == 0) continue;
        char from[KG_NAME_MAX + 16], to[KG_NAME_MAX + 16];
        snprintf(from, sizeof from, "\n[case %s]\n", f->ev.plan->cases[c].name);
        snprintf(to, sizeof to, "\n[case %s]\n", first->ev.plan->cases[i].name);
        char *at = strstr(t.buf, from);
        if (at == NULL) continue;
        kg_sb u = { 0 };
        kg_sb_printf(&u, "%.*s%s%s", (int)(at - t.buf), t.buf, to, at + strlen(from));
        kg_sb_free(&t);
        t = u;
        kg_sb_printf(renamed, "%s%s (%s's %s)", renamed->len ? ", " : "", f->ev.plan->cases[c].name, first->label,
                     first->ev.plan->cases[i].name);
    }
    if (t.oom) kg_sb_free(&t);
    return t.buf;
}

static void campaign_notes(cmp *m)
{
    const folder *first = &m->f[0];
    for (int k = 0; k < m->n; k++) {
        const folder *f = &m->f[k];
        kg_sb renamed = { 0 };
        char *ren = k > 0 ? canonical_renamed(first, f, &renamed) : NULL;
        if (renamed.len > 0)
            kg_sb_printf(&m->notes, "cases of %s matched under another name: %s\n", f->label, renamed.buf);
        kg_sb_free(&renamed);
        if (k > 0 && strcmp(f->ev.plan->hash, first->ev.plan->hash) != 0) {
            kg_sb d = { 0 };
            kg_frozen_diff(first->ev.plan->canonical, ren != NULL ? ren : f->ev.plan->canonical, &d);
            const char *t = d.buf != NULL ? d.buf : "";
            int cut = strlen(t) > 400;
            kg_sb_printf(&m->notes, "%s's plan differs from %s's (sha256 %.12s → %.12s): %.400s%s\n", f->label,
                         first->label, first->ev.plan->hash, f->ev.plan->hash, t, cut ? " ..." : "");
            kg_sb_free(&d);
        } else if (k > 0) {
            kg_sb_printf(&m->notes, "%s ran the same plan as %s (sha256 %.12s)\n", f->label, first->label,
                         f->ev.plan->hash);
        }
        if (f->an.invalid)
            kg_sb_printf(&m->notes, "%s: the campaign is INVALID (%s): its times are compared, its own verdicts do "
                         "not stand\n", f->label, f->an.invalid_why[0] ? f->an.invalid_why : f->an.gate_reason);
        free(ren);
        for (int j = 0; j < k; j++)
            if (strcmp(f->dir, m->f[j].dir) == 0)
                kg_sb_printf(&m->notes, "%s and %s are the same folder\n", m->f[j].label, f->label);
    }
}

/* ---- markdown ---- */

/* "Title:" and one "- line" per line of text, then a blank line */
static void md_bullets(kg_sb *out, const char *title, const char *text)
{
    kg_sb_printf(out, "%s:\n\n", title);
    for (const char *p = text; *p;) {
        size_t l = strcspn(p, "\n");
        kg_sb_printf(out, "- %.*s\n", (int)l, p);
        p += l + (p[l] == '\n');
    }
    kg_sb_puts(out, "\n");
}

static void md_header(const cmp *m, kg_sb *out)
{
    const kg_compare_opts *o = m->o;
    kg_sb_puts(out, "# kgate compare\n\n");
    kg_sb_puts(out, "| folder | evidence | started | plan sha256 | kgate | device | processes |\n"
                    "|---|---|---|---|---|---|---|\n");
    for (int k = 0; k < m->n; k++) {
        const folder *f = &m->f[k];
        kg_sb_printf(out, "| %s | `", f->label);
        md_cell(out, f->dir);
        kg_sb_printf(out, "` | %s | `%.12s` | %s (git %s) | ", nz(f->started), f->ev.plan->hash, nz(f->id.version),
                     nz(f->id.git_sha));
        md_cell(out, nz(f->id.backend));
        kg_sb_puts(out, ": ");
        md_cell(out, nz(f->id.device));
        kg_sb_printf(out, " | %d accepted, %d excluded |\n", f->an.nproc_accepted, f->an.nproc_rejected);
    }
    kg_sb_printf(out,
                 "\nTimes are the arm's median over processes of its per-process medians (µs, as report.md). The "
                 "change is that of the arm's mean log time (per process the mean over rounds of the log round "
                 "medians, per direction the mean over processes, the two directions weighing equally) between two "
                 "campaigns treated as unpaired, with a two-sided %.3g%% interval (Welch, Welch-Satterthwaite degrees "
                 "of freedom), as a change in time: + is slower. The verdict is against a margin of ±%.2f%%: FASTER "
                 "or SLOWER when the interval lies beyond it, EQUIVALENT when it lies within it, else INCONCLUSIVE. "
                 "arm/baseline is the arm's paired ratio to its baseline within each campaign (1 - the reduction of "
                 "report.md). docs/compare.md.\n\n",
                 100.0 * (1.0 - o->alpha), 100.0 * o->margin);
    if (m->notes.len > 0) md_bullets(out, "Notes", m->notes.buf);
}

/* One compared row in the summary's counts, by its verdict. */
static void count_row(kg_compare_summary *sum, const pair *p)
{
    sum->rows++;
    if (!p->timed) sum->other++;
    else if (p->v == KG_VERDICT_FASTER) sum->faster++;
    else if (p->v == KG_VERDICT_SLOWER) sum->slower++;
    else if (p->v == KG_VERDICT_EQUIVALENT) sum->equivalent++;
    else sum->inconclusive++;
}

static void md_main(const cmp *m, kg_compare_summary *sum, kg_sb *out)
{
    const folder *fa = &m->f[0], *fb = &m->f[m->n - 1];
    const kg_plan *p0 = fa->ev.plan;
    char ci[32];
    snprintf(ci, sizeof ci, "%.3g%%", 100.0 * (1.0 - m->o->alpha));
    kg_sb_printf(out, "## %s against %s\n\n", fb->label, fa->label);
    kg_sb_printf(out, "| case | op | dtype | variables | arm | %s µs | %s µs | change [%s interval] | verdict | "
                      "arm/baseline %s → %s | note |\n|---|---|---|---|---|---|---|---|---|---|---|\n",
                 fa->label, fb->label, ci, fa->label, fb->label);
    for (int i = 0; i < m->nrows; i++) {
        const crow *r = &m->rows[i];
        int ca = r->c[0], aa = r->a[0], cb = r->c[m->n - 1], ab = r->a[m->n - 1];
        if (ab < 0) continue;
        pair p;
        pair_compute(fa, ca, aa, fb, cb, ab, m->o, &p);
        const kg_case *k = &p0->cases[ca];
        kg_sb_printf(out, "| %s | %s | %s | ", k->name, k->op, kg_dtype_name(k->dtype));
        kg_report_case_vars(out, &fa->ev, ca);
        char ta[32], tb[32], c[32], lo[32], hi[32], rt[160];
        usec(ta, sizeof ta, res_of(fa, ca, aa)->med_ns_all);
        usec(tb, sizeof tb, res_of(fb, cb, ab)->med_ns_all);
        kg_sb_printf(out, " | %s | %s | %s | ", p0->arms[aa].name, ta, tb);
        if (p.timed) {
            pct(c, sizeof c, p.lvl.change);
            pct(lo, sizeof lo, p.lvl.change_lo);
            pct(hi, sizeof hi, p.lvl.change_hi);
            if (p.lvl.has_interval) kg_sb_printf(out, "%s [%s, %s]", c, lo, hi);
            else kg_sb_puts(out, c);
        }
        ratio_text(fa, ca, aa, fb, cb, ab, rt, sizeof rt);
        kg_sb_printf(out, " | %s | %s | ", p.verdict, rt);
        kg_sb note = { 0 };
        row_note(fa, ca, aa, fb, cb, ab, &p, &note);
        if (note.buf != NULL) md_cell(out, note.buf);
        kg_sb_free(&note);
        kg_sb_puts(out, " |\n");
        count_row(sum, &p);
    }
    kg_sb_printf(out, "\n%d row%s: %d FASTER, %d SLOWER, %d EQUIVALENT, %d INCONCLUSIVE, %d without a change.\n\n",
                 sum->rows, sum->rows == 1 ? "" : "s", sum->faster, sum->slower, sum->equivalent, sum->inconclusive,
                 sum->other);
    if (m->unmatched.len > 0) md_bullets(out, "Not compared", m->unmatched.buf);
}

static void md_trend(const cmp *m, kg_sb *out)
{
    const folder *fa = &m->f[0];
    const kg_plan *p0 = fa->ev.plan;
    kg_sb_printf(out, "## Trend against %s\n\nPer case and arm, the time in each folder in order (µs), and from the "
                      "second on its change against %s with the verdict.\n\n| case | arm |", fa->label, fa->label);
    for (int k = 0; k < m->n; k++) kg_sb_printf(out, " %s µs |", m->f[k].label);
    kg_sb_puts(out, "\n|---|---|");
    for (int k = 0; k < m->n; k++) kg_sb_puts(out, "---|");
    kg_sb_puts(out, "\n");
    for (int i = 0; i < m->nrows; i++) {
        const crow *r = &m->rows[i];
        kg_sb_printf(out, "| %s | %s |", p0->cases[r->c[0]].name, p0->arms[r->a[0]].name);
        for (int k = 0; k < m->n; k++) {
            const folder *f = &m->f[k];
            char t[32];
            if (r->a[k] < 0) {
                kg_sb_puts(out, " - |");
                continue;
            }
            const kg_arm_result *x = res_of(f, r->c[k], r->a[k]);
            usec(t, sizeof t, x->state == KG_ARM_OK ? x->med_ns_all : (double)NAN);
            if (k == 0) {
                kg_sb_printf(out, " %s |", x->state == KG_ARM_OK ? t : kg_verdict_name(x->verdict));
                continue;
            }
            pair p;
            pair_compute(fa, r->c[0], r->a[0], f, r->c[k], r->a[k], m->o, &p);
            if (p.timed) {
                char c[32];
                pct(c, sizeof c, p.lvl.change);
                kg_sb_printf(out, " %s (%s, %s) |", t, c, p.verdict);
            } else if (x->state == KG_ARM_OK) {
                kg_sb_printf(out, " %s (%s) |", t, p.verdict);
            } else {
                kg_sb_printf(out, " %s |", p.verdict);
            }
        }
        kg_sb_puts(out, "\n");
    }
    kg_sb_puts(out, "\n");
}

/* ---- JSON ---- */

static json_t *change_json(const kg_change *c, kg_verdict v)
{
    json_t *o = json_object();
    json_object_set_new(o, "change", jnum(c->change));
    json_object_set_new(o, "change_lower", jnum(c->change_lo));
    json_object_set_new(o, "change_upper", jnum(c->change_hi));
    json_object_set_new(o, "log_diff", jnum(c->diff));
    json_object_set_new(o, "se", jnum(c->se));
    json_object_set_new(o, "df", jnum(c->df));
    json_object_set_new(o, "t", jnum(c->tq));
    json_object_set_new(o, "verdict", json_string(kg_verdict_name(v)));
    return o;
}

static json_t *lines_json(const kg_sb *sb)
{
    json_t *a = json_array();
    for (const char *p = sb->buf != NULL ? sb->buf : ""; *p;) {
        size_t l = strcspn(p, "\n");
        json_array_append_new(a, json_stringn(p, l));
        p += l + (p[l] == '\n');
    }
    return a;
}

/* The arm in one folder: time, level, ratio to its baseline. */
static json_t *arm_json(const folder *f, int c, int a)
{
    json_t *o = json_object();
    json_object_set_new(o, "folder", json_string(f->label));
    if (c < 0 || a < 0) {
        json_object_set_new(o, "present", json_false());
        return o;
    }
    const kg_arm_result *r = res_of(f, c, a);
    json_object_set_new(o, "present", json_true());
    json_object_set_new(o, "case", json_string(f->ev.plan->cases[c].name));
    json_object_set_new(o, "role", json_string(kg_role_name(r->role)));
    json_object_set_new(o, "state", json_string(kg_report_state_name(r->state)));
    json_object_set_new(o, "campaign_verdict", json_string(kg_verdict_name(r->verdict)));
    json_object_set_new(o, "median_us", jnum(r->state == KG_ARM_OK ? r->med_ns_all / 1000.0 : (double)NAN));
    int lv = r->state == KG_ARM_OK && r->has_level;
    json_object_set_new(o, "level_log_ns", jnum(lv ? r->level.theta : (double)NAN));
    json_object_set_new(o, "level_se", jnum(lv && r->level.has_interval ? r->level.se : (double)NAN));
    json_object_set_new(o, "level_df", jnum(lv && r->level.has_interval ? r->level.df : (double)NAN));
    json_object_set_new(o, "processes_fwd", json_integer(lv ? r->level.n[0] : 0));
    json_object_set_new(o, "processes_rev", json_integer(lv ? r->level.n[1] : 0));
    const char *sha = source_sha(f, f->ev.plan->arms[a].name);
    json_object_set_new(o, "source_sha256", sha[0] ? json_string(sha) : json_null());
    if (r->state == KG_ARM_OK && r->role != KG_ROLE_BASELINE && r->has_effect && r->contrast_arm >= 0) {
        json_object_set_new(o, "baseline", json_string(f->ev.plan->arms[r->contrast_arm].name));
        json_object_set_new(o, "ratio_to_baseline", jnum(exp(r->eff.theta)));
        json_object_set_new(o, "reduction", jnum(r->eff.rho));
        json_object_set_new(o, "reduction_lower", jnum(r->eff.has_interval ? r->eff.rho_lo : (double)NAN));
        json_object_set_new(o, "reduction_upper", jnum(r->eff.has_interval ? r->eff.rho_hi : (double)NAN));
    }
    return o;
}

static json_t *pair_json(const folder *fa, int ca, int aa, const folder *fb, int cb, int ab, const pair *p)
{
    json_t *o = json_object();
    json_object_set_new(o, "from", json_string(fa->label));
    json_object_set_new(o, "to", json_string(fb->label));
    json_object_set_new(o, "verdict", json_string(p->verdict));
    json_object_set_new(o, "level", p->timed ? change_json(&p->lvl, p->v) : json_null());
    json_object_set_new(o, "relative", p->has_rel ? change_json(&p->rel, p->rv) : json_null());
    kg_sb note = { 0 };
    if (p->present) row_note(fa, ca, aa, fb, cb, ab, p, &note);
    json_object_set_new(o, "note", json_string(note.buf != NULL ? note.buf : ""));
    kg_sb_free(&note);
    return o;
}

static int render_json(const cmp *m, kg_compare_summary *sum, kg_sb *out, kg_err *err)
{
    const folder *fa = &m->f[0], *fb = &m->f[m->n - 1];
    const kg_plan *p0 = fa->ev.plan;
    json_t *root = json_object();
    json_object_set_new(root, "kgate_compare", json_integer(1));
    json_object_set_new(root, "alpha", json_real(m->o->alpha));
    json_object_set_new(root, "margin", json_real(m->o->margin));
    json_t *fs = json_array();
    for (int k = 0; k < m->n; k++) {
        const folder *f = &m->f[k];
        json_t *o = json_object();
        json_object_set_new(o, "label", json_string(f->label));
        json_object_set_new(o, "path", json_string(f->dir));
        json_object_set_new(o, "started_utc", json_string(f->started));
        json_object_set_new(o, "plan_sha256", json_string(f->ev.plan->hash));
        json_object_set_new(o, "kgate_version", json_string(f->id.version));
        json_object_set_new(o, "kgate_git_sha", json_string(f->id.git_sha));
        json_object_set_new(o, "backend", json_string(f->id.backend));
        json_object_set_new(o, "device", json_string(f->id.device));
        json_object_set_new(o, "host", json_string(f->id.host));
        json_object_set_new(o, "processes_accepted", json_integer(f->an.nproc_accepted));
        json_object_set_new(o, "processes_excluded", json_integer(f->an.nproc_rejected));
        json_object_set_new(o, "invalid", json_boolean(f->an.invalid));
        json_array_append_new(fs, o);
    }
    json_object_set_new(root, "folders", fs);
    json_object_set_new(root, "notes", lines_json(&m->notes));
    json_t *rows = json_array(), *trend = json_array();
    for (int i = 0; i < m->nrows; i++) {
        const crow *r = &m->rows[i];
        int ca = r->c[0], aa = r->a[0];
        const kg_case *k = &p0->cases[ca];
        kg_sb vars = { 0 };
        kg_report_case_vars(&vars, &fa->ev, ca);
        json_t *base = json_object();
        json_object_set_new(base, "case", json_string(k->name));
        json_object_set_new(base, "op", json_string(k->op));
        json_object_set_new(base, "dtype", json_string(kg_dtype_name(k->dtype)));
        json_object_set_new(base, "variables", json_string(vars.buf != NULL ? vars.buf : ""));
        json_object_set_new(base, "arm", json_string(p0->arms[aa].name));
        kg_sb_free(&vars);
        json_t *per = json_array();
        for (int f = 0; f < m->n; f++) json_array_append_new(per, arm_json(&m->f[f], r->c[f], r->a[f]));
        if (r->a[m->n - 1] >= 0) {
            json_t *row = json_deep_copy(base);
            pair p;
            pair_compute(fa, ca, aa, fb, r->c[m->n - 1], r->a[m->n - 1], m->o, &p);
            json_object_set_new(row, "folders", json_deep_copy(per));
            json_t *pj = pair_json(fa, ca, aa, fb, r->c[m->n - 1], r->a[m->n - 1], &p);
            json_object_update_missing(row, pj);
            json_decref(pj);
            json_array_append_new(rows, row);
            count_row(sum, &p);
        }
        if (m->n >= 3) {
            json_t *t = json_deep_copy(base), *pts = json_array();
            for (int f = 0; f < m->n; f++) {
                json_t *pt = arm_json(&m->f[f], r->c[f], r->a[f]);
                if (f > 0) {
                    pair p;
                    pair_compute(fa, ca, aa, &m->f[f], r->c[f], r->a[f], m->o, &p);
                    json_object_set_new(pt, "against_first", p.timed ? change_json(&p.lvl, p.v) : json_null());
                    json_object_set_new(pt, "verdict", json_string(p.verdict));
                }
                json_array_append_new(pts, pt);
            }
            json_object_set_new(t, "points", pts);
            json_array_append_new(trend, t);
        }
        json_decref(per);
        json_decref(base);
    }
    json_object_set_new(root, "from", json_string(fa->label));
    json_object_set_new(root, "to", json_string(fb->label));
    json_object_set_new(root, "rows", rows);
    json_t *s = json_object();
    json_object_set_new(s, "rows", json_integer(sum->rows));
    json_object_set_new(s, "faster", json_integer(sum->faster));
    json_object_set_new(s, "slower", json_integer(sum->slower));
    json_object_set_new(s, "equivalent", json_integer(sum->equivalent));
    json_object_set_new(s, "inconclusive", json_integer(sum->inconclusive));
    json_object_set_new(s, "without_change", json_integer(sum->other));
    json_object_set_new(root, "summary", s);
    json_object_set_new(root, "trend", m->n >= 3 ? trend : json_null());
    if (m->n < 3) json_decref(trend);
    json_object_set_new(root, "not_compared", lines_json(&m->unmatched));
    char *text = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
    json_decref(root);
    if (text == NULL) return kg_errorf(err, KG_ENOMEM, "compare: out of memory (JSON)");
    kg_sb_printf(out, "%s\n", text);
    free(text);
    return KG_OK;
}

int kg_compare_dirs(const char *const *dirs, int n, const kg_compare_opts *o, kg_sb *out, kg_compare_summary *sum,
                    kg_err *err)
{
    memset(sum, 0, sizeof *sum);
    if (n < 2 || n > KG_COMPARE_MAX_DIRS)
        return kg_errorf(err, KG_EUSAGE, "compare: give 2 to %d evidence folders, not %d", KG_COMPARE_MAX_DIRS, n);
    if (!(o->alpha > 0.0 && o->alpha < 1.0))
        return kg_errorf(err, KG_EUSAGE, "compare: --alpha %g is not in (0, 1) (e.g. 0.05)", o->alpha);
    if (!(o->margin >= 0.0 && o->margin < 1.0))
        return kg_errorf(err, KG_EUSAGE, "compare: --margin %g is not in [0, 1) (e.g. 0.02 or 2%%)", o->margin);
    if (o->same_device && o->allow_device)
        return kg_errorf(err, KG_EUSAGE, "compare: --same-device and --allow-device contradict each other: give one");
    cmp m = { 0 };
    m.o = o;
    m.n = n;
    m.f = calloc((size_t)n, sizeof *m.f);
    if (m.f == NULL) return kg_errorf(err, KG_ENOMEM, "compare: out of memory");
    int rc = KG_OK;
    for (int k = 0; k < n && rc == KG_OK; k++) {
        folder *f = &m.f[k];
        f->dir = dirs[k];
        if (k < 26) snprintf(f->label, sizeof f->label, "%c", 'A' + k);
        else snprintf(f->label, sizeof f->label, "F%d", k + 1);
        rc = folder_load(f, o, err);
        if (rc == KG_OK && k > 0) rc = kg_compare_identity(&m.f[0].id, &f->id, o, &m.notes, err);
    }
    for (int k = 1; k < n && rc == KG_OK; k++) rc = match_cases(&m.f[0], &m.f[k], err);
    if (rc == KG_OK) rc = build_rows(&m, err);
    if (rc == KG_OK) {
        campaign_notes(&m);
        if (o->json) {
            rc = render_json(&m, sum, out, err);
        } else {
            md_header(&m, out);
            md_main(&m, sum, out);
            if (n >= 3) md_trend(&m, out);
        }
    }
    if (rc == KG_OK && (out->oom || m.notes.oom || m.unmatched.oom))
        rc = kg_errorf(err, KG_ENOMEM, "compare: out of memory");
    for (int k = 0; k < n; k++) folder_free(&m.f[k]);
    free(m.f);
    free(m.rows);
    kg_sb_free(&m.notes);
    kg_sb_free(&m.unmatched);
    return rc;
}

/* report_html.c: report.html, the report in a browser: the run header,
 * the gate, the results table (the numbers of report.md), and four kinds
 * of plot drawn here as inline SVG: per case, each contrast's reduction
 * with its interval against 0, the margin and the equivalence band; per
 * case and arm, the per-round distributions of the raw samples in both
 * directions; the processes over wall time, accepted and excluded; and
 * the telemetry (SM clock, power, temperature) beside the samples' times.
 *
 * One self-contained file: CSS inline, no script, no external resource,
 * and a Content-Security-Policy that lets none run.  Every text that
 * comes from the plan or the evidence is escaped.  Formats what the
 * evidence and the analysis hold; reads no file and decides nothing.
 * Coordinates are computed with basic arithmetic only and printed with a
 * fixed precision, so a regenerated report is byte-identical.
 *
 * Every plot is an <svg class="plot"> with an id, data-points (the
 * values it drew) and, when it has nothing to draw, data-empty saying
 * why.  Each mark is an element of class "m" whose data-n counts the
 * values it stands for; they sum to data-points (tests/cli/report_html.sh
 * checks this in a browser's DOM). */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kgate/evidence.h"
#include "report/report.h"
#include "base/util.h"

/* ---- text ------------------------------------------------------------ */

/* The length of the well-formed UTF-8 sequence at p (not a C1 control),
 * 0 when it is not one. */
static int utf8_len(const unsigned char *p)
{
    unsigned c = p[0];
    if (c >= 0xC2 && c <= 0xDF) {
        if ((p[1] & 0xC0) != 0x80) return 0;
        return c == 0xC2 && p[1] < 0xA0 ? 0 : 2;   /* U+0080..U+009F: controls */
    }
    if (c >= 0xE0 && c <= 0xEF) {
        unsigned lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
        if (p[1] < lo || p[1] > hi || (p[2] & 0xC0) != 0x80) return 0;
        return 3;
    }
    if (c >= 0xF0 && c <= 0xF4) {
        unsigned lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
        if (p[1] < lo || p[1] > hi || (p[2] & 0xC0) != 0x80 || (p[3] & 0xC0) != 0x80) return 0;
        return 4;
    }
    return 0;
}

/* s as HTML text or attribute value: & < > " ' escaped, control
 * characters as spaces, a byte that is not well-formed UTF-8 as U+FFFD. */
static void esc(kg_sb *sb, const char *s)
{
    const unsigned char *p = (const unsigned char *)s, *run = p;
    while (*p) {
        const char *rep = NULL;
        int len = 1;
        switch (*p) {
        case '&': rep = "&amp;"; break;
        case '<': rep = "&lt;"; break;
        case '>': rep = "&gt;"; break;
        case '"': rep = "&quot;"; break;
        case '\'': rep = "&#39;"; break;
        default:
            if (*p < 0x20 || *p == 0x7F) rep = " ";
            else if (*p >= 0x80 && (len = utf8_len(p)) == 0) {
                rep = "\xEF\xBF\xBD";
                len = 1;
            }
        }
        if (rep == NULL) {
            p += len;
            continue;
        }
        if (p > run) kg_sb_printf(sb, "%.*s", (int)(p - run), (const char *)run);
        kg_sb_puts(sb, rep);
        p += len;
        run = p;
    }
    if (p > run) kg_sb_printf(sb, "%.*s", (int)(p - run), (const char *)run);
}

/* printf, then the result escaped */
static void escf(kg_sb *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void escf(kg_sb *sb, const char *fmt, ...)
{
    kg_sb t = { 0 };
    va_list ap;
    va_start(ap, fmt);
    kg_sb_vprintf(&t, fmt, ap);
    va_end(ap);
    if (t.oom) sb->oom = 1;
    if (t.buf != NULL) esc(sb, t.buf);
    kg_sb_free(&t);
}

static const char *meta_str(json_t *meta, const char *key)
{
    json_t *v = json_object_get(meta, key);
    return json_is_string(v) ? json_string_value(v) : "unknown";
}

/* the formats of report.md (report_md.c) */
#define pct kg_report_pct
#define us kg_report_us

/* A number of the results table: its value as results.csv writes it
 * (data-v, %.9g, empty when not finite) under results.csv's column name
 * (data-col; data-arm when it is another arm's), shown as report.md
 * shows it. */
static void num(kg_sb *sb, const char *col, const char *arm, double v, int as_pct)
{
    kg_sb_printf(sb, "<span class=\"n\" data-col=\"%s\"", col);
    if (arm != NULL) {
        kg_sb_puts(sb, " data-arm=\"");
        esc(sb, arm);
        kg_sb_puts(sb, "\"");
    }
    if (isfinite(v)) kg_sb_printf(sb, " data-v=\"%.9g\">", v);
    else kg_sb_puts(sb, " data-v=\"\">");
    if (as_pct) pct(sb, v);
    else us(sb, v);
    kg_sb_puts(sb, "</span>");
}

/* ---- plot helpers ----------------------------------------------------- */

typedef struct scale {
    double lo, hi;   /* data */
    double p0, p1;   /* pixels */
    int log;         /* logarithmic (lo > 0) */
} scale;

static double at(const scale *s, double v)
{
    if (s->log) return s->p0 + (log(v) - log(s->lo)) * (s->p1 - s->p0) / (log(s->hi) - log(s->lo));
    return s->p0 + (v - s->lo) * (s->p1 - s->p0) / (s->hi - s->lo);
}

/* Widens [lo, hi] by frac on each side, or to a range around a single
 * value. */
static void pad_range(double *lo, double *hi, double frac)
{
    if (!isfinite(*lo) || !isfinite(*hi)) {
        *lo = 0;
        *hi = 1;
    } else if (!(*hi > *lo)) {
        double d = *lo != 0 ? fabs(*lo) * 0.05 : 1.0;
        *lo -= d;
        *hi += d;
    } else {
        double d = (*hi - *lo) * frac;
        *lo -= d;
        *hi += d;
    }
}

/* 1, 2 or 5 times a power of ten near range / n (basic arithmetic only:
 * the same bytes on every machine) */
static double nice_step(double range, int n)
{
    double raw = range / n, p = 1.0;
    if (!(raw > 0) || !isfinite(raw)) return 1.0;
    while (p * 10.0 <= raw) p *= 10.0;
    while (p > raw) p /= 10.0;
    double f = raw / p;
    return (f < 1.5 ? 1.0 : f < 3.0 ? 2.0 : f < 7.0 ? 5.0 : 10.0) * p;
}

static int step_decimals(double step)
{
    int d = 0;
    double p = 1.0;
    while (p > step * 1.000001 && d < 12) {
        p /= 10.0;
        d++;
    }
    return d;
}

enum { AX_X, AX_Y };
enum { LBL_PLAIN, LBL_PCT };

/* An axis with about n ticks, their labels and light grid lines across
 * the plot: AX_X at pixel row `base` with the grid up to `far`, AX_Y at
 * pixel column `base` with the grid to `far`. */
static void tick(kg_sb *sb, const scale *s, int kind, double base, double far, double v, int dec, int lbl)
{
    double p = at(s, v);
    char t[48];
    if (lbl == LBL_PCT && v == 0.0) snprintf(t, sizeof t, "0%%");
    else if (lbl == LBL_PCT) snprintf(t, sizeof t, "%+.*f%%", dec, v);
    else snprintf(t, sizeof t, "%.*f", dec, v);
    if (kind == AX_X)
        kg_sb_printf(sb, "<path class=\"grid\" d=\"M%.1f %.1fV%.1f\"/><path class=\"ax\" d=\"M%.1f %.1fv4\"/>"
                     "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>",
                     p, base, far, p, base, p, base + 15, t);
    else
        kg_sb_printf(sb, "<path class=\"grid\" d=\"M%.1f %.1fH%.1f\"/><path class=\"ax\" d=\"M%.1f %.1fh-4\"/>"
                     "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>",
                     base, p, far, base, p, base - 6, p + 4, t);
}

static void axis(kg_sb *sb, const scale *s, int kind, double base, double far, int n, int lbl)
{
    if (kind == AX_X)
        kg_sb_printf(sb, "<path class=\"ax\" d=\"M%.1f %.1fH%.1f\"/>", s->p0, base, s->p1);
    else
        kg_sb_printf(sb, "<path class=\"ax\" d=\"M%.1f %.1fV%.1f\"/>", base, s->p0, s->p1);
    if (s->log) {
        /* 1, 2 and 5 of each decade, where that makes three ticks or more */
        double d = 1.0, v[36];
        int nv = 0;
        while (d > s->lo) d /= 10.0;
        while (d * 10.0 <= s->lo) d *= 10.0;
        for (int k = 0; d <= s->hi && k < 12; k++, d *= 10.0)
            for (int m = 0; m < 3; m++) {
                double x = d * (m == 0 ? 1.0 : m == 1 ? 2.0 : 5.0);
                if (x >= s->lo && x <= s->hi) v[nv++] = x;
            }
        if (nv >= 3) {
            for (int i = 0; i < nv; i++) tick(sb, s, kind, base, far, v[i], step_decimals(v[i]), lbl);
            return;
        }
    }
    double step = nice_step(s->hi - s->lo, n);
    int dec = step_decimals(step);
    double i0 = ceil(s->lo / step), i1 = floor(s->hi / step);
    double last = -1e9;
    for (double i = i0; i <= i1 && i - i0 < 40; i += 1.0) {
        double v = i * step;
        if (fabs(v) < step * 1e-9) v = 0.0;
        if (fabs(at(s, v) - last) < 16) continue;   /* a log scale crowds the top */
        last = at(s, v);
        tick(sb, s, kind, base, far, v, dec, lbl);
    }
}

/* The opening tag of a plot (the caller closes it with </svg>) and its title. */
static void svg_open(kg_sb *sb, const char *id, int w, int h, long long points, const char *empty, const char *title)
{
    kg_sb_printf(sb, "<svg class=\"plot\" id=\"%s\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 %d %d\" "
                 "width=\"%d\" height=\"%d\" role=\"img\" aria-labelledby=\"%s-t\" data-points=\"%lld\"",
                 id, w, h, w, h, id, points);
    if (empty != NULL) {
        kg_sb_puts(sb, " data-empty=\"");
        esc(sb, empty);
        kg_sb_puts(sb, "\"");
    }
    kg_sb_printf(sb, "><title id=\"%s-t\">", id);
    esc(sb, title);
    kg_sb_puts(sb, "</title>");
}

/* A plot with nothing to draw: says why, visibly and in data-empty. */
static void svg_empty(kg_sb *sb, const char *id, const char *title, const char *why)
{
    svg_open(sb, id, 1000, 60, 0, why, title);
    kg_sb_puts(sb, "<text class=\"h\" x=\"10\" y=\"20\">");
    esc(sb, title);
    kg_sb_puts(sb, "</text><text class=\"note\" x=\"10\" y=\"44\">");
    esc(sb, why);
    kg_sb_puts(sb, "</text></svg>\n");
}

static const char *const arm_colors[] = { "#0969da", "#d1242f", "#1a7f37", "#9a6700",
                                          "#8250df", "#bf3989", "#0a7b83", "#57606a" };
#define NCOLORS ((int)(sizeof arm_colors / sizeof arm_colors[0]))

static const char *verdict_color(kg_verdict v)
{
    switch (v) {
    case KG_VERDICT_FASTER: return "#1a7f37";
    case KG_VERDICT_SLOWER: return "#cf222e";
    case KG_VERDICT_EQUIVALENT: return "#0969da";
    case KG_VERDICT_INCONCLUSIVE: return "#6e7781";
    default: return "#8250df";
    }
}

/* A legend entry at (x, y): a swatch (a square, or a line when dash is
 * not NULL: "" solid) and its text; returns the x after it. */
static double legend(kg_sb *sb, double x, double y, const char *color, const char *dash, const char *text)
{
    if (dash == NULL)
        kg_sb_printf(sb, "<rect x=\"%.1f\" y=\"%.1f\" width=\"10\" height=\"10\" fill=\"%s\"/>", x, y - 9, color);
    else
        kg_sb_printf(sb, "<path d=\"M%.1f %.1fh14\" stroke=\"%s\" stroke-width=\"2\"%s%s%s/>", x - 2, y - 4, color,
                     dash[0] ? " stroke-dasharray=\"" : "", dash, dash[0] ? "\"" : "");
    kg_sb_printf(sb, "<text class=\"lg\" x=\"%.1f\" y=\"%.1f\">", x + 15, y);
    esc(sb, text);
    kg_sb_puts(sb, "</text>");
    return x + 15 + 6.2 * (double)strlen(text) + 16;
}

/* Widens [*lo, *hi] (in percent) to an effect's estimate and its bounds. */
static void effect_range(const kg_effect *e, double *lo, double *hi)
{
    double v[3] = { e->rho, e->has_interval ? e->rho_lo : e->rho, e->has_interval ? e->rho_hi : e->rho };
    for (int k = 0; k < 3; k++)
        if (isfinite(v[k])) {
            if (100 * v[k] < *lo) *lo = 100 * v[k];
            if (100 * v[k] > *hi) *hi = 100 * v[k];
        }
}

/* ---- 1. reductions per case ------------------------------------------- */

/* A case none of whose arms has an estimate of its reduction: a placeholder
 * that names each arm's verdict. */
static void no_reductions(kg_sb *sb, const kg_plan *plan, const kg_analysis *an, int c, const char *id,
                          const char *title)
{
    kg_sb t = { 0 };
    kg_sb_printf(&t, "no candidate, reference or control of case %s has an estimate of its reduction (",
                 plan->cases[c].name);
    int first = 1;
    for (int a = 0; a < plan->narms; a++) {
        const kg_arm_result *r = &an->res[c * an->narms + a];
        if (r->role == KG_ROLE_BASELINE || r->state == KG_ARM_ABSENT) continue;
        kg_sb_printf(&t, "%s%s: %s", first ? "" : ", ", plan->arms[a].name, kg_verdict_name(r->verdict));
        first = 0;
    }
    kg_sb_puts(&t, first ? "no such arm)" : ")");
    svg_empty(sb, id, title, t.buf != NULL ? t.buf : "no estimate");
    kg_sb_free(&t);
}

static void reductions_plot(kg_sb *sb, const kg_plan *plan, const kg_analysis *an, int c)
{
    const kg_campaign *cp = &plan->campaign;
    const kg_case *kc = &plan->cases[c];
    char id[32], title[KG_NAME_MAX + 96];
    snprintf(id, sizeof id, "reduction-c%d", c);
    snprintf(title, sizeof title, "Reductions against the baseline, case %s", kc->name);
    int *rows = malloc((size_t)(plan->narms > 0 ? plan->narms : 1) * sizeof *rows), nrows = 0, has_control = 0;
    double lo = 0, hi = 0;
    if (rows == NULL) {
        sb->oom = 1;
        return;
    }
    for (int a = 0; a < plan->narms; a++) {
        const kg_arm_result *r = &an->res[c * an->narms + a];
        if (r->state != KG_ARM_OK || r->role == KG_ROLE_BASELINE || !r->has_effect || !isfinite(r->eff.rho)) continue;
        rows[nrows++] = a;
        has_control |= r->role == KG_ROLE_CONTROL;
        effect_range(&r->eff, &lo, &hi);
    }
    if (nrows == 0) {
        no_reductions(sb, plan, an, c, id, title);
        free(rows);
        return;
    }
    /* the reference lines: 0, +-margin, the equivalence band, the gate's
     * minimum on a gated case, a control's margin */
    double m = 100 * cp->margin, eq = 100 * cp->equivalence, cm = 100 * cp->control_margin;
    int gated = kc->primary || plan->gate.all_cases;
    double g = 100 * plan->gate.min_reduction;
    double refs[] = { m, -m, eq, -eq, gated ? g : 0, has_control ? cm : 0, has_control ? -cm : 0 };
    for (size_t k = 0; k < sizeof refs / sizeof refs[0]; k++) {
        if (refs[k] < lo) lo = refs[k];
        if (refs[k] > hi) hi = refs[k];
    }
    pad_range(&lo, &hi, 0.06);
    const double L = 200, R = 830, rowh = 26, top = 58;
    int W = 1000, H = (int)(top + rowh * nrows + 52);
    scale s = { lo, hi, L, R, 0 };
    svg_open(sb, id, W, H, nrows, NULL, title);
    kg_sb_puts(sb, "<text class=\"h\" x=\"10\" y=\"18\">");
    esc(sb, title);
    kg_sb_puts(sb, "</text>");
    double yb = top + rowh * nrows + 6;
    if (eq > 0)
        kg_sb_printf(sb, "<rect class=\"band\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"/>", at(&s, -eq),
                     top - 6, at(&s, eq) - at(&s, -eq), yb - top + 6);
    axis(sb, &s, AX_X, yb, top - 6, 8, LBL_PCT);
    kg_sb_printf(sb, "<text class=\"al\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">reduction 1 - arm/baseline "
                 "(positive = faster), with the one-sided %.0f%% bounds</text>", (L + R) / 2, yb + 32,
                 100 * (1 - cp->alpha));
    /* 0, +margin, -margin, the gate's minimum, +-control_margin */
    struct { double v; const char *cls, *dash; } lines[] = {
        { 0, "zero", "" }, { m, "margin", "6 3" }, { -m, "margin", "6 3" },
        { g, "gmin", "2 3" }, { cm, "ctl", "1 2" }, { -cm, "ctl", "1 2" },
    };
    for (size_t k = 0; k < sizeof lines / sizeof lines[0]; k++) {
        if (k == 3 && !gated) continue;
        if (k >= 4 && !has_control) continue;
        if (k > 0 && k < 3 && m == 0) continue;
        double x = at(&s, lines[k].v);
        kg_sb_printf(sb, "<path class=\"%s\" d=\"M%.1f %.1fV%.1f\"%s%s%s/>", lines[k].cls, x, top - 6, yb,
                     lines[k].dash[0] ? " stroke-dasharray=\"" : "", lines[k].dash, lines[k].dash[0] ? "\"" : "");
    }
    /* the legend: the lines, then the verdicts drawn */
    double lx = 10, ly = 40;
    lx = legend(sb, lx, ly, "#24292f", "", "0");
    if (m > 0) {
        char t[48];
        snprintf(t, sizeof t, "margin ±%.2f%%", m);
        lx = legend(sb, lx, ly, "#1a7f37", "6 3", t);
    }
    if (eq > 0) {
        char t[48];
        snprintf(t, sizeof t, "equivalence ±%.2f%%", eq);
        lx = legend(sb, lx, ly, "#ddf4ff", NULL, t);
    }
    if (gated) {
        char t[48];
        snprintf(t, sizeof t, "gate ≥ %.2f%%", g);
        lx = legend(sb, lx, ly, "#9a6700", "2 3", t);
    }
    if (has_control) {
        char t[48];
        snprintf(t, sizeof t, "control ±%.2f%%", cm);
        lx = legend(sb, lx, ly, "#8250df", "1 2", t);
    }
    int seen[KG_VERDICT_INVALID + 1] = { 0 };
    for (int i = 0; i < nrows; i++) {
        const kg_arm_result *r = &an->res[c * an->narms + rows[i]];
        if ((int)r->verdict >= 0 && r->verdict <= KG_VERDICT_INVALID && !seen[r->verdict]++)
            lx = legend(sb, lx, ly, verdict_color(r->verdict), NULL, kg_verdict_name(r->verdict));
    }
    for (int i = 0; i < nrows; i++) {
        int a = rows[i];
        const kg_arm_result *r = &an->res[c * an->narms + a];
        const kg_effect *e = &r->eff;
        double y = top + rowh * i + rowh / 2;
        const char *col = verdict_color(r->verdict);
        const char *label = kg_result_label(r);
        kg_sb_printf(sb, "<text class=\"lab\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">", L - 8, y + 4);
        escf(sb, "%s (%s)", plan->arms[a].name, kg_role_name(r->role));
        kg_sb_printf(sb, "</text><g class=\"m\" data-n=\"1\" data-arm=\"%d\"><title>", a);
        escf(sb, "%s (%s) against %s on %s: reduction %+.2f%%", plan->arms[a].name, kg_role_name(r->role),
             r->contrast_arm >= 0 ? plan->arms[r->contrast_arm].name : "its baseline", kc->name, 100 * e->rho);
        if (e->has_interval) escf(sb, " [%+.2f%%, %+.2f%%]", 100 * e->rho_lo, 100 * e->rho_hi);
        else esc(sb, " (no interval: fewer than 2 processes in a direction)");
        escf(sb, "; %s", label);
        kg_sb_puts(sb, "</title>");
        if (e->has_interval && isfinite(e->rho_lo) && isfinite(e->rho_hi))
            kg_sb_printf(sb, "<path d=\"M%.1f %.1fH%.1fM%.1f %.1fv10M%.1f %.1fv10\" stroke=\"%s\" stroke-width=\"3\" "
                         "fill=\"none\"/>", at(&s, 100 * e->rho_lo), y, at(&s, 100 * e->rho_hi),
                         at(&s, 100 * e->rho_lo),
                         y - 5, at(&s, 100 * e->rho_hi), y - 5, col);
        kg_sb_printf(sb, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"5\" fill=\"%s\" stroke=\"#fff\"/></g>",
                     at(&s, 100 * e->rho), y, col);
        kg_sb_printf(sb, "<text class=\"lab\" x=\"%.1f\" y=\"%.1f\" fill=\"%s\">", R + 10, y + 4, col);
        esc(sb, label);
        kg_sb_puts(sb, "</text>");
    }
    kg_sb_puts(sb, "</svg>\n");
    free(rows);
}

/* ---- 1b. sweeps: the reductions of a case's or an arm's variants ------- */

/* The result of series k at variant v of a sweep: for an arm's variants
 * the series are cases, for a case's the arms. */
static const kg_arm_result *sweep_res(const kg_analysis *an, int is_arm, const int *idx, int v, int k)
{
    return is_arm ? &an->res[k * an->narms + idx[v]] : &an->res[idx[v] * an->narms + k];
}

static int sweep_point(const kg_arm_result *r)
{
    return r->state == KG_ARM_OK && r->role != KG_ROLE_BASELINE && r->has_effect && isfinite(r->eff.rho);
}

/* One plot per case or arm with axes (first variant i): its variants
 * along x, in the order of the expansion, and per series (the cases an
 * arm's variants ran on, or the arms of a case's variants) the reduction
 * with its one-sided bounds, joined by a line; 0 and the margin. */
static void sweep_plot(kg_sb *sb, const kg_plan *plan, const kg_analysis *an, int is_arm, int i, const int *idx,
                       int nv)
{
    const kg_campaign *cp = &plan->campaign;
    const char *nm = is_arm ? plan->arms[i].name : plan->cases[i].name;
    size_t b = kg_plan_name_base(nm);
    char id[32], title[KG_NAME_MAX + 96];
    snprintf(id, sizeof id, "sweep-%c%d", is_arm ? 'a' : 'c', i);
    snprintf(title, sizeof title, "Sweep of %s %.*s: reduction by variant", is_arm ? "arm" : "case", (int)b, nm);
    int nser = is_arm ? plan->ncases : plan->narms;
    long long npts = 0;
    double lo = 0, hi = 0, m = 100 * cp->margin;
    for (int k = 0; k < nser; k++)
        for (int v = 0; v < nv; v++) {
            const kg_arm_result *r = sweep_res(an, is_arm, idx, v, k);
            if (!sweep_point(r)) continue;
            npts++;
            effect_range(&r->eff, &lo, &hi);
        }
    if (npts == 0) {
        svg_empty(sb, id, title, "no variant has an estimate of its reduction");
        return;
    }
    if (-m < lo) lo = -m;
    if (m > hi) hi = m;
    pad_range(&lo, &hi, 0.08);
    const double L = 70, R = 980, top = 58, bot = 330;
    int W = 1000, H = 400;
    scale sy = { lo, hi, bot, top, 0 };
    double step = (R - L) / nv;
    svg_open(sb, id, W, H, npts, NULL, title);
    kg_sb_puts(sb, "<text class=\"h\" x=\"10\" y=\"18\">");
    esc(sb, title);
    kg_sb_puts(sb, "</text>");
    axis(sb, &sy, AX_Y, L, R, 6, LBL_PCT);
    kg_sb_printf(sb, "<path class=\"ax\" d=\"M%.1f %.1fH%.1f\"/>", L, bot, R);
    kg_sb_printf(sb, "<path class=\"zero\" d=\"M%.1f %.1fH%.1f\"/>", L, at(&sy, 0), R);
    if (m > 0)
        for (int q = -1; q <= 1; q += 2)
            kg_sb_printf(sb, "<path class=\"margin\" d=\"M%.1f %.1fH%.1f\" stroke-dasharray=\"6 3\"/>", L,
                         at(&sy, q * m), R);
    /* the variants' labels: their axis values */
    for (int v = 0; v < nv; v++) {
        const char *vn = is_arm ? plan->arms[idx[v]].name : plan->cases[idx[v]].name;
        double x = L + step * (v + 0.5);
        kg_sb_printf(sb, "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" transform=\"rotate(-30 %.1f "
                     "%.1f)\">", x, bot + 16, x, bot + 16);
        size_t l = strlen(vn);
        escf(sb, "%.*s", (int)(l > b + 2 ? l - b - 2 : 0), vn + b + 1);
        kg_sb_puts(sb, "</text>");
    }
    double lx = 10, ly = 40;
    lx = legend(sb, lx, ly, "#24292f", "", "0");
    if (m > 0) {
        char t[48];
        snprintf(t, sizeof t, "margin ±%.2f%%", m);
        lx = legend(sb, lx, ly, "#1a7f37", "6 3", t);
    }
    for (int k = 0, col = 0; k < nser; k++) {
        int any = 0;
        for (int v = 0; v < nv && !any; v++) any = sweep_point(sweep_res(an, is_arm, idx, v, k));
        if (!any) continue;
        const char *color = arm_colors[col++ % NCOLORS];
        const char *sname = is_arm ? plan->cases[k].name : plan->arms[k].name;
        lx = legend(sb, lx, ly, color, "", sname);
        /* the line through the estimates, then each point with its bounds */
        kg_sb_puts(sb, "<path d=\"");
        int pen = 0;
        for (int v = 0; v < nv; v++) {
            const kg_arm_result *r = sweep_res(an, is_arm, idx, v, k);
            if (!sweep_point(r)) {
                pen = 0;
                continue;
            }
            kg_sb_printf(sb, "%c%.1f %.1f", pen ? 'L' : 'M', L + step * (v + 0.5), at(&sy, 100 * r->eff.rho));
            pen = 1;
        }
        kg_sb_printf(sb, "\" stroke=\"%s\" stroke-width=\"1.5\" fill=\"none\" opacity=\"0.6\"/>", color);
        for (int v = 0; v < nv; v++) {
            const kg_arm_result *r = sweep_res(an, is_arm, idx, v, k);
            if (!sweep_point(r)) continue;
            const kg_effect *e = &r->eff;
            int a = is_arm ? idx[v] : k, c = is_arm ? k : idx[v];
            double x = L + step * (v + 0.5) + (col - 1) * 4.0 - 2.0;
            kg_sb_printf(sb, "<g class=\"m\" data-n=\"1\" data-case=\"%d\" data-arm=\"%d\"><title>", c, a);
            escf(sb, "%s on %s: reduction %+.2f%%", plan->arms[a].name, plan->cases[c].name, 100 * e->rho);
            if (e->has_interval) escf(sb, " [%+.2f%%, %+.2f%%]", 100 * e->rho_lo, 100 * e->rho_hi);
            escf(sb, "; %s", kg_result_label(r));
            kg_sb_puts(sb, "</title>");
            if (e->has_interval && isfinite(e->rho_lo) && isfinite(e->rho_hi))
                kg_sb_printf(sb, "<path d=\"M%.1f %.1fV%.1f\" stroke=\"%s\" stroke-width=\"2\" fill=\"none\"/>", x,
                             at(&sy, 100 * e->rho_lo), at(&sy, 100 * e->rho_hi), color);
            kg_sb_printf(sb, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"%s\" stroke=\"%s\" stroke-width=\"2\"/></g>",
                         x, at(&sy, 100 * e->rho), verdict_color(r->verdict), color);
        }
    }
    int seen[KG_VERDICT_INVALID + 1] = { 0 };
    for (int k = 0; k < nser; k++)
        for (int v = 0; v < nv; v++) {
            const kg_arm_result *r = sweep_res(an, is_arm, idx, v, k);
            if (sweep_point(r) && (int)r->verdict >= 0 && r->verdict <= KG_VERDICT_INVALID && !seen[r->verdict]++)
                lx = legend(sb, lx, ly, verdict_color(r->verdict), NULL, kg_verdict_name(r->verdict));
        }
    kg_sb_printf(sb, "<text class=\"al\" x=\"14\" y=\"%.1f\" transform=\"rotate(-90 14 %.1f)\" "
                 "text-anchor=\"middle\">reduction (positive = faster)</text>", (top + bot) / 2, (top + bot) / 2);
    kg_sb_puts(sb, "</svg>\n");
}

/* The Sweeps section: a plot per case or arm with axes; nothing for a
 * plan without axes. */
static void sweeps_html(kg_sb *sb, const kg_plan *plan, const kg_analysis *an)
{
    int any = 0;
    int *idx = malloc((size_t)(plan->narms > plan->ncases ? plan->narms : plan->ncases) * sizeof *idx);
    if (idx == NULL) {
        sb->oom = 1;
        return;
    }
    for (int pass = 0; pass < 2; pass++) {
        int n = pass ? plan->narms : plan->ncases;
        for (int i = 0; i < n; i++) {
            size_t b;
            if (!kg_report_first_variant(plan, pass, i, &b)) continue;
            int nv = kg_report_variants(plan, pass, i, idx);
            if (nv < 2) continue;
            if (!any++)
                kg_sb_puts(sb, "<section id=\"sweeps\">\n<h2>Sweeps</h2>\n<p>Per case or arm with axes, its variants "
                               "in the order of the expansion and, per case (for an arm) or arm (for a case), the "
                               "reduction against the baseline with its one-sided bounds, the dot colored by verdict; "
                               "report.md's Sweeps tables hold the same numbers. The plot describes this campaign: the "
                               "best variant is confirmed in a campaign of its own (kgate screen).</p>\n");
            kg_sb_puts(sb, "<figure>");
            sweep_plot(sb, plan, an, pass, i, idx, nv);
            kg_sb_puts(sb, "</figure>\n");
        }
    }
    if (any) kg_sb_puts(sb, "</section>\n");
    free(idx);
}

/* ---- the raw samples, sorted -------------------------------------------- */

typedef struct srow {
    int kase, arm, proc, round, sample, dir;
    double ns;
} srow;

static int srow_cmp(const void *pa, const void *pb)
{
    const srow *a = pa, *b = pb;
    int k[5][2] = { { a->kase, b->kase }, { a->arm, b->arm }, { a->proc, b->proc }, { a->round, b->round },
                    { a->sample, b->sample } };
    for (int i = 0; i < 5; i++)
        if (k[i][0] != k[i][1]) return k[i][0] < k[i][1] ? -1 : 1;
    return 0;
}

/* One round of one arm in one process: its samples' order statistics. */
typedef struct rstat {
    int kase, arm, proc, round, dir, n;
    double mn, q1, med, q3, mx;   /* ns */
} rstat;

/* quantile p of sorted v[0..n): linear between order statistics (type 7) */
static double quantile(const double *v, int n, double p)
{
    double h = (n - 1) * p;
    int i = (int)h;
    if (i >= n - 1) return v[n - 1];
    return v[i] + (h - i) * (v[i + 1] - v[i]);
}

typedef struct samples {
    srow *row; size_t nrow;     /* sorted by (case, arm, process, round, sample) */
    rstat *rs; size_t nrs;      /* in the same order */
} samples;

/* The rows in srow_cmp's order, as qsort's stable merge sort leaves
 * them: a stable counting sort by (case, arm), then each group, already
 * in (process, round, sample) order as the files hold it, checked (and
 * sorted where it is not). */
static void srow_sort(srow *row, size_t n, int ncases, int narms)
{
    size_t ng = (size_t)ncases * (size_t)narms;
    size_t *at = calloc(ng + 1, sizeof *at);
    srow *tmp = malloc(n * sizeof *tmp);
    int ok = at != NULL && tmp != NULL;
    for (size_t i = 0; ok && i < n; i++)
        ok = row[i].kase >= 0 && row[i].kase < ncases && row[i].arm >= 0 && row[i].arm < narms;
    if (!ok) {
        free(at);
        free(tmp);
        qsort(row, n, sizeof *row, srow_cmp);
        return;
    }
    for (size_t i = 0; i < n; i++) at[(size_t)row[i].kase * (size_t)narms + (size_t)row[i].arm + 1]++;
    for (size_t g = 0; g < ng; g++) at[g + 1] += at[g];
    for (size_t i = 0; i < n; i++) tmp[at[(size_t)row[i].kase * (size_t)narms + (size_t)row[i].arm]++] = row[i];
    memcpy(row, tmp, n * sizeof *row);
    for (size_t g = 0, from = 0; g < ng; g++) {
        size_t to = at[g];   /* the group's end, after the scatter */
        for (size_t i = from + 1; i < to; i++)
            if (srow_cmp(&row[i - 1], &row[i]) > 0) {
                qsort(row + from, to - from, sizeof *row, srow_cmp);
                break;
            }
        from = to;
    }
    free(at);
    free(tmp);
}

static int samples_build(const kg_evidence *ev, samples *S)
{
    memset(S, 0, sizeof *S);
    if (ev->nrows == 0) return KG_OK;
    S->row = malloc(ev->nrows * sizeof *S->row);
    S->rs = malloc(ev->nrows * sizeof *S->rs);
    double *v = malloc(ev->nrows * sizeof *v);
    if (S->row == NULL || S->rs == NULL || v == NULL) {
        free(v);
        return KG_ENOMEM;
    }
    for (size_t i = 0; i < ev->nrows; i++) {
        const kg_row *r = &ev->rows[i];
        S->row[i] = (srow){ r->kase, r->arm, r->proc, r->round, r->sample, r->dir, r->ns };
    }
    S->nrow = ev->nrows;
    srow_sort(S->row, S->nrow, ev->plan->ncases, ev->plan->narms);
    for (size_t i = 0; i < S->nrow;) {
        size_t j = i;
        int n = 0;
        while (j < S->nrow && S->row[j].kase == S->row[i].kase && S->row[j].arm == S->row[i].arm &&
               S->row[j].proc == S->row[i].proc && S->row[j].round == S->row[i].round) {
            if (isfinite(S->row[j].ns)) v[n++] = S->row[j].ns;
            j++;
        }
        if (n > 0) {
            rstat *q = &S->rs[S->nrs++];
            q->kase = S->row[i].kase;
            q->arm = S->row[i].arm;
            q->proc = S->row[i].proc;
            q->round = S->row[i].round;
            q->dir = S->row[i].dir;
            q->n = n;
            kg_sort_doubles(v, (size_t)n);
            /* the analysis' per-round median, kg_median's of the same order */
            q->med = n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
            q->mn = v[0];
            q->mx = v[n - 1];
            q->q1 = quantile(v, n, 0.25);
            q->q3 = quantile(v, n, 0.75);
        }
        i = j;
    }
    free(v);
    return KG_OK;
}

static void samples_free(samples *S)
{
    free(S->row);
    free(S->rs);
}

static const srow *samples_find(const samples *S, int proc, int kase, int round, int arm, int sample)
{
    srow key = { kase, arm, proc, round, sample, 0, 0 };
    return S->nrow ? bsearch(&key, S->row, S->nrow, sizeof *S->row, srow_cmp) : NULL;
}

/* ---- 2. per-round distributions per case and arm ------------------------ */

static void rounds_plot(kg_sb *sb, const kg_plan *plan, const kg_analysis *an, const samples *S, int c, int a)
{
    const kg_arm_result *r = &an->res[c * an->narms + a];
    char id[48], title[2 * KG_NAME_MAX + 96];
    snprintf(id, sizeof id, "rounds-c%d-a%d", c, a);
    snprintf(title, sizeof title, "Per-round distributions of %s (%s) on case %s", plan->arms[a].name,
             kg_role_name(r->role), plan->cases[c].name);
    /* the arm's own range, the same for its two directions (the reductions
     * plot compares the arms; this one shows each arm's rounds and the two
     * directions side by side) */
    double lo = INFINITY, hi = -INFINITY;
    size_t first = S->nrs, n[2] = { 0, 0 };
    for (size_t i = 0; i < S->nrs; i++) {
        const rstat *q = &S->rs[i];
        if (q->kase != c || q->arm != a) continue;
        if (q->mn < lo) lo = q->mn;
        if (q->mx > hi) hi = q->mx;
        if (first == S->nrs) first = i;
        n[q->dir == KG_DIR_REV]++;
    }
    if (n[0] + n[1] == 0) {
        kg_sb t = { 0 };
        kg_sb_printf(&t, "no timed samples of %s on case %s in an accepted process (%s, %s)", plan->arms[a].name,
                     plan->cases[c].name, kg_report_state_name(r->state), kg_verdict_name(r->verdict));
        svg_empty(sb, id, title, t.buf != NULL ? t.buf : "no timed samples");
        kg_sb_free(&t);
        return;
    }
    lo /= 1000.0;
    hi /= 1000.0;
    /* a logarithmic scale (the analysis works in log time; an outlier
     * leaves the boxes readable), padded by 5% of its span each side */
    int logy = lo > 0 && hi > lo;
    if (logy) {
        double span = log(hi) - log(lo);
        lo = exp(log(lo) - 0.05 * span);
        hi = exp(log(hi) + 0.05 * span);
    } else {
        pad_range(&lo, &hi, 0.05);
    }
    const int W = 1000, H = 250;
    const double top = 48, bot = 200, pw = 500;
    svg_open(sb, id, W, H, (long long)(n[0] + n[1]), NULL, title);
    kg_sb_puts(sb, "<text class=\"h\" x=\"10\" y=\"18\">");
    esc(sb, title);
    kg_sb_puts(sb, "</text>");
    const char *col = arm_colors[a % NCOLORS];
    double lx = legend(sb, 10, 36, col, NULL, "box: the round's middle half of samples (IQR)");
    lx = legend(sb, lx, 36, col, "", "whiskers: min to max; bar: the round's median");
    legend(sb, lx, 36, "#24292f", "5 3", "median of process medians");
    for (int d = 0; d < 2; d++) {
        double x0 = d * pw + 62, x1 = d * pw + pw - 14;
        scale ys = { lo, hi, bot, top, logy };
        kg_sb_printf(sb, "<text class=\"al\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s: %zu round%s of %d "
                     "sample%s each</text>", (x0 + x1) / 2, bot + 40, d == 0 ? "forward" : "reverse", n[d],
                     n[d] == 1 ? "" : "s", plan->campaign.samples, plan->campaign.samples == 1 ? "" : "s");
        axis(sb, &ys, AX_Y, x0, x1, 5, LBL_PLAIN);
        kg_sb_printf(sb, "<path class=\"ax\" d=\"M%.1f %.1fH%.1f\"/>", x0, bot, x1);
        if (d == 0)
            kg_sb_printf(sb, "<text class=\"al\" transform=\"translate(14 %.1f) rotate(-90)\" text-anchor=\"middle\">"
                         "µs per operation%s</text>", (top + bot) / 2, logy ? " (log scale)" : "");
        if (n[d] == 0) {
            kg_sb_printf(sb, "<text class=\"note\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">no accepted process in "
                         "this direction</text>", (x0 + x1) / 2, (top + bot) / 2);
            continue;
        }
        double slot = (x1 - x0) / (double)n[d], hw = slot * 0.35 > 6 ? 6 : slot * 0.35;
        size_t k = 0;
        int last_proc = -1;
        double last_label = -1e9;
        kg_sb med = { 0 };
        for (size_t i = first; i < S->nrs && S->rs[i].kase == c && S->rs[i].arm == a; i++) {
            const rstat *q = &S->rs[i];
            if ((q->dir == KG_DIR_REV) != d) continue;
            double x = x0 + slot * ((double)k + 0.5);
            if (q->proc != last_proc) {
                double xs = x0 + slot * (double)k;
                /* the process's rounds: a separator and its index where it fits */
                int nr = 0;
                for (size_t j = i;
                     j < S->nrs && S->rs[j].kase == c && S->rs[j].arm == a && S->rs[j].proc == q->proc; j++)
                    nr++;
                if (k > 0) kg_sb_printf(sb, "<path class=\"sep\" d=\"M%.1f %.1fV%.1f\"/>", xs, top, bot);
                double xl = xs + slot * nr / 2;
                if (xl - last_label >= 26) {
                    kg_sb_printf(sb, "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">p%d</text>",
                                 xl, bot + 15, q->proc);
                    last_label = xl;
                }
                last_proc = q->proc;
            }
            kg_sb_printf(sb, "<path class=\"m box\" data-n=\"1\" stroke=\"%s\" d=\"M%.1f %.1fV%.1fM%.1f %.1fV%.1f"
                         "M%.1f %.1fH%.1fV%.1fH%.1fZ\"><title>",
                         col, x, at(&ys, q->mx / 1e3), at(&ys, q->q3 / 1e3), x, at(&ys, q->q1 / 1e3),
                         at(&ys, q->mn / 1e3), x - hw, at(&ys, q->q3 / 1e3), x + hw, at(&ys, q->q1 / 1e3), x - hw);
            kg_sb_printf(sb, "process %d round %d: %d samples, median %.3f µs, IQR [%.3f, %.3f], min %.3f, max %.3f",
                         q->proc, q->round, q->n, q->med / 1e3, q->q1 / 1e3, q->q3 / 1e3, q->mn / 1e3, q->mx / 1e3);
            kg_sb_puts(sb, "</title></path>");
            kg_sb_printf(&med, "M%.1f %.1fH%.1f", x - hw - 1, at(&ys, q->med / 1e3), x + hw + 1);
            k++;
        }
        if (med.buf != NULL) kg_sb_printf(sb, "<path class=\"med\" stroke=\"%s\" d=\"%s\"/>", col, med.buf);
        if (med.oom) sb->oom = 1;
        kg_sb_free(&med);
        double mv = r->med_ns[d];
        if (isfinite(mv)) {
            double y = at(&ys, mv / 1e3);
            kg_sb_printf(sb, "<path class=\"pm\" d=\"M%.1f %.1fH%.1f\"><title>median of process medians, %s: %.3f µs"
                         "</title></path><text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%.3f</text>",
                         x0, y, x1, d == 0 ? "forward" : "reverse", mv / 1e3, x1, y - 3, mv / 1e3);
        }
    }
    kg_sb_puts(sb, "</svg>\n");
}

/* ---- 3. the processes over wall time ------------------------------------ */

/* Seconds since 1970 of "YYYY-MM-DDTHH:MM:SSZ", or -1 when it is not one
 * (days from the civil date, without the C library's time zone). */
static long long utc_seconds(const char *s)
{
    int y, mo, d, h, mi, se;
    char z = 0;
    if (sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d%c", &y, &mo, &d, &h, &mi, &se, &z) != 7 || z != 'Z' || mo < 1 ||
        mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || se > 60 || y < 1970)
        return -1;
    long long yy = y - (mo <= 2);
    long long era = yy / 400, yoe = yy - era * 400;
    long long doy = (153 * (mo + (mo > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    long long doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    long long days = era * 146097 + doe - 719468;
    return days * 86400 + h * 3600 + mi * 60 + se;
}

static int watch_marked(const char *event)
{
    return strcmp(event, "not-quiet") == 0 || strcmp(event, "contaminated") == 0 || strcmp(event, "note") == 0 ||
           strcmp(event, "never-quiet") == 0;
}

static void timeline_plot(kg_sb *sb, const kg_evidence *ev)
{
    const char *title = "Processes over wall time";
    if (ev->nproc == 0) {
        svg_empty(sb, "timeline", title, "no process was started (processes.csv has no rows)");
        return;
    }
    double *t0 = malloc((size_t)ev->nproc * sizeof *t0);
    if (t0 == NULL) {
        sb->oom = 1;
        return;
    }
    long long base = -1;
    int guessed = 0;
    for (int p = 0; p < ev->nproc; p++) {
        long long t = utc_seconds(ev->procs[p].start_utc);
        if (t >= 0 && (base < 0 || t < base)) base = t;
    }
    for (size_t i = 0; i < ev->nwatch; i++) {
        long long t = watch_marked(ev->watch[i].event) ? utc_seconds(ev->watch[i].utc) : -1;
        if (t >= 0 && (base < 0 || t < base)) base = t;
    }
    double end = 0;
    int nmarks = 0;
    for (int p = 0; p < ev->nproc; p++) {
        long long t = utc_seconds(ev->procs[p].start_utc);
        double sec = ev->procs[p].seconds > 0 ? ev->procs[p].seconds : 0;
        if (t >= 0 && base >= 0) t0[p] = (double)(t - base);
        else {
            /* no start time: right after the process before it */
            t0[p] = p > 0 ? t0[p - 1] + (ev->procs[p - 1].seconds > 0 ? ev->procs[p - 1].seconds : 0) : 0;
            guessed++;
        }
        if (t0[p] + sec > end) end = t0[p] + sec;
    }
    for (size_t i = 0; i < ev->nwatch; i++) {
        long long t = watch_marked(ev->watch[i].event) ? utc_seconds(ev->watch[i].utc) : -1;
        if (t < 0 || base < 0) continue;
        nmarks++;
        if ((double)(t - base) > end) end = (double)(t - base);
    }
    double lo = 0, hi = end > 0 ? end : 1;
    hi += (hi - lo) * 0.02;
    double lane = 360.0 / ev->nproc;
    if (lane > 18) lane = 18;
    if (lane < 3) lane = 3;
    const double L = 120, R = 980, top = 74;
    double bot = top + lane * ev->nproc;
    int W = 1000, H = (int)(bot + 52);
    scale s = { lo, hi, L, R, 0 };
    svg_open(sb, "timeline", W, H, ev->nproc + nmarks, NULL, title);
    kg_sb_puts(sb, "<text class=\"h\" x=\"10\" y=\"18\">");
    esc(sb, title);
    kg_sb_puts(sb, "</text>");
    double lx = legend(sb, 10, 38, "#2da44e", NULL, "accepted");
    lx = legend(sb, lx, 38, "#d4a72c", NULL, "contaminated: excluded by the host watch and repeated");
    lx = legend(sb, lx, 38, "#cf222e", NULL, "failed: excluded (crashed, timed out, an exit status)");
    legend(sb, lx, 38, "#24292f", NULL, "host watch event");
    axis(sb, &s, AX_X, bot + 4, top - 14, 8, LBL_PLAIN);
    kg_sb_printf(sb, "<text class=\"al\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">seconds since the first start "
                 "(processes.csv start_utc, to the second; bar: its seconds)</text>", (L + R) / 2, bot + 36);
    kg_sb_printf(sb, "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">host watch</text>", L - 8,
                 top - 6);
    for (size_t i = 0; i < ev->nwatch; i++) {
        const kg_watch_rec *w = &ev->watch[i];
        long long t = watch_marked(w->event) ? utc_seconds(w->utc) : -1;
        if (t < 0 || base < 0) continue;
        double x = at(&s, (double)(t - base));
        kg_sb_printf(sb, "<path class=\"m\" data-n=\"1\" fill=\"%s\" d=\"M%.1f %.1fl-5 -9h10Z\"><title>",
                     strcmp(w->event, "note") == 0 ? "#57606a" : "#24292f", x, top - 3);
        escf(sb, "%s, watch.csv %s: %s", w->utc, w->event, w->detail);
        if (w->proc >= 0) escf(sb, " [process %d]", w->proc);
        kg_sb_puts(sb, "</title></path>");
    }
    int every = lane >= 11 ? 1 : (int)(11 / lane) + 1;
    for (int p = 0; p < ev->nproc; p++) {
        const kg_proc_rec *r = &ev->procs[p];
        double y = top + lane * p, sec = r->seconds > 0 ? r->seconds : 0;
        int cont = strcmp(r->status, "contaminated") == 0;
        const char *fill = r->accepted ? "#2da44e" : cont ? "#d4a72c" : "#cf222e";
        double x = at(&s, t0[p]), w = at(&s, t0[p] + sec) - x;
        if (w < 1.5) w = 1.5;
        if (p % every == 0)
            kg_sb_printf(sb, "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">p%d %s</text>", L - 8,
                         y + lane / 2 + 4, p, r->dir == 0 ? "fwd" : "rev");
        kg_sb_printf(sb, "<rect class=\"m\" data-n=\"1\" data-status=\"%s\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
                     "height=\"%.1f\" fill=\"%s\"><title>", r->accepted ? "accepted" : cont ? "contaminated" : "failed",
                     x, y + 1, w, lane - 2 > 1 ? lane - 2 : 1, fill);
        escf(sb, "process %d (%s, slot %d, attempt %d): %s%s%s; started %s, %.3f s", p, r->dir == 0 ? "fwd" : "rev",
             r->slot, r->attempt, r->accepted ? "accepted" : "excluded", r->status[0] ? ", " : "", r->status,
             r->start_utc, r->seconds);
        if (r->timed_s >= 0)
            escf(sb, " (quiet wait %.3f s, set-up %.3f s, checks %.3f s, timed %.3f s)", r->wait_s, r->setup_s,
                 r->checks_s, r->timed_s);
        if (r->reason[0]) escf(sb, "; reason: %s", r->reason);
        kg_sb_puts(sb, "</title></rect>");
    }
    if (guessed)
        kg_sb_printf(sb, "<text class=\"note\" x=\"%.1f\" y=\"%.1f\">%d process(es) without a start time are drawn "
                     "right after the one before</text>", L, (double)H - 4, guessed);
    kg_sb_puts(sb, "</svg>\n");
    free(t0);
}

/* ---- 4. telemetry beside the samples ------------------------------------ */

enum { TS_CLOCK, TS_POWER, TS_TEMP, TS_NS, TS_N };

static double tel_value(const kg_tel_rec *t, int k, const samples *S)
{
    switch (k) {
    case TS_CLOCK: return t->sm_mhz > 0 ? (double)t->sm_mhz : (double)NAN;
    case TS_POWER: return isfinite(t->power_w) && t->power_w >= 0 ? t->power_w : (double)NAN;
    case TS_TEMP: return t->temp_c >= 0 ? (double)t->temp_c : (double)NAN;
    default: {
        const srow *r = samples_find(S, t->proc, t->kase, t->round, t->arm, t->sample);
        return r != NULL && isfinite(r->ns) ? r->ns / 1e3 : (double)NAN;
    }
    }
}

/* the most marks per series: more values share a mark (a min-max bar) */
#define TEL_MARKS 1500

static void telemetry_plot(kg_sb *sb, const kg_plan *plan, const kg_evidence *ev, const samples *S, int c)
{
    static const char *const names[TS_N] = { "SM clock (MHz)", "power (W)", "temperature (°C)",
                                             "sample time (µs per operation)" };
    char id[32], title[KG_NAME_MAX + 96];
    snprintf(id, sizeof id, "telemetry-c%d", c);
    snprintf(title, sizeof title, "Telemetry beside the samples, case %s", plan->cases[c].name);
    size_t n = 0;
    long long cnt[TS_N] = { 0 };
    double lo[TS_N], hi[TS_N];
    for (int k = 0; k < TS_N; k++) {
        lo[k] = INFINITY;
        hi[k] = -INFINITY;
    }
    for (size_t i = 0; i < ev->ntel; i++) {
        const kg_tel_rec *t = &ev->tel[i];
        if (t->kase != c) continue;
        n++;
        for (int k = 0; k < TS_N; k++) {
            double v = tel_value(t, k, S);
            if (!isfinite(v)) continue;
            cnt[k]++;
            if (v < lo[k]) lo[k] = v;
            if (v > hi[k]) hi[k] = v;
        }
    }
    if (cnt[TS_CLOCK] + cnt[TS_POWER] + cnt[TS_TEMP] == 0) {
        char why[KG_NAME_MAX + 160];
        if (n == 0)
            snprintf(why, sizeof why, "no telemetry: no telemetry row of case %s in an accepted process",
                     plan->cases[c].name);
        else
            snprintf(why, sizeof why, "no telemetry: %zu telemetry rows of case %s, none with an SM clock, power or "
                     "temperature", n, plan->cases[c].name);
        svg_empty(sb, id, title, why);
        return;
    }
    int panels[TS_N], np = 0;
    long long points = 0;
    for (int k = 0; k < TS_N; k++)
        if (cnt[k] > 0) {
            panels[np++] = k;
            points += cnt[k];
            pad_range(&lo[k], &hi[k], 0.08);
        }
    const double L = 80, R = 980, top = 76, ph = 96, gap = 30;
    double bot = top + np * ph + (np - 1) * gap;
    int W = 1000, H = (int)(bot + 50);
    scale xs = { 0, (double)(n > 1 ? n - 1 : 1), L + 6, R - 6, 0 };
    svg_open(sb, id, W, H, points, NULL, title);
    kg_sb_puts(sb, "<text class=\"h\" x=\"10\" y=\"18\">");
    esc(sb, title);
    kg_sb_puts(sb, "</text>");
    /* the arms, for the legend */
    double lx = 10;
    for (int a = 0; a < plan->narms; a++) {
        int has = 0;
        for (size_t i = 0; i < ev->ntel && !has; i++) has = ev->tel[i].kase == c && ev->tel[i].arm == a;
        if (has) lx = legend(sb, lx, 38, arm_colors[a % NCOLORS], NULL, plan->arms[a].name);
    }
    /* the processes: a separator where one begins */
    size_t k = 0;
    int last = -1;
    for (size_t i = 0; i < ev->ntel; i++) {
        const kg_tel_rec *t = &ev->tel[i];
        if (t->kase != c) continue;
        if (t->proc != last) {
            double x = at(&xs, (double)k);
            kg_sb_printf(sb, "<path class=\"sep\" d=\"M%.1f %.1fV%.1f\"/><text class=\"tick\" x=\"%.1f\" y=\"%.1f\">p%d"
                         "</text>", x, top - 20, bot, x + 2, top - 22, t->proc);
            last = t->proc;
        }
        k++;
    }
    size_t per = (n + TEL_MARKS - 1) / TEL_MARKS;
    if (per < 1) per = 1;
    double *bmin = malloc((size_t)plan->narms * sizeof *bmin), *bmax = malloc((size_t)plan->narms * sizeof *bmax);
    long long *bn = malloc((size_t)plan->narms * sizeof *bn), *drawn = malloc((size_t)plan->narms * sizeof *drawn);
    kg_sb *paths = calloc((size_t)plan->narms, sizeof *paths);
    if (bmin == NULL || bmax == NULL || bn == NULL || drawn == NULL || paths == NULL) {
        sb->oom = 1;
        free(bmin); free(bmax); free(bn); free(drawn); free(paths);
        kg_sb_puts(sb, "</svg>\n");
        return;
    }
    for (int pi = 0; pi < np; pi++) {
        int ts = panels[pi];
        double y0 = top + pi * (ph + gap);
        scale ys = { lo[ts], hi[ts], y0 + ph, y0, 0 };
        kg_sb_printf(sb, "<text class=\"al\" x=\"%.1f\" y=\"%.1f\">%s</text>", L + 4, y0 - 6, names[ts]);
        axis(sb, &ys, AX_Y, L, R, 3, LBL_PLAIN);
        kg_sb_printf(sb, "<path class=\"ax\" d=\"M%.1f %.1fH%.1f\"/>", L, y0 + ph, R);
        /* per arm, the values of each run of `per` samples as one mark */
        for (int a = 0; a < plan->narms; a++) bn[a] = drawn[a] = 0;
        size_t x = 0, bstart = 0;
        for (size_t i = 0; i <= ev->ntel; i++) {
            const kg_tel_rec *t = i < ev->ntel ? &ev->tel[i] : NULL;
            if (t != NULL && t->kase != c) continue;
            if ((t == NULL && x > bstart) || x - bstart == per) {
                double xm = at(&xs, (double)bstart + (double)(x - bstart - 1) / 2.0);
                for (int a = 0; a < plan->narms; a++) {
                    if (bn[a] == 0) continue;
                    kg_sb_printf(&paths[a], "M%.1f %.1fV%.1f", xm, at(&ys, bmax[a]), at(&ys, bmin[a]));
                    drawn[a] += bn[a];
                    bn[a] = 0;
                }
                bstart = x;
            }
            if (t == NULL) break;
            double v = tel_value(t, ts, S);
            x++;
            if (!isfinite(v) || t->arm < 0 || t->arm >= plan->narms) continue;
            int a = t->arm;
            if (bn[a] == 0 || v < bmin[a]) bmin[a] = v;
            if (bn[a] == 0 || v > bmax[a]) bmax[a] = v;
            bn[a]++;
        }
        for (int a = 0; a < plan->narms; a++) {
            if (paths[a].buf != NULL) {
                kg_sb_printf(sb, "<path class=\"m dots\" data-n=\"%lld\" stroke=\"%s\" d=\"%s\"><title>",
                             drawn[a], arm_colors[a % NCOLORS], paths[a].buf);
                escf(sb, "%s, %s: %lld values", plan->arms[a].name, names[ts], drawn[a]);
                kg_sb_puts(sb, "</title></path>");
            }
            if (paths[a].oom) sb->oom = 1;
            kg_sb_free(&paths[a]);
        }
    }
    free(bmin); free(bmax); free(bn); free(drawn); free(paths);
    axis(sb, &xs, AX_X, bot, bot, 8, LBL_PLAIN);
    kg_sb_printf(sb, "<text class=\"al\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">timed samples of the case in "
                 "the order they were taken, process by process (telemetry/proc-NNN.csv, joined to raw/)%s</text>",
                 (L + R) / 2, bot + 34, per > 1 ? "; a bar spans the values of consecutive samples" : "");
    kg_sb_puts(sb, "</svg>\n");
}

/* ---- the page -------------------------------------------------------------- */

static const char css[] =
    "body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;color:#24292f;margin:0 auto;"
    "max-width:1040px;padding:16px 20px 48px}"
    "h1{font-size:22px;margin:8px 0 12px}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #d0d7de;"
    "padding-bottom:4px}h3{font-size:15px;margin:18px 0 6px}"
    "table{border-collapse:collapse;margin:8px 0;font-size:13px}td,th{border:1px solid #d0d7de;padding:3px 7px;"
    "text-align:left;vertical-align:top}th{background:#f6f8fa}td .n,td.n{font-variant-numeric:tabular-nums}"
    "nav a{margin-right:12px}code{font:12px ui-monospace,monospace;background:#f6f8fa;padding:1px 3px}"
    ".gate{border:2px solid;border-radius:6px;padding:8px 14px;margin:12px 0}"
    ".gate.pass{border-color:#1a7f37;background:#dafbe1}.gate.fail{border-color:#cf222e;background:#ffebe9}"
    ".gate .big{font-size:20px;font-weight:600}.invalid{color:#cf222e;font-weight:600}"
    ".v-FASTER{color:#1a7f37;font-weight:600}.v-SLOWER{color:#cf222e;font-weight:600}"
    ".v-EQUIVALENT{color:#0969da}.v-INCONCLUSIVE{color:#57606a}"
    "figure{margin:10px 0 18px}figcaption{font-size:12px;color:#57606a;max-width:1000px}"
    "svg.plot{max-width:100%;height:auto;display:block;background:#fff}"
    "svg text{font-family:system-ui,sans-serif;font-size:11px;fill:#24292f}"
    "svg .h{font-size:13px;font-weight:600}svg .note{fill:#57606a;font-size:12px}svg .tick{fill:#57606a}"
    "svg .ax{stroke:#57606a;fill:none}svg .grid{stroke:#eaeef2;fill:none}svg .sep{stroke:#d0d7de;fill:none}"
    "svg .band{fill:#ddf4ff}svg .zero{stroke:#24292f;stroke-width:1.5}svg .margin{stroke:#1a7f37;stroke-width:1.5}"
    "svg .gmin{stroke:#9a6700;stroke-width:1.5}svg .ctl{stroke:#8250df;stroke-width:1.5}"
    "svg .box{fill:#f6f8fa;stroke-width:1}svg .med{stroke-width:2.5;fill:none}"
    "svg .pm{stroke:#24292f;stroke-dasharray:5 3;fill:none}svg .dots{stroke-width:3;stroke-linecap:round;fill:none}";

static void header_html(kg_sb *sb, const kg_evidence *ev, const kg_analysis *an, json_t *meta)
{
    const kg_plan *plan = ev->plan;
    const kg_campaign *cp = &plan->campaign;
    kg_sb_puts(sb, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                   "<meta http-equiv=\"Content-Security-Policy\" "
                   "content=\"default-src 'none'; style-src 'unsafe-inline'\">\n"
                   "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
                   "<meta name=\"generator\" content=\"kgate report\">\n<title>kgate report: ");
    esc(sb, cp->name);
    kg_sb_printf(sb, "</title>\n<style>%s</style>\n</head>\n<body>\n<h1>kgate report: ", css);
    esc(sb, cp->name);
    kg_sb_puts(sb, "</h1>\n<nav><a href=\"#gate\">Gate</a><a href=\"#results\">Results</a>"
                   "<a href=\"#reductions\">Reductions</a><a href=\"#rounds\">Rounds</a>"
                   "<a href=\"#timeline\">Processes</a><a href=\"#telemetry\">Telemetry</a>"
                   "<a href=\"report.md\">report.md</a></nav>\n<table class=\"run\">\n");
    kg_sb_puts(sb, "<tr><th>plan</th><td><code>");
    esc(sb, meta_str(meta, "plan_path"));
    kg_sb_printf(sb, "</code>, sha256 <code>%s</code></td></tr>\n", plan->hash);
    kg_sb_puts(sb, "<tr><th>kgate</th><td>");
    escf(sb, "%s (git %s)", meta_str(meta, "kgate_version"), meta_str(meta, "kgate_git_sha"));
    kg_sb_puts(sb, "</td></tr>\n<tr><th>backend</th><td>");
    escf(sb, "%s: %s", meta_str(meta, "backend"), meta_str(meta, "device"));
    kg_sb_puts(sb, "</td></tr>\n<tr><th>host</th><td>");
    escf(sb, "%s (%s)", meta_str(meta, "host"), meta_str(meta, "os"));
    kg_sb_puts(sb, "</td></tr>\n<tr><th>started</th><td>");
    esc(sb, meta_str(meta, "started_utc"));
    kg_sb_printf(sb, "</td></tr>\n<tr><th>processes</th><td>%d per direction planned; %d accepted, %d excluded"
                 "</td></tr>\n", cp->processes, an->nproc_accepted, an->nproc_rejected);
    if (an->pinned) {
        kg_sb cpu = { 0 };
        kg_report_cpu_text(&cpu, ev, an);
        kg_sb_puts(sb, "<tr><th>CPU placement</th><td>");
        esc(sb, cpu.buf != NULL ? cpu.buf : "");
        kg_sb_puts(sb, "</td></tr>\n");
        kg_sb_free(&cpu);
    }
    kg_sb_printf(sb, "<tr><th>protocol</th><td>%d rounds x %d samples (%d warmup) per arm, pack %d, interleave %s, "
                 "l2 %s, inputs %s, rotate %d input set%s</td></tr>\n", cp->rounds, cp->samples, cp->warmup, cp->pack,
                 cp->interleave == KG_INTERLEAVE_SAMPLE ? "sample" : "block", cp->l2 == KG_L2_COLD ? "cold" : "warm",
                 cp->inputs == KG_INPUTS_FRESH ? "fresh" : "resident", cp->rotate, cp->rotate == 1 ? "" : "s");
    kg_sb_printf(sb, "<tr><th>decision</th><td>alpha %.3g one-sided; margin %.2f%%; equivalence ±%.2f%%; control "
                 "±%.2f%%</td></tr>\n", cp->alpha, 100 * cp->margin, 100 * cp->equivalence, 100 * cp->control_margin);
    if (cp->selected_from[0] != '\0') {
        kg_sb_puts(sb, "<tr><th>selection</th><td>");
        esc(sb, cp->selected_from);
        kg_sb_puts(sb, "</td></tr>\n");
    }
    for (int i = 0; i < plan->nnotes; i++) {
        kg_sb_puts(sb, "<tr><th>note</th><td>");
        esc(sb, plan->notes[i]);
        kg_sb_puts(sb, "</td></tr>\n");
    }
    kg_sb_puts(sb, "</table>\n");
}

static void gate_html(kg_sb *sb, const kg_plan *plan, const kg_analysis *an)
{
    const kg_campaign *cp = &plan->campaign;
    kg_sb_printf(sb, "<section id=\"gate\" class=\"gate %s\" data-gate=\"%s\">\n<div class=\"big\">Gate: %s</div>\n<p>",
                 an->gate_pass ? "pass" : "fail", an->gate_pass ? "PASS" : "FAIL", an->gate_pass ? "PASS" : "FAIL");
    if (plan->gate.rule == KG_GATE_INTERVAL)
        kg_sb_printf(sb, "Rule (declared before the first sample): lower %.0f%% bound of the reduction ≥ %.2f%% on "
                     "every %s case", 100 * (1 - cp->alpha), 100 * plan->gate.min_reduction,
                     plan->gate.all_cases ? "" : "primary");
    else
        kg_sb_printf(sb, "Rule (declared before the first sample): process and paired-round reduction ≥ %.2f%% in both "
                     "directions and every round won, on every %s case", 100 * plan->gate.min_reduction,
                     plan->gate.all_cases ? "" : "primary");
    kg_sb_printf(sb, "%s%s%s.</p>\n<p>Result: ", plan->gate.require_order ? ", order check passes" : "",
                 plan->gate.require_control ? ", control valid" : "",
                 plan->gate.require_negative ? ", every gated candidate a source arm (require_negative = yes)" : "");
    esc(sb, an->gate_reason);
    kg_sb_puts(sb, ".");
    if (an->invalid && strcmp(an->invalid_why, an->gate_reason) == 0) {
        kg_sb_puts(sb, " <span class=\"invalid\">The campaign is INVALID.</span>");
    } else if (an->invalid) {
        kg_sb_puts(sb, " <span class=\"invalid\">The campaign is INVALID (");
        esc(sb, an->invalid_why[0] != '\0' ? an->invalid_why : "no usable process");
        kg_sb_puts(sb, ").</span>");
    }
    kg_sb_puts(sb, "</p>\n</section>\n");
}

/* the baseline an arm's times are shown against (report.md's base_ns):
 * its contrast baseline, else the fastest baseline */
static int base_arm(const kg_plan *plan, const kg_analysis *an, int c, int a0, int d)
{
    const kg_arm_result *r0 = &an->res[c * an->narms + a0];
    if (r0->contrast_arm >= 0) return r0->contrast_arm;
    int best = -1;
    for (int a = 0; a < plan->narms; a++) {
        const kg_arm_result *r = &an->res[c * an->narms + a];
        if (r->role != KG_ROLE_BASELINE || r->state != KG_ARM_OK) continue;
        double v = r->med_ns[d];
        if (isfinite(v) && (best < 0 || v < an->res[c * an->narms + best].med_ns[d])) best = a;
    }
    return best;
}

static void results_html(kg_sb *sb, const kg_plan *plan, const kg_analysis *an, const kg_case_facts *facts)
{
    kg_sb_puts(sb, "<section id=\"results\">\n<h2>Results</h2>\n<p>Times are medians over processes of per-process "
                   "medians, in µs. Reductions are 1 - arm/baseline (positive = faster) against the arm's baseline; "
                   "the interval is the one-sided (1 - alpha) bound on each side, from process means with directions "
                   "as strata (docs/statistics.md). The same numbers as report.md and results.csv.</p>\n"
                   "<table class=\"results\">\n<tr><th>case</th><th>arm</th><th>role</th><th>fwd µs base → arm</th>"
                   "<th>rev µs base → arm</th><th>process red. fwd / rev</th><th>paired-round red. [range]</th>"
                   "<th>round wins fwd / rev</th><th>reduction [lower, upper]</th><th>verdict</th></tr>\n");
    for (int c = 0; c < plan->ncases; c++)
        for (int a = 0; a < plan->narms; a++) {
            const kg_arm_result *r = &an->res[c * an->narms + a];
            if (r->state == KG_ARM_ABSENT) continue;
            kg_sb_puts(sb, "<tr data-case=\"");
            esc(sb, plan->cases[c].name);
            kg_sb_puts(sb, "\" data-arm=\"");
            esc(sb, plan->arms[a].name);
            kg_sb_printf(sb, "\"><td><a href=\"#reduction-c%d\">", c);
            esc(sb, plan->cases[c].name);
            kg_sb_printf(sb, "</a>%s</td><td><a href=\"#rounds-c%d-a%d\">",
                         plan->cases[c].primary ? "" : " (secondary)", c, a);
            esc(sb, plan->arms[a].name);
            kg_sb_printf(sb, "</a></td><td>%s</td>", kg_role_name(r->role));
            for (int d = 0; d < 2; d++) {
                int b = base_arm(plan, an, c, a, d);
                kg_sb_puts(sb, "<td class=\"n\">");
                if (b >= 0) num(sb, d ? "median_ns_rev" : "median_ns_fwd", plan->arms[b].name,
                                an->res[c * an->narms + b].med_ns[d], 0);
                else kg_sb_puts(sb, "<span class=\"n\">–</span>");
                kg_sb_puts(sb, " → ");
                num(sb, d ? "median_ns_rev" : "median_ns_fwd", NULL, r->med_ns[d], 0);
                kg_sb_puts(sb, "</td>");
            }
            char ct[64] = "", cts[48];
            if (!kg_contract_is_default(&plan->arms[a].contract)) {
                kg_contract_text(&plan->arms[a].contract, plan->cases[c].dtype, cts, sizeof cts);
                snprintf(ct, sizeof ct, " (contract %s)", cts);
            }
            kg_verdict v = r->verdict;
            const char *vl = kg_result_label(r);
            if (r->role != KG_ROLE_BASELINE) {
                kg_sb_puts(sb, "<td class=\"n\">");
                num(sb, "process_reduction_fwd", NULL, r->proc_red[0], 1);
                kg_sb_puts(sb, " / ");
                num(sb, "process_reduction_rev", NULL, r->proc_red[1], 1);
                kg_sb_puts(sb, "</td><td class=\"n\">");
                num(sb, "round_reduction", NULL, r->round_red_all, 1);
                kg_sb_puts(sb, " [");
                num(sb, "round_reduction_min", NULL, r->round_red_min, 1);
                kg_sb_puts(sb, ", ");
                num(sb, "round_reduction_max", NULL, r->round_red_max, 1);
                kg_sb_printf(sb, "]</td><td class=\"n\">%d/%d / %d/%d</td><td class=\"n\">", r->wins[0], r->nrounds[0],
                             r->wins[1], r->nrounds[1]);
                if (r->has_effect) {
                    num(sb, "reduction", NULL, r->eff.rho, 1);
                    if (r->eff.has_interval) {
                        kg_sb_puts(sb, " [");
                        num(sb, "reduction_lower", NULL, r->eff.rho_lo, 1);
                        kg_sb_puts(sb, ", ");
                        num(sb, "reduction_upper", NULL, r->eff.rho_hi, 1);
                        kg_sb_puts(sb, "]");
                    } else {
                        kg_sb_puts(sb, " (no interval: fewer than 2 processes in a direction)");
                    }
                }
                kg_sb_puts(sb, "</td>");
            } else {
                kg_sb_puts(sb, "<td></td><td></td><td></td><td></td>");
            }
            kg_sb_printf(sb, "<td class=\"v-%s\" data-verdict=\"%s\">%s", kg_verdict_name(v), kg_result_word(r), vl);
            if (r->impossible) {
                kg_sb_puts(sb, " (");
                esc(sb, r->physics);
                kg_sb_puts(sb, ")");
            }
            esc(sb, ct);
            if (facts != NULL && facts[c].contract[0] != '\0') {
                /* an op declared in Python: the bound it is checked against */
                kg_sb_puts(sb, " (checked against: ");
                esc(sb, facts[c].contract);
                kg_sb_puts(sb, ")");
            }
            kg_sb_puts(sb, "</td></tr>\n");
        }
    kg_sb_puts(sb, "</table>\n</section>\n");
}

static void processes_html(kg_sb *sb, const kg_evidence *ev)
{
    kg_sb_printf(sb, "<section id=\"processes\">\n<h3>Processes</h3>\n<p>%d checks in accepted processes, %d failed "
                 "(checks/proc-NNN.csv; report.md's Admission section lists them).</p>\n<table class=\"procs\">\n"
                 "<tr><th>process</th><th>direction</th><th>status</th><th>accepted</th><th>seconds</th><th>reason</th>"
                 "</tr>\n", ev->nchecks, ev->nchecks_failed);
    for (int p = 0; p < ev->nproc; p++) {
        const kg_proc_rec *r = &ev->procs[p];
        kg_sb_printf(sb, "<tr><td>%d</td><td>%s</td><td>", p, r->dir == 0 ? "fwd" : "rev");
        esc(sb, r->status);
        kg_sb_printf(sb, "</td><td>%s</td><td class=\"n\">%.3f</td><td>", r->accepted ? "yes" : "no", r->seconds);
        esc(sb, r->reason);
        kg_sb_puts(sb, "</td></tr>\n");
    }
    kg_sb_puts(sb, "</table>\n</section>\n");
}

int kg_report_html(kg_sb *out, const kg_evidence *ev, const kg_analysis *an, kg_err *err)
{
    const kg_plan *plan = ev->plan;
    json_t *meta = json_loads(ev->meta_json, 0, NULL);
    if (meta == NULL) return kg_errorf(err, KG_EINPUT, "meta.json: not valid JSON (restore it from the campaign)");
    samples S;
    if (samples_build(ev, &S) != KG_OK) {
        samples_free(&S);
        json_decref(meta);
        return kg_errorf(err, KG_ENOMEM, "out of memory (report.html: %zu raw samples)", ev->nrows);
    }
    header_html(out, ev, an, meta);
    gate_html(out, plan, an);
    results_html(out, plan, an, ev->facts);

    kg_sb_printf(out, "<section id=\"reductions\">\n<h2>Reductions</h2>\n<p>Per case, each contrast's reduction "
                 "(dot) and its one-sided %.0f%% bounds (bar), against 0, the margin, the equivalence band and, on a "
                 "gated case, the gate's minimum; colored by verdict. A FASTER verdict needs the lower bound above the "
                 "margin.</p>\n", 100 * (1 - plan->campaign.alpha));
    for (int c = 0; c < plan->ncases; c++) {
        kg_sb_puts(out, "<figure>");
        reductions_plot(out, plan, an, c);
        kg_sb_puts(out, "</figure>\n");
    }
    kg_sb_puts(out, "</section>\n");
    sweeps_html(out, plan, an);
    kg_sb_puts(out, "<section id=\"rounds\">\n<h2>Rounds</h2>\n<p>Per case and arm, every round of every "
                    "accepted process (raw/proc-NNN.csv), forward processes on the left and reverse on the right, in "
                    "process order: the box is the middle half of the round's samples (quartiles interpolated between "
                    "order statistics), the whiskers reach the smallest and largest sample, the thick bar is the "
                    "round's median, whose log the analysis pairs across arms. The dashed line is the arm's median of "
                    "process medians in that direction (the results table). Each arm has its own logarithmic scale, "
                    "the same for both directions.</p>\n");
    for (int c = 0; c < plan->ncases; c++) {
        kg_sb_puts(out, "<h3>Case ");
        esc(out, plan->cases[c].name);
        kg_sb_puts(out, "</h3>\n");
        for (int a = 0; a < plan->narms; a++) {
            if (an->res[c * an->narms + a].state == KG_ARM_ABSENT) continue;
            kg_sb_puts(out, "<figure>");
            rounds_plot(out, plan, an, &S, c, a);
            kg_sb_puts(out, "</figure>\n");
        }
    }
    kg_sb_puts(out, "</section>\n<section>\n<h2 id=\"timeline-h\">Processes over time</h2>\n<p>Each started worker "
                    "process as a bar from its start (processes.csv, recorded to the second) for its seconds: accepted "
                    "processes count, contaminated ones were excluded by the host watch and their slot repeated, failed "
                    "ones were excluded. Triangles are the host watch's reasons and exclusions (watch.csv). Hover a mark "
                    "for its reason.</p>\n<figure>");
    timeline_plot(out, ev);
    kg_sb_puts(out, "</figure>\n");
    processes_html(out, ev);
    kg_sb_puts(out, "</section>\n<section id=\"telemetry\">\n<h2>Telemetry</h2>\n<p>The device's readings after each "
                    "timed sample (telemetry/proc-NNN.csv: SM clock, power, temperature) beside the sample's own time, "
                    "per case, in the order the samples were taken; a row has no wall-clock time of its own. "
                    "Backends that read none (cpu, fake) are said so.</p>\n");
    int any = 0;
    for (size_t i = 0; i < ev->ntel && !any; i++)
        any = ev->tel[i].sm_mhz > 0 || (isfinite(ev->tel[i].power_w) && ev->tel[i].power_w >= 0) || ev->tel[i].temp_c >= 0;
    if (!any) {
        char why[160];
        if (ev->ntel == 0)
            snprintf(why, sizeof why, "no telemetry: no accepted process has telemetry rows (the fake backend "
                     "records none; the rows of excluded processes are not read)");
        else
            snprintf(why, sizeof why, "no telemetry: %zu telemetry rows, none with an SM clock, power or temperature "
                     "(the backend reads none)", ev->ntel);
        kg_sb_puts(out, "<figure>");
        svg_empty(out, "telemetry-none", "Telemetry", why);
        kg_sb_puts(out, "</figure>\n");
    } else {
        for (int c = 0; c < plan->ncases; c++) {
            kg_sb_puts(out, "<figure>");
            telemetry_plot(out, plan, ev, &S, c);
            kg_sb_puts(out, "</figure>\n");
        }
    }
    kg_sb_puts(out, "</section>\n<footer><p>Made by <code>kgate report</code> from this evidence folder alone; "
                    "<code>kgate verify</code> recomputes it byte for byte. The full report, with every section, is "
                    "<a href=\"report.md\">report.md</a>.</p></footer>\n</body>\n</html>\n");
    samples_free(&S);
    json_decref(meta);
    return KG_OK;
}

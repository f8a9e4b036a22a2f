/* report_hw.c: the hardware sections of report.md: speed of light (each
 * arm's achieved bandwidth and arithmetic rate from the op's minimal bytes
 * and flops), telemetry (clocks, power, temperature, throttle reasons and
 * escaped work, per arm, and rounds whose arms ran at different SM
 * clocks) and resource records (registers, shared and local bytes...).
 *
 * Formats what kg_evidence_load read from the folder (telemetry/ is
 * written by the worker where the backend reports telemetry); reads no
 * file and writes nothing but the text it appends.  A folder without
 * telemetry/ gets no telemetry sections. */
#include <math.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "report/report_hw.h"
#include "base/util.h"


static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median_of(double *v, int n)
{
    if (n <= 0) return NAN;
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static void speed_of_light(kg_sb *sb, const kg_evidence *ev, const kg_analysis *an)
{
    const kg_plan *plan = ev->plan;
    int any = 0;
    for (int c = 0; c < plan->ncases && ev->facts != NULL; c++) {
        if (!(ev->facts[c].min_bytes > 0)) continue;
        double bytes = ev->facts[c].min_bytes;
        double flops = ev->facts[c].flops;
        for (int a = 0; a < plan->narms; a++) {
            const kg_arm_result *r = &an->res[c * an->narms + a];
            if (r->state != KG_ARM_OK || !isfinite(r->med_ns_all)) continue;
            if (!any) {
                kg_sb_puts(sb, "\n## Speed of light\n\n"
                               "Achieved rates from each op's minimal traffic (every input read once, every output "
                               "written once) and flops, over the arm's median time: compare them with the device's "
                               "measured copy bandwidth and matrix rate.\n\n"
                               "| case | arm | µs | minimal bytes | GB/s | GFLOP | TFLOP/s |\n|---|---|---|---|---|---|---|\n");
                any = 1;
            }
            kg_sb_printf(sb, "| %s | %s | %.3f | %.0f | %.1f | %.4f | %.2f |\n", plan->cases[c].name,
                         plan->arms[a].name, r->med_ns_all / 1e3, bytes, bytes / r->med_ns_all, flops / 1e9,
                         flops / r->med_ns_all / 1e3);
        }
    }
}

/* The physics limit: the peaks of peaks.json and, per arm, its fastest
 * process median against them (analysis.c decides; this prints). */
static void physics_md(kg_sb *sb, const kg_evidence *ev, const kg_analysis *an)
{
    const kg_plan *plan = ev->plan;
    if (!ev->has_peaks) return;
    const kg_peaks *p = &ev->peaks;
    kg_sb_puts(sb, "\n## Physics limits\n\n");
    if (!p->measured) {
        kg_sb_printf(sb, "No physics limit applies: peaks %s.\n", p->status);
        return;
    }
    /* peaks given in a file (KGATE_PEAKS) are said to be so, not measured */
    if (strcmp(p->status, "measured") == 0) kg_sb_printf(sb, "Peaks measured in trusted code (peaks.json: %s). ", p->method);
    else kg_sb_printf(sb, "Peaks %s (peaks.json: %s). ", p->status, p->method);
    kg_sb_printf(sb, "An arm whose minimal bytes or flops over its fastest process median exceed %.1fx a peak is "
                     "INVALID (impossible), never FASTER.\n\n", KG_PHYSICS_MARGIN);
    if (p->flops_f32 > 0.0) kg_sb_printf(sb, "- FMA rate (f32): %.1f GFLOP/s (%s)\n", p->flops_f32 / 1e9, p->flops_note);
    else kg_sb_printf(sb, "- FMA rate: %s\n", p->flops_note);
    if (p->flops_mma16 > 0.0) kg_sb_printf(sb, "- matrix rate (16-bit inputs): %.1f GFLOP/s\n", p->flops_mma16 / 1e9);
    for (int i = 0; i < p->nbw; i++)
        kg_sb_printf(sb, "- bandwidth, working set >= %.0f KiB: %.1f GB/s\n", p->bw_set[i] / 1024.0, p->bw_rate[i] / 1e9);
    kg_sb_puts(sb, "\n| case | arm | fastest process median µs | fraction of peak | physics |\n|---|---|---|---|---|\n");
    for (int c = 0; c < plan->ncases; c++)
        for (int a = 0; a < plan->narms; a++) {
            const kg_arm_result *r = &an->res[c * an->narms + a];
            if (r->state != KG_ARM_OK || !isfinite(r->fastest_ns)) continue;
            kg_sb_printf(sb, "| %s | %s | %.3f | ", plan->cases[c].name, plan->arms[a].name, r->fastest_ns / 1e3);
            if (isfinite(r->peak_frac)) kg_sb_printf(sb, "%.3f | %s |\n", r->peak_frac, r->impossible ? r->physics : "ok");
            else kg_sb_puts(sb, "– | no measured peak for this case |\n");
        }
}

static void telemetry(kg_sb *sb, const kg_evidence *ev, const kg_analysis *an)
{
    const kg_plan *plan = ev->plan;
    const kg_tel_rec *t = ev->tel;
    int n = (int)ev->ntel;
    if (n == 0) return;
    double *v = malloc((size_t)n * sizeof *v);
    if (v == NULL) { sb->oom = 1; return; }
    int clocks = 0;
    for (int i = 0; i < n; i++) clocks |= t[i].sm_mhz >= 0;
    if (!clocks) {
        /* a backend without device readings (cpu): the integrity counters only */
        kg_sb_puts(sb, "\n## Telemetry\n\nRead after every timed sample.  This backend reads no clocks, power or "
                       "temperature.  An escape is a sample around which the arm's host process used CPU time "
                       "outside its request (before it, or after its reply), or had a second thread or a child.\n\n"
                       "| case | arm | samples | host CPU µs per sample, median | wall µs per sample, median | "
                       "escapes |\n|---|---|---|---|---|---|\n");
        for (int c = 0; c < plan->ncases; c++)
            for (int a = 0; a < plan->narms; a++) {
                int k = 0, esc = 0;
                for (int i = 0; i < n; i++)
                    if (t[i].kase == c && t[i].arm == a) {
                        v[k++] = t[i].event_ns;
                        esc += t[i].escaped;
                    }
                if (k == 0) continue;
                double cpu = median_of(v, k);
                k = 0;
                for (int i = 0; i < n; i++)
                    if (t[i].kase == c && t[i].arm == a) v[k++] = t[i].host_ns;
                double wall = median_of(v, k);
                char cbuf[32], wbuf[32];
                if (isfinite(cpu) && cpu >= 0) snprintf(cbuf, sizeof cbuf, "%.1f", cpu / 1e3);
                else snprintf(cbuf, sizeof cbuf, "–");
                if (isfinite(wall) && wall >= 0) snprintf(wbuf, sizeof wbuf, "%.1f", wall / 1e3);
                else snprintf(wbuf, sizeof wbuf, "–");
                kg_sb_printf(sb, "| %s | %s | %d | %s | %s | %d |\n", plan->cases[c].name, plan->arms[a].name, k,
                             cbuf, wbuf, esc);
            }
        free(v);
        return;
    }
    kg_sb_puts(sb, "\n## Telemetry\n\nRead after every timed sample (NVML: the clock at the reading, not averaged over "
                   "the kernel).  An escape is a sample whose host bracket, after a device-wide synchronisation, far "
                   "exceeded its event time: work that ran outside the timed events.\n\n"
                   "| case | arm | samples | SM MHz median [min, max] | memory MHz | power W median | max °C | "
                   "clock event reasons | escapes |\n|---|---|---|---|---|---|---|---|---|\n");
    for (int c = 0; c < plan->ncases; c++)
        for (int a = 0; a < plan->narms; a++) {
            int k = 0, esc = 0;
            double smin = INFINITY, smax = -INFINITY, tmax = -INFINITY, mem = NAN;
            unsigned long long reasons = 0;
            for (int i = 0; i < n; i++) {
                if (t[i].kase != c || t[i].arm != a) continue;
                v[k++] = t[i].sm_mhz;
                smin = fmin(smin, t[i].sm_mhz);
                smax = fmax(smax, t[i].sm_mhz);
                tmax = fmax(tmax, t[i].temp_c);
                mem = t[i].mem_mhz;
                reasons |= t[i].reasons;
                esc += t[i].escaped;
            }
            if (k == 0) continue;
            double sm = median_of(v, k);
            k = 0;
            for (int i = 0; i < n; i++)
                if (t[i].kase == c && t[i].arm == a) v[k++] = t[i].power_w;
            kg_sb_printf(sb, "| %s | %s | %d | %.0f [%.0f, %.0f] | %.0f | %.1f | %.0f | 0x%llx | %d |\n",
                         plan->cases[c].name, plan->arms[a].name, k, sm, smin, smax, mem, median_of(v, k), tmax,
                         reasons, esc);
        }
    /* the clock-mismatched rounds, as the analysis found them */
    kg_sb_printf(sb, "\n%d of %d rounds had arms whose median SM clocks differ by more than %.0f%%%s\n",
                 an->nmismatched, an->nclock_rounds, 100 * KG_CLOCK_MISMATCH, an->nmismatched ? ":" : ".");
    for (int i = 0; i < an->nmismatched && i < 10; i++) {
        const kg_clock_round *m = &an->mismatched[i];
        kg_sb_printf(sb, "- process %d, case %s, round %d: arm median SM clocks %.0f to %.0f MHz\n", m->proc,
                     plan->cases[m->kase].name, m->round, m->lo_mhz, m->hi_mhz);
    }
    if (an->nmismatched > 10) kg_sb_printf(sb, "- and %d more\n", an->nmismatched - 10);
    free(v);
}

/* An int field of a resource record: -1 when the backend could not say
 * (e.g. a library arm), shown as a dash. */
static void res_int(char *buf, size_t cap, long long v)
{
    if (v == -1) snprintf(buf, cap, "–");
    else snprintf(buf, cap, "%lld", v);
}

static void res_dim3(char *buf, size_t cap, const long long d[3])
{
    if (d[0] == -1) snprintf(buf, cap, "–");
    else snprintf(buf, cap, "%lldx%lldx%lld", d[0], d[1], d[2]);
}

static void resources(kg_sb *sb, const kg_evidence *ev)
{
    const kg_plan *plan = ev->plan;
    for (size_t i = 0; i < ev->nres; i++) {
        const kg_res_rec *r = &ev->res[i];
        if (i == 0)
            kg_sb_printf(sb, "\n## Resources (process %d)\n\n| case | arm | launch | registers | static shared B | "
                             "dynamic shared B | local B | max threads | PTX | binary | grid | block | launches | "
                             "arch | sandbox |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n",
                             ev->res_proc);
        char f[10][48];
        res_int(f[0], sizeof f[0], r->regs);
        res_int(f[1], sizeof f[1], r->static_shared);
        res_int(f[2], sizeof f[2], r->dynamic_shared);
        res_int(f[3], sizeof f[3], r->local);
        res_int(f[4], sizeof f[4], r->max_threads);
        res_int(f[5], sizeof f[5], r->ptx);
        res_int(f[6], sizeof f[6], r->binary);
        res_dim3(f[7], sizeof f[7], r->grid);
        res_dim3(f[8], sizeof f[8], r->block);
        res_int(f[9], sizeof f[9], r->launches);
        kg_sb_printf(sb, "| %s | %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
                     plan->cases[r->kase].name, plan->arms[r->arm].name, r->launch, f[0], f[1], f[2], f[3], f[4],
                     f[5], f[6], f[7], f[8], f[9], strncmp(r->arch, "-1", 2) == 0 ? "–" : r->arch,
                     r->sandbox[0] ? r->sandbox : "–");
    }
}

/* A string member of a JSON record, "–" when absent. */
static const char *jstr(json_t *o, const char *key)
{
    const char *v = json_string_value(json_object_get(o, key));
    return v != NULL && v[0] != '\0' ? v : "–";
}

/* The library arms' provenance (resources' library column), one row per
 * case and arm of the process the resources table shows. */
static void library_arms(kg_sb *sb, const kg_evidence *ev)
{
    const kg_plan *plan = ev->plan;
    int shown = 0;
    for (size_t i = 0; i < ev->nres; i++) {
        const kg_res_rec *r = &ev->res[i];
        if (r->library[0] == '\0') continue;
        json_t *rec = json_loads(r->library, 0, NULL);
        if (!json_is_object(rec)) {
            json_decref(rec);
            continue;
        }
        if (!shown++)
            kg_sb_printf(sb, "\n## Library arms (process %d)\n\nEach library arm's call is made by kgate's trusted helper, a "
                             "process of its own, on the worker's own buffers (the generated inputs, kgate's output "
                             "buffer), and checked like every arm. Its times are the helper's: %s. It is interleaved "
                             "with the other arms at the protocol's granularity (interleave = %s), so the device passes "
                             "between the helper and the other arms' processes %s; docs/library-arms.md gives the "
                             "measured cost of that hand-over, below which no paired claim is made.\n\n"
                             "| case | arm | call | expression | output | library versions |\n|---|---|---|---|---|---|\n",
                         ev->res_proc, jstr(rec, "timing"),
                         plan->campaign.interleave == KG_INTERLEAVE_BLOCK ? "block" : "sample",
                         plan->campaign.interleave == KG_INTERLEAVE_BLOCK ? "once per arm and round"
                                                                        : "at every sample");
        json_t *v = json_object_get(rec, "versions");
        char vers[512] = "";
        size_t u = 0;
        const char *keys[] = { "torch", "torch_cuda", "cudnn", "cublas", "numpy", "python", "device_name" };
        for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
            json_t *x = json_object_get(v, keys[k]);
            char val[96];
            if (json_is_string(x)) snprintf(val, sizeof val, "%s", json_string_value(x));
            else if (json_is_integer(x)) snprintf(val, sizeof val, "%lld", (long long)json_integer_value(x));
            else continue;
            int w = snprintf(vers + u, sizeof vers - u, "%s%s %s", u ? ", " : "", keys[k], val);
            if (w > 0 && (size_t)w < sizeof vers - u) u += (size_t)w;
        }
        json_t *comp = json_object_get(rec, "compile"), *py = json_object_get(rec, "python");
        char pyc[200] = "";
        if (json_is_object(py))
            snprintf(pyc, sizeof pyc, " (%s; sha256 %.12s)", jstr(py, "trust"), jstr(py, "sha256"));
        kg_sb_printf(sb, "| %s | %s | `%s`%s%s | `%s` | %s | %s |\n", plan->cases[r->kase].name, plan->arms[r->arm].name,
                     jstr(rec, "call"), json_is_object(comp) ? " (torch.compile, fresh cache)" : "", pyc,
                     jstr(rec, "expression"), jstr(rec, "output"), u ? vers : "–");
        json_decref(rec);
    }
}

void kg_report_hw_md(kg_sb *sb, const kg_evidence *ev, const kg_analysis *an)
{
    speed_of_light(sb, ev, an);
    physics_md(sb, ev, an);
    telemetry(sb, ev, an);
    resources(sb, ev);
    library_arms(sb, ev);
}

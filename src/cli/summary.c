/* summary.c: the machine-readable outputs of `kgate run`: --json, one
 * JSON object on stdout, and --junit FILE, JUnit XML for CI systems.
 * Both print the campaign's analysis as the campaign returned it, in
 * memory (the same analysis results.json was written from); the names of
 * cases and arms are its plan's.  Nothing here decides: a pair fails when
 * the analysis says why it fails the gate. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <jansson.h>
#include "kgate/plan.h"
#include "evidence/attest.h"
#include "report/report.h"
#include "brief.h"
#include "base/safefs.h"
#include "summary.h"
#include "base/util.h"

/* A number as results.json writes it: null where not finite. */
static json_t *num(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

/* The verdicts of the pairs that ran: one object per (case, arm) the
 * arm applies to, in plan order. */
static json_t *verdicts_json(const kg_analysis *an, const char *dir)
{
    const kg_plan *plan = an->plan;
    json_t *vs = json_array();
    char (*ct)[96] = calloc((size_t)(plan->ncases > 0 ? plan->ncases : 1), sizeof *ct);
    int any = ct != NULL && kg_cli_contracts(plan, dir, ct);
    for (int c = 0; c < an->ncases; c++)
        for (int a = 0; a < an->narms; a++) {
            const kg_arm_result *r = &an->res[c * an->narms + a];
            if (r->state == KG_ARM_ABSENT) continue;
            int eff = r->has_effect;
            json_t *v = json_object();
            json_object_set_new(v, "case", json_string(plan->cases[c].name));
            json_object_set_new(v, "arm", json_string(plan->arms[a].name));
            json_object_set_new(v, "role", json_string(kg_role_name(r->role)));
            json_object_set_new(v, "state", json_string(kg_report_state_name(r->state)));
            json_object_set_new(v, "verdict", json_string(kg_result_word(r)));
            json_object_set_new(v, "label", json_string(kg_result_label(r)));
            json_object_set_new(v, "baseline", r->role != KG_ROLE_BASELINE && r->contrast_arm >= 0
                                                   ? json_string(plan->arms[r->contrast_arm].name) : json_null());
            json_object_set_new(v, "median_ns", num(r->med_ns_all));
            json_object_set_new(v, "reduction", eff ? num(r->eff.rho) : json_null());
            json_object_set_new(v, "reduction_lower", eff ? num(r->eff.rho_lo) : json_null());
            json_object_set_new(v, "reduction_upper", eff ? num(r->eff.rho_hi) : json_null());
            json_object_set_new(v, "gated", json_boolean(r->gated));
            json_object_set_new(v, "gate_fail", r->gated && r->gate_why[0] ? json_string(r->gate_why) : json_null());
            if (any && ct[c][0] != '\0') json_object_set_new(v, "contract", json_string(ct[c]));
            json_array_append_new(vs, v);
        }
    free(ct);
    return vs;
}

/* The campaign's outcome: its schema, plan, gate, processes and verdicts. */
static void outcome_json(json_t *s, const kg_analysis *an, const char *dir)
{
    json_object_set_new(s, "schema", json_integer(KG_EVIDENCE_SCHEMA));
    json_object_set_new(s, "plan_sha256", json_string(an->plan->hash));
    json_t *g = json_object();
    json_object_set_new(g, "pass", json_boolean(an->gate_pass));
    json_object_set_new(g, "reason", json_string(an->gate_reason));
    json_object_set_new(g, "invalid", json_boolean(an->invalid));
    json_object_set_new(g, "control_valid", json_boolean(an->control_valid));
    json_object_set_new(g, "order_ok", json_boolean(an->order_ok));
    json_object_set_new(s, "gate", g);
    json_t *pr = json_object();
    json_object_set_new(pr, "accepted", json_integer(an->nproc_accepted));
    json_object_set_new(pr, "excluded", json_integer(an->nproc_rejected));
    json_object_set_new(s, "processes", pr);
    json_object_set_new(s, "verdicts", verdicts_json(an, dir));
}

int kg_cli_summary_json(FILE *out, const kg_summary_in *in, kg_err *err)
{
    json_t *s = json_object();
    json_object_set_new(s, "kgate", json_string(kg_version()));
    json_object_set_new(s, "command", json_string(in->command));
    json_object_set_new(s, "plan", in->plan_path ? json_string(in->plan_path) : json_null());
    json_object_set_new(s, "evidence", in->dir && in->dir[0] ? json_string(in->dir) : json_null());
    json_object_set_new(s, "exit_status", json_integer(in->exit_status));
    if (in->error != NULL || in->an == NULL || in->an->plan == NULL) {
        /* no campaign to summarise: what stopped it */
        json_object_set_new(s, "error", json_string(in->error != NULL ? in->error : "no analysis"));
        json_object_set_new(s, "gate", json_null());
        json_object_set_new(s, "verdicts", json_array());
    } else {
        outcome_json(s, in->an, in->dir);
    }
    json_t *sig = json_object();
    char path[KG_PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/%s", in->dir ? in->dir : "", KG_ATTEST_FILE);
    int signed_ = in->dir != NULL && in->dir[0] && in->key_path != NULL && kg_path_exists(path);
    json_object_set_new(sig, "signed", json_boolean(signed_));
    char keyid[65];
    kg_err ke = { 0 };
    json_object_set_new(sig, "keyid", signed_ && kg_attest_keyid(in->key_path, keyid, &ke) == KG_OK
                                          ? json_string(keyid) : json_null());
    json_object_set_new(sig, "file", signed_ ? json_string(KG_ATTEST_FILE) : json_null());
    json_object_set_new(s, "signature", sig);
    char *text = json_dumps(s, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(12));  /* results.json's */
    json_decref(s);
    if (text == NULL) return kg_errorf(err, KG_ENOMEM, "out of memory writing the JSON summary");
    fputs(text, out);
    fputc('\n', out);
    free(text);
    return KG_OK;
}

/* XML text: the five entities escaped, control characters (which XML 1.0
 * cannot hold) as '?' */
static void xml_text(kg_sb *sb, const char *s)
{
    for (; s != NULL && *s; s++) {
        unsigned char c = (unsigned char)*s;
        switch (c) {
        case '&': kg_sb_puts(sb, "&amp;"); break;
        case '<': kg_sb_puts(sb, "&lt;"); break;
        case '>': kg_sb_puts(sb, "&gt;"); break;
        case '"': kg_sb_puts(sb, "&quot;"); break;
        case '\'': kg_sb_puts(sb, "&apos;"); break;
        default:
            if (c < 0x20 && c != '\n' && c != '\t') kg_sb_puts(sb, "?");
            else kg_sb_printf(sb, "%c", c);
        }
    }
}

/* "kgate.NAME" or "kgate.NAME.CASE": a test case's class */
static void classname(kg_sb *sb, const char *name, const char *kase)
{
    kg_sb_puts(sb, "    <testcase classname=\"kgate.");
    xml_text(sb, name);
    if (kase != NULL) {
        kg_sb_puts(sb, ".");
        xml_text(sb, kase);
    }
    kg_sb_puts(sb, "\" name=\"");
}

/* A failure's type: the kind of the gate's reason, without its case, arm
 * and numbers ("case c, arm a: lower bound of reduction 1.2% < 5.0%" ->
 * "gate: lower bound of reduction"), never the candidate's verdict unless
 * the verdict is the reason (INCORRECT). */
static void failure_type(const char *why, char *buf, size_t cap)
{
    const char *p = why;
    if (strncmp(p, "case ", 5) == 0) {
        const char *arm = strstr(p, ", arm ");
        const char *colon = arm != NULL ? strstr(arm, ": ") : NULL;
        if (colon != NULL) p = colon + 2;
    }
    size_t n = 0;
    while (p[n] != '\0' && p[n] != ':' && p[n] != '(' && p[n] != ',' && !(p[n] >= '0' && p[n] <= '9') &&
           !((p[n] == '-' || p[n] == '+') && p[n + 1] >= '0' && p[n + 1] <= '9'))
        n++;
    while (n > 0 && p[n - 1] == ' ') n--;
    snprintf(buf, cap, "gate: %.*s", (int)(n > 0 ? n : strlen(p)), p);
}

/* One gated (case, arm) pair: failed with the analysis' reason when it
 * fails the gate, its verdict and reduction either way.  Returns 1 when
 * it failed. */
static int junit_pair(kg_sb *tc, const char *name, const kg_plan *plan, const kg_arm_result *r)
{
    const char *verdict = kg_verdict_name(r->verdict);
    classname(tc, name, plan->cases[r->kase].name);
    xml_text(tc, plan->arms[r->arm].name);
    /* one operation's median time, the arm's own cost */
    kg_sb_printf(tc, "\" time=\"%.9f\">\n", isfinite(r->med_ns_all) ? r->med_ns_all * 1e-9 : 0.0);
    char detail[512];
    const char *base = r->role != KG_ROLE_BASELINE && r->contrast_arm >= 0 ? plan->arms[r->contrast_arm].name : "?";
    if (r->has_effect && r->eff.has_interval)
        snprintf(detail, sizeof detail, "verdict %s; reduction %+.2f%% [%+.2f%%, %+.2f%%] against %s", verdict,
                 100.0 * r->eff.rho, 100.0 * r->eff.rho_lo, 100.0 * r->eff.rho_hi, base);
    else if (r->has_effect)
        snprintf(detail, sizeof detail, "verdict %s; reduction %+.2f%% (no interval) against %s", verdict,
                 100.0 * r->eff.rho, base);
    else
        snprintf(detail, sizeof detail, "verdict %s (%s)", verdict, kg_report_state_name(r->state));
    int failed = r->gate_why[0] != '\0';
    if (failed) {
        char type[160];
        failure_type(r->gate_why, type, sizeof type);
        kg_sb_puts(tc, "      <failure type=\"");
        xml_text(tc, type);
        kg_sb_puts(tc, "\" message=\"");
        xml_text(tc, r->gate_why);
        kg_sb_puts(tc, "\">");
        xml_text(tc, detail);
        kg_sb_puts(tc, "</failure>\n");
    } else {
        kg_sb_puts(tc, "      <system-out>");
        xml_text(tc, detail);
        kg_sb_puts(tc, "</system-out>\n");
    }
    kg_sb_puts(tc, "    </testcase>\n");
    return failed;
}

/* The test cases of a campaign: one per gated pair, and one for a gate
 * that failed for the campaign (no process, the order check, the control,
 * an invalid host) while every pair passed. */
static void junit_cases(kg_sb *tc, const char *name, const kg_analysis *an, int *tests, int *failures)
{
    int pair_failed = 0;
    for (int i = 0; i < an->ncases * an->narms; i++) {
        const kg_arm_result *r = &an->res[i];
        if (!r->gated) continue;
        (*tests)++;
        if (junit_pair(tc, name, an->plan, r)) {
            (*failures)++;
            pair_failed = 1;
        }
    }
    if (!an->gate_pass && !pair_failed) {
        (*tests)++;
        (*failures)++;
        classname(tc, name, NULL);
        kg_sb_puts(tc, "campaign gate\" time=\"0\">\n      <failure type=\"gate\" message=\"");
        xml_text(tc, an->gate_reason);
        kg_sb_puts(tc, "\"/>\n    </testcase>\n");
    }
}

/* <testsuites> and its one <testsuite>, around the test cases tc. */
static void junit_suite(kg_sb *sb, const kg_summary_in *in, const char *name, const kg_analysis *an,
                        const char *tc, int tests, int failures, int errors)
{
    char ts[32], host[256] = "localhost";
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%S", &tm);
    kg_sb_puts(sb, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"kgate\" ");
    kg_sb_printf(sb, "tests=\"%d\" failures=\"%d\" errors=\"%d\" time=\"%.3f\">\n", tests, failures, errors,
                 in->seconds);
    kg_sb_puts(sb, "  <testsuite name=\"kgate ");
    xml_text(sb, in->command);
    kg_sb_puts(sb, " ");
    xml_text(sb, name);
    if (gethostname(host, sizeof host) != 0) snprintf(host, sizeof host, "localhost");
    host[sizeof host - 1] = '\0';
    kg_sb_printf(sb, "\" tests=\"%d\" failures=\"%d\" errors=\"%d\" skipped=\"0\" time=\"%.3f\" timestamp=\"%s\" "
                 "hostname=\"", tests, failures, errors, in->seconds, ts);
    xml_text(sb, host);
    kg_sb_puts(sb, "\">\n    <properties>\n      <property name=\"kgate\" value=\"");
    xml_text(sb, kg_version());
    kg_sb_puts(sb, "\"/>\n      <property name=\"evidence\" value=\"");
    xml_text(sb, in->dir ? in->dir : "");
    kg_sb_puts(sb, "\"/>\n");
    if (an != NULL) {
        kg_sb_puts(sb, "      <property name=\"plan_sha256\" value=\"");
        xml_text(sb, an->plan->hash);
        kg_sb_printf(sb, "\"/>\n      <property name=\"gate\" value=\"%s: ", an->gate_pass ? "PASS" : "FAIL");
        xml_text(sb, an->gate_reason);
        kg_sb_puts(sb, "\"/>\n");
    }
    kg_sb_puts(sb, "    </properties>\n");
    if (tc != NULL) kg_sb_puts(sb, tc);
    kg_sb_puts(sb, "  </testsuite>\n</testsuites>\n");
}

int kg_cli_junit(const char *file, const kg_summary_in *in, kg_err *err)
{
    kg_sb tc = { 0 }, sb = { 0 };
    int tests = 0, failures = 0, errors = 0;
    const kg_analysis *an = in->error == NULL && in->an != NULL && in->an->plan != NULL ? in->an : NULL;
    const char *name = an != NULL ? an->plan->campaign.name : "kgate";
    if (an != NULL) {
        junit_cases(&tc, name, an, &tests, &failures);
    } else {
        /* the campaign did not run to a verdict: one error case says why */
        tests = errors = 1;
        classname(&tc, name, NULL);
        kg_sb_puts(&tc, "campaign\" time=\"0\">\n      <error type=\"kgate\" message=\"");
        xml_text(&tc, in->error != NULL ? in->error : "no analysis");
        kg_sb_puts(&tc, "\"/>\n    </testcase>\n");
    }
    junit_suite(&sb, in, name, an, tc.buf, tests, failures, errors);
    int oom = tc.oom || sb.oom, rc;
    kg_sb_free(&tc);
    if (oom) rc = kg_errorf(err, KG_ENOMEM, "out of memory writing %s", file);
    else rc = kg_write_atomic(file, sb.buf, sb.len, err);
    kg_sb_free(&sb);
    return rc;
}

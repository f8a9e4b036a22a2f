/* summary.c: the machine-readable outputs of `kgate run`: --json, one
 * JSON object on stdout, and --junit FILE, JUnit XML for CI systems.
 * Both are read from the evidence folder's results.json (so they say
 * what the folder says) and its plan.kg (the campaign's name). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <jansson.h>
#include "kgate/plan.h"
#include "evidence/attest.h"
#include "base/safefs.h"
#include "summary.h"
#include "base/util.h"

/* results.json of dir, parsed; NULL with err set */
static json_t *load_results(const char *dir, kg_err *err)
{
    char path[KG_PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/results.json", dir);
    json_error_t je;
    json_t *j = json_load_file(path, 0, &je);
    if (j == NULL || !json_is_object(j)) {
        json_decref(j);
        kg_errorf(err, KG_EIO, "%s:%d: cannot read the results (%s): run kgate report %s to write them again", path,
                  je.line, je.text, dir);
    }
    return j;
}

/* The campaign's name from plan.kg's [campaign] section, or "kgate". */
static void campaign_name(const char *dir, char *name, size_t cap)
{
    char path[KG_PATH_MAX + 32], *text = NULL;
    snprintf(name, cap, "kgate");
    snprintf(path, sizeof path, "%s/plan.kg", dir);
    if (kg_read_file(path, &text, NULL, NULL) != KG_OK) return;
    const char *p = strstr(text, "\nname = ");
    if (strncmp(text, "name = ", 7) == 0) p = text - 1;
    if (p != NULL) {
        p += 8;
        size_t n = strcspn(p, "\n");
        snprintf(name, cap, "%.*s", (int)(n < cap ? n : cap - 1), p);
    }
    free(text);
}

static json_t *num_or_null(json_t *v)
{
    return json_is_number(v) ? json_real(json_number_value(v)) : json_null();
}

static json_t *str_of(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    return json_is_string(v) ? json_string(json_string_value(v)) : json_null();
}

int kg_cli_summary_json(FILE *out, const kg_summary_in *in, kg_err *err)
{
    json_t *s = json_object();
    json_object_set_new(s, "kgate", json_string(kg_version()));
    json_object_set_new(s, "command", json_string(in->command));
    json_object_set_new(s, "plan", in->plan_path ? json_string(in->plan_path) : json_null());
    json_object_set_new(s, "evidence", in->dir && in->dir[0] ? json_string(in->dir) : json_null());
    json_object_set_new(s, "exit_status", json_integer(in->exit_status));
    if (in->error != NULL) {
        /* no campaign to summarise: what stopped it */
        json_object_set_new(s, "error", json_string(in->error));
        json_object_set_new(s, "gate", json_null());
        json_object_set_new(s, "verdicts", json_array());
    } else {
        json_t *r = load_results(in->dir, err);
        if (r == NULL) {
            json_decref(s);
            return err->code;
        }
        json_object_set_new(s, "schema", json_incref(json_object_get(r, "schema")));
        json_object_set_new(s, "plan_sha256", str_of(r, "plan_sha256"));
        json_t *g = json_object();
        json_object_set_new(g, "pass", json_boolean(json_is_true(json_object_get(r, "gate_pass"))));
        json_object_set_new(g, "reason", str_of(r, "gate_reason"));
        json_object_set_new(g, "invalid", json_boolean(json_is_true(json_object_get(r, "invalid"))));
        json_object_set_new(g, "control_valid", json_boolean(json_is_true(json_object_get(r, "control_valid"))));
        json_object_set_new(g, "order_ok", json_boolean(json_is_true(json_object_get(r, "order_ok"))));
        json_object_set_new(s, "gate", g);
        json_t *pr = json_object();
        json_object_set_new(pr, "accepted", json_incref(json_object_get(r, "processes_accepted")));
        json_object_set_new(pr, "excluded", json_incref(json_object_get(r, "processes_excluded")));
        json_object_set_new(s, "processes", pr);
        json_t *vs = json_array(), *rows = json_object_get(r, "results");
        size_t i;
        json_t *row;
        json_array_foreach(rows, i, row) {
            json_t *v = json_object(), *eff = json_object_get(row, "effect");
            json_object_set_new(v, "case", str_of(row, "case"));
            json_object_set_new(v, "arm", str_of(row, "arm"));
            json_object_set_new(v, "role", str_of(row, "role"));
            json_object_set_new(v, "state", str_of(row, "state"));
            json_object_set_new(v, "verdict", str_of(row, "verdict"));
            json_object_set_new(v, "baseline", str_of(row, "baseline"));
            json_object_set_new(v, "median_ns", num_or_null(json_object_get(row, "median_ns")));
            json_object_set_new(v, "reduction", num_or_null(json_object_get(eff, "reduction")));
            json_object_set_new(v, "reduction_lower", num_or_null(json_object_get(eff, "reduction_lower")));
            json_object_set_new(v, "reduction_upper", num_or_null(json_object_get(eff, "reduction_upper")));
            json_object_set_new(v, "gated", json_boolean(json_is_true(json_object_get(row, "gated"))));
            json_object_set_new(v, "gate_fail", str_of(row, "gate_fail"));
            json_array_append_new(vs, v);
        }
        json_object_set_new(s, "verdicts", vs);
        json_decref(r);
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

static const char *jstr(json_t *o, const char *key, const char *dflt)
{
    json_t *v = json_object_get(o, key);
    return json_is_string(v) ? json_string_value(v) : dflt;
}

int kg_cli_junit(const char *file, const kg_summary_in *in, kg_err *err)
{
    char name[KG_NAME_MAX + 8], ts[32];
    kg_sb tc = { 0 }, sb = { 0 };
    int tests = 0, failures = 0, errors = 0, skipped = 0;
    json_t *r = NULL;
    if (in->error == NULL) {
        if ((r = load_results(in->dir, err)) == NULL) return err->code;
        campaign_name(in->dir, name, sizeof name);
    } else {
        snprintf(name, sizeof name, "kgate");
    }
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%S", &tm);
    if (in->error != NULL) {
        /* the campaign did not run to a verdict: one error case says why */
        tests = errors = 1;
        kg_sb_puts(&tc, "    <testcase classname=\"kgate.");
        xml_text(&tc, name);
        kg_sb_puts(&tc, "\" name=\"campaign\" time=\"0\">\n      <error type=\"kgate\" message=\"");
        xml_text(&tc, in->error);
        kg_sb_puts(&tc, "\"/>\n    </testcase>\n");
    } else {
        json_t *rows = json_object_get(r, "results"), *row;
        size_t i;
        int row_failed = 0;
        json_array_foreach(rows, i, row) {
            if (!json_is_true(json_object_get(row, "gated"))) continue;
            tests++;
            const char *why = jstr(row, "gate_fail", NULL), *verdict = jstr(row, "verdict", "");
            json_t *eff = json_object_get(row, "effect"), *med = json_object_get(row, "median_ns");
            kg_sb_puts(&tc, "    <testcase classname=\"kgate.");
            xml_text(&tc, name);
            kg_sb_puts(&tc, ".");
            xml_text(&tc, jstr(row, "case", ""));
            kg_sb_puts(&tc, "\" name=\"");
            xml_text(&tc, jstr(row, "arm", ""));
            /* one operation's median time, the arm's own cost */
            kg_sb_printf(&tc, "\" time=\"%.9f\">\n", json_is_number(med) ? json_number_value(med) * 1e-9 : 0.0);
            char detail[512];
            if (json_is_object(eff))
                snprintf(detail, sizeof detail, "verdict %s; reduction %+.2f%% [%+.2f%%, %+.2f%%] against %s", verdict,
                         100.0 * json_number_value(json_object_get(eff, "reduction")),
                         100.0 * json_number_value(json_object_get(eff, "reduction_lower")),
                         100.0 * json_number_value(json_object_get(eff, "reduction_upper")), jstr(row, "baseline", "?"));
            else
                snprintf(detail, sizeof detail, "verdict %s (%s)", verdict, jstr(row, "state", ""));
            if (why != NULL) {
                failures++;
                row_failed = 1;
                kg_sb_puts(&tc, "      <failure type=\"");
                xml_text(&tc, verdict);
                kg_sb_puts(&tc, "\" message=\"");
                xml_text(&tc, why);
                kg_sb_puts(&tc, "\">");
                xml_text(&tc, detail);
                kg_sb_puts(&tc, "</failure>\n");
            } else {
                kg_sb_puts(&tc, "      <system-out>");
                xml_text(&tc, detail);
                kg_sb_puts(&tc, "</system-out>\n");
            }
            kg_sb_puts(&tc, "    </testcase>\n");
        }
        /* a gate that failed for the campaign (no process, the order check,
         * the control, an invalid host) with every pair passing */
        if (!json_is_true(json_object_get(r, "gate_pass")) && !row_failed) {
            tests++;
            failures++;
            kg_sb_puts(&tc, "    <testcase classname=\"kgate.");
            xml_text(&tc, name);
            kg_sb_puts(&tc, "\" name=\"campaign gate\" time=\"0\">\n      <failure type=\"gate\" message=\"");
            xml_text(&tc, jstr(r, "gate_reason", "the gate failed"));
            kg_sb_puts(&tc, "\"/>\n    </testcase>\n");
        }
    }
    kg_sb_puts(&sb, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"kgate\" ");
    kg_sb_printf(&sb, "tests=\"%d\" failures=\"%d\" errors=\"%d\" time=\"%.3f\">\n", tests, failures, errors,
                 in->seconds);
    kg_sb_puts(&sb, "  <testsuite name=\"kgate ");
    xml_text(&sb, in->command);
    kg_sb_puts(&sb, " ");
    xml_text(&sb, name);
    char host[256] = "localhost";
    if (gethostname(host, sizeof host) != 0) snprintf(host, sizeof host, "localhost");
    host[sizeof host - 1] = '\0';
    kg_sb_printf(&sb, "\" tests=\"%d\" failures=\"%d\" errors=\"%d\" skipped=\"%d\" time=\"%.3f\" timestamp=\"%s\" "
                 "hostname=\"", tests, failures, errors, skipped, in->seconds, ts);
    xml_text(&sb, host);
    kg_sb_puts(&sb, "\">\n    <properties>\n      <property name=\"kgate\" value=\"");
    xml_text(&sb, kg_version());
    kg_sb_puts(&sb, "\"/>\n      <property name=\"evidence\" value=\"");
    xml_text(&sb, in->dir ? in->dir : "");
    kg_sb_puts(&sb, "\"/>\n");
    if (r != NULL) {
        kg_sb_puts(&sb, "      <property name=\"plan_sha256\" value=\"");
        xml_text(&sb, jstr(r, "plan_sha256", ""));
        kg_sb_puts(&sb, "\"/>\n      <property name=\"gate\" value=\"");
        xml_text(&sb, json_is_true(json_object_get(r, "gate_pass")) ? "PASS" : "FAIL");
        kg_sb_puts(&sb, ": ");
        xml_text(&sb, jstr(r, "gate_reason", ""));
        kg_sb_puts(&sb, "\"/>\n");
    }
    kg_sb_puts(&sb, "    </properties>\n");
    if (tc.buf != NULL) kg_sb_puts(&sb, tc.buf);
    kg_sb_puts(&sb, "  </testsuite>\n</testsuites>\n");
    json_decref(r);
    kg_sb_free(&tc);
    int rc = KG_OK;
    if (sb.oom) rc = kg_errorf(err, KG_ENOMEM, "out of memory writing %s", file);
    else rc = kg_write_atomic(file, sb.buf, sb.len, err);
    kg_sb_free(&sb);
    return rc;
}

/* test_shard.c: the shard spec, the case and process assignments
 * (shard.h), the plan's shard key, and the device model of a description
 * (kg_backend_device_model). */
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "kgate/backend.h"
#include "kgate/plan.h"
#include "plan/shard.h"

static const char plan_text[] =
    "[campaign]\nname = s\nbackend = fake\nquiet = 0\n"
    "[case a]\nop = rowsum\ndtype = f32\nM = 4\nN = 16\n"
    "[case b]\nop = rowsum\ndtype = f32\nM = 8\nN = 16\n"
    "[case c]\nop = rowsum\ndtype = f32\nM = 4\nN = 32\n"
    "[case d]\nop = rowsum\ndtype = f32\nM = 8\nN = 32\n"
    "[case e]\nop = rowsum\ndtype = f32\nM = 2\nN = 32\n"
    "[arm base]\nop = rowsum\nrole = baseline\nsource = base.c\n"
    "[arm cand]\nop = rowsum\nrole = candidate\nsource = cand.c\n";

int main(void)
{
    kg_err err = { 0 };
    int i = -1, n = -1;
    CHECK(kg_shard_parse("2/5", &i, &n, &err) == KG_OK && i == 2 && n == 5);
    CHECK(kg_shard_parse("0/1", &i, &n, &err) == KG_OK && i == 0 && n == 1);
    CHECK(kg_shard_parse("5/5", &i, &n, &err) == KG_EUSAGE);
    CHECK_STR_CONTAINS(err.msg, "[0, 4]");
    CHECK(kg_shard_parse("1/0", &i, &n, &err) == KG_EUSAGE);
    kg_err_clear(&err);
    CHECK(kg_shard_parse("1", &i, &n, &err) == KG_EUSAGE);
    CHECK_STR_CONTAINS(err.msg, "expected I/N");
    CHECK(kg_shard_parse("-1/2", &i, &n, &err) == KG_EUSAGE);
    CHECK(kg_shard_parse("1/2x", &i, &n, &err) == KG_EUSAGE);
    CHECK(kg_shard_parse("1/99999", &i, &n, &err) == KG_EUSAGE);

    kg_plan *plan = NULL;
    kg_err_clear(&err);
    CHECK(kg_plan_parse(plan_text, strlen(plan_text), "t.kg", ".", &plan, &err) == KG_OK);
    if (plan == NULL) return kg_test_finish("test_shard");
    CHECK(plan->ncases == 5);
    CHECK(plan->campaign.devices_any == 0);
    /* every case in exactly one shard, round-robin in canonical order, for every N */
    for (int nn = 1; nn <= 5; nn++) {
        int seen[5] = { 0 };
        for (int s = 0; s < nn; s++) {
            unsigned char on[5];
            int k = kg_shard_cases(plan, s, nn, on, &err);
            CHECK(k > 0);
            int count = 0;
            for (int c = 0; c < 5; c++) {
                seen[c] += on[c];
                count += on[c];
                CHECK(on[c] == (c % nn == s));
                CHECK(!on[c] || kg_shard_of_case(c, nn) == s);
            }
            CHECK(count == k);
        }
        for (int c = 0; c < 5; c++) CHECK(seen[c] == 1);
    }
    unsigned char on[5];
    kg_err_clear(&err);
    /* more shards than cases: by process (auto), every case in each; one
     * shard per pair of processes at most */
    CHECK(kg_shard_by(plan, 5) == KG_SHARD_BY_CASE);
    CHECK(kg_shard_by(plan, 6) == KG_SHARD_BY_PROCESS);
    CHECK(plan->campaign.processes == 2);
    CHECK(kg_shard_cases(plan, 1, 6, on, &err) == 5);
    CHECK(on[0] && on[1] && on[2] && on[3] && on[4]);
    CHECK(kg_shard_cases(plan, 5, 6, on, &err) == KG_EUSAGE);
    CHECK_STR_CONTAINS(err.msg, "has no process");
    CHECK_STR_CONTAINS(err.msg, "lower N to at most 2");
    CHECK(kg_shard_cases(plan, 2, 2, on, &err) == KG_EUSAGE);
    /* slots dealt in pairs, round-robin: each slot in one shard, each shard
     * with as many forward as reverse slots; the seeds' process index */
    for (int nn = 1; nn <= 6; nn++) {
        int fwd[6] = { 0 }, rev[6] = { 0 };
        for (int sl = 0; sl < 24; sl++) {
            int sh = kg_shard_of_slot(sl, nn);
            CHECK(sh >= 0 && sh < nn && sh == (sl / 2) % nn);
            if (sl % 2 == 0) fwd[sh]++;
            else rev[sh]++;
        }
        for (int sh = 0; sh < nn; sh++) CHECK(fwd[sh] == rev[sh]);
    }
    CHECK(kg_shard_seq(7, 0, 12) == 7);
    CHECK(kg_shard_seq(7, 2, 12) == 31);
    /* the canonical form leaves devices and shard out at their defaults */
    CHECK(strstr(plan->canonical, "devices") == NULL);
    CHECK(strstr(plan->canonical, "shard") == NULL);
    kg_plan_free(plan);
    /* shard = case keeps cases even past their number; shard = process deals processes at any N */
    const char *keys[] = { "shard = case", "shard = process" };
    for (int k = 0; k < 2; k++) {
        char with[sizeof plan_text + 32];
        snprintf(with, sizeof with, "[campaign]\n%s\n%s", keys[k], plan_text + strlen("[campaign]\n"));
        kg_err_clear(&err);
        CHECK(kg_plan_parse(with, strlen(with), "t.kg", ".", &plan, &err) == KG_OK);
        if (plan == NULL) continue;
        CHECK(strstr(plan->canonical, keys[k]) != NULL);
        CHECK(kg_shard_by(plan, 6) == (k == 0 ? KG_SHARD_BY_CASE : KG_SHARD_BY_PROCESS));
        CHECK(kg_shard_by(plan, 2) == (k == 0 ? KG_SHARD_BY_CASE : KG_SHARD_BY_PROCESS));
        kg_err_clear(&err);
        CHECK(kg_shard_cases(plan, 5, 6, on, &err) == KG_EUSAGE);
        CHECK_STR_CONTAINS(err.msg, k == 0 ? "has no case" : "has no process");
        kg_plan_free(plan);
    }
    const char bad[] = "[campaign]\nshard = slot\n";
    char badplan[sizeof plan_text + 32];
    snprintf(badplan, sizeof badplan, "%s%s", bad, plan_text + strlen("[campaign]\n"));
    kg_err_clear(&err);
    plan = NULL;
    CHECK(kg_plan_parse(badplan, strlen(badplan), "t.kg", ".", &plan, &err) != KG_OK);
    CHECK_STR_CONTAINS(err.msg, "shard");
    kg_plan_free(plan);
    char any[sizeof plan_text + 32];
    snprintf(any, sizeof any, "[campaign]\ndevices = any\n%s", plan_text + strlen("[campaign]\n"));
    kg_err_clear(&err);
    CHECK(kg_plan_parse(any, strlen(any), "t.kg", ".", &plan, &err) == KG_OK);
    if (plan != NULL) {
        CHECK(plan->campaign.devices_any == 1);
        CHECK(strstr(plan->canonical, "devices = any") != NULL);
        kg_plan_free(plan);
    }

    /* device models: what names one device is cut */
    char m[128];
    kg_backend_device_model("NVIDIA H200 (sm_90, 132 SMs, L2 60 MiB, 140 GiB, driver 550.54, UUID GPU-1234)", m, sizeof m);
    CHECK(strcmp(m, "NVIDIA H200 (sm_90, 132 SMs, L2 60 MiB, 140 GiB") == 0);
    kg_backend_device_model("scripted timings (no hardware), model x, fake device 3", m, sizeof m);
    CHECK(strcmp(m, "scripted timings (no hardware), model x") == 0);
    kg_backend_device_model("scripted timings (no hardware)", m, sizeof m);
    CHECK(strcmp(m, "scripted timings (no hardware)") == 0);
    kg_backend_device_model("abcdef", m, 4);
    CHECK(strcmp(m, "abc") == 0);
    return kg_test_finish("test_shard");
}

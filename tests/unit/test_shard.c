/* test_shard.c: the shard spec and the case assignment (shard.h), and the
 * device model of a description (kg_backend_device_model). */
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
    CHECK(kg_shard_cases(plan, 5, 6, on, &err) == KG_EUSAGE);
    CHECK_STR_CONTAINS(err.msg, "lower N to at most 5");
    CHECK(kg_shard_cases(plan, 2, 2, on, &err) == KG_EUSAGE);
    /* the canonical form leaves devices out at its default, and keeps "any" */
    CHECK(strstr(plan->canonical, "devices") == NULL);
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

/* test_ledger.c: a campaign's ledger (evidence/ledger.h) and the
 * attempts numbered in it under its lock (run/attempt.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "check.h"
#include "evidence/ledger.h"
#include "run/attempt.h"
#include "base/util.h"

static char *slurp(const char *path)
{
    char *t = NULL;
    kg_err e = { 0 };
    return kg_read_file(path, &t, NULL, &e) == KG_OK ? t : NULL;
}

int main(void)
{
    kg_err err = { 0 };
    /* ids: made fresh, 32 hex digits; what an id may hold */
    char a[KG_CAMPAIGN_ID_MAX + 1], b[KG_CAMPAIGN_ID_MAX + 1];
    CHECK(kg_campaign_id_new(a, &err) == KG_OK && kg_campaign_id_new(b, &err) == KG_OK);
    CHECK(strlen(a) == 32 && strcmp(a, b) != 0 && kg_campaign_id_ok(a));
    CHECK(kg_campaign_id_ok("run-7_b.2"));
    CHECK(!kg_campaign_id_ok("") && !kg_campaign_id_ok("a b") && !kg_campaign_id_ok("a\nb"));
    CHECK(!kg_campaign_id_ok("0123456789012345678901234567890123456789012345678901234567890123456789"));

    /* attempts numbered under the lock: shard 1 twice, shard 0 once */
    char dir[] = "/tmp/kgate-ledger-XXXXXX", path[64];
    CHECK(mkdtemp(dir) != NULL);
    snprintf(path, sizeof path, "%s/L", dir);
    int at = 0;
    char *pre = NULL;
    CHECK(kg_attempt_begin(path, "c", 1, 2, "0x01", &at, &pre, &err) == KG_OK && at == 1);
    free(pre);
    CHECK(kg_attempt_end(path, "c", 1, 2, 1, "0000000000000000000000000000000000000000000000000000000000000000", &err) ==
          KG_OK);
    CHECK(kg_attempt_begin(path, "c", 0, 2, "0x02", &at, &pre, &err) == KG_OK && at == 1);
    free(pre);
    CHECK(kg_attempt_begin(path, "c", 1, 2, "0x03", &at, &pre, &err) == KG_OK && at == 2);
    /* the prefix is the whole ledger through the new line */
    char *text = slurp(path);
    CHECK(text != NULL && pre != NULL && strcmp(text, pre) == 0);
    free(pre);
    kg_ledger_line *l = NULL;
    int n = 0;
    CHECK(kg_ledger_parse("L", text, strlen(text), &l, &n, &err) == KG_OK && n == 4);
    CHECK(l[1].ended && l[1].shard == 1 && l[3].attempt == 2 && strcmp(l[3].salt, "0x03") == 0);
    CHECK(kg_ledger_next_attempt(l, n, 1, 2) == 3 && kg_ledger_next_attempt(l, n, 0, 2) == 2 &&
          kg_ledger_next_attempt(l, n, 0, 3) == 1);
    free(l);
    /* another campaign's run on this ledger is refused */
    CHECK(kg_attempt_begin(path, "d", 0, 2, "0x04", &at, &pre, &err) == KG_EUSAGE);
    CHECK_STR_CONTAINS(err.msg, "belongs to campaign c");

    /* the chain: a changed line breaks the next; a removed line breaks
     * the one after it; a cut line, a foreign line, extra spaces */
    char *t2 = strdup(text);
    char *p = strstr(t2, "salt 0x01");
    p[8] = '9';
    memset(&err, 0, sizeof err);
    CHECK(kg_ledger_parse("L", t2, strlen(t2), &l, &n, &err) == KG_EINPUT && l == NULL);
    CHECK_STR_CONTAINS(err.msg, "L:2: its prev is not the sha256");
    free(t2);
    t2 = strdup(text);
    char *nl = strchr(t2, '\n');
    memmove(t2, nl + 1, strlen(nl + 1) + 1);
    memset(&err, 0, sizeof err);
    CHECK(kg_ledger_parse("L", t2, strlen(t2), &l, &n, &err) == KG_EINPUT);
    CHECK_STR_CONTAINS(err.msg, "L:1: its prev");
    free(t2);
    memset(&err, 0, sizeof err);
    CHECK(kg_ledger_parse("L", text, strlen(text) - 1, &l, &n, &err) == KG_EINPUT);
    CHECK_STR_CONTAINS(err.msg, "no newline");
    memset(&err, 0, sizeof err);
    CHECK(kg_ledger_parse("L", "hello\n", 6, &l, &n, &err) == KG_EINPUT);
    CHECK_STR_CONTAINS(err.msg, "not a ledger line");
    char line[KG_LEDGER_LINE_MAX], sp[KG_LEDGER_LINE_MAX + 2];
    kg_ledger_start_line(line, sizeof line, "c", 0, 1, 1, "2026-12-04T00:00:00Z", "0x05", "", 0);
    snprintf(sp, sizeof sp, "%s\n", line);
    CHECK(kg_ledger_parse("L", sp, strlen(sp), &l, &n, &err) == KG_OK && n == 1);
    free(l);
    char *two = strstr(sp, " shard");
    memmove(two + 1, two, strlen(two) + 1); /* two spaces before "shard" */
    CHECK(kg_ledger_parse("L", sp, strlen(sp), &l, &n, &err) == KG_EINPUT);
    free(text);
    unlink(path);
    rmdir(dir);
    return kg_test_finish("test_ledger");
}

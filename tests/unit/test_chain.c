/* test_chain.c: the chain link of processes.csv (chain.h) and its rows'
 * round trip through the writer and the strict reader (rows.c). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "check.h"
#include "evidence/chain.h"
#include "base/util.h"

static void rec(kg_proc_rec *r, int slot)
{
    memset(r, 0, sizeof *r);
    r->dir = slot % 2;
    snprintf(r->status, sizeof r->status, "ok");
    snprintf(r->reason, sizeof r->reason, "a \"quoted\", reason");
    r->seconds = 0.057;
    snprintf(r->start_utc, sizeof r->start_utc, "2026-12-01T17:53:08Z");
    r->accepted = 1;
    r->slot = slot;
    r->wait_s = 0.001;
    r->setup_s = 0.010;
    r->checks_s = 0.0;
    r->timed_s = 1.25;
}

int main(void)
{
    char tmpl[] = "/tmp/kgate-test-chain-XXXXXX";
    CHECK(mkdtemp(tmpl) != NULL);
    kg_err err = { 0 };
    int dirfd = kg_open_dir(AT_FDCWD, tmpl, 0, &err);
    CHECK(dirfd >= 0);
    int rawfd = kg_open_dir(dirfd, "raw", 1, &err);
    CHECK(rawfd >= 0);
    CHECK(kg_write_atomic_at(rawfd, "proc-000.csv", NULL, "x\n", 2, &err) == KG_OK);
    close(rawfd);
    const char *plan_hash = "9d78415269903d03e1cb878d59b0da8081b1733292046b718c86cb2ca1e6870a";
    kg_proc_rec r[2];
    rec(&r[0], 0);
    rec(&r[1], 1);
    CHECK(kg_chain_seal(dirfd, plan_hash, r, 2, &err) == KG_OK);
    char hex[65];
    kg_sha256_hex("x\n", 2, hex);
    CHECK(strcmp(r[0].sha[0], hex) == 0);     /* raw of process 0 */
    CHECK(strcmp(r[0].sha[1], "-") == 0);     /* no checks file */
    CHECK(strcmp(r[1].sha[0], "-") == 0);
    /* the link: sha256(previous || row text up to the chain) */
    kg_sb sb = { 0 };
    kg_sb_printf(&sb, "%s", r[0].chain);
    kg_rows_put_proc_text(&sb, 1, &r[1]);
    kg_sha256_hex(sb.buf, sb.len, hex);
    CHECK(strcmp(hex, r[1].chain) == 0);
    kg_sb_free(&sb);
    /* any field changes the link */
    char link[65];
    kg_proc_rec x = r[1];
    x.timed_s = 1.251;
    kg_chain_link(r[0].chain, 1, &x, link);
    CHECK(strcmp(link, r[1].chain) != 0);
    kg_chain_link(r[0].chain, 2, &r[1], link);
    CHECK(strcmp(link, r[1].chain) != 0);
    /* written and read back: the same links (what --resume re-checks) */
    char path[256];
    snprintf(path, sizeof path, "%s/processes.csv", tmpl);
    CHECK(kg_evidence_write_processes(dirfd, tmpl, r, 2, &err) == KG_OK);
    kg_proc_rec *back = NULL;
    int n = 0, legacy = 0;
    CHECK(kg_rows_read_procs(path, &back, &n, &legacy, &err) == KG_OK);
    CHECK(n == 2 && !legacy);
    if (n == 2) {
        CHECK(strcmp(back[1].chain, r[1].chain) == 0 && strcmp(back[0].sha[0], r[0].sha[0]) == 0);
        CHECK(kg_chain_seal(dirfd, plan_hash, back, 2, &err) == KG_OK);
        /* an edited row that kept its link is refused */
        back[0].seconds = 0.5;
        kg_err serr = { 0 };
        CHECK(kg_chain_seal(dirfd, plan_hash, back, 2, &serr) == KG_EINPUT);
        CHECK_STR_CONTAINS(serr.msg, "processes.csv:2");
    }
    free(back);
    /* a link that is not 64 hex digits is not read */
    FILE *fp = fopen(path, "r+");
    CHECK(fp != NULL);
    if (fp != NULL) {
        fseek(fp, -3, SEEK_END);
        fputs("X\n", fp);   /* the last link's last digit */
        fclose(fp);
    }
    back = NULL;
    kg_err rerr = { 0 };
    CHECK(kg_rows_read_procs(path, &back, &n, &legacy, &rerr) == KG_EINPUT);
    CHECK_STR_CONTAINS(rerr.msg, "column chain");
    free(back);
    close(dirfd);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpl);
    CHECK(system(cmd) == 0);
    return kg_test_finish("chain");
}

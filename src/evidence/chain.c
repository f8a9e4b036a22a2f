/* chain.c: the hash chain of processes.csv and the copies of the arms'
 * sources (chain.h); verify's checks of them are src/verify/chain_check.c. */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "evidence/chain.h"
#include "plan/protocol.h"
#include "base/util.h"

/* The files of process p, in the order of kg_proc_rec.sha. */
void kg_chain_file_name(int dirfd, int i, int p, char *buf, size_t cap)
{
    static const char *const dir[KG_PROC_NFILES] = { "raw", "checks", "outputs", "outputs", "telemetry", "telemetry" };
    static const char *const ext[KG_PROC_NFILES] = { "csv.gz", "csv", "bin", "csv", "csv", "csv" };
    if (i == 0) kg_rows_raw_name(dirfd, NULL, p, buf, cap);   /* .csv in a folder of schema 8 or older */
    else snprintf(buf, cap, "%s/%s-%03d.%s", dir[i], i == 5 ? "resources" : "proc", p, ext[i]);
}

/* The SHA-256 of the regular file rel under dirfd (not followed through
 * a link): 1, 0 when there is none, -1 (errno) when it cannot be read. */
int kg_chain_hash_at(int dirfd, const char *rel, char hex[65])
{
    int fd = openat(dirfd, rel, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return errno == ENOENT ? 0 : -1;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        errno = EINVAL;
        return -1;
    }
    int rc = kg_sha256_fd(fd, rel, hex, NULL);
    close(fd);
    if (rc != KG_OK) {
        errno = EIO;
        return -1;
    }
    return 1;
}

void kg_chain_link(const char *prev, int index, const kg_proc_rec *r, char out[65])
{
    kg_sb sb = { 0 };
    kg_sb_printf(&sb, "%.64s", prev);
    kg_rows_put_proc_text(&sb, index, r);
    kg_sha256_hex(sb.buf != NULL ? sb.buf : "", sb.len, out);
    kg_sb_free(&sb);
}

int kg_chain_seal(int dirfd, const char *plan_hash, kg_proc_rec *r, int n, kg_err *err)
{
    for (int p = 0; p < n; p++) {
        if (r[p].sha[0][0] != '\0') continue;
        for (int i = 0; i < KG_PROC_NFILES; i++) {
            char rel[64];
            kg_chain_file_name(dirfd, i, p, rel, sizeof rel);
            int h = kg_chain_hash_at(dirfd, rel, r[p].sha[i]);
            if (h < 0) return kg_errorf(err, KG_EIO, "%s: cannot read it to record its digest: %s", rel, strerror(errno));
            if (h == 0) snprintf(r[p].sha[i], sizeof r[p].sha[i], "-");
        }
    }
    /* a row read back (--resume) keeps its link, which must follow from
     * the rows before it: a folder edited since is not continued */
    const char *prev = plan_hash;
    for (int p = 0; p < n; p++) {
        char link[65];
        kg_chain_link(prev, p, &r[p], link);
        if (r[p].chain[0] == '\0')
            snprintf(r[p].chain, sizeof r[p].chain, "%s", link);
        else if (strcmp(link, r[p].chain) != 0)
            return kg_errorf(err, KG_EINPUT, "processes.csv:%d: its chain does not follow from the rows before it "
                             "and the plan hash: the folder was edited since it was written (kgate verify says "
                             "more); it cannot be continued", p + 2);
        prev = r[p].chain;
    }
    return KG_OK;
}

void kg_chain_source_copy(const kg_plan *plan, int a, char *buf, size_t cap)
{
    buf[0] = '\0';
    if (a < 0 || a >= plan->narms) return;
    /* a precompiled arm keeps its image the same way */
    const char *file = kg_arm_is_image(&plan->arms[a]) ? plan->arms[a].image : plan->arms[a].source;
    if (file[0] == '\0') return;
    const char *base = strrchr(file, '/');
    base = base != NULL ? base + 1 : file;
    const char *ext = strrchr(base, '.');
    if (ext == NULL || strlen(ext) > 8 || strspn(ext + 1, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") !=
                                             strlen(ext + 1))
        ext = ".src";   /* never a bare name: "." and ".." are names a plan allows */
    snprintf(buf, cap, "sources/%s%s", plan->arms[a].name, ext);
}

/* text written atomically as rel ("sources/NAME") in the folder (dirfd,
 * shown as dir), its sources/ opened once into *sfd */
static int keep_source(int dirfd, int *sfd, const char *dir, const char *rel, const char *text, size_t len,
                       kg_err *err)
{
    char shown[KG_PATH_MAX + 160];
    if (*sfd < 0 && (*sfd = kg_open_dir(dirfd, "sources", 1, err)) < 0) {
        int rc = *sfd;
        *sfd = -1;
        return rc;
    }
    snprintf(shown, sizeof shown, "%s/%s", dir, rel);
    return kg_write_atomic_at(*sfd, rel + strlen("sources/"), shown, text, len, err);
}

/* Each python: call's file as sources/call-ARM.py, the bytes the plan
 * hashed (call_sha256): a file edited since the plan was read is refused. */
static int copy_calls(int dirfd, const char *dir, const kg_plan *plan, kg_err *err)
{
    int sfd = -1, rc = KG_OK;
    for (int a = 0; a < plan->narms && rc == KG_OK; a++) {
        char rel[KG_NAME_MAX + 32], src[2 * KG_PATH_MAX + 2], hex[65], *text = NULL;
        size_t len = 0;
        kg_plan_call_copy(plan, a, rel, sizeof rel);
        if (rel[0] == '\0') continue;
        kg_plan_call_path(plan, a, src, sizeof src);
        if ((rc = kg_read_file(src, &text, &len, err)) != KG_OK) break;
        kg_sha256_hex(text, len, hex);
        if (strcmp(hex, plan->arms[a].call_sha256) != 0) {
            free(text);
            rc = kg_errorf(err, KG_EINPUT, "%s:%d: arm '%s': %s changed since the plan was read (sha256 %.12s, the "
                           "plan's %.12s): run the campaign again", plan->path, plan->arms[a].line,
                           plan->arms[a].name, src, hex, plan->arms[a].call_sha256);
            break;
        }
        rc = keep_source(dirfd, &sfd, dir, rel, text, len, err);
        free(text);
    }
    if (sfd >= 0) close(sfd);
    return rc;
}

int kg_chain_copy_sources(int dirfd, const char *dir, const kg_plan *plan, kg_err *err)
{
    int sfd = -1, rc = KG_OK;
    for (int a = 0; a < plan->narms && rc == KG_OK; a++) {
        char rel[128], src[KG_PATH_MAX], *text = NULL;
        size_t len = 0;
        kg_chain_source_copy(plan, a, rel, sizeof rel);
        if (rel[0] == '\0') continue;
        /* a source the backend did not need (fake) may be absent: nothing to keep */
        if (kg_plan_source_path(plan, a, src, sizeof src, NULL) != KG_OK || !kg_path_exists(src)) continue;
        if ((rc = kg_read_file(src, &text, &len, err)) != KG_OK) break;
        rc = keep_source(dirfd, &sfd, dir, rel, text, len, err);
        free(text);
    }
    if (sfd >= 0) close(sfd);
    return rc == KG_OK ? copy_calls(dirfd, dir, plan, err) : rc;
}



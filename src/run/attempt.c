/* attempt.c: appending to a campaign's ledger (attempt.h).  Every append
 * happens under an exclusive flock of the ledger file, after the whole
 * file was read and checked, so two shard runs never get one attempt
 * number and a line is chained to exactly the bytes before it. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include "run/attempt.h"
#include "evidence/ledger.h"
#include "base/util.h"

typedef struct held {
    int fd;
    char *text;
    size_t len;
    kg_ledger_line *lines;
    int n;
} held;

static void release(held *h)
{
    if (h->fd >= 0) {
        flock(h->fd, LOCK_UN);
        close(h->fd);
    }
    free(h->text);
    free(h->lines);
    memset(h, 0, sizeof *h);
    h->fd = -1;
}

/* The ledger opened, locked, read whole and checked. */
static int take(const char *path, const char *id, held *h, kg_err *err)
{
    memset(h, 0, sizeof *h);
    h->fd = open(path, O_RDWR | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (h->fd < 0)
        return kg_errorf(err, KG_EIO, "ledger %s: %s (the campaign's shards append to it: give --ledger a file in a "
                         "folder every shard can write)", path, strerror(errno));
    struct stat st;
    while (flock(h->fd, LOCK_EX) != 0)
        if (errno != EINTR) {
            int e = errno;
            release(h);
            return kg_errorf(err, KG_EIO, "ledger %s: cannot lock it: %s", path, strerror(e));
        }
    if (fstat(h->fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > (64 << 20)) {
        release(h);
        return kg_errorf(err, KG_EINPUT, "ledger %s: not a regular file of at most 64 MiB", path);
    }
    h->len = (size_t)st.st_size;
    if ((h->text = malloc(h->len + 1)) == NULL) {
        release(h);
        return kg_errorf(err, KG_ENOMEM, "out of memory reading %s", path);
    }
    size_t got = 0;
    while (got < h->len) {
        ssize_t k = pread(h->fd, h->text + got, h->len - got, (off_t)got);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) {
            release(h);
            return kg_errorf(err, KG_EIO, "ledger %s: read: %s", path, k < 0 ? strerror(errno) : "short file");
        }
        got += (size_t)k;
    }
    h->text[h->len] = '\0';
    int rc = kg_ledger_parse(path, h->text, h->len, &h->lines, &h->n, err);
    for (int i = 0; rc == KG_OK && i < h->n; i++)
        if (strcmp(h->lines[i].id, id) != 0)
            rc = kg_errorf(err, KG_EUSAGE, "ledger %s:%d: belongs to campaign %s, this run is of campaign %s: one "
                           "ledger per campaign (give --ledger another file, or --campaign %s)", path, i + 1,
                           h->lines[i].id, id, h->lines[i].id);
    if (rc != KG_OK) release(h);
    return rc;
}

static int append(held *h, const char *path, const char *line, kg_err *err)
{
    size_t n = strlen(line);
    char *buf = malloc(n + 2);
    if (buf == NULL) return kg_errorf(err, KG_ENOMEM, "out of memory");
    memcpy(buf, line, n);
    buf[n] = '\n';
    ssize_t w;
    while ((w = write(h->fd, buf, n + 1)) < 0 && errno == EINTR) {}
    free(buf);
    if (w != (ssize_t)(n + 1)) {
        /* a partial line would break the chain: cut it off again */
        if (w > 0 && ftruncate(h->fd, (off_t)h->len) != 0) {}
        return kg_errorf(err, KG_EIO, "ledger %s: append: %s", path, w < 0 ? strerror(errno) : "short write");
    }
    if (fsync(h->fd) != 0) return kg_errorf(err, KG_EIO, "ledger %s: fsync: %s", path, strerror(errno));
    return KG_OK;
}

int kg_attempt_begin(const char *path, const char *id, int shard, int count, const char *salt, int *attempt,
                     char **prefix, kg_err *err)
{
    held h;
    *prefix = NULL;
    int rc = take(path, id, &h, err);
    if (rc != KG_OK) return rc;
    char line[KG_LEDGER_LINE_MAX], utc[32];
    kg_utc_now(utc, sizeof utc);
    *attempt = kg_ledger_next_attempt(h.lines, h.n, shard, count);
    kg_ledger_start_line(line, sizeof line, id, shard, count, *attempt, utc, salt, h.text, h.len);
    if ((rc = append(&h, path, line, err)) == KG_OK) {
        size_t n = strlen(line);
        char *p = malloc(h.len + n + 2);
        if (p == NULL) {
            rc = kg_errorf(err, KG_ENOMEM, "out of memory");
        } else {
            memcpy(p, h.text, h.len);
            memcpy(p + h.len, line, n);
            p[h.len + n] = '\n';
            p[h.len + n + 1] = '\0';
            *prefix = p;
        }
    }
    release(&h);
    return rc;
}

int kg_attempt_end(const char *path, const char *id, int shard, int count, int attempt, const char *sums, kg_err *err)
{
    held h;
    int rc = take(path, id, &h, err);
    if (rc != KG_OK) return rc;
    char line[KG_LEDGER_LINE_MAX], utc[32];
    kg_utc_now(utc, sizeof utc);
    kg_ledger_end_line(line, sizeof line, id, shard, count, attempt, utc, sums, h.text, h.len);
    rc = append(&h, path, line, err);
    release(&h);
    return rc;
}

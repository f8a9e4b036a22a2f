/* ledger.c: the text of a campaign's ledger (ledger.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include "evidence/ledger.h"
#include "base/util.h"

int kg_campaign_id_ok(const char *id)
{
    size_t n = id != NULL ? strlen(id) : 0;
    if (n < 1 || n > KG_CAMPAIGN_ID_MAX) return 0;
    for (size_t i = 0; i < n; i++) {
        char c = id[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
              c == '-'))
            return 0;
    }
    return 1;
}

int kg_campaign_id_new(char id[KG_CAMPAIGN_ID_MAX + 1], kg_err *err)
{
    unsigned char b[16];
    ssize_t k = getrandom(b, sizeof b, 0);
    if (k != (ssize_t)sizeof b)
        return kg_errorf(err, KG_EIO, "getrandom: %s: kgate needs the kernel's random bytes for a campaign id",
                         k < 0 ? strerror(errno) : "short read");
    for (size_t i = 0; i < sizeof b; i++) snprintf(id + 2 * i, 3, "%02x", b[i]);
    return KG_OK;
}

static int hex64(const char *s)
{
    if (strlen(s) != 64) return 0;
    for (int i = 0; i < 64; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f'))) return 0;
    return 1;
}

/* One line's fields; 0 when it is not a ledger line. */
static int parse_line(const char *s, kg_ledger_line *l)
{
    char id[128], what[16], utc[40], key[8], val[80], prev[80], tail[2];
    int ver = 0;
    memset(l, 0, sizeof *l);
    if (strlen(s) >= sizeof l->text) return 0;
    int k = sscanf(s, "kgate-ledger %d campaign %127s shard %d/%d attempt %d %15s %39s %7s %79s prev %79s %1s", &ver,
                   id, &l->shard, &l->count, &l->attempt, what, utc, key, val, prev, tail);
    if (k != 10 || ver != 1 || !kg_campaign_id_ok(id) || l->count < 1 || l->count > 4096 || l->shard < 0 ||
        l->shard >= l->count || l->attempt < 1 || !hex64(prev) || strlen(utc) >= sizeof l->utc)
        return 0;
    if (strcmp(what, "started") == 0 && strcmp(key, "salt") == 0 && strlen(val) < sizeof l->salt) {
        snprintf(l->salt, sizeof l->salt, "%s", val);
    } else if (strcmp(what, "ended") == 0 && strcmp(key, "sums") == 0 && hex64(val)) {
        l->ended = 1;
        snprintf(l->sums, sizeof l->sums, "%.64s", val);
    } else {
        return 0;
    }
    memcpy(l->id, id, strlen(id) + 1);
    snprintf(l->utc, sizeof l->utc, "%s", utc);
    snprintf(l->prev, sizeof l->prev, "%.64s", prev);
    snprintf(l->text, sizeof l->text, "%s", s);
    /* the line is exactly what kgate writes: no other spacing */
    char again[KG_LEDGER_LINE_MAX + 32];
    snprintf(again, sizeof again, "kgate-ledger 1 campaign %s shard %d/%d attempt %d %s %s %s %s prev %s", l->id,
             l->shard, l->count, l->attempt, l->ended ? "ended" : "started", l->utc, key, val, l->prev);
    return strcmp(again, s) == 0;
}

int kg_ledger_parse(const char *name, const char *text, size_t len, kg_ledger_line **lines, int *n, kg_err *err)
{
    *lines = NULL;
    *n = 0;
    int cap = 0, lineno = 0;
    size_t off = 0;
    while (off < len) {
        const char *nl = memchr(text + off, '\n', len - off);
        lineno++;
        if (nl == NULL) {
            free(*lines);
            *lines = NULL;
            *n = 0;
            return kg_errorf(err, KG_EINPUT, "%s:%d: the last line has no newline: the ledger was cut or edited "
                             "(kgate appends whole lines only)", name, lineno);
        }
        size_t ll = (size_t)(nl - (text + off));
        char line[KG_LEDGER_LINE_MAX + 1];
        kg_ledger_line l;
        int ok = ll < sizeof line;
        if (ok) {
            memcpy(line, text + off, ll);
            line[ll] = '\0';
            ok = memchr(line, '\0', ll) == NULL && parse_line(line, &l);
        }
        char want[65];
        if (ok) kg_sha256_hex(text, off, want);
        if (!ok || strcmp(want, l.prev) != 0) {
            free(*lines);
            *lines = NULL;
            *n = 0;
            return kg_errorf(err, KG_EINPUT, "%s:%d: %s: the ledger was edited (kgate appends one line per shard "
                             "start and end, each chained by prev to the bytes before it)", name, lineno,
                             ok ? "its prev is not the sha256 of the lines before it" : "not a ledger line");
        }
        if (*n == cap) {
            cap = cap ? 2 * cap : 16;
            kg_ledger_line *p = realloc(*lines, (size_t)cap * sizeof *p);
            if (p == NULL) {
                free(*lines);
                *lines = NULL;
                *n = 0;
                return kg_errorf(err, KG_ENOMEM, "out of memory reading %s", name);
            }
            *lines = p;
        }
        (*lines)[(*n)++] = l;
        off += ll + 1;
    }
    return KG_OK;
}

static void line_of(char *buf, size_t cap, const char *id, int shard, int count, int attempt, const char *what,
                    const char *utc, const char *key, const char *val, const char *before, size_t blen)
{
    char prev[65];
    kg_sha256_hex(before != NULL ? before : "", blen, prev);
    snprintf(buf, cap, "kgate-ledger 1 campaign %s shard %d/%d attempt %d %s %s %s %s prev %s", id, shard, count,
             attempt, what, utc, key, val, prev);
}

void kg_ledger_start_line(char *buf, size_t cap, const char *id, int shard, int count, int attempt, const char *utc,
                          const char *salt, const char *before, size_t blen)
{
    line_of(buf, cap, id, shard, count, attempt, "started", utc, "salt", salt, before, blen);
}

void kg_ledger_end_line(char *buf, size_t cap, const char *id, int shard, int count, int attempt, const char *utc,
                        const char *sums, const char *before, size_t blen)
{
    line_of(buf, cap, id, shard, count, attempt, "ended", utc, "sums", sums, before, blen);
}

int kg_ledger_next_attempt(const kg_ledger_line *lines, int n, int shard, int count)
{
    int a = 0;
    for (int i = 0; i < n; i++)
        if (!lines[i].ended && lines[i].shard == shard && lines[i].count == count && lines[i].attempt > a)
            a = lines[i].attempt;
    return a + 1;
}

/* armcache.c: the compile cache of cpu arms (armcache.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "backend/armcache.h"
#include "toolchain/toolchain.h"
#include "base/util.h"

#define ENTRY_FORMAT "kgate-arm-cache 1"

/* Writes a then b to path: a temporary of this process in path's folder,
 * renamed into place (a reader sees the old file, or the whole new one).
 * Not counted by the crash-safety tests' write hook: the cache is no
 * evidence, and whether it hits must not move their count. */
static int write_whole(const char *path, mode_t mode, const void *a, size_t na, const void *b, size_t nb)
{
    char tmp[PATH_MAX + 16];
    if (snprintf(tmp, sizeof tmp, "%s.XXXXXX", path) >= (int)sizeof tmp) return -1;
    int fd = mkstemp(tmp);
    if (fd < 0) return -1;
    const char *parts[2] = { a, b };
    size_t lens[2] = { na, nb };
    int ok = fchmod(fd, mode) == 0;
    for (int i = 0; i < 2 && ok; i++)
        for (size_t done = 0; done < lens[i] && ok;) {
            ssize_t w = write(fd, parts[i] + done, lens[i] - done);
            if (w < 0 && errno == EINTR) continue;
            ok = w > 0;
            if (ok) done += (size_t)w;
        }
    ok = close(fd) == 0 && ok;
    if (ok && rename(tmp, path) == 0) return 0;
    unlink(tmp);
    return -1;
}

/* The compiler's identity: the SHA-256 of `cc -v`'s output, and of the
 * compiler's file when cc names one by path; computed once per process. */
static int compiler_id(const char *cc, const char *work, char hex[65])
{
    static char id_cc[PATH_MAX], id_hex[65];
    if (id_hex[0] != '\0' && strcmp(id_cc, cc) == 0) {
        memcpy(hex, id_hex, 65);
        return 0;
    }
    char log[PATH_MAX + 8], *text = NULL, file_hex[65] = "";
    size_t len = 0;
    int st = 0;
    snprintf(log, sizeof log, "%s.cc-v", work);
    unlink(log);
    char *argv[] = { (char *)cc, (char *)"-v", NULL };
    int ok = kg_run_capture(argv, log, &st, NULL) == KG_OK && WIFEXITED(st) && WEXITSTATUS(st) == 0 &&
             kg_read_file(log, &text, &len, NULL) == KG_OK;
    unlink(log);
    if (ok && strchr(cc, '/') != NULL) ok = kg_sha256_file(cc, file_hex, NULL) == KG_OK;
    if (!ok) {
        free(text);
        return -1;
    }
    kg_sb sb = { 0 };
    kg_sb_printf(&sb, "%s\n%s\n%s\n", cc, file_hex, text);
    free(text);
    if (sb.oom) {
        kg_sb_free(&sb);
        return -1;
    }
    kg_sha256_hex(sb.buf, sb.len, id_hex);
    kg_sb_free(&sb);
    snprintf(id_cc, sizeof id_cc, "%s", cc);
    memcpy(hex, id_hex, 65);
    return 0;
}

/* The source as the preprocessor sees it: argv without its output and
 * linker arguments, with -E -o work; NULL when it fails. */
static char *preprocessed(char *const argv[], int out_at, const char *work, const char *log, size_t *len)
{
    char *pp[256];
    int n = 0;
    pp[n++] = argv[0];
    pp[n++] = (char *)"-E";
    for (int i = 1; i < out_at - 1 && n < 252; i++) pp[n++] = argv[i];
    pp[n++] = (char *)"-o";
    pp[n++] = (char *)work;
    pp[n] = NULL;
    int st = 0;
    char *text = NULL;
    unlink(work);
    if (kg_run_capture(pp, log, &st, NULL) != KG_OK || !WIFEXITED(st) || WEXITSTATUS(st) != 0 ||
        kg_read_file(work, &text, len, NULL) != KG_OK)
        text = NULL;
    unlink(work);
    return text;
}

void kg_armcache_key(const kg_settings *s, char *const argv[], int out_at, const char *work, const char *log,
                     kg_armcache *c)
{
    memset(c, 0, sizeof *c);
    if (s == NULL || s->no_cache || s->cache_dir == NULL || s->cache_dir[0] == '\0' || out_at < 2) return;
    char id[65];
    if (compiler_id(argv[0], work, id) != 0) return;
    size_t len = 0;
    char *text = preprocessed(argv, out_at, work, log, &len);
    if (text == NULL) return;
    kg_sb sb = { 0 };
    kg_sb_printf(&sb, "%s\n%s\n", ENTRY_FORMAT, id);
    for (int i = 0; argv[i] != NULL; i++) {
        if (i == out_at - 1 || i == out_at) continue;
        kg_sb_puts(&sb, argv[i]);
        kg_sb_puts(&sb, "\n");
    }
    kg_sb_printf(&sb, "%zu\n", len);
    if (!sb.oom && len > 0) {
        /* the preprocessed text may hold NUL bytes: appended as bytes */
        char *grown = realloc(sb.buf, sb.len + len);
        if (grown == NULL) sb.oom = 1;
        else {
            memcpy(grown + sb.len, text, len);
            sb.buf = grown;
            sb.len += len;
        }
    }
    free(text);
    if (!sb.oom) {
        kg_sha256_hex(sb.buf, sb.len, c->key);
        if (snprintf(c->path, sizeof c->path, "%s/arms/%s.so", s->cache_dir, c->key) >= (int)sizeof c->path)
            c->path[0] = '\0';
    }
    kg_sb_free(&sb);
}

/* 1 when path is a folder (not a link) of this user that no one else may
 * write: an entry there was written by the user's own campaigns. */
static int own_folder(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == geteuid() && (st.st_mode & 022) == 0;
}

/* 1 when the entry's folders, DIR/arms and DIR, are the user's alone; says
 * once on stderr when they are not (the cache is then not used). */
static int cache_trusted(const char *entry)
{
    static int said;
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", entry);
    char *slash = strrchr(dir, '/');
    if (slash == NULL) return 0;
    *slash = '\0';
    int ok = own_folder(dir);
    char *up = strrchr(dir, '/');
    if (ok && up != NULL && up != dir) {
        *up = '\0';
        ok = own_folder(dir);
    }
    if (!ok && !said) {
        said = 1;
        fprintf(stderr, "kgate: the compile cache %s is not this user's alone (another owner, a link, or writable "
                "by others): not used (make it yours with mode 0700, or set KGATE_CACHE_DIR)\n", dir);
    }
    return ok;
}

int kg_armcache_fetch(const kg_armcache *c, const char *so)
{
    struct stat st;
    if (c->path[0] == '\0' || lstat(c->path, &st) != 0) return 0;
    if (!cache_trusted(c->path) || !S_ISREG(st.st_mode) || st.st_uid != geteuid()) return 0;
    char *data = NULL, hex[65], head[128];
    size_t len = 0;
    if (kg_read_file(c->path, &data, &len, NULL) != KG_OK) return 0;
    const char *nl = memchr(data, '\n', len < sizeof head ? len : sizeof head);
    int ok = nl != NULL;
    if (ok) {
        size_t hl = (size_t)(nl - data), body = hl + 1;
        snprintf(head, sizeof head, "%.*s", (int)hl, data);
        kg_sha256_hex(data + body, len - body, hex);
        char want[128];
        snprintf(want, sizeof want, "%s %s", ENTRY_FORMAT, hex);
        ok = strcmp(head, want) == 0 && len > body;
        if (ok) ok = write_whole(so, 0755, data + body, len - body, "", 0) == 0;
        if (ok) {
            char note[PATH_MAX + 128], side[PATH_MAX + 8];
            int n = snprintf(note, sizeof note, "compile cache %s (%s; object sha256 %s)\n", c->key, c->path, hex);
            snprintf(side, sizeof side, "%s.cache", so);
            ok = n > 0 && n < (int)sizeof note && write_whole(side, 0644, note, (size_t)n, "", 0) == 0;
            if (!ok) unlink(so);
        }
    }
    free(data);
    return ok;
}

/* DIR and DIR/arms, made 0700 where they are new. */
static int make_dirs(const char *entry)
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", entry);
    char *slash = strrchr(dir, '/');
    if (slash == NULL) return -1;
    *slash = '\0';                       /* DIR/arms */
    char *up = strrchr(dir, '/');
    if (up != NULL && up != dir) {
        *up = '\0';
        kg_err e = { 0 };
        if (!kg_path_exists(dir) && (kg_mkdir_p(dir, &e) != KG_OK || chmod(dir, 0700) != 0)) return -1;
        *up = '/';
    }
    if (mkdir(dir, 0700) != 0 && errno != EEXIST) return -1;
    return 0;
}

void kg_armcache_store(const kg_armcache *c, const char *so)
{
    if (c->path[0] == '\0') return;
    char *data = NULL, hex[65], head[128];
    size_t len = 0;
    if (kg_read_file(so, &data, &len, NULL) != KG_OK) return;
    kg_sha256_hex(data, len, hex);
    int n = snprintf(head, sizeof head, "%s %s\n", ENTRY_FORMAT, hex);
    if (len > 0 && make_dirs(c->path) == 0 && cache_trusted(c->path))
        (void)write_whole(c->path, 0600, head, (size_t)n, data, len);
    free(data);
}

/* merge.c: the shards of a campaign merged into one evidence folder
 * (merge.h, docs/scale-out.md).
 *
 * Nothing of a shard is rewritten: its folder is copied whole, file for
 * file, to OUT/shards/I (or left where it is when it is already there),
 * so its SHA256SUMS, chain and signature still hold and verify checks
 * them again.  The merged analysis reads the shards' rows (evidence.c's
 * load_merged); the merged folder adds only its plan, meta.json,
 * environment.json, the reports, SHA256SUMS and its signature. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>
#include "verify/merge.h"
#include "evidence/attest.h"
#include "kgate/evidence.h"
#include "report/report.h"
#include "base/safefs.h"
#include "base/util.h"
#include "verify/verify.h"
#include "verify/shards.h"
#include "plan/shard.h"

/* Copies the folder sfd into dfd (both open), regular files and folders
 * only (the source was checked by kg_folder_check: nothing else is in it). */
static int copy_tree(int sfd, int dfd, const char *shown, kg_err *err)
{
    int fd = dup(sfd), rc = KG_OK;
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (d == NULL) {
        if (fd >= 0) close(fd);
        return kg_errorf(err, KG_EIO, "%s: cannot list: %s", shown, strerror(errno));
    }
    struct dirent *e;
    while (rc == KG_OK && (e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        char sub[KG_PATH_MAX + 256];
        snprintf(sub, sizeof sub, "%s/%s", shown, e->d_name);
        struct stat st;
        if (fstatat(sfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
            rc = kg_errorf(err, KG_EIO, "%s: %s", sub, strerror(errno));
        } else if (S_ISDIR(st.st_mode)) {
            int s2 = openat(sfd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), d2 = -1;
            if (s2 < 0 || (mkdirat(dfd, e->d_name, 0755) != 0 && errno != EEXIST) ||
                (d2 = openat(dfd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
                rc = kg_errorf(err, KG_EIO, "%s: cannot copy the folder: %s", sub, strerror(errno));
            else
                rc = copy_tree(s2, d2, sub, err);
            if (s2 >= 0) close(s2);
            if (d2 >= 0) close(d2);
        } else if (S_ISREG(st.st_mode)) {
            int in = openat(sfd, e->d_name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
            int outfd = openat(dfd, e->d_name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
            if (in < 0 || outfd < 0) {
                rc = kg_errorf(err, KG_EIO, "%s: cannot copy: %s", sub, strerror(errno));
            } else {
                char buf[1 << 16];
                ssize_t k;
                while (rc == KG_OK && (k = read(in, buf, sizeof buf)) != 0) {
                    if (k < 0) {
                        if (errno == EINTR) continue;
                        rc = kg_errorf(err, KG_EIO, "%s: read: %s", sub, strerror(errno));
                        break;
                    }
                    for (ssize_t off = 0; off < k && rc == KG_OK;) {
                        ssize_t w = write(outfd, buf + off, (size_t)(k - off));
                        if (w < 0 && errno == EINTR) continue;
                        if (w <= 0) rc = kg_errorf(err, KG_EIO, "%s: write: %s", sub, strerror(errno));
                        else off += w;
                    }
                }
                if (rc == KG_OK && fsync(outfd) != 0) rc = kg_errorf(err, KG_EIO, "%s: fsync: %s", sub, strerror(errno));
            }
            if (in >= 0) close(in);
            if (outfd >= 0) close(outfd);
        } else {
            rc = kg_errorf(err, KG_EINPUT, "%s: not a regular file or folder: kgate copies only those", sub);
        }
    }
    closedir(d);
    return rc;
}

static int write_json_at(int dirfd, const char *dir, const char *name, json_t *m, kg_err *err)
{
    char *text = json_dumps(m, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    if (text == NULL) return kg_errorf(err, KG_ENOMEM, "out of memory writing %s", name);
    kg_sb sb = { 0 };
    kg_sb_printf(&sb, "%s\n", text);
    free(text);
    char path[KG_PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    int rc = sb.oom ? kg_errorf(err, KG_ENOMEM, "out of memory") : kg_write_atomic_at(dirfd, name, path, sb.buf, sb.len, err);
    kg_sb_free(&sb);
    return rc;
}

/* The merged folder's environment: every shard's unattested variables
 * (each once), which the merged statement carries for verify --key. */
static json_t *shards_environment(const kg_merge_opts *o, int n)
{
    json_t *un = json_array(), *envr = json_object();
    for (int i = 0; i < n; i++) {
        char path[KG_PATH_MAX + 32];
        snprintf(path, sizeof path, "%s/environment.json", o->dirs[i]);
        json_t *se = json_load_file(path, 0, NULL);
        json_t *su = json_object_get(json_object_get(se, "environment"), "unattested");
        size_t k, j;
        json_t *v, *w;
        if (!json_is_array(su)) {
            json_decref(se);
            json_decref(un);
            json_decref(envr);
            return json_null();   /* a shard that records none: neither does the merge */
        }
        json_array_foreach(su, k, v) {
            int seen = 0;
            json_array_foreach(un, j, w) seen |= json_equal(v, w);
            if (!seen && json_is_string(v)) json_array_append(un, v);
        }
        json_decref(se);
    }
    json_object_set_new(envr, "recorded", json_object());
    json_object_set_new(envr, "unattested", un);
    json_object_set_new(envr, "from", json_sprintf("%d shards: shards/I/environment.json", n));
    return envr;
}

/* meta.json and environment.json of the merged folder. */
static int write_records(const kg_merge_opts *o, int dirfd, const kg_shard_rec *r, int n, const char *plan_hash,
                         int has_ledger, kg_err *err)
{
    json_t *m = json_object(), *env = json_object(), *list = json_array();
    char buf[512], exe[PATH_MAX], hex[65] = "";
    int same = 1;
    for (int i = 1; i < n; i++) same &= strcmp(r[i].sm.device_model, r[0].sm.device_model) == 0;
    json_object_set_new(m, "schema", json_integer(KG_EVIDENCE_SCHEMA));
    json_object_set_new(m, "kgate_version", json_string(kg_version()));
    json_object_set_new(m, "kgate_git_sha", json_string(kg_git_sha()));
    json_object_set_new(m, "plan_sha256", json_string(plan_hash));
    json_object_set_new(m, "plan_path", json_string(r[0].plan_path));
    json_object_set_new(m, "started_utc", json_string(r[0].started));
    kg_utc_now(buf, sizeof buf);
    json_object_set_new(m, "merged_utc", json_string(buf));
    struct utsname u;
    if (uname(&u) == 0) {
        json_object_set_new(m, "host", json_string(u.nodename));
        snprintf(buf, sizeof buf, "%s %s %s", u.sysname, u.release, u.machine);
        json_object_set_new(m, "os", json_string(buf));
    }
    json_object_set_new(m, "backend", json_string(r[0].sm.backend));
    json_object_set_new(m, "backend_notice", json_string(""));
    snprintf(buf, sizeof buf, "%d shards on %s", r[0].sm.count, same ? r[0].sm.device_model : "several device models");
    json_object_set_new(m, "device", json_string(buf));
    json_object_set_new(m, "device_index", json_integer(-1));
    json_object_set_new(m, "device_model", json_string(same ? r[0].sm.device_model : ""));
    json_t *argv = json_array();
    for (int i = 0; i < o->argc; i++) json_array_append_new(argv, json_string(o->argv[i]));
    json_object_set_new(m, "argv", argv);
    json_object_set_new(m, "check_only", json_false());
    json_object_set_new(m, "negative", json_false());
    json_object_set_new(m, "frozen_plan", json_null());
    json_t *attempts = json_array();
    for (int i = 0; i < n; i++) {
        char folder[32], verdicts[2048], dir[KG_PATH_MAX + 64];
        kg_merge_folder(r[i].sm.index, r[i].attempt, folder, sizeof folder);
        snprintf(dir, sizeof dir, "%s/%s", o->out, folder);
        kg_shard_verdicts(dir, verdicts, sizeof verdicts);
        json_t *a = json_object();
        json_object_set_new(a, "index", json_integer(r[i].sm.index));
        json_object_set_new(a, "attempt", json_integer(r[i].attempt));
        json_object_set_new(a, "folder", json_string(folder));
        json_object_set_new(a, "used", json_boolean(r[i].attempt == 1));
        json_object_set_new(a, "started_utc", json_string(r[i].started));
        json_object_set_new(a, "host", json_string(r[i].host));
        json_object_set_new(a, "input_salt", json_string(r[i].salt));
        json_object_set_new(a, "verdicts", json_string(verdicts));
        json_array_append_new(attempts, a);
        if (r[i].attempt != 1) continue;
        json_t *s = json_object();
        json_object_set_new(s, "index", json_integer(r[i].sm.index));
        json_object_set_new(s, "folder", json_string(folder));
        json_object_set_new(s, "cases", r[i].cases != NULL ? json_deep_copy(r[i].cases) : json_array());
        if (r[i].slots != NULL) json_object_set_new(s, "slots", json_deep_copy(r[i].slots));
        json_object_set_new(s, "backend", json_string(r[i].sm.backend));
        json_object_set_new(s, "device", json_string(r[i].sm.device));
        json_object_set_new(s, "device_index", json_integer(r[i].sm.device_index));
        json_object_set_new(s, "device_model", json_string(r[i].sm.device_model));
        json_object_set_new(s, "host", json_string(r[i].host));
        json_object_set_new(s, "started_utc", json_string(r[i].started));
        json_object_set_new(s, "input_salt", json_string(r[i].salt));
        json_array_append_new(list, s);
    }
    json_t *mg = json_object();
    json_object_set_new(mg, "shards", json_integer(r[0].sm.count));
    json_object_set_new(mg, "list", list);
    json_object_set_new(mg, "attempts", attempts);
    json_object_set_new(m, "merged", mg);
    /* the campaign: its id, the rule that picks the verdict's attempts,
     * and whether the ledger file was read (kept as OUT/ledger) */
    json_t *cp = json_object();
    json_object_set_new(cp, "id", json_string(r[0].id));
    json_object_set_new(cp, "verdict_from", json_string("attempt 1 of every shard"));
    json_object_set_new(cp, "ledger", has_ledger ? json_string("ledger") : json_null());
    json_object_set_new(m, "campaign", cp);
    int rc = write_json_at(dirfd, o->out, "meta.json", m, err);
    json_decref(m);
    if (rc != KG_OK) {
        json_decref(env);
        return rc;
    }
    /* the receipt of the merge: the binary that merged; each shard's own
     * receipt is in shards/I/environment.json */
    kg_err e = { 0 };
    if (kg_self_exe(exe, sizeof exe, &e) != KG_OK) snprintf(exe, sizeof exe, "unknown");
    else if (kg_sha256_file(exe, hex, &e) != KG_OK) hex[0] = '\0';
    json_object_set_new(env, "schema", json_integer(KG_EVIDENCE_SCHEMA));
    json_object_set_new(env, "kgate_version", json_string(kg_version()));
    json_object_set_new(env, "kgate_git_sha", json_string(kg_git_sha()));
    json_object_set_new(env, "kgate_binary", json_string(exe));
    json_object_set_new(env, "kgate_binary_sha256", json_string(hex));
    json_object_set_new(env, "plan_sha256", json_string(plan_hash));
    json_object_set_new(env, "backend", json_string(r[0].sm.backend));
    json_object_set_new(env, "merged_from", json_sprintf("%d shards: shards/I/environment.json", r[0].sm.count));
    json_t *progs = json_object(), *merger = json_object();
    json_object_set_new(merger, "path", json_string(exe));
    json_object_set_new(merger, "sha256", json_string(hex));
    json_object_set_new(progs, "merger", merger);
    json_object_set_new(env, "programs", progs);
    json_object_set_new(env, "environment", shards_environment(o, n));
    rc = write_json_at(dirfd, o->out, "environment.json", env, err);
    json_decref(env);
    return rc;
}

/* OUT may hold nothing but shards/ (the shards written in place). */
static int out_ready(const char *out, kg_err *err)
{
    struct stat st;
    if (lstat(out, &st) != 0) return kg_mkdir_p(out, err);
    if (!S_ISDIR(st.st_mode)) return kg_errorf(err, KG_EUSAGE, "%s: not a folder: kgate merge writes a new folder", out);
    DIR *d = opendir(out);
    if (d == NULL) return kg_errorf(err, KG_EIO, "%s: %s", out, strerror(errno));
    struct dirent *e;
    int rc = KG_OK;
    while (rc == KG_OK && (e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0 && strcmp(e->d_name, "shards") != 0 &&
            strcmp(e->d_name, "ledger") != 0)
            rc = kg_errorf(err, KG_EUSAGE, "%s already holds %s: kgate merge writes a new folder (or one holding only "
                           "the shards, as shards/I, and their ledger)", out, e->d_name);
    closedir(d);
    return rc;
}

/* What the merged folder keeps of the plan's ops, as shard 0 has it:
 * the declared ops' sources (docs/ops.md), which verify's op server
 * compiles (every shard's plan hash, which holds each source's sha256, is
 * the same), and ops.json (every shard's, written from the same plan, is
 * the same). */
static int copy_op_data(const char *out, int dirfd, kg_err *err)
{
    char path[KG_PATH_MAX + 64], *text = NULL;
    int rc = KG_OK;
    /* the plan's declared ops (docs/ops.md): their sources, which verify's
     * op server compiles (or, in Python, runs), as shard 0 keeps them (every shard's plan
     * hash, which holds each source's sha256, is the same) */
    {
        char sdir[KG_PATH_MAX + 64];
        snprintf(sdir, sizeof sdir, "%s/shards/0/sources", out);
        DIR *d = opendir(sdir);
        struct dirent *e;
        int srcfd = -1;
        while (rc == KG_OK && d != NULL && (e = readdir(d)) != NULL) {
            size_t len = strlen(e->d_name);
            /* op-NAME.c, or op-NAME.py for an op declared in Python */
            if (strncmp(e->d_name, "op-", 3) != 0 || len < 6 ||
                (strcmp(e->d_name + len - 2, ".c") != 0 && strcmp(e->d_name + len - 3, ".py") != 0))
                continue;
            if (srcfd < 0 && (srcfd = kg_open_dir(dirfd, "sources", 1, err)) < 0) {
                rc = srcfd;
                break;
            }
            char from[KG_PATH_MAX + 400], to[KG_PATH_MAX + 400], *src = NULL;
            size_t nb = 0;
            snprintf(from, sizeof from, "%s/%s", sdir, e->d_name);
            snprintf(to, sizeof to, "%s/sources/%s", out, e->d_name);
            if ((rc = kg_read_file(from, &src, &nb, err)) == KG_OK)
                rc = kg_write_atomic_at(srcfd, e->d_name, to, src, nb, err);
            free(src);
        }
        if (d != NULL) closedir(d);
        if (srcfd >= 0) close(srcfd);
        if (rc != KG_OK) return rc;
    }
    /* what the reader knows of the ops: shard 0's ops.json (every shard's,
     * written from the same plan, is the same) */
    snprintf(path, sizeof path, "%s/shards/0/%s", out, KG_FACTS_FILE);
    if (kg_path_exists(path)) {
        if ((rc = kg_read_file(path, &text, NULL, err)) != KG_OK) return rc;
        snprintf(path, sizeof path, "%s/%s", out, KG_FACTS_FILE);
        rc = kg_write_atomic_at(dirfd, KG_FACTS_FILE, path, text, strlen(text), err);
        free(text);
        if (rc != KG_OK) return rc;
    }
    return KG_OK;
}

/* Every shard verified on its own, its signature first, then read. */
static void check_each(const kg_merge_opts *o, kg_shard_rec *r, kg_sb *probs, int *nbad)
{
    for (int i = 0; i < o->n; i++) {
        int before = *nbad;
        kg_err fe = { 0 };
        if (kg_folder_check(o->dirs[i], &fe) != KG_OK) {
            kg_problem(probs, nbad, "%s", fe.msg);
            continue;
        }
        if (o->pub_path != NULL) {
            kg_attest_state st;
            char keyid[65];
            kg_sb a = { 0 };
            int abad = 0;
            if (kg_attest_check(o->dirs[i], o->pub_path, NULL, &st, keyid, &a, &abad, &fe) != KG_OK)
                kg_problem(probs, nbad, "%s: %s", o->dirs[i], fe.msg);
            else if (st != KG_ATTEST_GOOD)
                kg_problem(probs, nbad, "%s: %s", o->dirs[i],
                           st == KG_ATTEST_UNSIGNED ? "unsigned: a shard of a signed merge must be signed (kgate run "
                                                      "--key)" : "its signature does not verify with the key");
            kg_sb_free(&a);
        }
        kg_sb sub = { 0 };
        int sbad = 0;
        if (kg_verify_dir_key(o->dirs[i], o->pub_path, NULL, &sub, &sbad, &fe) != KG_OK) {
            kg_problem(probs, nbad, "%s: %s", o->dirs[i], fe.msg);
        } else if (sbad > 0) {
            char *line = sub.buf;
            for (int k = 0; line != NULL && *line != '\0' && k < sbad; k++) {
                char *nl = strchr(line, '\n');
                if (nl) *nl = '\0';
                if (strncmp(line, "note: ", 6) != 0) kg_problem(probs, nbad, "%s: %s", o->dirs[i], line);
                line = nl ? nl + 1 : NULL;
            }
        }
        kg_sb_free(&sub);
        if (*nbad == before) kg_shard_read(o->dirs[i], o->dirs[i], &r[i], probs, nbad);
    }
}

/* The campaign's ledger file: --ledger, else OUT/ledger (the shards
 * written in place), else the one the shards recorded.  *path_out gets
 * the path read ("" when none was there). */
static int read_ledger(const kg_merge_opts *o, const kg_shard_rec *r, char *text_path, size_t cap,
                       kg_ledger_line **lines, int *nl, kg_sb *probs, int *nbad)
{
    const char *rec = NULL;
    for (int i = 0; i < o->n && rec == NULL; i++)
        if (r[i].ok && r[i].id[0] != '\0') rec = r[i].ledger;
    char inplace[KG_PATH_MAX + 16];
    snprintf(inplace, sizeof inplace, "%s/ledger", o->out);
    const char *cand[3] = { o->ledger_path, o->ledger_path == NULL ? inplace : NULL,
                            o->ledger_path == NULL ? rec : NULL };
    text_path[0] = '\0';
    for (int k = 0; k < 3; k++) {
        if (cand[k] == NULL || cand[k][0] == '\0') continue;
        int present = 0;
        kg_err e = { 0 };
        if (kg_shard_ledger_read(cand[k], lines, nl, &present, &e) != KG_OK) {
            kg_problem(probs, nbad, "%s", e.msg);
            return 0;
        }
        if (present) {
            snprintf(text_path, cap, "%s", cand[k]);
            return 1;
        }
        if (k == 0) {
            kg_problem(probs, nbad, "--ledger %s: no such file", cand[k]);
            return 0;
        }
    }
    return 0;
}

/* Each shard's folder in its place: attempt 1 of shard I at shards/I,
 * a later attempt A at shards/I.A (copied, or already there). */
static int place_shards(const kg_merge_opts *o, const kg_shard_rec *r, int dirfd, kg_err *err)
{
    int shfd = kg_open_dir(dirfd, "shards", 1, err), rc = KG_OK;
    if (shfd < 0) return shfd;
    for (int i = 0; i < o->n && rc == KG_OK; i++) {
        char target[KG_PATH_MAX + 64], a[PATH_MAX], b[PATH_MAX], name[32];
        kg_merge_folder(r[i].sm.index, r[i].attempt, name, sizeof name);
        snprintf(target, sizeof target, "%s/%s", o->out, name);
        if (realpath(o->dirs[i], a) != NULL && realpath(target, b) != NULL && strcmp(a, b) == 0) continue; /* in place */
        if (kg_path_exists(target)) {
            rc = kg_errorf(err, KG_EUSAGE, "%s exists and is not %s: kgate merge writes shard %d attempt %d there",
                           target, o->dirs[i], r[i].sm.index, r[i].attempt);
            break;
        }
        int sfd = kg_open_dir(AT_FDCWD, o->dirs[i], 0, err), dfd = -1;
        if (sfd < 0) { rc = sfd; break; }
        if ((dfd = kg_open_dir(shfd, name + 7, 1, err)) < 0) rc = dfd;
        else rc = copy_tree(sfd, dfd, o->dirs[i], err);
        close(sfd);
        if (dfd >= 0) close(dfd);
    }
    close(shfd);
    return rc;
}

/* OUT/ledger: the ledger file merge read, unless it is that file. */
static int keep_ledger(const kg_merge_opts *o, int dirfd, const char *from, kg_err *err)
{
    char to[KG_PATH_MAX + 16], a[PATH_MAX], b[PATH_MAX], *text = NULL;
    size_t len = 0;
    snprintf(to, sizeof to, "%s/ledger", o->out);
    if (realpath(from, a) != NULL && realpath(to, b) != NULL && strcmp(a, b) == 0) return KG_OK;
    int rc = kg_read_file(from, &text, &len, err);
    if (rc == KG_OK) rc = kg_write_atomic_at(dirfd, "ledger", to, text, len, err);
    free(text);
    return rc;
}

int kg_merge_write(const kg_merge_opts *o, kg_analysis *an, kg_err *err)
{
    int n = o->n, rc = KG_OK, nbad = 0, dirfd = -1, nl = 0;
    kg_sb probs = { 0 };
    kg_ledger_line *lines = NULL;
    char lpath[KG_PATH_MAX + 16];
    memset(an, 0, sizeof *an);
    if (n < 1) return kg_errorf(err, KG_EUSAGE, "kgate merge needs at least one shard folder");
    kg_shard_rec *r = calloc((size_t)n, sizeof *r);
    const char **dirs = calloc((size_t)n, sizeof *dirs);
    if (r == NULL || dirs == NULL) {
        free(r);
        free(dirs);
        return kg_errorf(err, KG_ENOMEM, "out of memory");
    }
    memcpy(dirs, o->dirs, (size_t)n * sizeof *dirs);
    kg_merge_opts lo = *o;
    lo.dirs = dirs;
    o = &lo;
    check_each(o, r, &probs, &nbad);
    int has_ledger = nbad == 0 && read_ledger(o, r, lpath, sizeof lpath, &lines, &nl, &probs, &nbad);
    kg_shard_check_recs(r, o->dirs, n, NULL, has_ledger ? lines : NULL, nl, &probs, &nbad);
    if (nbad > 0) {
        rc = kg_errorf(err, KG_EINPUT, "%d problem(s) with the shards, nothing merged:\n%s", nbad,
                       probs.buf != NULL ? probs.buf : "");
        goto done;
    }
    /* by shard, then attempt: attempt 1 of shard I is r[I] */
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && (r[j].sm.index < r[j - 1].sm.index ||
                                  (r[j].sm.index == r[j - 1].sm.index && r[j].attempt < r[j - 1].attempt)); j--) {
            kg_shard_rec t = r[j];
            r[j] = r[j - 1];
            r[j - 1] = t;
            const char *d = dirs[j];
            dirs[j] = dirs[j - 1];
            dirs[j - 1] = d;
        }
    if ((rc = out_ready(o->out, err)) != KG_OK) goto done;
    if ((dirfd = kg_open_dir(AT_FDCWD, o->out, 0, err)) < 0) {
        rc = dirfd;
        goto done;
    }
    if ((rc = place_shards(o, r, dirfd, err)) != KG_OK) goto done;
    if (has_ledger && (rc = keep_ledger(o, dirfd, lpath, err)) != KG_OK) goto done;
    /* the plan: shard 0's, which every shard's hash equals */
    char path[KG_PATH_MAX + 64], *text = NULL;
    snprintf(path, sizeof path, "%s/shards/0/plan.kg", o->out);
    if ((rc = kg_read_file(path, &text, NULL, err)) != KG_OK) goto done;
    snprintf(path, sizeof path, "%s/plan.kg", o->out);
    rc = kg_write_atomic_at(dirfd, "plan.kg", path, text, strlen(text), err);
    free(text);
    if (rc != KG_OK) goto done;
    char hashline[80];
    snprintf(hashline, sizeof hashline, "%s\n", r[0].hash);
    snprintf(path, sizeof path, "%s/plan.sha256", o->out);
    if ((rc = kg_write_atomic_at(dirfd, "plan.sha256", path, hashline, strlen(hashline), err)) != KG_OK) goto done;
    if ((rc = copy_op_data(o->out, dirfd, err)) != KG_OK) goto done;
    if ((rc = write_records(o, dirfd, r, n, r[0].hash, has_ledger, err)) != KG_OK) goto done;
    if ((rc = kg_report_build(o->out, an, NULL, err)) != KG_OK) goto done;
    if ((rc = kg_evidence_write_sums(o->out, err)) != KG_OK) goto done;
    char keyid[65];
    rc = kg_attest_write(o->out, dirfd, o->key_path, keyid, err);
done:
    if (dirfd >= 0) close(dirfd);
    for (int i = 0; i < n; i++) kg_shard_rec_free(&r[i]);
    free(r);
    free(dirs);
    free(lines);
    kg_sb_free(&probs);
    if (rc != KG_OK) kg_analysis_free(an);
    return rc;
}

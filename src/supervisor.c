/* supervisor.c: runs a campaign as a series of fresh worker processes.
 *
 * The supervisor never loads candidate code: it compiles arms (through
 * the backend's build slot) and starts `kgate worker` children, one at a
 * time, alternating directions.  Each child gets its own process group,
 * its stderr goes to logs/proc-NNN.log, and it is killed when it passes
 * the plan's timeout.  processes.csv is rewritten (atomically) after every
 * process, so a campaign stopped at any point keeps every completed
 * process. */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "campaign.h"
#include "kgate/backend.h"
#include "kgate/oracle.h"
#include "protocol.h"
#include "util.h"

extern char **environ;

typedef struct proc_rec {
    int dir;
    char status[32];
    char reason[256];
    double seconds;
    char start_utc[32];
    int accepted;
} proc_rec;

static int write_processes(const char *dir, const proc_rec *p, int n, kg_err *err)
{
    kg_sb sb = { 0 };
    kg_sb_puts(&sb, "process,direction,status,accepted,seconds,start_utc,reason\n");
    for (int i = 0; i < n; i++) {
        kg_sb_printf(&sb, "%d,%s,%s,%d,%.3f,%s,\"", i, p[i].dir == 0 ? "fwd" : "rev", p[i].status,
                     p[i].accepted, p[i].seconds, p[i].start_utc);
        for (const char *s = p[i].reason; *s; s++) {
            if (*s == '"') kg_sb_puts(&sb, "\"\"");
            else if (*s != '\n' && *s != '\r') kg_sb_printf(&sb, "%c", *s);
        }
        kg_sb_puts(&sb, "\"\n");
    }
    char path[KG_PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/processes.csv", dir);
    int rc = sb.oom ? kg_errorf(err, KG_ENOMEM, "out of memory") : kg_write_atomic(path, sb.buf, sb.len, err);
    kg_sb_free(&sb);
    return rc;
}

static int write_meta(const kg_run_opts *o, const kg_plan *plan, const char *dir, const char *backend,
                      const char *notice, const char *device, kg_err *err)
{
    json_t *m = json_object();
    char buf[512], hex[65], exe[PATH_MAX];
    json_object_set_new(m, "schema", json_integer(KG_EVIDENCE_SCHEMA));
    json_object_set_new(m, "kgate_version", json_string(KG_VERSION));
    json_object_set_new(m, "kgate_git_sha", json_string(KG_GIT_SHA));
    if (kg_self_exe(exe, sizeof exe, NULL) == KG_OK && kg_sha256_file(exe, hex, NULL) == KG_OK)
        json_object_set_new(m, "kgate_sha256", json_string(hex));
    json_object_set_new(m, "plan_sha256", json_string(plan->hash));
    json_object_set_new(m, "plan_path", json_string(plan->path));
    kg_utc_now(buf, sizeof buf);
    json_object_set_new(m, "started_utc", json_string(buf));
    struct utsname u;
    if (uname(&u) == 0) {
        json_object_set_new(m, "host", json_string(u.nodename));
        snprintf(buf, sizeof buf, "%s %s %s", u.sysname, u.release, u.machine);
        json_object_set_new(m, "os", json_string(buf));
    }
    json_object_set_new(m, "backend", json_string(backend));
    json_object_set_new(m, "backend_notice", json_string(notice));
    json_object_set_new(m, "device", json_string(device));
    if (strcmp(backend, "cpu") == 0) {
        const char *cc = getenv("KGATE_CC");
        kg_tool_version(cc && cc[0] ? cc : "cc", buf, sizeof buf);
        json_object_set_new(m, "compiler", json_string(buf));
    }
    json_t *argv = json_array();
    for (int i = 0; i < o->argc; i++) json_array_append_new(argv, json_string(o->argv[i]));
    json_object_set_new(m, "argv", argv);
    json_object_set_new(m, "check_only", json_boolean(o->check_only));
    json_object_set_new(m, "negative", json_boolean(o->negative));
    json_t *sources = json_object();
    for (int a = 0; a < plan->narms; a++) {
        char src[KG_PATH_MAX];
        if (plan->arms[a].source[0] == '\0') continue;
        if (kg_plan_source_path(plan, a, src, sizeof src, NULL) == KG_OK && kg_sha256_file(src, hex, NULL) == KG_OK)
            json_object_set_new(sources, plan->arms[a].name, json_string(hex));
    }
    json_object_set_new(m, "source_sha256", sources);
    char *text = json_dumps(m, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(m);
    if (text == NULL) return kg_errorf(err, KG_ENOMEM, "out of memory writing meta.json");
    char path[KG_PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/meta.json", dir);
    size_t len = strlen(text);
    text[len] = '\0';
    kg_sb sb = { 0 };
    kg_sb_printf(&sb, "%s\n", text);
    free(text);
    int rc = kg_write_atomic(path, sb.buf, sb.len, err);
    kg_sb_free(&sb);
    return rc;
}

/* Starts one worker and waits for it, killing its process group when it
 * passes timeout_s. */
static int run_worker(const kg_run_opts *o, const char *plan_abs, const char *dir, const char *backend, int proc,
                      double timeout_s, proc_rec *rec, kg_err *err)
{
    char exe[PATH_MAX], procs[16], log[KG_PATH_MAX + 64], raw[KG_PATH_MAX + 64];
    int rc = kg_self_exe(exe, sizeof exe, err);
    if (rc != KG_OK) return rc;
    snprintf(procs, sizeof procs, "%d", proc);
    snprintf(log, sizeof log, "%s/logs/proc-%03d.log", dir, proc);
    snprintf(raw, sizeof raw, "%s/raw/proc-%03d.csv", dir, proc);
    char *argv[16];
    int n = 0;
    argv[n++] = exe;
    argv[n++] = (char *)"worker";
    argv[n++] = (char *)"--plan";
    argv[n++] = (char *)plan_abs;
    argv[n++] = (char *)"--out";
    argv[n++] = (char *)dir;
    argv[n++] = (char *)"--proc";
    argv[n++] = procs;
    argv[n++] = (char *)"--backend";
    argv[n++] = (char *)backend;
    if (o->check_only) argv[n++] = (char *)"--check-only";
    argv[n] = NULL;

    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    posix_spawnattr_init(&at);
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&at, 0);
    pid_t pid;
    kg_utc_now(rec->start_utc, sizeof rec->start_utc);
    double t0 = kg_mono_s();
    int e = posix_spawn(&pid, exe, &fa, &at, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    if (e != 0) return kg_errorf(err, KG_EIO, "cannot start worker %s: %s", exe, strerror(e));

    int status = 0, timed_out = 0;
    for (;;) {
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid) break;
        if (r < 0 && errno != EINTR) return kg_errorf(err, KG_EIO, "waiting for worker %d: %s", proc, strerror(errno));
        if (kg_mono_s() - t0 > timeout_s) {
            kill(-pid, SIGKILL);
            waitpid(pid, &status, 0);
            timed_out = 1;
            break;
        }
        struct timespec ts = { 0, 20 * 1000 * 1000 };
        nanosleep(&ts, NULL);
    }
    /* Whatever the worker left running in its group goes too. */
    kill(-pid, SIGKILL);
    rec->seconds = kg_mono_s() - t0;
    char last[256];
    kg_file_last_line(log, last, sizeof last);
    rec->accepted = 0;
    if (timed_out) {
        snprintf(rec->status, sizeof rec->status, "timeout");
        snprintf(rec->reason, sizeof rec->reason, "passed the timeout of %.0f s and was killed", timeout_s);
    } else if (WIFSIGNALED(status)) {
        snprintf(rec->status, sizeof rec->status, "crashed");
        snprintf(rec->reason, sizeof rec->reason, "killed by signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
    } else if (WEXITSTATUS(status) != 0) {
        snprintf(rec->status, sizeof rec->status, "exit %d", WEXITSTATUS(status));
        snprintf(rec->reason, sizeof rec->reason, "%s", last[0] ? last : "exited with an error");
    } else if (!kg_path_exists(raw)) {
        snprintf(rec->status, sizeof rec->status, "incomplete");
        snprintf(rec->reason, sizeof rec->reason, "exited 0 without writing its rows");
    } else {
        snprintf(rec->status, sizeof rec->status, "ok");
        rec->reason[0] = '\0';
        rec->accepted = 1;
    }
    return KG_OK;
}

static void progress(const kg_run_opts *o, int i, int n, int dir, double elapsed)
{
    if (!o->progress) return;
    if (i >= n) {
        fprintf(stderr, "\r\033[Kkgate: %d/%d processes done in %.1f s\n", n, n, elapsed);
        return;
    }
    double eta = i > 0 ? elapsed / i * (n - i) : 0;
    fprintf(stderr, "\r\033[Kkgate: process %d/%d (%s)  elapsed %.0f s  ETA %s%.0f s", i + 1, n,
            dir == 0 ? "fwd" : "rev", elapsed, i > 0 ? "" : "~", eta);
    fflush(stderr);
}

int kg_campaign_run(const kg_run_opts *o, char *out_dir_used, size_t cap, kg_analysis *an, kg_err *err)
{
    kg_plan *plan = NULL;
    kg_backend *be = NULL;
    proc_rec *recs = NULL;
    char dir[KG_PATH_MAX], path[KG_PATH_MAX + 64], plan_abs[PATH_MAX];
    char notice[512] = "", device[512] = "";
    int rc;
    memset(an, 0, sizeof *an);
    if ((rc = kg_plan_load(o->plan_path, &plan, err)) != KG_OK) goto done;
    if ((rc = kg_plan_check_ops(plan, err)) != KG_OK) goto done;
    if (realpath(o->plan_path, plan_abs) == NULL) {
        rc = kg_errorf(err, KG_EIO, "%s: %s", o->plan_path, strerror(errno));
        goto done;
    }
    if (o->out_dir != NULL) {
        snprintf(dir, sizeof dir, "%s", o->out_dir);
    } else {
        char stamp[32];
        time_t t = time(NULL);
        struct tm tm;
        gmtime_r(&t, &tm);
        strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
        snprintf(dir, sizeof dir, "kgate-out/%s-%s%s", plan->campaign.name, stamp, o->check_only ? "-check" : "");
    }
    snprintf(path, sizeof path, "%s/plan.kg", dir);
    if (kg_path_exists(path)) {
        rc = kg_errorf(err, KG_EUSAGE, "%s already holds a campaign: choose another folder with -o", dir);
        goto done;
    }
    if ((rc = kg_mkdir_p(dir, err)) != KG_OK) goto done;
    snprintf(out_dir_used, cap, "%s", dir);
    if (o->negative) setenv("KGATE_NEGATIVE", "1", 1);

    const char *bname = o->backend != NULL ? o->backend : plan->campaign.backend;
    if ((rc = kg_backend_open(bname, plan, &be, notice, sizeof notice, err)) != KG_OK) goto done;
    if (notice[0] != '\0') fprintf(stderr, "kgate: %s\n", notice);
    kg_backend_describe(be, device, sizeof device);
    char resolved[16];
    snprintf(resolved, sizeof resolved, "%s", kg_backend_name(be));

    if ((rc = kg_write_atomic(path, plan->canonical, strlen(plan->canonical), err)) != KG_OK) goto done;
    snprintf(path, sizeof path, "%s/plan.sha256", dir);
    char hashline[80];
    snprintf(hashline, sizeof hashline, "%s\n", plan->hash);
    if ((rc = kg_write_atomic(path, hashline, strlen(hashline), err)) != KG_OK) goto done;
    if ((rc = write_meta(o, plan, dir, resolved, notice, device, err)) != KG_OK) goto done;
    snprintf(path, sizeof path, "%s/logs", dir);
    if ((rc = kg_mkdir_p(path, err)) != KG_OK) goto done;
    snprintf(path, sizeof path, "%s/build", dir);
    for (int a = 0; a < plan->narms; a++)
        if ((rc = kg_backend_build(be, plan, a, path, err)) != KG_OK) goto done;
    kg_backend_close(be);
    be = NULL;

    int nproc = o->check_only ? 1 : 2 * plan->campaign.processes;
    recs = calloc((size_t)nproc, sizeof *recs);
    if (recs == NULL) { rc = kg_errorf(err, KG_ENOMEM, "out of memory"); goto done; }
    double t0 = kg_mono_s();
    for (int i = 0; i < nproc; i++) {
        recs[i].dir = kg_protocol_direction(i);
        progress(o, i, nproc, recs[i].dir, kg_mono_s() - t0);
        if ((rc = run_worker(o, plan_abs, dir, resolved, i, plan->campaign.timeout_s, &recs[i], err)) != KG_OK)
            goto done;
        if ((rc = write_processes(dir, recs, i + 1, err)) != KG_OK) goto done;
        if (!recs[i].accepted && o->progress)
            fprintf(stderr, "\r\033[Kkgate: process %d %s: %s\n", i, recs[i].status, recs[i].reason);
    }
    progress(o, nproc, nproc, 0, kg_mono_s() - t0);
    rc = kg_report_build(dir, an, NULL, err);
done:
    kg_backend_close(be);
    free(recs);
    kg_plan_free(plan);
    return rc;
}

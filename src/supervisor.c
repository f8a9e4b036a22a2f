/* supervisor.c: runs a campaign as a series of fresh worker processes.
 *
 * The supervisor never loads candidate code: it compiles arms (through
 * the backend's build slot) and starts `kgate worker` children, one at a
 * time, alternating directions.  Each child gets its own process group,
 * its stderr goes to logs/proc-NNN.log, and it is killed when it passes
 * the plan's timeout.  processes.csv is rewritten (atomically) after every
 * process, so a campaign stopped at any point keeps every completed
 * process, and `kgate run --resume DIR` continues it.
 *
 * Integrity: the device lock is taken before the arms are built and held
 * to the end; before each process the host must be quiet for the quiet
 * window, and a poller repeats the checks every KG_QUIET_POLL_S while the
 * worker runs.  A process during which the host was not quiet is
 * recorded as "contaminated" (excluded from the analysis, its files kept)
 * and its schedule slot is run again, in the same direction, up to
 * max_repeats times.  The schedule is recomputed from processes.csv
 * alone, which is what makes resuming exact.  SHA256SUMS is written last. */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <dirent.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "supervisor.h"
#include "archive.h"
#include "frozen.h"
#include "kgate/evidence.h"
#include "lock.h"
#include "quiet.h"
#include "report.h"
#include "kgate/backend.h"
#include "kgate/op.h"
#include "protocol.h"
#include "util.h"

extern char **environ;

typedef kg_proc_rec proc_rec;

/* Starts one worker and waits for it, killing its process group when it
 * passes timeout_s.  When q is not NULL the host is watched meanwhile;
 * when pline is not NULL the worker's round is shown after it.  The
 * negative arms of s are passed on its command line. */
static int run_worker(const kg_run_opts *o, const kg_settings *s, const char *plan_abs, const char *dir,
                      const char *backend, int proc, double timeout_s, const kg_quiet *q, const char *pline,
                      proc_rec *rec, kg_err *err)
{
    char exe[PATH_MAX], procs[16], slots[16], log[KG_PATH_MAX + 64], raw[KG_PATH_MAX + 64];
    int rc = kg_self_exe(exe, sizeof exe, err);
    if (rc != KG_OK) return rc;
    snprintf(procs, sizeof procs, "%d", proc);
    snprintf(slots, sizeof slots, "%d", rec->slot);
    snprintf(log, sizeof log, "%s/logs/proc-%03d.log", dir, proc);
    snprintf(raw, sizeof raw, "%s/raw/proc-%03d.csv", dir, proc);
    /* KGATE_WORKER_WRAPPER (e.g. "compute-sanitizer --tool memcheck
     * --error-exitcode 86"): a program the worker runs under. */
    char wrap[1024] = "";
    if (s->worker_wrapper != NULL) snprintf(wrap, sizeof wrap, "%s", s->worker_wrapper);
    char *argv[52];
    int n = 0;
    for (char *tok = strtok(wrap, " "); tok != NULL && n < 30; tok = strtok(NULL, " ")) argv[n++] = tok;
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
    if (pline != NULL) argv[n++] = (char *)"--progress";
    argv[n++] = (char *)"--slot";
    argv[n++] = slots;
    if (o->check_only) argv[n++] = (char *)"--check-only";
    if (s->negative) {
        argv[n++] = (char *)"--negative";
        if (s->negative_arm != NULL && s->negative_arm[0] != '\0') {
            argv[n++] = (char *)"--negative-arm";
            argv[n++] = (char *)s->negative_arm;
        }
    }
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
    int e = posix_spawnp(&pid, argv[0], &fa, &at, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    if (e != 0) return kg_errorf(err, KG_EIO, "cannot start worker %s: %s", argv[0], strerror(e));

    int status = 0, timed_out = 0, dirty = 0;
    char why[256] = "";
    double next_poll = t0, next_show = t0 + 0.5;
    for (;;) {
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid) break;
        if (r < 0 && errno != EINTR) return kg_errorf(err, KG_EIO, "waiting for worker %d: %s", proc, strerror(errno));
        double now = kg_mono_s();
        if (now - t0 > timeout_s) {
            kill(-pid, SIGKILL);
            waitpid(pid, &status, 0);
            timed_out = 1;
            break;
        }
        if (q != NULL && !dirty && now >= next_poll) {
            dirty = kg_quiet_scan(q, (int)pid, why, sizeof why);
            next_poll = now + KG_QUIET_POLL_S;
        }
        if (pline != NULL && now >= next_show) {
            /* the worker reports "progress: case C round r/R" on its log */
            char wl[256];
            kg_file_last_line(log, wl, sizeof wl);
            if (strncmp(wl, "progress: ", 10) == 0) {
                fprintf(stderr, "\r\033[K%s  %s", pline, wl + 10);
                fflush(stderr);
            }
            next_show = now + 0.5;
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
    if (dirty) {
        /* the host, not the kernel, is in question: excluded and repeated */
        char outcome[300];
        snprintf(outcome, sizeof outcome, "%s%s%s", rec->status, rec->reason[0] ? ": " : "", rec->reason);
        snprintf(rec->status, sizeof rec->status, "contaminated");
        snprintf(rec->reason, sizeof rec->reason, "%.130s; the worker ended %.100s", why, outcome);
        rec->accepted = 0;
    }
    return KG_OK;
}

/* Prints the progress line (process i/n, direction, elapsed, ETA) and
 * keeps it in pline so that the worker's round can be appended. */
static void progress(const kg_run_opts *o, int i, int n, int dir, double elapsed, char *pline, size_t cap)
{
    if (!o->progress) return;
    if (i >= n) {
        fprintf(stderr, "\r\033[Kkgate: %d/%d processes done in %.1f s\n", n, n, elapsed);
        return;
    }
    double eta = i > 0 ? elapsed / i * (n - i) : 0;
    snprintf(pline, cap, "kgate: process %d/%d (%s)  elapsed %.0f s  ETA %s%.0f s", i + 1, n,
             dir == 0 ? "fwd" : "rev", elapsed, i > 0 ? "" : "~", eta);
    fprintf(stderr, "\r\033[K%s", pline);
    fflush(stderr);
}

/* The next schedule slot to run and its attempt number, from the records
 * alone: a slot is done once it has a process that was not contaminated,
 * or once it has been contaminated 1 + max_repeats times.  -1: all done. */
static int next_slot(const proc_rec *r, int n, int nslots, int max_repeats, int *attempt)
{
    for (int s = 0; s < nslots; s++) {
        int tries = 0, done = 0;
        for (int i = 0; i < n; i++) {
            if (r[i].slot != s) continue;
            tries++;
            if (strcmp(r[i].status, "contaminated") != 0) done = 1;
        }
        if (done || tries > max_repeats) continue;
        *attempt = tries;
        return s;
    }
    return -1;
}

/* Removes what an interrupted process or writer may have left: the files
 * of processes from index first on, and temporary files. */
static void remove_leftovers(const char *dir, int first)
{
    const char *subs[] = { "", "/raw", "/checks", "/outputs", "/logs" };
    for (size_t k = 0; k < sizeof subs / sizeof subs[0]; k++) {
        char sub[KG_PATH_MAX + 32], path[KG_PATH_MAX + 600];
        snprintf(sub, sizeof sub, "%s%s", dir, subs[k]);
        DIR *d = opendir(sub);
        struct dirent *e;
        while (d != NULL && (e = readdir(d)) != NULL) {
            int idx;
            if (strstr(e->d_name, ".tmp.") != NULL ||
                (k > 0 && sscanf(e->d_name, "proc-%d.", &idx) == 1 && idx >= first)) {
                snprintf(path, sizeof path, "%s/%s", sub, e->d_name);
                unlink(path);
            }
        }
        if (d != NULL) closedir(d);
    }
    char path[KG_PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/SHA256SUMS", dir);
    unlink(path);
}

int kg_campaign_run(const kg_run_opts *o, char *out_dir_used, size_t cap, kg_analysis *an, kg_err *err)
{
    kg_plan *plan = NULL;
    kg_backend *be = NULL;
    proc_rec *recs = NULL;
    char dir[KG_PATH_MAX], path[KG_PATH_MAX + 64], plan_abs[PATH_MAX];
    char notice[512] = "", device[512] = "", *recorded = NULL;
    int rc, lock_fd = -1, nrec = 0;
    kg_quiet q;
    char pline[256] = "";
    /* the settings of this campaign: the environment's, and the negative
     * asked for in the options (the workers get it on their command line) */
    kg_settings s = o->settings != NULL ? *o->settings : *kg_settings_defaults();
    if (o->negative) {
        s.negative = 1;
        if (o->negative_arm != NULL) s.negative_arm = o->negative_arm;
    }
    memset(&q, 0, sizeof q);
    memset(an, 0, sizeof *an);
    if ((rc = kg_plan_load(o->plan_path, &plan, err)) != KG_OK) goto done;
    if ((rc = kg_plan_check_ops(plan, err)) != KG_OK) goto done;
    if (plan->campaign.inputs == KG_INPUTS_FRESH) {
        rc = kg_errorf(err, KG_EUNSUPPORTED, "%s:%d: inputs = fresh (regenerating inputs on the device between "
                       "samples) is not implemented yet: use inputs = resident, with rotate = N for cache-cold inputs",
                       plan->path, plan->campaign.line);
        goto done;
    }
    if (o->frozen_path != NULL && (rc = kg_frozen_check(plan, o->frozen_path, err)) != KG_OK) goto done;
    if (realpath(o->plan_path, plan_abs) == NULL) {
        rc = kg_errorf(err, KG_EIO, "%s: %s", o->plan_path, strerror(errno));
        goto done;
    }
    if (o->out_dir != NULL) {
        snprintf(dir, sizeof dir, "%s", o->out_dir);
    } else if (o->resume) {
        rc = kg_errorf(err, KG_EUSAGE, "--resume needs the campaign's folder");
        goto done;
    } else {
        char stamp[32];
        time_t t = time(NULL);
        struct tm tm;
        gmtime_r(&t, &tm);
        strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
        snprintf(dir, sizeof dir, "kgate-out/%s-%s%s", plan->campaign.name, stamp, o->check_only ? "-check" : "");
    }
    snprintf(path, sizeof path, "%s/plan.kg", dir);
    if (o->resume) {
        char *canon = NULL;
        if (!kg_path_exists(path)) {
            rc = kg_errorf(err, KG_EUSAGE, "%s holds no campaign to resume (no plan.kg): start it again without --resume", dir);
            goto done;
        }
        snprintf(path, sizeof path, "%s/plan.sha256", dir);
        if ((rc = kg_read_file(path, &recorded, NULL, err)) != KG_OK) goto done;
        if (strncmp(recorded, plan->hash, 64) != 0) {
            kg_sb diff = { 0 };
            snprintf(path, sizeof path, "%s/plan.kg", dir);
            if (kg_read_file(path, &canon, NULL, NULL) == KG_OK) kg_frozen_diff(canon, plan->canonical, &diff);
            rc = kg_errorf(err, KG_EINPUT, "%s is not the plan of %s (sha256 %.12s, campaign's %.12s): %s",
                           o->plan_path, dir, plan->hash, recorded, diff.buf ? diff.buf : "");
            kg_sb_free(&diff);
            free(canon);
            goto done;
        }
    } else if (kg_path_exists(path)) {
        rc = kg_errorf(err, KG_EUSAGE, "%s already holds a campaign: choose another folder with -o, or --resume it", dir);
        goto done;
    }
    if ((rc = kg_mkdir_p(dir, err)) != KG_OK) goto done;
    snprintf(out_dir_used, cap, "%s", dir);

    const char *bname = o->backend != NULL ? o->backend : plan->campaign.backend;
    if ((rc = kg_backend_open(bname, plan, &s, &be, notice, sizeof notice, err)) != KG_OK) goto done;
    if (notice[0] != '\0') fprintf(stderr, "kgate: %s\n", notice);
    kg_backend_describe(be, device, sizeof device);
    char resolved[16], lock_name[128];
    snprintf(resolved, sizeof resolved, "%s", kg_backend_name(be));
    kg_lock_name(resolved, device, lock_name, sizeof lock_name);
    if ((rc = kg_lock_acquire(&s, lock_name, o->has_lock_timeout ? o->lock_timeout_s : -1, &lock_fd, err)) != KG_OK)
        goto done;

    int nslots = o->check_only ? 1 : 2 * plan->campaign.processes;
    kg_meta meta = { .backend = resolved, .notice = notice, .device = device, .argc = o->argc, .argv = o->argv,
                     .check_only = o->check_only, .negative = o->negative, .frozen_path = o->frozen_path };
    if (o->resume) {
        if ((rc = kg_evidence_read_processes(dir, &recs, &nrec, err)) != KG_OK) goto done;
        /* room for every slot of the schedule */
        if (nrec < nslots) {
            proc_rec *p = realloc(recs, (size_t)nslots * sizeof *p);
            if (p == NULL) { rc = kg_errorf(err, KG_ENOMEM, "out of memory"); goto done; }
            recs = p;
        }
        remove_leftovers(dir, nrec);
        snprintf(path, sizeof path, "%s/meta.json", dir);
        if (!kg_path_exists(path) && (rc = kg_evidence_write_meta(dir, plan, &meta, err)) != KG_OK) goto done;
        fprintf(stderr, "kgate: resuming %s: %d process(es) recorded\n", dir, nrec);
    } else {
        snprintf(path, sizeof path, "%s/plan.kg", dir);
        if ((rc = kg_write_atomic(path, plan->canonical, strlen(plan->canonical), err)) != KG_OK) goto done;
        snprintf(path, sizeof path, "%s/plan.sha256", dir);
        char hashline[80];
        snprintf(hashline, sizeof hashline, "%s\n", plan->hash);
        if ((rc = kg_write_atomic(path, hashline, strlen(hashline), err)) != KG_OK) goto done;
        if ((rc = kg_evidence_write_meta(dir, plan, &meta, err)) != KG_OK) goto done;
        recs = calloc((size_t)nslots, sizeof *recs);
        if (recs == NULL) { rc = kg_errorf(err, KG_ENOMEM, "out of memory"); goto done; }
    }
    snprintf(path, sizeof path, "%s/logs", dir);
    if ((rc = kg_mkdir_p(path, err)) != KG_OK) goto done;
    /* environment.json is written once every arm is built: a campaign
     * stopped before that builds again */
    snprintf(path, sizeof path, "%s/environment.json", dir);
    if (!o->resume || !kg_path_exists(path)) {
        snprintf(path, sizeof path, "%s/build", dir);
        for (int a = 0; a < plan->narms; a++)
            if ((rc = kg_backend_build(be, plan, a, path, err)) != KG_OK) goto done;
        /* the compiler that builds the arms, where the backend names one */
        char compiler[512] = "";
        const char *cc = kg_backend_compiler(resolved, &s);
        if (cc != NULL) kg_tool_version(cc, compiler, sizeof compiler);
        if ((rc = kg_evidence_write_environment(plan, dir, resolved, device, cc != NULL ? compiler : NULL, err)) !=
            KG_OK)
            goto done;
    }
    kg_backend_close(be);
    be = NULL;

    double window = o->has_quiet ? o->quiet_s : plan->campaign.quiet_s;
    /* timings that do not depend on the host (fake: scripted) need no
     * quiet window unless one is asked for */
    if (!(kg_backend_caps_of(resolved) & KG_CAP_QUIET_HOST) && !o->has_quiet) window = 0;
    const char *forbid = o->forbid != NULL ? o->forbid : plan->campaign.forbid[0] ? plan->campaign.forbid : NULL;
    double max_load = o->max_load > 0 ? o->max_load : plan->campaign.max_load;
    kg_quiet_init(&q, &s, forbid, max_load, resolved, device, window);
    int max_repeats = o->max_repeats == 0 ? plan->campaign.repeats : o->max_repeats < 0 ? 0 : o->max_repeats;
    int capn = nrec > nslots ? nrec : nslots > 0 ? nslots : 1;
    double t0 = kg_mono_s();
    for (;;) {
        int attempt = 0, slot = next_slot(recs, nrec, nslots, max_repeats, &attempt);
        if (slot < 0) break;
        if (nrec == capn) {
            capn *= 2;
            proc_rec *p = realloc(recs, (size_t)capn * sizeof *p);
            if (p == NULL) { rc = kg_errorf(err, KG_ENOMEM, "out of memory"); goto done; }
            recs = p;
        }
        proc_rec *r = &recs[nrec];
        memset(r, 0, sizeof *r);
        r->slot = slot;
        r->attempt = attempt;
        r->dir = kg_protocol_direction(slot);
        progress(o, slot, nslots, r->dir, kg_mono_s() - t0, pline, sizeof pline);
        if (!o->check_only && (rc = kg_quiet_wait(&q, window, 600 + 20 * window, err)) != KG_OK) goto done;
        if ((rc = run_worker(o, &s, plan_abs, dir, resolved, nrec, plan->campaign.timeout_s,
                             o->check_only ? NULL : &q, o->progress ? pline : NULL, r, err)) != KG_OK)
            goto done;
        nrec++;
        if ((rc = kg_evidence_write_processes(dir, recs, nrec, err)) != KG_OK) goto done;
        if (!r->accepted && (o->progress || strcmp(r->status, "contaminated") == 0))
            fprintf(stderr, "\r\033[Kkgate: process %d %s: %s\n", nrec - 1, r->status, r->reason);
    }
    progress(o, nslots, nslots, 0, kg_mono_s() - t0, pline, sizeof pline);
    if (nrec == 0 && (rc = kg_evidence_write_processes(dir, recs, 0, err)) != KG_OK) goto done;
    if ((rc = kg_report_build(dir, an, NULL, err)) != KG_OK) goto done;
    if ((rc = kg_evidence_write_sums(dir, err)) != KG_OK) goto done;
    if (o->archive) {
        char tgz[KG_PATH_MAX + 16];
        kg_err aerr = { 0 };
        /* the archive is a convenience: its failure leaves the campaign whole */
        if (kg_archive_write(dir, tgz, sizeof tgz, &aerr) != KG_OK)
            fprintf(stderr, "kgate: no archive: %s\n", aerr.msg);
        else
            fprintf(stderr, "kgate: archive %s\n", tgz);
    }
done:
    kg_backend_close(be);
    kg_quiet_free(&q);
    kg_lock_release(lock_fd);
    free(recs);
    free(recorded);
    kg_plan_free(plan);
    return rc;
}

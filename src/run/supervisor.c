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
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "run/supervisor.h"
#include "run/archive.h"
#include "evidence/chain.h"
#include "run/channel.h"
#include "plan/frozen.h"
#include "kgate/evidence.h"
#include "run/lock.h"
#include "run/quiet.h"
#include "report/report.h"
#include "kgate/backend.h"
#include "kgate/op.h"
#include "plan/protocol.h"
#include "evidence/salt.h"
#include "plan/shard.h"
#include "base/safefs.h"
#include "evidence/attest.h"
#include "run/token.h"
#include "toolchain/toolchain.h"
#include <openssl/crypto.h>
#include "base/util.h"
#include "run/wproc.h"
#include "check/opfacts.h"

extern char **environ;

typedef kg_proc_rec proc_rec;

/* SIGINT or SIGTERM while a campaign runs (kg_stop_requested). */
static void on_stop(int sig)
{
    kg_stop_request(sig);
}

/* watch.csv, rewritten whole (atomically) with every row so far. */
static int write_watch(int dirfd, const char *dir, const kg_sb *wl, kg_err *err)
{
    char path[KG_PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/watch.csv", dir);
    if (wl->oom) return kg_errorf(err, KG_ENOMEM, "out of memory");
    return kg_write_atomic_at(dirfd, "watch.csv", path, wl->buf, wl->len, err);
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
 * or once it has been contaminated 1 + max_repeats times in this run
 * (records from index first on: a resumed campaign tries again a slot an
 * earlier run gave up).  -1: all done. */
static int next_slot(const proc_rec *r, int n, int first, int nslots, int max_repeats, int *attempt)
{
    for (int s = 0; s < nslots; s++) {
        int tries = 0, now = 0, done = 0;
        for (int i = 0; i < n; i++) {
            if (r[i].slot != s) continue;
            tries++;
            now += i >= first;
            if (strcmp(r[i].status, "contaminated") != 0) done = 1;
        }
        if (done || now > max_repeats) continue;
        *attempt = tries;
        return s;
    }
    return -1;
}

/* A sequential design: once the processes of a look (2 P / looks slots
 * each) are all done, the evidence so far is analysed; 1 when that look
 * decided (efficacy or futility) and no more processes are to run. */
static int look_decided(const kg_plan *plan, const proc_rec *recs, int nrec, int nslots, const char *dir, kg_err *err)
{
    int per = 2 * (plan->campaign.processes / plan->campaign.looks), ndone = 0;
    for (int s = 0; s < nslots; s++) {
        int done = 0;
        for (int i = 0; i < nrec && !done; i++)
            done = recs[i].slot == s && strcmp(recs[i].status, "contaminated") != 0;
        ndone += done;
    }
    if (per <= 0 || ndone == 0 || ndone % per != 0 || ndone >= nslots) return 0;
    /* only when the process just recorded completed the look */
    if (nrec > 0 && recs[nrec - 1].slot >= ndone) return 0;
    kg_analysis an;
    kg_err e = { 0 };
    if (kg_report_build(dir, &an, NULL, &e) != KG_OK) {
        /* an interim analysis that fails is not a decision: the campaign goes on */
        fprintf(stderr, "kgate: interim analysis after %d processes failed: %s\n", ndone, e.msg);
        return 0;
    }
    int decided = an.seq_look > 0 && an.seq_look < plan->campaign.looks;
    kg_analysis_free(&an);
    (void)err;
    return decided;
}

/* Removes what an interrupted process or writer may have left: the files
 * of processes from index first on, and temporary files.  Through the
 * folder's descriptor: a subfolder that is a link is not entered. */
static void remove_leftovers(int dirfd, int first)
{
    const char *subs[] = { ".", "raw", "checks", "outputs", "telemetry", "logs" };
    for (size_t k = 0; k < sizeof subs / sizeof subs[0]; k++) {
        int sfd = openat(dirfd, subs[k], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (sfd < 0) continue;
        int lfd = dup(sfd);
        DIR *d = lfd >= 0 ? fdopendir(lfd) : NULL;
        if (d == NULL && lfd >= 0) close(lfd);
        struct dirent *e;
        while (d != NULL && (e = readdir(d)) != NULL) {
            int idx;
            if (strstr(e->d_name, ".tmp.") != NULL ||
                (k > 0 && sscanf(e->d_name, "proc-%d.", &idx) == 1 && idx >= first) ||
                (k > 0 && sscanf(e->d_name, "resources-%d.", &idx) == 1 && idx >= first))
                (void)unlinkat(sfd, e->d_name, 0);
        }
        if (d != NULL) closedir(d);
        close(sfd);
    }
    (void)unlinkat(dirfd, "SHA256SUMS", 0);
    (void)unlinkat(dirfd, KG_ATTEST_FILE, 0);
}

/* The signed statement, after SHA256SUMS (attest.h): every worker has
 * ended, so the private key is read now and by this process alone. */
static int sign_folder(const kg_run_opts *o, const char *dir, int dirfd, kg_err *err)
{
    char keyid[65];
    return kg_attest_write(dir, dirfd, o->check_only ? NULL : o->key_path, keyid, err);
}

/* A campaign stopped between its first two writes (plan.kg, then
 * plan.sha256: a full disk) has no plan hash yet: it is written now when
 * plan.kg is this plan's canonical text, so that --resume goes on. */
static int restore_plan_hash(const char *dir, const kg_plan *plan, kg_err *err)
{
    char path[KG_PATH_MAX + 32], *text = NULL;
    snprintf(path, sizeof path, "%s/plan.sha256", dir);
    if (kg_path_exists(path)) return KG_OK;
    snprintf(path, sizeof path, "%s/plan.kg", dir);
    if (kg_read_file(path, &text, NULL, NULL) != KG_OK || strcmp(text, plan->canonical) != 0) {
        free(text);
        return KG_OK;   /* the reading below names what is wrong */
    }
    free(text);
    char hashline[80];
    snprintf(hashline, sizeof hashline, "%s\n", plan->hash);
    snprintf(path, sizeof path, "%s/plan.sha256", dir);
    return kg_write_atomic(path, hashline, strlen(hashline), err);
}

int kg_campaign_run(const kg_run_opts *o, char *out_dir_used, size_t cap, kg_analysis *an, kg_err *err)
{
    kg_plan *plan = NULL;
    kg_backend *be = NULL;
    proc_rec *recs = NULL;
    char dir[KG_PATH_MAX], path[KG_PATH_MAX + 64], plan_abs[PATH_MAX];
    char notice[512] = "", device[512] = "", *recorded = NULL, model[256] = "";
    unsigned char *shard_on = NULL;
    int rc, lock_fd = -1, nrec = 0, dirfd = -1;
    kg_quiet q;
    kg_wproc cur, next;
    memset(&cur, 0, sizeof cur);
    memset(&next, 0, sizeof next);
    kg_sb wl = { 0 };
    struct sigaction sa, old_int, old_term, old_pipe;
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
    /* SIGINT and SIGTERM stop the running worker and leave a folder that
     * --resume continues; nothing of this process is readable by others */
    (void)prctl(PR_SET_DUMPABLE, 0);
    kg_stop_clear();
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    /* a worker gone before its go leaves a pipe without a reader: the
     * write fails (EPIPE), it does not end the campaign */
    struct sigaction ign;
    memset(&ign, 0, sizeof ign);
    ign.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &ign, &old_pipe);
    if ((rc = kg_plan_load(o->plan_path, &plan, err)) != KG_OK) goto done;
    /* a shard runs some of the cases of the same plan (shard.h) */
    if (o->shard_n > 0) {
        if ((shard_on = calloc((size_t)plan->ncases + 1, 1)) == NULL) {
            rc = kg_errorf(err, KG_ENOMEM, "out of memory");
            goto done;
        }
        if ((rc = kg_shard_cases(plan, o->shard_i, o->shard_n, shard_on, err)) < 0) goto done;
        rc = KG_OK;
        if (plan->campaign.looks > 1) {
            rc = kg_errorf(err, KG_EUSAGE, "%s: a sequential design (looks = %d) cannot be sharded: each shard would "
                           "stop at its own look; run it whole, or set looks = 1 (docs/scale-out.md)", o->plan_path,
                           plan->campaign.looks);
            goto done;
        }
        if (o->check_only) {
            rc = kg_errorf(err, KG_EUSAGE, "--shard: kgate check runs every case in one process; shard a campaign only");
            goto done;
        }
    }
    /* the device of this run; the canonical plan and its hash stay the plan's */
    if (o->has_device) plan->campaign.device = o->device;
    /* the plan's own ops, compiled and loaded here (trusted, like the plan) */
    if ((rc = kg_ops_bind(plan, &s, err)) != KG_OK) goto done;
    if ((rc = kg_plan_check_ops(plan, err)) != KG_OK) goto done;
    for (int i = 0; i < plan->nnotes; i++) fprintf(stderr, "kgate: note: %s\n", plan->notes[i]);
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
        if ((rc = restore_plan_hash(dir, plan, err)) != KG_OK) goto done;
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
    if ((rc = kg_outdir_check(dir, o->resume, err)) != KG_OK) goto done;
    if ((rc = kg_mkdir_p(dir, err)) != KG_OK) goto done;
    snprintf(out_dir_used, cap, "%s", dir);
    /* every write of the campaign's records goes through this descriptor */
    if ((dirfd = kg_open_dir(AT_FDCWD, dir, 0, err)) < 0) {
        rc = dirfd;
        goto done;
    }

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
    kg_backend_device_model(device, model, sizeof model);
    kg_meta meta = { .backend = resolved, .notice = notice, .device = device, .argc = o->argc, .argv = o->argv,
                     .check_only = o->check_only, .negative = o->negative, .frozen_path = o->frozen_path,
                     .device_index = plan->campaign.device, .device_model = model, .shard_i = o->shard_i,
                     .shard_n = o->shard_n, .shard_on = shard_on };
    /* the input salt: drawn fresh for a new campaign (kgate check too),
     * the recorded one when resuming (salt.h) */
    uint64_t salt = 0;
    snprintf(path, sizeof path, "%s/meta.json", dir);
    if (o->resume && kg_path_exists(path)) {
        char *mj = NULL;
        int found = 0;
        kg_shard_meta sm;
        if ((rc = kg_read_file(path, &mj, NULL, err)) == KG_OK) rc = kg_salt_from_meta(mj, &salt, &found, err);
        if (rc == KG_OK && (rc = kg_evidence_shard_meta(mj, &sm, err)) == KG_OK &&
            (sm.count != o->shard_n || (sm.count > 0 && sm.index != o->shard_i))) {
            if (sm.count > 0)
                rc = kg_errorf(err, KG_EUSAGE, "%s is shard %d/%d of its campaign: resume it with --shard %d/%d", dir,
                               sm.index, sm.count, sm.index, sm.count);
            else
                rc = kg_errorf(err, KG_EUSAGE, "%s is a whole campaign, not a shard: resume it without --shard", dir);
        }
        free(mj);
        if (rc != KG_OK) goto done;
        if (!found)
            fprintf(stderr, "kgate: %s records no input salt (written by an older kgate): the resumed processes "
                    "use the plan's seed alone, as its first ones did\n", path);
    } else if ((rc = kg_salt_draw(&salt, err)) != KG_OK) {
        goto done;
    }
    meta.input_salt = salt;
    if (o->resume) {
        if ((rc = kg_evidence_read_processes(dir, &recs, &nrec, err)) != KG_OK) goto done;
        /* room for every slot of the schedule */
        if (nrec < nslots) {
            proc_rec *p = realloc(recs, (size_t)nslots * sizeof *p);
            if (p == NULL) { rc = kg_errorf(err, KG_ENOMEM, "out of memory"); goto done; }
            recs = p;
        }
        remove_leftovers(dirfd, nrec);
        snprintf(path, sizeof path, "%s/meta.json", dir);
        if (!kg_path_exists(path) && (rc = kg_evidence_write_meta(dirfd, dir, plan, &meta, err)) != KG_OK) goto done;
        snprintf(path, sizeof path, "%s/ops.json", dir);
        if (!kg_path_exists(path) && (rc = kg_opfacts_write(dirfd, dir, plan, err)) != KG_OK) goto done;
        fprintf(stderr, "kgate: resuming %s: %d process(es) recorded\n", dir, nrec);
    } else {
        snprintf(path, sizeof path, "%s/plan.kg", dir);
        if ((rc = kg_write_atomic_at(dirfd, "plan.kg", path, plan->canonical, strlen(plan->canonical), err)) != KG_OK)
            goto done;
        snprintf(path, sizeof path, "%s/plan.sha256", dir);
        char hashline[80];
        snprintf(hashline, sizeof hashline, "%s\n", plan->hash);
        if ((rc = kg_write_atomic_at(dirfd, "plan.sha256", path, hashline, strlen(hashline), err)) != KG_OK)
            goto done;
        if ((rc = kg_evidence_write_meta(dirfd, dir, plan, &meta, err)) != KG_OK) goto done;
        /* what a reader needs to know of the ops, as data (ops.json) */
        if ((rc = kg_opfacts_write(dirfd, dir, plan, err)) != KG_OK) goto done;
        recs = calloc((size_t)nslots, sizeof *recs);
        if (recs == NULL) { rc = kg_errorf(err, KG_ENOMEM, "out of memory"); goto done; }
    }
    snprintf(path, sizeof path, "%s/logs", dir);
    if ((rc = kg_mkdir_p(path, err)) != KG_OK) goto done;
    /* the host watch's log: what an earlier run of this campaign wrote, then this run's rows */
    snprintf(path, sizeof path, "%s/watch.csv", dir);
    if (o->resume && kg_path_exists(path)) {
        kg_watch_rec *old = NULL;
        size_t nold = 0;
        if ((rc = kg_rows_read_watch(path, &old, &nold, err)) != KG_OK) goto done;
        kg_rows_begin(&wl, KG_ROWS_WATCH);
        for (size_t i = 0; i < nold; i++) kg_rows_put_watch(&wl, &old[i]);
        free(old);
    } else {
        kg_rows_begin(&wl, KG_ROWS_WATCH);
    }
    double t_session = kg_mono_s();
    /* environment.json is written once every arm is built: a campaign
     * stopped before that builds again */
    snprintf(path, sizeof path, "%s/environment.json", dir);
    if (!o->resume || !kg_path_exists(path)) {
        snprintf(path, sizeof path, "%s/build", dir);
        for (int a = 0; a < plan->narms; a++)
            if (kg_stop_requested()) {
                rc = kg_errorf(err, KG_EIO, "interrupted while building the arms: kgate run %s --resume %s "
                               "continues it", o->plan_path, dir);
                goto done;
            } else if ((rc = kg_backend_build(be, plan, a, path, err)) != KG_OK) {
                goto done;
            }
        /* each arm's kernel source, kept in the folder (chain.h) */
        if ((rc = kg_chain_copy_sources(dirfd, dir, plan, err)) != KG_OK) goto done;
        /* and each declared op's, built here for the workers (verify's op server builds the copy) */
        if ((rc = kg_ops_copy_sources(dirfd, dir, plan, err)) != KG_OK) goto done;
        if ((rc = kg_ops_build(plan, &s, NULL, path, err)) != KG_OK) goto done;
        /* the compiler that builds the arms, where the backend names one */
        char compiler[512] = "";
        const char *cc = kg_backend_compiler(resolved, &s);
        if (cc != NULL) kg_tool_version(cc, compiler, sizeof compiler);
        if ((rc = kg_evidence_write_environment(dirfd, plan, dir, resolved, device, cc != NULL ? compiler : NULL, err)) !=
            KG_OK)
            goto done;
    }
    /* the device's peaks (the physics limit), measured once in trusted
     * code with the lock held; a resumed campaign keeps its record */
    snprintf(path, sizeof path, "%s/peaks.json", dir);
    if (!o->check_only && (!o->resume || !kg_path_exists(path))) {
        kg_peaks pk;
        if ((rc = kg_backend_peaks(be, &pk, err)) != KG_OK) goto done;
        if ((rc = kg_evidence_write_peaks(dirfd, dir, resolved, &pk, err)) != KG_OK) goto done;
    }
    kg_backend_close(be);
    be = NULL;
    double build_s = kg_mono_s() - t_session;

    double window = o->has_quiet ? o->quiet_s : plan->campaign.quiet_s;
    /* timings that do not depend on the host (fake: scripted) need no
     * quiet window unless one is asked for */
    if (!(kg_backend_caps_of(resolved) & KG_CAP_QUIET_HOST) && !o->has_quiet) window = 0;
    const char *forbid = o->forbid != NULL ? o->forbid : plan->campaign.forbid[0] ? plan->campaign.forbid : NULL;
    double max_load = o->max_load > 0 ? o->max_load : plan->campaign.max_load;
    kg_quiet_limits lim = { plan->campaign.max_steal, plan->campaign.max_foreign_cpu, plan->campaign.max_freq_change };
    kg_quiet_init(&q, &s, forbid, max_load, resolved, device, window, &lim);
    /* the arms were built while no worker ran: the quiet time counts from
     * the start of this run when nothing is seen now */
    q.quiet_since = t_session;
    double give_up = plan->campaign.quiet_timeout_s;
    int max_repeats = o->max_repeats == 0 ? plan->campaign.repeats : o->max_repeats < 0 ? 0 : o->max_repeats;
    kg_watch_log(&wl, 0, -1, "session", "quiet %g s, give up after %g s; forbid %s; max_load %g; max_steal %g%%, "
              "max_foreign_cpu %g, max_freq_change %g%% (%s); device processes %s; repeats %d; clock warm-up %g s",
              window, give_up, q.forbid[0] ? q.forbid : "(none)", q.max_load, 100 * q.lim.max_steal,
              q.lim.max_foreign_cpu, 100 * q.lim.max_freq_change, q.cpu != NULL ? "watched" : "not watched",
              q.procs != NULL ? "listed by the backend" : "not listed (the backend lists none)", max_repeats,
              o->check_only ? 0 : plan->campaign.warm_s);
    kg_watch_log(&wl, build_s, -1, "build", "arms built%s in %.3f s", o->check_only ? "" : " and the device's peaks measured",
              build_s);
    int never_quiet = 0, first_rec = nrec, started = 0;
    /* a sequential design that an earlier run already decided is final:
     * resuming it runs no further process */
    int decided = 0;
    if (o->resume && !o->check_only && plan->campaign.looks > 1 && nrec > 0) {
        kg_analysis pre;
        char *texts[KG_REPORT_MAX];
        kg_err perr = { 0 };
        if (kg_report_render(dir, &pre, texts, &perr) == KG_OK) {
            decided = pre.seq_look > 0 && pre.seq_look < plan->campaign.looks;
            if (decided)
                fprintf(stderr, "kgate: the sequential design already decided at look %d of %d (%s): no further "
                        "process runs\n", pre.seq_look, plan->campaign.looks, pre.seq_stop);
            kg_report_texts_free(texts);
            kg_analysis_free(&pre);
        }
    }
    int capn = nrec + 2 > nslots ? nrec + 2 : nslots;
    if (o->resume) {
        proc_rec *p = realloc(recs, (size_t)capn * sizeof *p);
        if (p == NULL) { rc = kg_errorf(err, KG_ENOMEM, "out of memory"); goto done; }
        recs = p;
    }
    double t0 = kg_mono_s();
    const kg_watch_ctx wc = { o->check_only ? NULL : &q, &wl, window, give_up };
    const kg_wspawn sp = { .o = o, .s = &s, .plan = plan, .plan_abs = plan_abs, .dir = dir, .backend = resolved,
                           .dirfd = dirfd, .lock_fd = lock_fd, .gated = wc.q != NULL, .progress = o->progress,
                           .salt = salt, .timeout_s = plan->campaign.timeout_s };
    /* the next worker starts beside the current one once that one's last
     * timed phase is over (wproc.h), where the watch tells kgate's
     * device processes by identity (counted, a second worker's would
     * read as foreign) and the plan allows it */
    int per_look = plan->campaign.looks > 1 ? 2 * (plan->campaign.processes / plan->campaign.looks) : 0;
    while (!decided) {
        int slot;
        if (next.active) {
            /* started beside the one before it: now the current one */
            cur = next;
            memset(&next, 0, sizeof next);
            kg_wproc_promote(&cur);
            slot = cur.rec.slot;
            progress(o, slot, nslots, cur.rec.dir, kg_mono_s() - t0, pline, sizeof pline);
        } else {
            int attempt = 0;
            slot = next_slot(recs, nrec, first_rec, nslots, max_repeats, &attempt);
            if (slot < 0) break;
            if (kg_stop_requested() != 0) {
                rc = kg_errorf(err, KG_EIO, "interrupted: kgate run %s --resume %s continues it", o->plan_path, dir);
                goto done;
            }
            memset(&cur, 0, sizeof cur);
            cur.rec.slot = slot;
            cur.rec.attempt = attempt;
            cur.rec.dir = kg_protocol_direction(slot);
            progress(o, slot, nslots, cur.rec.dir, kg_mono_s() - t0, pline, sizeof pline);
            /* the first worker of this run warms the device's clock first */
            double warm = o->check_only || started > 0 ? 0 : plan->campaign.warm_s;
            if ((rc = kg_wproc_start(&cur, &sp, nrec, warm, 0, err)) != KG_OK) goto done;
        }
        if (nrec + 2 > capn) {
            capn = 2 * (nrec + 2);
            proc_rec *p = realloc(recs, (size_t)capn * sizeof *p);
            if (p == NULL) { rc = kg_errorf(err, KG_ENOMEM, "out of memory"); goto done; }
            recs = p;
        }
        for (;;) {
            int said_done = 0;
            if ((rc = kg_wproc_drive(&cur, &next, &sp, &wc, o->progress ? pline : NULL, &said_done, err)) != KG_OK)
                goto done;
            if (!said_done) break;
            if (next.active || !plan->campaign.overlap || wc.q == NULL || kg_quiet_counted(&q)) continue;
            /* the next slot, as if the current one were done: should it
             * be contaminated, its repeat comes after the next one */
            recs[nrec] = cur.rec;
            snprintf(recs[nrec].status, sizeof recs[nrec].status, "ok");
            int att2 = 0, slot2 = next_slot(recs, nrec + 1, first_rec, nslots, max_repeats, &att2);
            /* a sequential design's look is analysed before the next look starts */
            if (slot2 < 0 || (per_look > 0 && slot2 % per_look == 0)) continue;
            memset(&next, 0, sizeof next);
            next.rec.slot = slot2;
            next.rec.attempt = att2;
            next.rec.dir = kg_protocol_direction(slot2);
            if ((rc = kg_wproc_start(&next, &sp, nrec + 1, 0, 1, err)) != KG_OK) goto done;
        }
        rc = kg_wproc_finish(&cur, &sp, &wc, err);
        /* the lock names the worker still running, if any */
        kg_lock_note_worker(lock_fd, next.active ? (long)next.pid : 0);
        if (rc != KG_OK) goto done;
        proc_rec *r = &recs[nrec];
        *r = cur.rec;
        /* a worker that never began timing leaves the clock cold */
        if (strncmp(r->reason, "not started", 11) != 0) started++;
        nrec++;
        /* a slot contaminated 1 + repeats times: the host never became
         * quiet enough; the campaign stops, INVALID (the analysis says why) */
        int tries = 0, clean = 0;
        for (int i = 0; i < nrec; i++)
            if (recs[i].slot == slot) {
                tries += i >= first_rec;
                clean |= strcmp(recs[i].status, "contaminated") != 0;
            }
        if (!clean && tries > max_repeats) {
            never_quiet = 1;
            kg_watch_log(&wl, 0, nrec - 1, "never-quiet", "slot %d was contaminated %d time(s), the last: %s", slot, tries,
                      r->reason);
        }
        /* processes.csv first: a log row never names a process the folder does not record */
        if ((rc = kg_chain_seal(dirfd, plan->hash, recs, nrec, err)) != KG_OK) goto done;
        if ((rc = kg_evidence_write_processes(dirfd, dir, recs, nrec, err)) != KG_OK) goto done;
        if ((rc = write_watch(dirfd, dir, &wl, err)) != KG_OK) goto done;
        if (!r->accepted && (o->progress || strcmp(r->status, "contaminated") == 0))
            fprintf(stderr, "\r\033[Kkgate: process %d %s: %s\n", nrec - 1, r->status, r->reason);
        if (never_quiet) {
            kg_wproc_discard(&next, dirfd);
            fprintf(stderr, "\r\033[Kkgate: the device never became quiet: slot %d was contaminated %d time(s); the "
                    "campaign stops INVALID (kgate run %s --resume %s tries again)\n", slot, 1 + max_repeats,
                    o->plan_path, dir);
            break;
        }
        if (!o->check_only && plan->campaign.looks > 1 && look_decided(plan, recs, nrec, nslots, dir, err)) {
            kg_wproc_discard(&next, dirfd);
            fprintf(stderr, "\r\033[Kkgate: the sequential design decided after %d of %d processes\n", nrec, nslots);
            break;
        }
    }
    kg_watch_log(&wl, kg_mono_s() - t_session, -1, "end", "this run ended after %.3f s; device processes were told %s",
              kg_mono_s() - t_session, kg_quiet_match(&q));
    if ((rc = write_watch(dirfd, dir, &wl, err)) != KG_OK) goto done;
    progress(o, nslots, nslots, 0, kg_mono_s() - t0, pline, sizeof pline);
    if (nrec == 0 && (rc = kg_evidence_write_processes(dirfd, dir, recs, 0, err)) != KG_OK) goto done;
    if ((rc = kg_report_build(dir, an, NULL, err)) != KG_OK) goto done;
    if ((rc = kg_evidence_write_sums(dir, err)) != KG_OK) goto done;
    if ((rc = sign_folder(o, dir, dirfd, err)) != KG_OK) goto done;
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
    /* a worker still running is not recorded: --resume runs its slot */
    kg_wproc_discard(&next, dirfd);
    kg_wproc_discard(&cur, dirfd);
    kg_sb_free(&wl);
    kg_backend_close(be);
    kg_quiet_free(&q);
    kg_lock_release(lock_fd);
    if (dirfd >= 0) close(dirfd);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    sigaction(SIGPIPE, &old_pipe, NULL);
    free(recs);
    free(recorded);
    free(shard_on);
    kg_plan_free(plan);
    return rc;
}

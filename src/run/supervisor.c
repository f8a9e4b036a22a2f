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
 * Integrity: the device lock is held from before the device's peaks (and
 * before the arms are built, for a resumed campaign or a device every
 * user shares) to the end; before each process the host must be quiet for the quiet
 * window, and a poller repeats the checks every KG_QUIET_POLL_S while the
 * worker runs.  A process during which the host was not quiet is
 * recorded as "contaminated" (excluded from the analysis, its files kept)
 * and its schedule slot is run again, in the same direction, up to
 * max_repeats times.  The schedule is recomputed from processes.csv
 * alone, which is what makes resuming exact.  SHA256SUMS is written last. */
#include <errno.h>
#include <jansson.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>
#include "run/supervisor.h"
#include "run/archive.h"
#include "check/opfacts.h"
#include "toolchain/toolchain.h"
#include "toolchain/spawn.h"
#include "evidence/chain.h"
#include "plan/frozen.h"
#include "kgate/evidence.h"
#include "run/lock.h"
#include "run/quiet.h"
#include "report/report.h"
#include "report/screening.h"
#include "kgate/backend.h"
#include "kgate/op.h"
#include "plan/protocol.h"
#include "evidence/salt.h"
#include "plan/shard.h"
#include "evidence/ledger.h"
#include "run/attempt.h"
#include "base/safefs.h"
#include "evidence/attest.h"
#include "evidence/envrec.h"
#include "backend/libarm.h"
#include "base/util.h"
#include "run/wproc.h"

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

/* The time left, from the processes done so far: their time without
 * the waits for a quiet host (a wait says nothing of the next process's),
 * into buf; "" before the first process ends. */
static void eta_of(int i, int n, double elapsed, double waited, char *buf, size_t cap)
{
    buf[0] = '\0';
    if (i <= 0 || i >= n) return;
    double work = elapsed - waited;
    snprintf(buf, cap, "  ETA %.0f s", (work > 0 ? work : 0) / i * (n - i));
}

/* Prints the progress line (process i/n, direction, elapsed, ETA) and
 * keeps it in pline so that the worker's round can be appended. */
static void progress(const kg_run_opts *o, int i, int n, int dir, double elapsed, double waited, char *pline,
                     size_t cap)
{
    if (!o->progress) return;
    if (i >= n) {
        fprintf(stderr, "\r\033[Kkgate: %d/%d processes done in %.1f s\n", n, n, elapsed);
        return;
    }
    char eta[48];
    eta_of(i, n, elapsed, waited, eta, sizeof eta);
    snprintf(pline, cap, "kgate: process %d/%d (%s)  elapsed %.0f s%s", i + 1, n, dir == 0 ? "fwd" : "rev", elapsed,
             eta);
    fprintf(stderr, "\r\033[K%s", pline);
    fflush(stderr);
}

/* The next schedule slot to run and its attempt number, from the records
 * alone: a slot is done once it has a process that was not contaminated,
 * or once it has been contaminated 1 + max_repeats times in this run
 * (records from index first on: a resumed campaign tries again a slot an
 * earlier run gave up); a by-process shard's (shard_n > 0) own slots
 * only.  -1: all done. */
static int next_slot(const proc_rec *r, int n, int first, int nslots, int max_repeats, int shard_i, int shard_n,
                     int *attempt)
{
    for (int s = 0; s < nslots; s++) {
        int tries = 0, now = 0, done = 0;
        if (shard_n > 0 && kg_shard_of_slot(s, shard_n) != shard_i) continue;
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
 * ended, so the private key is read now and by this process alone.  A
 * campaign with a worker that was not this binary (watch.csv's worker
 * events, earlier runs of it included) is not signed. */
static int sign_folder(const kg_run_opts *o, const char *dir, int dirfd, int unvouched, kg_err *err)
{
    char keyid[65];
    const char *key = o->check_only ? NULL : o->key_path;
    if (key != NULL && unvouched > 0) {
        (void)kg_attest_write(dir, dirfd, NULL, keyid, NULL);
        return kg_errorf(err, KG_EINPUT, "%s: %d process(es) ran in a worker that is not this kgate binary (watch.csv's "
                         "worker events): the folder is left unsigned; run the campaign again without "
                         "KGATE_WORKER_WRAPPER's other binary to sign it", dir, unvouched);
    }
    return kg_attest_write(dir, dirfd, key, keyid, err);
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

/* ---- the campaign, stage by stage ------------------------------------- */

/* One campaign while it runs: what each stage leaves for the next. */
typedef struct campaign {
    const kg_run_opts *o;
    kg_settings s;            /* the environment's, and the negative the options ask for */
    kg_plan *plan;
    unsigned char *shard_on;  /* the cases of this shard (NULL: every case) */
    int by_process;           /* a by-process shard: only the slots kg_shard_of_slot gives it */
    char plan_abs[PATH_MAX];
    char dir[KG_PATH_MAX];
    int dirfd;                /* every write of the campaign's records goes through it */
    int made_dir;             /* this run created dir (it was not there before) */
    int fresh;                /* a new campaign's folder (not --resume): removed if refused before its
                               * first process */
    int scheduled;            /* the schedule began: the folder is evidence from here on */
    kg_backend *be;           /* open from the lock to the peaks */
    char notice[512], device[512], model[256], resolved[16];
    int lock_fd, lock_shared, lock_late;
    uint64_t salt;            /* the input salt (salt.h) */
    /* a shard's campaign id, ledger and attempt (attempt.h); cid[0] ==
     * '\0' for a whole campaign or a shard folder that predates them */
    char cid[KG_CAMPAIGN_ID_MAX + 1], ledger[PATH_MAX + 128];
    int attempt;
    char *ledger_text;
    int nslots;               /* schedule slots: 2 processes per direction, or 1 for check */
    proc_rec *recs;
    int nrec, capn, first_rec;
    kg_sb wl;                 /* watch.csv's rows */
    double t_session, build_s;
    kg_quiet q;
    kg_watch_ctx wc;
    kg_wspawn sp;
    int max_repeats, decided, never_quiet, started, per_look;
    int overlap_off;          /* a worker started beside another failed before timing: no more overlap */
    unsigned char *skip;      /* a screen's: per arm, dropped by the folder so far (report/screening.h) */
    kg_wproc cur, next;
    double t0;
    char pline[256];
    struct sigaction old_int, old_term, old_pipe;
    char exe_sha256[65];      /* this process's image ("": unreadable): every worker's must be it */
    int unvouched;            /* processes whose worker was not (watch.csv's worker events) */
} campaign;

/* DIR/name of the campaign's folder, into buf. */
static char *folder_path(const campaign *c, const char *name, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s/%s", c->dir, name);
    return buf;
}

/* Options and signals: the campaign's settings; SIGINT and SIGTERM stop
 * the running worker and leave a folder that --resume continues; a
 * worker gone before its go leaves a pipe without a reader (EPIPE), which
 * does not end the campaign; nothing of this process is readable by
 * others. */
static void stage_signals(campaign *c)
{
    const kg_run_opts *o = c->o;
    c->s = o->settings != NULL ? *o->settings : *kg_settings_defaults();
    if (o->negative) {
        c->s.negative = 1;
        if (o->negative_arm != NULL) c->s.negative_arm = o->negative_arm;
    }
    (void)prctl(PR_SET_DUMPABLE, 0);
    if (kg_exe_sha256(0, c->exe_sha256, NULL) != KG_OK) c->exe_sha256[0] = '\0';
    kg_stop_clear();
    struct sigaction sa, ign;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &c->old_int);
    sigaction(SIGTERM, &sa, &c->old_term);
    memset(&ign, 0, sizeof ign);
    ign.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &ign, &c->old_pipe);
}

/* A shard runs some of the cases, or some of the processes, of the same
 * plan (shard.h); neither a sequential design nor kgate check is
 * sharded. */
static int take_shard(campaign *c, kg_err *err)
{
    const kg_run_opts *o = c->o;
    if (o->shard_n <= 0) return KG_OK;
    if ((c->shard_on = calloc((size_t)c->plan->ncases + 1, 1)) == NULL)
        return kg_errorf(err, KG_ENOMEM, "out of memory");
    int rc = kg_shard_cases(c->plan, o->shard_i, o->shard_n, c->shard_on, err);
    if (rc < 0) return rc;
    c->by_process = kg_shard_by(c->plan, o->shard_n) == KG_SHARD_BY_PROCESS;
    if (c->plan->campaign.looks > 1)
        return kg_errorf(err, KG_EUSAGE, "%s: a sequential design (looks = %d) cannot be sharded: %s; run it whole, or "
                         "set looks = 1 (docs/scale-out.md, docs/statistics.md)", o->plan_path,
                         c->plan->campaign.looks, c->by_process ? "a shard sees only its own processes, so no shard "
                         "can take a look over the whole schedule while the campaign runs" :
                         "each shard would stop at its own look");
    if (o->check_only)
        return kg_errorf(err, KG_EUSAGE, "--shard: kgate check runs every case in one process; shard a campaign only");
    return KG_OK;
}

/* Every arm's kernel source or image exists, checked before the folder
 * and the device lock: a misspelled path is said at once, never after a
 * wait for another campaign.  The fake backend reads no kernel file. */
static int check_arm_files(const campaign *c, kg_err *err)
{
    const char *bname = c->o->backend != NULL ? c->o->backend : c->plan->campaign.backend;
    if (strcmp(bname, "auto") != 0 && !(kg_backend_caps_of(bname) & KG_CAP_EXECUTES)) return KG_OK;
    for (int a = 0; a < c->plan->narms; a++) {
        char path[KG_PATH_MAX];
        if (c->plan->arms[a].builtin[0] != '\0') continue;
        int rc = kg_plan_source_path(c->plan, a, path, sizeof path, err);
        if (rc != KG_OK) return rc;
    }
    return KG_OK;
}

/* Load the plan and bind its ops: the plan, its shard and device, its
 * own ops compiled and loaded here (trusted, like the plan) and checked,
 * its notes, the frozen plan it must match, its arms' files. */
static int stage_plan(campaign *c, kg_err *err)
{
    const kg_run_opts *o = c->o;
    int rc;
    if ((rc = kg_plan_load(o->plan_path, &c->plan, err)) != KG_OK) return rc;
    if ((o->smoke || c->plan->campaign.smoke) && (rc = kg_plan_smoke(c->plan, err)) != KG_OK) return rc;
    if ((rc = take_shard(c, err)) != KG_OK) return rc;
    /* the device of this run; the canonical plan and its hash stay the plan's */
    if (o->has_device) c->plan->campaign.device = o->device;
    if ((rc = kg_ops_bind(c->plan, &c->s, err)) != KG_OK) return rc;
    if ((rc = kg_plan_check_ops(c->plan, err)) != KG_OK) return rc;
    for (int i = 0; i < c->plan->nnotes; i++) fprintf(stderr, "kgate: note: %s\n", c->plan->notes[i]);
    if (o->frozen_path != NULL && (rc = kg_frozen_check(c->plan, o->frozen_path, err)) != KG_OK) return rc;
    /* a screen's plan runs under kgate screen; a smoke run and kgate check decide nothing */
    if (c->plan->campaign.screen && o->screen == 0 && !o->smoke && !c->plan->campaign.smoke && !o->check_only)
        return kg_errorf(err, KG_EUSAGE, "%s:%d: screen = yes: an exploration plan, whose processes need not complete "
                         "the load-order square; run it with `kgate screen %s` (its confirmation plan is the one to "
                         "run)", o->plan_path, c->plan->campaign.line > 0 ? c->plan->campaign.line : 1, o->plan_path);
    if (realpath(o->plan_path, c->plan_abs) == NULL)
        return kg_errorf(err, KG_EIO, "%s: %s", o->plan_path, strerror(errno));
    return check_arm_files(c, err);
}

/* The folder of a resumed campaign must hold this plan: its recorded
 * hash is the plan's (a difference is shown line by line). */
static int check_resumed_plan(campaign *c, kg_err *err)
{
    char path[KG_PATH_MAX + 64], *recorded = NULL, *canon = NULL;
    if (!kg_path_exists(folder_path(c, "plan.kg", path, sizeof path)))
        return kg_errorf(err, KG_EUSAGE, "%s holds no campaign to resume (no plan.kg): start it again without "
                         "--resume", c->dir);
    int rc = restore_plan_hash(c->dir, c->plan, err);
    if (rc == KG_OK) rc = kg_read_file(folder_path(c, "plan.sha256", path, sizeof path), &recorded, NULL, err);
    if (rc == KG_OK && strncmp(recorded, c->plan->hash, 64) != 0) {
        kg_sb diff = { 0 };
        if (kg_read_file(folder_path(c, "plan.kg", path, sizeof path), &canon, NULL, NULL) == KG_OK)
            kg_frozen_diff(canon, c->plan->canonical, &diff);
        rc = kg_errorf(err, KG_EINPUT, "%s is not the plan of %s (sha256 %.12s, campaign's %.12s): %s",
                       c->o->plan_path, c->dir, c->plan->hash, recorded, diff.buf ? diff.buf : "");
        kg_sb_free(&diff);
    }
    free(canon);
    free(recorded);
    return rc;
}

/* Open or resume the folder: -o DIR or kgate-out/NAME-UTCTIME; a new
 * campaign needs a folder without one, a resumed one the folder of this
 * plan.  *out_dir_used receives it. */
static int stage_folder(campaign *c, char *out_dir_used, size_t cap, kg_err *err)
{
    const kg_run_opts *o = c->o;
    char path[KG_PATH_MAX + 64];
    int rc;
    if (o->out_dir != NULL) {
        snprintf(c->dir, sizeof c->dir, "%s", o->out_dir);
    } else if (o->resume) {
        return kg_errorf(err, KG_EUSAGE, "--resume needs the campaign's folder");
    } else {
        char stamp[32];
        time_t t = time(NULL);
        struct tm tm;
        gmtime_r(&t, &tm);
        strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
        snprintf(c->dir, sizeof c->dir, "kgate-out/%s-%s%s", c->plan->campaign.name, stamp,
                 o->check_only ? "-check" : "");
    }
    if (o->resume) {
        if ((rc = check_resumed_plan(c, err)) != KG_OK) return rc;
    } else if (kg_path_exists(folder_path(c, "plan.kg", path, sizeof path))) {
        return kg_errorf(err, KG_EUSAGE, "%s already holds a campaign: choose another folder with -o, or --resume it",
                         c->dir);
    }
    if ((rc = kg_outdir_check(c->dir, o->resume, err)) != KG_OK) return rc;
    c->made_dir = !kg_path_exists(c->dir);
    if ((rc = kg_mkdir_p(c->dir, err)) != KG_OK) return rc;
    c->fresh = !o->resume;
    snprintf(out_dir_used, cap, "%s", c->dir);
    if ((c->dirfd = kg_open_dir(AT_FDCWD, c->dir, 0, err)) < 0) return c->dirfd;
    return KG_OK;
}

/* Take the device's lock, held to the end: a device every user of the
 * host shares (a GPU, watched as a device apart from the host's CPUs)
 * has a machine-wide lock; the host's CPUs the user's own (another
 * user's load is the host watch's to see). */
static int take_lock(campaign *c, kg_err *err)
{
    const kg_run_opts *o = c->o;
    char lock_name[128];
    kg_lock_name(c->resolved, c->device, lock_name, sizeof lock_name);
    return kg_lock_acquire(&c->s, lock_name, c->lock_shared, o->has_lock_timeout ? o->lock_timeout_s : -1,
                           o->progress, &c->lock_fd, err);
}

/* Open the backend; take the device's lock now, or, for a new campaign
 * on a lock of the user's own, once its arms are built (lock_late): a
 * kernel that does not compile is said at once, not after a wait for
 * another campaign.  A resumed campaign reads its records under the
 * lock, and a shared device (a GPU) is not touched before it. */
static int stage_backend(campaign *c, kg_err *err)
{
    const kg_run_opts *o = c->o;
    const char *bname = o->backend != NULL ? o->backend : c->plan->campaign.backend;
    int rc = kg_backend_open(bname, c->plan, &c->s, &c->be, c->notice, sizeof c->notice, err);
    if (rc != KG_OK) return rc;
    if (c->notice[0] != '\0') fprintf(stderr, "kgate: %s\n", c->notice);
    kg_backend_describe(c->be, c->device, sizeof c->device);
    snprintf(c->resolved, sizeof c->resolved, "%s", kg_backend_name(c->be));
    unsigned caps = kg_backend_caps_of(c->resolved);
    c->lock_shared = (caps & KG_CAP_QUIET_HOST) && !(caps & KG_CAP_HOST_CPU);
    c->lock_late = !o->resume && !c->lock_shared;
    return c->lock_late ? KG_OK : take_lock(c, err);
}

/* The lock of a campaign that built its arms first: taken now, before
 * the peaks; the wait is not the build's time. */
static int stage_lock_late(campaign *c, kg_err *err)
{
    if (!c->lock_late) return KG_OK;
    double t = kg_mono_s();
    int rc = take_lock(c, err);
    c->t_session += kg_mono_s() - t;
    return rc;
}

/* The input salt recorded in a resumed campaign's meta.json, which must
 * be the same shard as this run. */
static int resumed_salt(campaign *c, const char *path, kg_err *err)
{
    const kg_run_opts *o = c->o;
    char *mj = NULL;
    int found = 0;
    kg_shard_meta sm;
    int rc = kg_read_file(path, &mj, NULL, err);
    if (rc == KG_OK) rc = kg_salt_from_meta(mj, &c->salt, &found, err);
    if (rc == KG_OK && (rc = kg_evidence_shard_meta(mj, &sm, err)) == KG_OK &&
        (sm.count != o->shard_n || (sm.count > 0 && sm.index != o->shard_i))) {
        if (sm.count > 0)
            rc = kg_errorf(err, KG_EUSAGE, "%s is shard %d/%d of its campaign: resume it with --shard %d/%d", c->dir,
                           sm.index, sm.count, sm.index, sm.count);
        else
            rc = kg_errorf(err, KG_EUSAGE, "%s is a whole campaign, not a shard: resume it without --shard", c->dir);
    }
    free(mj);
    if (rc == KG_OK && !found)
        fprintf(stderr, "kgate: %s records no input salt (written by an older kgate): the resumed processes "
                "use the plan's seed alone, as its first ones did\n", path);
    return rc;
}

/* The run's facts for meta.json. */
static kg_meta meta_of(campaign *c)
{
    const kg_run_opts *o = c->o;
    kg_backend_device_model(c->device, c->model, sizeof c->model);
    kg_meta m = { .backend = c->resolved, .notice = c->notice, .device = c->device, .argc = o->argc,
                  .argv = o->argv, .check_only = o->check_only, .negative = o->negative,
                  .frozen_path = o->frozen_path, .device_index = c->plan->campaign.device, .device_model = c->model,
                  .shard_i = o->shard_i, .shard_n = o->shard_n, .shard_on = c->shard_on, .by_process = c->by_process,
                  .input_salt = c->salt,
                  .campaign_id = c->cid[0] != '\0' ? c->cid : NULL, .ledger_path = c->ledger,
                  .ledger_text = c->ledger_text, .attempt = c->attempt, .screen = o->screen == 1 };
    return m;
}

/* A resumed shard's campaign, from its meta.json: the same attempt goes on. */
static int resumed_attempt(campaign *c, const char *path, kg_err *err)
{
    char *mj = NULL;
    int rc = kg_read_file(path, &mj, NULL, err);
    if (rc != KG_OK) return rc;
    json_t *m = json_loads(mj, 0, NULL), *cp = json_object_get(m, "campaign");
    free(mj);
    const char *id = json_string_value(json_object_get(cp, "id"));
    const char *ledger = json_string_value(json_object_get(cp, "ledger"));
    if (id != NULL && kg_campaign_id_ok(id)) {
        snprintf(c->cid, sizeof c->cid, "%s", id);
        snprintf(c->ledger, sizeof c->ledger, "%s", ledger != NULL ? ledger : "");
        c->attempt = (int)json_integer_value(json_object_get(cp, "attempt"));
    }
    json_decref(m);
    if (c->o->campaign_id != NULL && strcmp(c->o->campaign_id, c->cid) != 0)
        return kg_errorf(err, KG_EUSAGE, "%s is attempt %d of campaign %s, not of --campaign %s: resume it with "
                         "--campaign %s (or without --campaign)", c->dir, c->attempt, c->cid[0] ? c->cid : "(none)",
                         c->o->campaign_id, c->cid[0] ? c->cid : "(none)");
    return KG_OK;
}

/* A new shard's attempt: numbered in the campaign's ledger (attempt.h),
 * whose lines through the run's own start line meta.json records. */
static int begin_attempt(campaign *c, kg_err *err)
{
    const kg_run_opts *o = c->o;
    if (o->campaign_id == NULL || !kg_campaign_id_ok(o->campaign_id))
        return kg_errorf(err, KG_EUSAGE, "--shard: a shard needs its campaign's id (--campaign ID: 1 to %d of "
                         "A-Z a-z 0-9 . _ -)", KG_CAMPAIGN_ID_MAX);
    snprintf(c->cid, sizeof c->cid, "%s", o->campaign_id);
    if (o->ledger_path != NULL) {
        snprintf(c->ledger, sizeof c->ledger, "%s", o->ledger_path);
    } else {
        char parent[KG_PATH_MAX + 8], real[PATH_MAX];
        snprintf(parent, sizeof parent, "%s/..", c->dir);
        if (realpath(parent, real) == NULL)
            return kg_errorf(err, KG_EIO, "%s: %s", parent, strerror(errno));
        snprintf(c->ledger, sizeof c->ledger, "%s/kgate-%s.ledger", real, c->cid);
    }
    char salt[19];
    kg_salt_format(c->salt, salt);
    int rc = kg_attempt_begin(c->ledger, c->cid, o->shard_i, o->shard_n, salt, &c->attempt, &c->ledger_text, err);
    if (rc == KG_OK)
        fprintf(stderr, "kgate: shard %d/%d of campaign %s: attempt %d (ledger %s)\n", o->shard_i, o->shard_n, c->cid,
                c->attempt, c->ledger);
    return rc;
}

/* The end of a shard's attempt in its ledger: the digest of its SHA256SUMS. */
static void end_attempt(campaign *c)
{
    if (c->cid[0] == '\0' || c->ledger[0] == '\0') return;
    char path[KG_PATH_MAX + 64], hex[65];
    kg_err e = { 0 };
    if (kg_sha256_file(folder_path(c, "SHA256SUMS", path, sizeof path), hex, &e) != KG_OK ||
        kg_attempt_end(c->ledger, c->cid, c->o->shard_i, c->o->shard_n, c->attempt, hex, &e) != KG_OK)
        fprintf(stderr, "kgate: warning: the ledger does not record the end of attempt %d: %s\n", c->attempt, e.msg);
}

/* Salt and meta: the input salt, drawn fresh for a new campaign (kgate
 * check too) or the recorded one when resuming (salt.h); then the
 * records: a resumed campaign's processes (the leftovers of an
 * interrupted one removed), a new one's plan.kg, plan.sha256 and
 * meta.json. */
static int stage_salt_meta(campaign *c, kg_err *err)
{
    const kg_run_opts *o = c->o;
    char path[KG_PATH_MAX + 64];
    int rc;
    c->nslots = o->check_only ? 1 : 2 * c->plan->campaign.processes;
    int resumed = o->resume && kg_path_exists(folder_path(c, "meta.json", path, sizeof path));
    if (resumed)
        rc = resumed_salt(c, path, err);
    else
        rc = kg_salt_draw(&c->salt, err);
    if (rc == KG_OK && o->shard_n > 0 && !o->check_only)
        rc = resumed ? resumed_attempt(c, path, err) : begin_attempt(c, err);
    if (rc != KG_OK) return rc;
    kg_meta meta = meta_of(c);
    if (o->resume) {
        if ((rc = kg_evidence_read_processes(c->dir, &c->recs, &c->nrec, err)) != KG_OK) return rc;
        /* room for every slot of the schedule */
        if (c->nrec < c->nslots) {
            proc_rec *p = realloc(c->recs, (size_t)c->nslots * sizeof *p);
            if (p == NULL) return kg_errorf(err, KG_ENOMEM, "out of memory");
            c->recs = p;
        }
        remove_leftovers(c->dirfd, c->nrec);
        if (!kg_path_exists(folder_path(c, "meta.json", path, sizeof path)) &&
            (rc = kg_evidence_write_meta(c->dirfd, c->dir, c->plan, &meta, err)) != KG_OK)
            return rc;
        if (!kg_path_exists(folder_path(c, "ops.json", path, sizeof path)) &&
            (rc = kg_opfacts_write(c->dirfd, c->dir, c->plan, err)) != KG_OK)
            return rc;
        fprintf(stderr, "kgate: resuming %s: %d process(es) recorded\n", c->dir, c->nrec);
        return KG_OK;
    }
    const kg_plan *plan = c->plan;
    char hashline[80];
    snprintf(hashline, sizeof hashline, "%s\n", plan->hash);
    if ((rc = kg_write_atomic_at(c->dirfd, "plan.kg", folder_path(c, "plan.kg", path, sizeof path), plan->canonical,
                                 strlen(plan->canonical), err)) != KG_OK ||
        (rc = kg_write_atomic_at(c->dirfd, "plan.sha256", folder_path(c, "plan.sha256", path, sizeof path), hashline,
                                 strlen(hashline), err)) != KG_OK ||
        (rc = kg_evidence_write_meta(c->dirfd, c->dir, plan, &meta, err)) != KG_OK ||
        /* what a reader needs to know of the ops, as data (ops.json) */
        (rc = kg_opfacts_write(c->dirfd, c->dir, plan, err)) != KG_OK)
        return rc;
    if ((c->recs = calloc((size_t)c->nslots, sizeof *c->recs)) == NULL)
        return kg_errorf(err, KG_ENOMEM, "out of memory");
    return KG_OK;
}

/* Prepare the folder: logs/, and the host watch's log: what an earlier
 * run of this campaign wrote, then this run's rows. */
static int stage_prepare(campaign *c, kg_err *err)
{
    char path[KG_PATH_MAX + 64];
    int rc;
    if ((rc = kg_mkdir_p(folder_path(c, "logs", path, sizeof path), err)) != KG_OK) return rc;
    kg_rows_begin(&c->wl, KG_ROWS_WATCH);
    if (c->o->resume && kg_path_exists(folder_path(c, "watch.csv", path, sizeof path))) {
        kg_watch_rec *old = NULL;
        size_t nold = 0;
        if ((rc = kg_rows_read_watch(path, &old, &nold, err)) != KG_OK) return rc;
        for (size_t i = 0; i < nold; i++) {
            kg_rows_put_watch(&c->wl, &old[i]);
            c->unvouched += strcmp(old[i].event, "worker") == 0;
        }
        free(old);
    }
    return KG_OK;
}

/* The sources the folder keeps: each arm's kernel source (chain.h) and
 * each declared op's (verify's op server builds the copy). */
static int copy_sources(campaign *c, kg_err *err)
{
    int rc = kg_chain_copy_sources(c->dirfd, c->dir, c->plan, err);
    if (rc == KG_OK) rc = kg_ops_copy_sources(c->dirfd, c->dir, c->plan, err);
    return rc;
}

/* Build the arms (and the sources, the op modules): every arm through
 * the backend's build slot, the declared ops for the workers, and
 * environment.json, written once every arm is built (a campaign stopped
 * before that builds again). */
static int stage_build(campaign *c, kg_err *err)
{
    const kg_run_opts *o = c->o;
    char path[KG_PATH_MAX + 64], build[KG_PATH_MAX + 64];
    int rc;
    c->t_session = kg_mono_s();
    if (o->resume && kg_path_exists(folder_path(c, "environment.json", path, sizeof path))) return KG_OK;
    folder_path(c, "build", build, sizeof build);
    for (int a = 0; a < c->plan->narms; a++) {
        if (kg_stop_requested())
            return kg_errorf(err, KG_EIO, "interrupted while building the arms: kgate run %s --resume %s "
                             "continues it", o->plan_path, c->dir);
        if ((rc = kg_backend_build(c->be, c->plan, a, build, err)) != KG_OK) return rc;
    }
    if ((rc = copy_sources(c, err)) != KG_OK) return rc;
    if ((rc = kg_ops_build(c->plan, &c->s, NULL, build, err)) != KG_OK) return rc;
    /* the compiler that builds the arms, where the backend names one */
    char compiler[512] = "";
    const char *cc = kg_backend_compiler(c->resolved, &c->s);
    if (cc != NULL) kg_tool_version(cc, compiler, sizeof compiler);
    /* what runs: the programs by SHA-256, and the environment (envrec.h) */
    char helper[65], ops_helper[65];
    kg_libarm_source_sha256(helper);
    kg_pyops_source_sha256(ops_helper);
    int library = 0, pyops = 0;
    for (int a = 0; a < c->plan->narms; a++) library |= kg_libarm_is(&c->plan->arms[a]);
    for (int k = 0; k < c->plan->nops; k++) pyops |= c->plan->ops[k].python;
    kg_envrec_in programs = { .env = c->s.environ_list, .path_env = c->s.path_env,
                              .worker_wrapper = c->s.worker_wrapper, .arm_host = c->s.armhost_exe,
                              .compiler = cc, .compiler_version = compiler,
                              .python = library ? (c->s.python != NULL ? c->s.python : "/usr/bin/python3") : NULL,
                              .python_flags = KG_LIBARM_PY_FLAGS, .helper_sha256 = helper,
                              .ops_python = pyops ? kg_python_pick(c->s.python) : NULL,
                              .ops_helper_sha256 = ops_helper, .ops_versions = kg_pyops_versions() };
    return kg_evidence_write_environment(c->dirfd, c->plan, c->dir, c->resolved, c->device,
                                         cc != NULL ? compiler : NULL, &programs, err);
}

/* Measure the peaks: the device's peaks (the physics limit), measured
 * once in trusted code with the lock held (a resumed campaign keeps its
 * record); then the backend is closed: no worker runs beside it. */
static int stage_peaks(campaign *c, kg_err *err)
{
    char path[KG_PATH_MAX + 64];
    int rc = KG_OK;
    if (!c->o->check_only && (!c->o->resume || !kg_path_exists(folder_path(c, "peaks.json", path, sizeof path)))) {
        kg_peaks pk;
        if ((rc = kg_backend_peaks(c->be, &pk, err)) == KG_OK)
            rc = kg_evidence_write_peaks(c->dirfd, c->dir, c->resolved, &pk, err);
    }
    kg_backend_close(c->be);
    c->be = NULL;
    c->build_s = kg_mono_s() - c->t_session;
    return rc;
}

/* The host watch: its window (none where timings do not depend on the
 * host, unless one is asked for), bounds and give-up, and the session's
 * first rows in its log. */
static void stage_watch(campaign *c)
{
    const kg_run_opts *o = c->o;
    const kg_campaign *cp = &c->plan->campaign;
    double window = o->has_quiet ? o->quiet_s : cp->quiet_s;
    if (!(kg_backend_caps_of(c->resolved) & KG_CAP_QUIET_HOST) && !o->has_quiet) window = 0;
    const char *forbid = o->forbid != NULL ? o->forbid : cp->forbid[0] ? cp->forbid : NULL;
    double max_load = o->max_load > 0 ? o->max_load : cp->max_load;
    kg_quiet_limits lim = { cp->max_steal, cp->max_foreign_cpu, cp->max_freq_change };
    kg_quiet_init(&c->q, &c->s, forbid, max_load, c->resolved, c->device, window, &lim);
    /* the arms were built while no worker ran: the quiet time counts from
     * the start of this run when nothing is seen now */
    c->q.quiet_since = c->t_session;
    double give_up = cp->quiet_timeout_s;
    double budget = o->has_quiet_budget ? o->quiet_budget_s : cp->quiet_budget_s;
    c->max_repeats = o->max_repeats == 0 ? cp->repeats : o->max_repeats < 0 ? 0 : o->max_repeats;
    const kg_quiet *q = &c->q;
    char budget_s[48] = "";
    if (budget > 0) snprintf(budget_s, sizeof budget_s, ", %g s in all", budget);
    kg_watch_log(&c->wl, 0, -1, "session", "quiet %g s, give up after %g s%s; forbid %s; max_load %g; max_steal %g%%, "
                 "max_foreign_cpu %g, max_freq_change %g%% (%s); device processes %s; repeats %d; clock warm-up %g s",
                 window, give_up, budget_s, q->forbid[0] ? q->forbid : q->observe[0] ? "(none judged; observed and recorded: "
                 "the cpu backend's default list)" : "(none)", q->max_load, 100 * q->lim.max_steal,
                 q->lim.max_foreign_cpu, 100 * q->lim.max_freq_change, q->cpu != NULL ? "watched" : "not watched",
                 q->procs != NULL ? "listed by the backend" : "not listed (the backend lists none)", c->max_repeats,
                 o->check_only ? 0 : cp->warm_s);
    kg_watch_log(&c->wl, c->build_s, -1, "build", "arms built%s in %.3f s",
                 o->check_only ? "" : " and the device's peaks measured", c->build_s);
    c->wc = (kg_watch_ctx){ o->check_only ? NULL : &c->q, &c->wl, window, give_up, budget, o->progress };
}

/* A sequential design that an earlier run already decided is final:
 * resuming it runs no further process. */
static void resumed_decision(campaign *c)
{
    const kg_run_opts *o = c->o;
    if (!o->resume || o->check_only || c->plan->campaign.looks <= 1 || c->nrec <= 0) return;
    kg_analysis pre;
    char *texts[KG_REPORT_MAX];
    kg_err perr = { 0 };
    if (kg_report_render(c->dir, &pre, texts, &perr) != KG_OK) return;
    c->decided = pre.seq_look > 0 && pre.seq_look < c->plan->campaign.looks;
    if (c->decided)
        fprintf(stderr, "kgate: the sequential design already decided at look %d of %d (%s): no further "
                "process runs\n", pre.seq_look, c->plan->campaign.looks, pre.seq_stop);
    kg_report_texts_free(texts);
    kg_analysis_free(&pre);
}

/* Room for `need` process records. */
static int grow_recs(campaign *c, int need, kg_err *err)
{
    proc_rec *p = realloc(c->recs, (size_t)need * sizeof *p);
    if (p == NULL) return kg_errorf(err, KG_ENOMEM, "out of memory");
    c->recs = p;
    c->capn = need;
    return KG_OK;
}

/* The schedule's set-up: room for the records, what every worker is
 * started with.  The next worker starts beside the current one once
 * that one's last timed phase is over (wproc.h), where the watch tells
 * kgate's device processes by identity and the plan allows it. */
static int stage_schedule(campaign *c, kg_err *err)
{
    const kg_run_opts *o = c->o;
    const kg_plan *plan = c->plan;
    c->first_rec = c->nrec;
    resumed_decision(c);
    c->capn = c->nrec + 2 > c->nslots ? c->nrec + 2 : c->nslots;
    if (o->resume && grow_recs(c, c->capn, err) != KG_OK) return KG_ENOMEM;
    c->sp = (kg_wspawn){ .s = &c->s, .plan = plan, .plan_path = o->plan_path, .plan_abs = c->plan_abs,
                         .dir = c->dir, .backend = c->resolved, .key_path = o->key_path, .dirfd = c->dirfd,
                         .lock_fd = c->lock_fd, .gated = c->wc.q != NULL, .progress = o->progress,
                         .check_only = o->check_only, .shard_i = o->shard_i, .shard_n = o->shard_n,
                         .by_process = c->by_process,
                         .has_device = o->has_device, .device = o->device, .salt = c->salt,
                         .timeout_s = plan->campaign.timeout_s,
                         .exe_sha256 = c->exe_sha256[0] != '\0' ? c->exe_sha256 : NULL,
                         .signing = o->key_path != NULL && !o->check_only, .unvouched = &c->unvouched,
                         .screen = o->screen == 1 };
    if (o->screen == 1) {
        if ((c->skip = calloc((size_t)plan->narms + 1, 1)) == NULL) return kg_errorf(err, KG_ENOMEM, "out of memory");
        c->sp.skip = c->skip;
    }
    c->per_look = plan->campaign.looks > 1 ? 2 * (plan->campaign.processes / plan->campaign.looks) : 0;
    c->t0 = kg_mono_s();
    return KG_OK;
}

/* A screen in screening mode: the candidates the folder's processes so
 * far drop (report/screening.h), which the next worker leaves out. */
static int screen_skips(campaign *c, kg_err *err)
{
    if (c->o->screen != 1 || c->nrec == 0) return KG_OK;
    kg_evidence ev;
    kg_screening sc;
    int rc = kg_evidence_load(c->dir, &ev, err);
    if (rc != KG_OK) return rc;
    if ((rc = kg_screening_derive(&ev, &sc, err)) == KG_OK) {
        for (int a = 0; a < c->plan->narms && a < sc.narms; a++) c->skip[a] = sc.arm[a].proc >= 0;
        kg_screening_free(&sc);
    }
    kg_evidence_free(&ev);
    return rc;
}

/* The worker of the next slot: the one started beside the one before it
 * (now the current one), else a fresh start; *slot -1 when every slot is
 * done. */
static int next_worker(campaign *c, int *slot, kg_err *err)
{
    const kg_run_opts *o = c->o;
    if (c->next.active) {
        c->cur = c->next;
        memset(&c->next, 0, sizeof c->next);
        kg_wproc_promote(&c->cur);
        *slot = c->cur.rec.slot;
        progress(o, *slot, c->nslots, c->cur.rec.dir, kg_mono_s() - c->t0, c->q.waited_s, c->pline, sizeof c->pline);
        return KG_OK;
    }
    int attempt = 0;
    *slot = next_slot(c->recs, c->nrec, c->first_rec, c->nslots, c->max_repeats, c->o->shard_i,
                      c->by_process ? c->o->shard_n : 0, &attempt);
    if (*slot < 0) return KG_OK;
    if (kg_stop_requested() != 0)
        return kg_errorf(err, KG_EIO, "interrupted: kgate run %s --resume %s continues it", o->plan_path, c->dir);
    memset(&c->cur, 0, sizeof c->cur);
    c->cur.rec.slot = *slot;
    c->cur.rec.attempt = attempt;
    c->cur.rec.dir = kg_protocol_direction(*slot);
    progress(o, *slot, c->nslots, c->cur.rec.dir, kg_mono_s() - c->t0, c->q.waited_s, c->pline, sizeof c->pline);
    /* the first worker of this run warms the device's clock first */
    double warm = o->check_only || c->started > 0 ? 0 : c->plan->campaign.warm_s;
    int rc = screen_skips(c, err);
    return rc != KG_OK ? rc : kg_wproc_start(&c->cur, &c->sp, c->nrec, warm, 0, err);
}

/* The current worker said its last timed phase is over: the next slot's
 * worker starts beside it, as if the current one were done (should it be
 * contaminated, its repeat comes after the next one); not across a
 * sequential design's look, which is analysed first, and no more once a
 * worker started so failed before timing (overlap_off).  Where device
 * processes are counted the next worker's are kgate's own too: its
 * descendants holding the device, or whose files it cannot read. */
static int start_beside(campaign *c, kg_err *err)
{
    if (c->next.active || !c->plan->campaign.overlap || c->wc.q == NULL || c->overlap_off) return KG_OK;
    c->recs[c->nrec] = c->cur.rec;
    snprintf(c->recs[c->nrec].status, sizeof c->recs[c->nrec].status, "ok");
    int att2 = 0, slot2 = next_slot(c->recs, c->nrec + 1, c->first_rec, c->nslots, c->max_repeats, c->o->shard_i,
                                    c->by_process ? c->o->shard_n : 0, &att2);
    if (slot2 < 0 || (c->per_look > 0 && slot2 % c->per_look == 0)) return KG_OK;
    memset(&c->next, 0, sizeof c->next);
    c->next.rec.slot = slot2;
    c->next.rec.attempt = att2;
    c->next.rec.dir = kg_protocol_direction(slot2);
    int rc = screen_skips(c, err);
    return rc != KG_OK ? rc : kg_wproc_start(&c->next, &c->sp, c->nrec + 1, 0, 1, err);
}

/* Runs the current worker to its end (starting the next beside it when
 * allowed) and takes its record; the lock names the worker still
 * running, if any. */
static int run_worker(campaign *c, kg_err *err)
{
    int rc;
    for (;;) {
        int said_done = 0;
        if ((rc = kg_wproc_drive(&c->cur, &c->next, &c->sp, &c->wc, c->o->progress ? c->pline : NULL, &said_done,
                                 err)) != KG_OK) {
            /* a worker refused for its binary is in the watch's log */
            if (c->unvouched > 0) (void)write_watch(c->dirfd, c->dir, &c->wl, NULL);
            return rc;
        }
        if (!said_done) break;
        if ((rc = start_beside(c, err)) != KG_OK) return rc;
    }
    rc = kg_wproc_finish(&c->cur, &c->sp, &c->wc, err);
    kg_lock_note_worker(c->lock_fd, c->next.active ? (long)c->next.pid : 0);
    if (rc != KG_OK && c->unvouched > 0) (void)write_watch(c->dirfd, c->dir, &c->wl, NULL);
    if (rc != KG_OK) return rc;
    c->recs[c->nrec] = c->cur.rec;
    /* a worker that never began timing leaves the clock cold */
    if (strncmp(c->cur.rec.reason, "not started", 11) != 0) c->started++;
    c->nrec++;
    return KG_OK;
}

/* A slot contaminated 1 + repeats times: the host never became quiet
 * enough; the campaign stops, INVALID (the analysis says why). */
static void judge_never_quiet(campaign *c, int slot)
{
    int tries = 0, clean = 0;
    for (int i = 0; i < c->nrec; i++)
        if (c->recs[i].slot == slot) {
            tries += i >= c->first_rec;
            clean |= strcmp(c->recs[i].status, "contaminated") != 0;
        }
    if (!clean && tries > c->max_repeats) {
        c->never_quiet = 1;
        kg_watch_log(&c->wl, 0, c->nrec - 1, "never-quiet", "slot %d was contaminated %d time(s), the last: %s", slot,
                     tries, c->recs[c->nrec - 1].reason);
    } else if (!clean && c->cur.budget_spent) {
        c->never_quiet = 2;
        kg_watch_log(&c->wl, c->q.waited_s, c->nrec - 1, "never-quiet", "the waits for a quiet host passed the "
                     "campaign's budget of %g s at slot %d: %s", c->wc.budget_s, slot, c->recs[c->nrec - 1].reason);
    }
}

/* A worker started beside the one before it that ended before it timed
 * anything (a failed start: on a GPU, two workers' arm hosts may hold more
 * contexts than the device gives) turns the overlap off for the rest of
 * the run; its failure is recorded as any worker's. */
static void overlap_check(campaign *c)
{
    const proc_rec *r = &c->recs[c->nrec - 1];
    if (c->overlap_off || !c->cur.started_beside || r->accepted || r->timed_s > 0.0 ||
        strcmp(r->status, "contaminated") == 0)
        return;
    c->overlap_off = 1;
    kg_watch_log(&c->wl, 0, c->nrec - 1, "overlap-off", "process %d, started beside process %d, ended before it "
                 "timed (%s: %.200s): from here each worker starts after the one before it", c->nrec - 1,
                 c->nrec - 2, r->status, r->reason);
}

/* The records after a process: the chain, processes.csv first (a log row
 * never names a process the folder does not record), then watch.csv. */
static int write_records(campaign *c, kg_err *err)
{
    int rc;
    if ((rc = kg_chain_seal(c->dirfd, c->plan->hash, c->recs, c->nrec, err)) != KG_OK) return rc;
    if ((rc = kg_evidence_write_processes(c->dirfd, c->dir, c->recs, c->nrec, err)) != KG_OK) return rc;
    if ((rc = write_watch(c->dirfd, c->dir, &c->wl, err)) != KG_OK) return rc;
    const proc_rec *r = &c->recs[c->nrec - 1];
    if (!r->accepted && (c->o->progress || c->o->progress_lines || strcmp(r->status, "contaminated") == 0))
        fprintf(stderr, "%skgate: process %d %s: %s\n", c->o->progress ? "\r\033[K" : "", c->nrec - 1, r->status,
                r->reason);
    else if (c->o->progress_lines) {
        /* not a terminal: one line per process, for a log */
        int done = 0;
        for (int s = 0; s < c->nslots; s++)
            for (int i = 0; i < c->nrec; i++)
                if (c->recs[i].slot == s && strcmp(c->recs[i].status, "contaminated") != 0) {
                    done++;
                    break;
                }
        char eta[48];
        double elapsed = kg_mono_s() - c->t0;
        eta_of(done, c->nslots, elapsed, c->q.waited_s, eta, sizeof eta);
        fprintf(stderr, "kgate: process %d/%d %s (%s) in %.1f s  elapsed %.0f s%s\n", done, c->nslots, r->status,
                r->dir == 0 ? "fwd" : "rev", r->seconds, elapsed, eta);
    }
    return KG_OK;
}

/* Sequential looks and the never-quiet stop: 1 when no further process
 * runs (the worker started beside the last one is discarded). */
static int stop_now(campaign *c, int slot, kg_err *err)
{
    const kg_run_opts *o = c->o;
    if (c->never_quiet) {
        kg_wproc_discard(&c->next, c->dirfd);
        const char *cr = o->progress ? "\r\033[K" : "";
        if (c->never_quiet == 2)
            fprintf(stderr, "%skgate: the host never became quiet: the waits passed the campaign's budget of %.0f s",
                    cr, c->wc.budget_s);
        else
            fprintf(stderr, "%skgate: the host never became quiet: slot %d was contaminated %d time(s)", cr, slot,
                    1 + c->max_repeats);
        fprintf(stderr, "; the campaign stops INVALID.  To go on: `kgate run %s --resume %s` when the host is "
                "quieter; add `--quiet-window 0` to time without waiting (the watch still records the host's "
                "load), or `--quiet-budget S` to wait longer\n", o->plan_path, c->dir);
        return 1;
    }
    if (!o->check_only && c->plan->campaign.looks > 1 &&
        look_decided(c->plan, c->recs, c->nrec, c->nslots, c->dir, err)) {
        kg_wproc_discard(&c->next, c->dirfd);
        fprintf(stderr, "\r\033[Kkgate: the sequential design decided after %d of %d processes\n", c->nrec,
                c->nslots);
        return 1;
    }
    return 0;
}

/* The schedule loop: one worker per slot until every slot is done, the
 * host never became quiet, or a sequential look decided. */
static int stage_loop(campaign *c, kg_err *err)
{
    int rc;
    while (!c->decided) {
        int slot;
        if ((rc = next_worker(c, &slot, err)) != KG_OK) return rc;
        if (slot < 0) break;
        if (c->nrec + 2 > c->capn && grow_recs(c, 2 * (c->nrec + 2), err) != KG_OK) return KG_ENOMEM;
        if ((rc = run_worker(c, err)) != KG_OK) return rc;
        judge_never_quiet(c, slot);
        overlap_check(c);
        if ((rc = write_records(c, err)) != KG_OK) return rc;
        if (c->cur.refused[0] != '\0') {
            /* the plan cannot run here: the same in every process, so no other is started */
            kg_wproc_discard(&c->next, c->dirfd);
            return kg_errorf(err, KG_EINPUT, "process %d: %s", c->nrec - 1, c->cur.refused);
        }
        if (stop_now(c, slot, err)) break;
    }
    return KG_OK;
}

/* Reports: the watch's last row, the end of the progress line, and the
 * analysis and reports from the folder alone (kg_report_build). */
static int stage_reports(campaign *c, kg_analysis *an, kg_err *err)
{
    double t = kg_mono_s() - c->t_session;
    kg_watch_log(&c->wl, t, -1, "end", "this run ended after %.3f s; device processes were told %s", t,
                 kg_quiet_match(&c->q));
    int rc = write_watch(c->dirfd, c->dir, &c->wl, err);
    if (rc != KG_OK) return rc;
    progress(c->o, c->nslots, c->nslots, 0, kg_mono_s() - c->t0, c->q.waited_s, c->pline, sizeof c->pline);
    if (c->nrec == 0 && (rc = kg_evidence_write_processes(c->dirfd, c->dir, c->recs, 0, err)) != KG_OK) return rc;
    return kg_report_build(c->dir, an, NULL, err);
}

/* Archive: DIR.tar.gz next to the folder, a convenience whose failure
 * leaves the campaign whole. */
static void stage_archive(const campaign *c)
{
    if (!c->o->archive) return;
    char tgz[KG_PATH_MAX + 16];
    kg_err aerr = { 0 };
    if (kg_archive_write(c->dir, tgz, sizeof tgz, &aerr) != KG_OK)
        fprintf(stderr, "kgate: no archive: %s\n", aerr.msg);
    else
        fprintf(stderr, "kgate: archive %s\n", tgz);
}

/* Everything the campaign holds, released; a worker still running is not
 * recorded: --resume runs its slot. */
static void campaign_close(campaign *c)
{
    kg_wproc_discard(&c->next, c->dirfd);
    kg_wproc_discard(&c->cur, c->dirfd);
    kg_sb_free(&c->wl);
    kg_backend_close(c->be);
    kg_quiet_free(&c->q);
    kg_lock_release(c->lock_fd);
    if (c->dirfd >= 0) close(c->dirfd);
    sigaction(SIGINT, &c->old_int, NULL);
    sigaction(SIGTERM, &c->old_term, NULL);
    sigaction(SIGPIPE, &c->old_pipe, NULL);
    free(c->recs);
    free(c->shard_on);
    free(c->skip);
    free(c->ledger_text);
    kg_plan_free(c->plan);
}

/* nftw: one entry of a refused campaign's folder, below the folder itself */
static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    if (ftw->level > 0) (void)(flag == FTW_DP ? rmdir(path) : unlink(path));
    return 0;
}

/* A new campaign refused before its first process (a plan its backend
 * refuses, a kernel that does not compile, no lock): what it wrote goes,
 * so that the same -o works once the cause is fixed; a folder that was
 * there (empty) stays, empty. */
static void remove_refused(campaign *c, char *out_dir_used)
{
    if (!c->fresh || c->scheduled || c->dir[0] == '\0') return;
    /* a shard whose attempt the ledger already records keeps its folder:
     * merge needs every attempt, and --resume continues this one */
    if (c->attempt > 0) {
        fprintf(stderr, "kgate: %s kept: the ledger records it as attempt %d of shard %d/%d (kgate run --resume "
                "continues it)\n", c->dir, c->attempt, c->o->shard_i, c->o->shard_n);
        return;
    }
    if (c->dirfd >= 0) {
        close(c->dirfd);
        c->dirfd = -1;
    }
    nftw(c->dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    if (c->made_dir) rmdir(c->dir);
    out_dir_used[0] = '\0';
}

int kg_campaign_run(const kg_run_opts *o, char *out_dir_used, size_t cap, kg_analysis *an, kg_err *err)
{
    campaign *c = calloc(1, sizeof *c);
    if (c == NULL) return kg_errorf(err, KG_ENOMEM, "out of memory starting the campaign");
    c->o = o;
    c->lock_fd = c->dirfd = -1;
    memset(an, 0, sizeof *an);
    stage_signals(c);
    int rc;
    if ((rc = stage_plan(c, err)) != KG_OK) goto done;
    if ((rc = stage_folder(c, out_dir_used, cap, err)) != KG_OK) goto done;
    if ((rc = stage_backend(c, err)) != KG_OK) goto done;
    if ((rc = stage_salt_meta(c, err)) != KG_OK) goto done;
    if ((rc = stage_prepare(c, err)) != KG_OK) goto done;
    if ((rc = stage_build(c, err)) != KG_OK) goto done;
    if ((rc = stage_lock_late(c, err)) != KG_OK) goto done;
    if ((rc = stage_peaks(c, err)) != KG_OK) goto done;
    stage_watch(c);
    if ((rc = stage_schedule(c, err)) != KG_OK) goto done;
    c->scheduled = 1;
    if ((rc = stage_loop(c, err)) != KG_OK) goto done;
    if ((rc = stage_reports(c, an, err)) != KG_OK) goto done;
    if ((rc = kg_evidence_write_sums(c->dir, err)) != KG_OK) goto done;
    if ((rc = sign_folder(o, c->dir, c->dirfd, c->unvouched, err)) != KG_OK) goto done;
    end_attempt(c);
    stage_archive(c);
done:
    /* the reports may have been analysed before a later stage failed */
    if (rc != KG_OK) kg_analysis_free(an);
    if (rc != KG_OK) remove_refused(c, out_dir_used);
    campaign_close(c);
    free(c);
    return rc;
}

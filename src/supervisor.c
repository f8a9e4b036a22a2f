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
#include "supervisor.h"
#include "archive.h"
#include "chain.h"
#include "channel.h"
#include "frozen.h"
#include "kgate/evidence.h"
#include "lock.h"
#include "quiet.h"
#include "report.h"
#include "kgate/backend.h"
#include "kgate/op.h"
#include "protocol.h"
#include "salt.h"
#include "safefs.h"
#include "attest.h"
#include "token.h"
#include <openssl/crypto.h>
#include "util.h"

extern char **environ;

typedef kg_proc_rec proc_rec;

/* SIGINT or SIGTERM while a campaign runs (kg_stop_requested). */
static void on_stop(int sig)
{
    kg_stop_request(sig);
}

/* Writes one file of a process's records into the subfolder sub of the
 * evidence folder (dirfd), through openat: no path is resolved again. */
static int store(int dirfd, const char *dir, const char *sub, const char *name, const void *data, size_t len,
                 kg_err *err)
{
    char shown[KG_PATH_MAX + 128];
    snprintf(shown, sizeof shown, "%s/%s/%s", dir, sub, name);
    int sfd = kg_open_dir(dirfd, sub, 1, err);
    if (sfd < 0) return sfd;
    int rc = kg_write_atomic_at(sfd, name, shown, data, len, err);
    close(sfd);
    return rc;
}

/* Checks every record a worker sent with the strict readers of rows.c.
 * KG_OK: they are whole and of this process; otherwise an error naming
 * the record, the line and the column (the process is then refused). */
static int check_records(const kg_plan *plan, const kg_chan *ch, int proc, kg_err *err)
{
    static const struct { int kind; const char *what; } need[] = {
        { KG_FRAME_CHECKS, "checks" }, { KG_FRAME_OUTPUTS, "outputs index" }, { KG_FRAME_OUTPUTS_BIN, "outputs" },
        { KG_FRAME_RAW, "raw rows" },
    };
    for (size_t i = 0; i < sizeof need / sizeof need[0]; i++)
        if (ch->part[need[i].kind] == NULL)
            return kg_errorf(err, KG_EINPUT, "process %d sent no %s", proc, need[i].what);
    if ((ch->part[KG_FRAME_TELEMETRY] == NULL) != (ch->part[KG_FRAME_RESOURCES] == NULL))
        return kg_errorf(err, KG_EINPUT, "process %d sent telemetry or resources without the other", proc);
    char name[64];
    kg_row *raw = NULL;
    kg_check_rec *chk = NULL;
    kg_tel_rec *tel = NULL;
    kg_res_rec *res = NULL;
    kg_out_rec *out = NULL;
    size_t nraw = 0, nchk = 0, ntel = 0, nres = 0, nout = 0;
    int rc;
    snprintf(name, sizeof name, "checks/proc-%03d.csv (sent)", proc);
    if ((rc = kg_rows_parse_checks(name, ch->part[KG_FRAME_CHECKS], ch->partlen[KG_FRAME_CHECKS], plan, proc, &chk,
                                   &nchk, err)) != KG_OK)
        goto done;
    snprintf(name, sizeof name, "outputs/proc-%03d.csv (sent)", proc);
    if ((rc = kg_rows_parse_out(name, ch->part[KG_FRAME_OUTPUTS], ch->partlen[KG_FRAME_OUTPUTS], plan, proc, &out,
                                &nout, err)) != KG_OK)
        goto done;
    for (size_t i = 0; i < nout; i++)
        if (out[i].offset > ch->partlen[KG_FRAME_OUTPUTS_BIN] ||
            out[i].stored > ch->partlen[KG_FRAME_OUTPUTS_BIN] - out[i].offset) {
            rc = kg_errorf(err, KG_EINPUT, "%s:%zu: names bytes %zu..%zu of %zu sent", name, i + 2, out[i].offset,
                           out[i].offset + out[i].stored, ch->partlen[KG_FRAME_OUTPUTS_BIN]);
            goto done;
        }
    if (ch->part[KG_FRAME_TELEMETRY] != NULL) {
        snprintf(name, sizeof name, "telemetry/proc-%03d.csv (sent)", proc);
        if ((rc = kg_rows_parse_tel(name, ch->part[KG_FRAME_TELEMETRY], ch->partlen[KG_FRAME_TELEMETRY], plan, proc,
                                    &tel, &ntel, err)) != KG_OK)
            goto done;
        snprintf(name, sizeof name, "telemetry/resources-%03d.csv (sent)", proc);
        if ((rc = kg_rows_parse_res(name, ch->part[KG_FRAME_RESOURCES], ch->partlen[KG_FRAME_RESOURCES], plan, proc,
                                    &res, &nres, err)) != KG_OK)
            goto done;
    }
    snprintf(name, sizeof name, "raw/proc-%03d.csv (sent)", proc);
    rc = kg_rows_parse_raw(name, ch->part[KG_FRAME_RAW], ch->partlen[KG_FRAME_RAW], plan, proc, &raw, &nraw, err);
done:
    free(raw);
    free(chk);
    free(tel);
    free(res);
    free(out);
    return rc;
}

/* Writes the checked records of a process, checks first and raw last (a
 * process whose raw file exists is complete).  Any failure is an error
 * that stops the campaign: the process is not recorded, and --resume
 * runs its slot again. */
static int store_records(int dirfd, const char *dir, const kg_chan *ch, int proc, kg_err *err)
{
    char name[32];
    int rc;
    snprintf(name, sizeof name, "proc-%03d.csv", proc);
    if ((rc = store(dirfd, dir, "checks", name, ch->part[KG_FRAME_CHECKS], ch->partlen[KG_FRAME_CHECKS], err)) !=
        KG_OK)
        return rc;
    /* the data before its index: an index never names bytes that are not there */
    snprintf(name, sizeof name, "proc-%03d.bin", proc);
    if ((rc = store(dirfd, dir, "outputs", name, ch->part[KG_FRAME_OUTPUTS_BIN], ch->partlen[KG_FRAME_OUTPUTS_BIN],
                    err)) != KG_OK)
        return rc;
    snprintf(name, sizeof name, "proc-%03d.csv", proc);
    if ((rc = store(dirfd, dir, "outputs", name, ch->part[KG_FRAME_OUTPUTS], ch->partlen[KG_FRAME_OUTPUTS], err)) !=
        KG_OK)
        return rc;
    if (ch->part[KG_FRAME_TELEMETRY] != NULL) {
        if ((rc = store(dirfd, dir, "telemetry", name, ch->part[KG_FRAME_TELEMETRY], ch->partlen[KG_FRAME_TELEMETRY],
                        err)) != KG_OK)
            return rc;
        snprintf(name, sizeof name, "resources-%03d.csv", proc);
        if ((rc = store(dirfd, dir, "telemetry", name, ch->part[KG_FRAME_RESOURCES], ch->partlen[KG_FRAME_RESOURCES],
                        err)) != KG_OK)
            return rc;
        snprintf(name, sizeof name, "proc-%03d.csv", proc);
    }
    return store(dirfd, dir, "raw", name, ch->part[KG_FRAME_RAW], ch->partlen[KG_FRAME_RAW], err);
}

/* A worker that died (how: "killed by signal 11 (...)") while its last
 * NOW frame named an arm: a failed "fault" check of that arm in
 * checks/proc-NNN.csv, written by the supervisor.  The process stays
 * excluded; evidence.c folds the check into the arm's state. */
static int record_fault(int dirfd, const char *dir, const kg_plan *plan, const kg_chan *ch, int proc, int pdir,
                        const char *how, char *reason, size_t cap, kg_err *err)
{
    if (!ch->now_set || ch->now_case < 0 || ch->now_case >= plan->ncases || ch->now_arm < 0 ||
        ch->now_arm >= plan->narms)
        return KG_OK;
    kg_check_rec k;
    memset(&k, 0, sizeof k);
    k.proc = proc;
    k.dir = pdir;
    k.kase = ch->now_case;
    k.arm = ch->now_arm;
    k.phase = ch->now_phase == KG_NOW_CHECK_AFTER ? KG_PHASE_POST : KG_PHASE_PRE;
    snprintf(k.check, sizeof k.check, "%s", KG_CHECK_FAULT);
    k.pass = 0;
    char where[160];
    if (ch->now_phase == KG_NOW_TIME && ch->now_round >= 0 && ch->now_round < plan->campaign.rounds)
        snprintf(where, sizeof where, "round %d/%d", ch->now_round + 1, plan->campaign.rounds);
    else
        snprintf(where, sizeof where, "%s", kg_now_phase_name(ch->now_phase));
    snprintf(k.detail, sizeof k.detail, "worker %s while running arm %s, case %s, %s", how,
             plan->arms[k.arm].name, plan->cases[k.kase].name, where);
    snprintf(reason, cap, "%s", k.detail);
    kg_sb sb = { 0 };
    /* checks the worker sent before it died are kept when they parse */
    kg_check_rec *sent = NULL;
    size_t nsent = 0;
    kg_err perr = { 0 };
    if (ch->part[KG_FRAME_CHECKS] != NULL &&
        kg_rows_parse_checks("sent checks", ch->part[KG_FRAME_CHECKS], ch->partlen[KG_FRAME_CHECKS], plan, proc,
                             &sent, &nsent, &perr) == KG_OK)
        kg_sb_printf(&sb, "%.*s", (int)ch->partlen[KG_FRAME_CHECKS], ch->part[KG_FRAME_CHECKS]);
    else
        kg_rows_begin(&sb, KG_ROWS_CHECKS);
    free(sent);
    kg_rows_put_check(&sb, plan, &k);
    char name[32];
    snprintf(name, sizeof name, "proc-%03d.csv", proc);
    int rc = sb.oom ? kg_errorf(err, KG_ENOMEM, "out of memory") : store(dirfd, dir, "checks", name, sb.buf, sb.len, err);
    kg_sb_free(&sb);
    return rc;
}

/* One row of the host watch's log (watch.csv), dated now. */
static void watch_log(kg_sb *wl, double seconds, int proc, const char *event, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static void watch_log(kg_sb *wl, double seconds, int proc, const char *event, const char *fmt, ...)
{
    if (wl == NULL) return;
    kg_watch_rec r;
    memset(&r, 0, sizeof r);
    kg_utc_now(r.utc, sizeof r.utc);
    r.seconds = seconds > 0 ? seconds : 0;
    r.proc = proc;
    snprintf(r.event, sizeof r.event, "%s", event);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r.detail, sizeof r.detail, fmt, ap);
    va_end(ap);
    kg_rows_put_watch(wl, &r);
}

/* The reasons the watch found since the last call, into the log. */
static void watch_drain(kg_quiet *q, kg_sb *wl, int proc)
{
    char why[512];
    while (kg_quiet_take(q, why, sizeof why)) watch_log(wl, 0, proc, "not-quiet", "%s", why);
    if (q->dropped > 0) {
        watch_log(wl, 0, proc, "not-quiet", "%d further change(s) of reason not listed", q->dropped);
        q->dropped = 0;
    }
}

/* NVML's clock event reasons that slow the device for reasons outside
 * the kernel: hardware slowdown, software and hardware thermal slowdown,
 * the power brake.  A power cap (KG_CLOCK_POWER_CAP) is only noted. */
#define KG_CLOCK_ENV_SLOWDOWN 0xE8ull
#define KG_CLOCK_POWER_CAP 0x4ull

/* What the worker's own telemetry saw of the environment: 1 and why when
 * a foreign compute process or a hardware or thermal slowdown was read
 * during timing, or a power cap while some arm's timing:escape check
 * failed (the timing-integrity checks are then the environment's, not
 * the arm's); a power cap alone goes to note. */
static int env_seen(const kg_plan *plan, const kg_chan *ch, int proc, char *why, size_t cap, char *note, size_t note_cap)
{
    why[0] = note[0] = '\0';
    if (ch->part[KG_FRAME_TELEMETRY] == NULL) return 0;
    kg_tel_rec *tel = NULL;
    kg_check_rec *chk = NULL;
    size_t ntel = 0, nchk = 0;
    kg_err e = { 0 };
    int bad = 0;
    if (kg_rows_parse_tel("telemetry", ch->part[KG_FRAME_TELEMETRY], ch->partlen[KG_FRAME_TELEMETRY], plan, proc,
                          &tel, &ntel, &e) != KG_OK) {
        free(tel);
        return 0;   /* check_records has refused such rows already */
    }
    size_t nforeign = 0, nslow = 0, ncap = 0;
    const kg_tel_rec *first_f = NULL, *first_s = NULL;
    unsigned long long slow_bits = 0;
    for (size_t i = 0; i < ntel; i++) {
        if (tel[i].foreign_procs > 0 && nforeign++ == 0) first_f = &tel[i];
        if (tel[i].reasons & KG_CLOCK_ENV_SLOWDOWN) {
            if (nslow++ == 0) first_s = &tel[i];
            slow_bits |= tel[i].reasons & KG_CLOCK_ENV_SLOWDOWN;
        }
        if (tel[i].reasons & KG_CLOCK_POWER_CAP) ncap++;
    }
    if (first_f != NULL) {
        snprintf(why, cap, "the worker's telemetry read %d foreign compute process(es) on the device in %zu of %zu "
                 "samples, first in case %s, round %d", first_f->foreign_procs, nforeign, ntel,
                 plan->cases[first_f->kase].name, first_f->round + 1);
        bad = 1;
    } else if (first_s != NULL) {
        snprintf(why, cap, "the device slowed its clocks (clock event reasons 0x%llx: hardware or thermal slowdown) in "
                 "%zu of %zu samples, first in case %s, round %d", slow_bits, nslow, ntel,
                 plan->cases[first_s->kase].name, first_s->round + 1);
        bad = 1;
    } else if (ncap > 0) {
        int escapes = 0;
        if (ch->part[KG_FRAME_CHECKS] != NULL &&
            kg_rows_parse_checks("checks", ch->part[KG_FRAME_CHECKS], ch->partlen[KG_FRAME_CHECKS], plan, proc, &chk,
                                 &nchk, &e) == KG_OK)
            for (size_t i = 0; i < nchk; i++) escapes += !chk[i].pass && strcmp(chk[i].check, KG_CHECK_ESCAPE) == 0;
        if (escapes > 0) {
            snprintf(why, cap, "%d timing:escape check(s) failed while the device was power-capped (%zu of %zu samples)",
                     escapes, ncap, ntel);
            bad = 1;
        } else {
            snprintf(note, note_cap, "the device was power-capped (clock event reason 0x4) in %zu of %zu samples", ncap,
                     ntel);
        }
    }
    free(tel);
    free(chk);
    return bad;
}

/* The worker's PHASES frame: setup, checks and timed seconds; -1 each
 * when it sent none or it does not parse. */
static void read_phases(const kg_chan *ch, kg_proc_rec *rec)
{
    rec->setup_s = rec->checks_s = rec->timed_s = -1;
    const char *p = ch->part[KG_FRAME_PHASES];
    size_t n = ch->partlen[KG_FRAME_PHASES];
    if (p == NULL || n == 0 || n > 95) return;
    char buf[96];
    memcpy(buf, p, n);
    buf[n] = '\0';
    double a, b, c;
    char end;
    if (sscanf(buf, "%lf %lf %lf%c", &a, &b, &c, &end) == 4 && end == '\n' && a >= 0 && b >= 0 && c >= 0 &&
        a < 1e9 && b < 1e9 && c < 1e9) {
        rec->setup_s = a;
        rec->checks_s = b;
        rec->timed_s = c;
    }
}

/* Starts one worker and waits for it, killing its process group when it
 * passes timeout_s.  Its records come through a pipe (channel.h); the
 * supervisor checks them with rows.c and writes them through dirfd.
 * When q is not NULL the host is watched meanwhile; when pline is not
 * NULL the worker's round is shown after it.  The negative arms of s are
 * passed on its command line.  An error return (a failed write, a
 * signal to stop) leaves the process unrecorded. */
/* The host watch while a worker runs (run_worker): q (NULL: none, the
 * worker is not gated), its log, the quiet window and the give-up. */
typedef struct watch_ctx {
    kg_quiet *q;
    kg_sb *wl;
    double window_s, give_up_s;
} watch_ctx;

/* One worker, from its start to its records.  It starts at once and does
 * its set-up and checks before timing on any host; before its first
 * timed phase it says it is ready and waits until the host has been quiet
 * for the window (the go pipe).  From the go on, whatever the watch sees
 * contaminates the process.  A host that stays busy for give_up seconds
 * after the worker is ready ends it: a contaminated process that never
 * started timing. */
static int run_worker(const kg_run_opts *o, const kg_settings *s, const kg_plan *plan, const char *plan_abs,
                      const char *dir, int dirfd, const char *backend, int proc, double timeout_s,
                      const watch_ctx *wc, const char *pline, int lock_fd, uint64_t salt, double warm_s,
                      proc_rec *rec, kg_err *err)
{
    kg_quiet *q = wc->q;
    kg_sb *wl = wc->wl;
    char exe[PATH_MAX], procs[16], slots[16], log[KG_PATH_MAX + 64], fdarg[16], parent[24], saltarg[16];
    int rc = kg_self_exe(exe, sizeof exe, err);
    if (rc != KG_OK) return rc;
    snprintf(procs, sizeof procs, "%d", proc);
    snprintf(slots, sizeof slots, "%d", rec->slot);
    snprintf(log, sizeof log, "%s/logs/proc-%03d.log", dir, proc);
    snprintf(parent, sizeof parent, "%ld", (long)getpid());
    /* KGATE_WORKER_WRAPPER (e.g. "compute-sanitizer --tool memcheck
     * --error-exitcode 86"): a program the worker runs under. */
    char wrap[1024] = "";
    if (s->worker_wrapper != NULL) snprintf(wrap, sizeof wrap, "%s", s->worker_wrapper);
    char *argv[60];
    int n = 0;
    for (char *tok = strtok(wrap, " "); tok != NULL && n < 30; tok = strtok(NULL, " ")) argv[n++] = tok;
    int wrapped = n > 0;
    /* the pipe: its read end stays here; the write end is the worker's
     * only way to record anything */
    int pfd[2];
    if (pipe2(pfd, O_CLOEXEC) != 0) return kg_errorf(err, KG_EIO, "cannot make the rows pipe: %s", strerror(errno));
    snprintf(fdarg, sizeof fdarg, "%d", pfd[1]);
    /* the input salt goes through a pipe of its own: a command line or
     * the environment could be read by an arm host (salt.h) */
    int sfd = -1;
    if ((rc = kg_salt_pipe(salt, &sfd, err)) != KG_OK) {
        close(pfd[0]);
        close(pfd[1]);
        return rc;
    }
    snprintf(saltarg, sizeof saltarg, "%d", sfd);
    /* a fresh token for this worker, through a pipe of its own (token.h) */
    unsigned char tok[KG_TOKEN_BYTES];
    int tfd = -1;
    char tokarg[16];
    if ((rc = kg_token_draw(tok, err)) != KG_OK || (rc = kg_token_pipe(tok, &tfd, err)) != KG_OK) {
        close(pfd[0]);
        close(pfd[1]);
        close(sfd);
        return rc;
    }
    snprintf(tokarg, sizeof tokarg, "%d", tfd);
    /* the go pipe: the worker reads one byte before its first timed phase */
    int gfd[2] = { -1, -1 };
    char goarg[16];
    if (q != NULL && pipe2(gfd, O_CLOEXEC) != 0) {
        rc = kg_errorf(err, KG_EIO, "cannot make the go pipe: %s", strerror(errno));
        close(pfd[0]);
        close(pfd[1]);
        close(sfd);
        close(tfd);
        return rc;
    }
    snprintf(goarg, sizeof goarg, "%d", gfd[0]);
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
    argv[n++] = (char *)"--rows-fd";
    argv[n++] = fdarg;
    argv[n++] = (char *)"--salt-fd";
    argv[n++] = saltarg;
    argv[n++] = (char *)"--token-fd";
    argv[n++] = tokarg;
    /* under a wrapper the worker's parent is the wrapper */
    if (!wrapped) {
        argv[n++] = (char *)"--parent";
        argv[n++] = parent;
    }
    if (pline != NULL) argv[n++] = (char *)"--progress";
    /* the folder of the signing key: the worker's arm hosts cover it */
    char keydir[PATH_MAX];
    if (o->key_path != NULL && realpath(o->key_path, keydir) != NULL) {
        char *slash = strrchr(keydir, '/');
        if (slash != NULL && slash != keydir) *slash = '\0';
        argv[n++] = (char *)"--hide";
        argv[n++] = keydir;
    }
    char warm[32];
    if (warm_s > 0) {
        snprintf(warm, sizeof warm, "%g", warm_s);
        argv[n++] = (char *)"--warm";
        argv[n++] = warm;
    }
    argv[n++] = (char *)"--slot";
    argv[n++] = slots;
    if (gfd[0] >= 0) {
        argv[n++] = (char *)"--go-fd";
        argv[n++] = goarg;
    }
    if (o->check_only) argv[n++] = (char *)"--check-only";
    if (s->negative) {
        argv[n++] = (char *)"--negative";
        if (s->negative_arm != NULL && s->negative_arm[0] != '\0') {
            argv[n++] = (char *)"--negative-arm";
            argv[n++] = (char *)s->negative_arm;
        }
    }
    argv[n] = NULL;

    /* the log: created through the folder's descriptor, no link followed */
    char lname[32];
    snprintf(lname, sizeof lname, "proc-%03d.log", proc);
    int lfd = kg_create_at(dirfd, "logs", lname, log, err);
    if (lfd < 0) {
        close(pfd[0]);
        close(pfd[1]);
        close(sfd);
        close(tfd);
        if (gfd[0] >= 0) close(gfd[0]), close(gfd[1]);
        return lfd;
    }
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, lfd, 1);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    posix_spawnattr_init(&at);
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&at, 0);
    pid_t pid;
    kg_utc_now(rec->start_utc, sizeof rec->start_utc);
    double t0 = kg_mono_s();
    /* the write end is inherited by the worker alone (single-threaded:
     * no other spawn can see it between these lines) */
    (void)fcntl(pfd[1], F_SETFD, 0);
    (void)fcntl(sfd, F_SETFD, 0);
    (void)fcntl(tfd, F_SETFD, 0);
    if (gfd[0] >= 0) (void)fcntl(gfd[0], F_SETFD, 0);
    int e = posix_spawnp(&pid, argv[0], &fa, &at, argv, environ);
    close(pfd[1]);
    close(sfd);
    close(lfd);
    close(tfd);
    if (gfd[0] >= 0) close(gfd[0]);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    if (e != 0) {
        close(pfd[0]);
        if (gfd[1] >= 0) close(gfd[1]);
        return kg_errorf(err, KG_EIO, "cannot start worker %s: %s", argv[0], strerror(e));
    }
    kg_lock_note_worker(lock_fd, (long)pid);
    (void)fcntl(pfd[0], F_SETFL, O_NONBLOCK);
    kg_chan ch;
    kg_chan_init(&ch, proc);
    /* its raw rows count only under the HMAC of its token (channel.h) */
    rc = kg_chan_expect_mac(&ch, tok, sizeof tok, err);
    OPENSSL_cleanse(tok, sizeof tok);
    if (rc != KG_OK) {
        kill(-pid, SIGKILL);
        waitpid(pid, NULL, 0);
        goto out;
    }

    int status = 0, timed_out = 0, dirty = 0, stopped = 0, gave_up = 0;
    /* gone: the go was given (or none is needed); the timeout does not
     * count the time the worker waited, ready, for a quiet host */
    int gone = gfd[1] < 0;
    double t_ready = -1, waited = 0;
    char why[512] = "", said[512] = "";
    double next_poll = t0, next_show = t0 + 0.5;
    for (;;) {
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid) break;
        if (r < 0 && errno != EINTR) {
            rc = kg_errorf(err, KG_EIO, "waiting for worker %d: %s", proc, strerror(errno));
            kill(-pid, SIGKILL);
            goto out;
        }
        if (kg_stop_requested() != 0) {
            kill(-pid, SIGKILL);
            waitpid(pid, &status, 0);
            stopped = 1;
            break;
        }
        double now = kg_mono_s();
        double blocked = waited + (!gone && t_ready >= 0 ? now - t_ready : 0);
        if (now - t0 - blocked > timeout_s) {
            kill(-pid, SIGKILL);
            waitpid(pid, &status, 0);
            timed_out = 1;
            break;
        }
        /* the watch goes on after a first reason: the quiet time is
         * counted from the last thing seen, between processes too; only
         * what it sees from the go on contaminates the process */
        if (q != NULL && now >= next_poll) {
            char w2[512];
            int bad = kg_quiet_poll(q, (int)pid, w2, sizeof w2);
            if (bad && gone && !dirty) {
                dirty = 1;
                snprintf(why, sizeof why, "%s", w2);
            }
            watch_drain(q, wl, proc);
            next_poll = now + KG_QUIET_POLL_S;
            if (!gone && t_ready >= 0) {
                if (bad) kg_quiet_say(w2, said, sizeof said);
                int v = kg_quiet_judge(q, bad, now, wc->window_s, now - t_ready, wc->give_up_s);
                if (v != KG_QUIET_HOLD) waited = now - t_ready;
                /* quiet so far: looked at again when the window completes */
                if (v == KG_QUIET_HOLD && !bad && q->quiet_since + wc->window_s < next_poll)
                    next_poll = q->quiet_since + wc->window_s;
                if (v == KG_QUIET_GIVE_UP) {
                    snprintf(why, sizeof why, "%s", w2);
                    gave_up = 1;
                    kill(-pid, SIGKILL);
                    waitpid(pid, &status, 0);
                    break;
                }
                if (v == KG_QUIET_GO) {
                    ssize_t wr;
                    do wr = write(gfd[1], "g", 1);
                    while (wr < 0 && errno == EINTR);
                    close(gfd[1]);
                    gfd[1] = -1;
                    gone = 1;
                    kg_quiet_process_begins(q);
                    if (waited >= 0.001)
                        watch_log(wl, waited, proc, "wait", "quiet; the worker was ready to time %.3f s after it "
                                  "started, its set-up and first checks done meanwhile", t_ready - t0);
                }
            }
        }
        if (pline != NULL && now >= next_show) {
            /* the worker reports "progress: case C round r/R" on its log */
            char ll[256];
            kg_file_last_line(log, ll, sizeof ll);
            if (strncmp(ll, "progress: ", 10) == 0) {
                fprintf(stderr, "\r\033[K%s  %s", pline, ll + 10);
                fflush(stderr);
            }
            next_show = now + 0.5;
        }
        struct pollfd pf = { .fd = pfd[0], .events = POLLIN };
        if (!ch.eof && poll(&pf, 1, 20) > 0) {
            if ((rc = kg_chan_pump(&ch, pfd[0], err)) != KG_OK) {
                kill(-pid, SIGKILL);
                waitpid(pid, &status, 0);
                goto out;
            }
            if (ch.ready && t_ready < 0) {
                t_ready = kg_mono_s();
                next_poll = t_ready;   /* judged at once */
            }
        } else if (ch.eof) {
            struct timespec ts = { 0, 20 * 1000 * 1000 };
            nanosleep(&ts, NULL);
        }
    }
    /* Whatever the worker left running in its group goes too. */
    kill(-pid, SIGKILL);
    kg_lock_note_worker(lock_fd, 0);
    if (gfd[1] >= 0) close(gfd[1]);
    gfd[1] = -1;
    rec->wait_s = waited;
    if (stopped) {
        rc = kg_errorf(err, KG_EIO, "interrupted%s: kgate run %s --resume %s continues it",
                       !gone && t_ready >= 0 ? " while waiting for a quiet host" : "", o->plan_path, dir);
        goto out;
    }
    /* what the worker sent before it ended (a descendant outside its
     * group may hold the pipe open: only what is there now is read) */
    if (!ch.eof && (rc = kg_chan_pump(&ch, pfd[0], err)) != KG_OK) goto out;
    rec->seconds = kg_mono_s() - t0;
    if (gave_up) {
        /* ready, never given the go: nothing of it is kept */
        snprintf(rec->status, sizeof rec->status, "contaminated");
        snprintf(rec->reason, sizeof rec->reason, "not started: the host never became quiet within %.0f s of the "
                 "worker being ready to time (%.150s)", wc->give_up_s, why);
        rec->accepted = 0;
        rec->setup_s = rec->checks_s = rec->timed_s = 0;
        watch_log(wl, waited, proc, "wait", "gave up: the host never became quiet");
        watch_log(wl, waited, proc, "contaminated", "%s", rec->reason);
        rc = KG_OK;
        goto out;
    }
    read_phases(&ch, rec);
    char last[256];
    kg_file_last_line(log, last, sizeof last);
    rec->accepted = 0;
    char how[128] = "";
    if (timed_out) {
        snprintf(rec->status, sizeof rec->status, "timeout");
        snprintf(rec->reason, sizeof rec->reason, "passed the timeout of %.0f s and was killed", timeout_s);
        snprintf(how, sizeof how, "passed the timeout of %.0f s", timeout_s);
    } else if (WIFSIGNALED(status)) {
        snprintf(rec->status, sizeof rec->status, "crashed");
        snprintf(rec->reason, sizeof rec->reason, "killed by signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
        snprintf(how, sizeof how, "killed by signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
    } else if (WEXITSTATUS(status) != 0) {
        snprintf(rec->status, sizeof rec->status, "exit %d", WEXITSTATUS(status));
        if (ch.part[KG_FRAME_FAIL] != NULL)   /* the worker's own error: no arm is blamed */
            snprintf(rec->reason, sizeof rec->reason, "%.*s", (int)(ch.partlen[KG_FRAME_FAIL] < 250 ?
                     ch.partlen[KG_FRAME_FAIL] : 250), ch.part[KG_FRAME_FAIL]);
        else {
            snprintf(rec->reason, sizeof rec->reason, "%s", last[0] ? last : "exited with an error");
            snprintf(how, sizeof how, "exited with status %d", WEXITSTATUS(status));
        }
    } else if (ch.bad[0] != '\0') {
        snprintf(rec->status, sizeof rec->status, "bad rows");
        snprintf(rec->reason, sizeof rec->reason, "its pipe broke the frame protocol: %.200s", ch.bad);
    } else if (ch.part[KG_FRAME_RAW] == NULL) {
        snprintf(rec->status, sizeof rec->status, "incomplete");
        snprintf(rec->reason, sizeof rec->reason, "exited 0 without sending its rows");
        if (ch.now_set) snprintf(how, sizeof how, "exited 0 without sending its rows");
    } else {
        kg_err verr = { 0 };
        if (check_records(plan, &ch, proc, &verr) != KG_OK) {
            snprintf(rec->status, sizeof rec->status, "bad rows");
            snprintf(rec->reason, sizeof rec->reason, "%.250s", verr.msg);
        } else {
            /* a write that fails stops the campaign with the process unrecorded */
            if ((rc = store_records(dirfd, dir, &ch, proc, err)) != KG_OK) goto out;
            snprintf(rec->status, sizeof rec->status, "ok");
            rec->reason[0] = '\0';
            rec->accepted = 1;
            /* what the worker's telemetry saw of the environment */
            char ew[300], note[200] = "";
            if (!dirty && env_seen(plan, &ch, proc, ew, sizeof ew, note, sizeof note)) {
                dirty = 1;
                snprintf(why, sizeof why, "%s", ew);
            }
            if (note[0] != '\0') watch_log(wl, 0, proc, "note", "%s", note);
        }
    }
    /* A worker that died while it ran an arm is that arm's fault, except
     * for a timeout on a host that was not quiet (the host may be why). */
    if (how[0] != '\0' && !(timed_out && dirty)) {
        char fault[KG_DETAIL_MAX] = "";
        if ((rc = record_fault(dirfd, dir, plan, &ch, proc, rec->dir, how, fault, sizeof fault, err)) != KG_OK)
            goto out;
        if (fault[0] != '\0') snprintf(rec->reason, sizeof rec->reason, "%.250s", fault);
    }
    if (dirty) {
        /* the host, not the kernel, is in question: excluded and repeated */
        char outcome[300];
        snprintf(outcome, sizeof outcome, "%s%s%s", rec->status, rec->reason[0] ? ": " : "", rec->reason);
        snprintf(rec->status, sizeof rec->status, "contaminated");
        snprintf(rec->reason, sizeof rec->reason, "%.140s; the worker ended %.90s", why, outcome);
        rec->accepted = 0;
        watch_log(wl, rec->seconds, proc, "contaminated", "%s; the worker ended %s", why, outcome);
    }
    rc = KG_OK;
out:
    if (gfd[1] >= 0) close(gfd[1]);
    close(pfd[0]);
    kg_chan_free(&ch);
    return rc;
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
    char notice[512] = "", device[512] = "", *recorded = NULL;
    int rc, lock_fd = -1, nrec = 0, dirfd = -1;
    kg_quiet q;
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
    kg_meta meta = { .backend = resolved, .notice = notice, .device = device, .argc = o->argc, .argv = o->argv,
                     .check_only = o->check_only, .negative = o->negative, .frozen_path = o->frozen_path };
    /* the input salt: drawn fresh for a new campaign (kgate check too),
     * the recorded one when resuming (salt.h) */
    uint64_t salt = 0;
    snprintf(path, sizeof path, "%s/meta.json", dir);
    if (o->resume && kg_path_exists(path)) {
        char *mj = NULL;
        int found = 0;
        if ((rc = kg_read_file(path, &mj, NULL, err)) == KG_OK) rc = kg_salt_from_meta(mj, &salt, &found, err);
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
    watch_log(&wl, 0, -1, "session", "quiet %g s, give up after %g s; forbid %s; max_load %g; max_steal %g%%, "
              "max_foreign_cpu %g, max_freq_change %g%% (%s); device processes %s; repeats %d; clock warm-up %g s",
              window, give_up, q.forbid[0] ? q.forbid : "(none)", q.max_load, 100 * q.lim.max_steal,
              q.lim.max_foreign_cpu, 100 * q.lim.max_freq_change, q.cpu != NULL ? "watched" : "not watched",
              q.procs != NULL ? "listed by the backend" : "not listed (the backend lists none)", max_repeats,
              o->check_only ? 0 : plan->campaign.warm_s);
    watch_log(&wl, build_s, -1, "build", "arms built%s in %.3f s", o->check_only ? "" : " and the device's peaks measured",
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
    int capn = nrec > nslots ? nrec : nslots > 0 ? nslots : 1;
    double t0 = kg_mono_s();
    while (!decided) {
        int attempt = 0, slot = next_slot(recs, nrec, first_rec, nslots, max_repeats, &attempt);
        if (slot < 0) break;
        if (kg_stop_requested() != 0) {
            rc = kg_errorf(err, KG_EIO, "interrupted: kgate run %s --resume %s continues it", o->plan_path, dir);
            goto done;
        }
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
        r->wait_s = 0;
        /* the first worker of this run warms the device's clock first */
        double warm = o->check_only || started > 0 ? 0 : plan->campaign.warm_s;
        const watch_ctx wc = { o->check_only ? NULL : &q, &wl, window, give_up };
        if ((rc = run_worker(o, &s, plan, plan_abs, dir, dirfd, resolved, nrec, plan->campaign.timeout_s, &wc,
                             o->progress ? pline : NULL, lock_fd, salt, warm, r, err)) != KG_OK)
            goto done;
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
            watch_log(&wl, 0, nrec - 1, "never-quiet", "slot %d was contaminated %d time(s), the last: %s", slot, tries,
                      r->reason);
        }
        /* processes.csv first: a log row never names a process the folder does not record */
        if ((rc = kg_chain_seal(dirfd, plan->hash, recs, nrec, err)) != KG_OK) goto done;
        if ((rc = kg_evidence_write_processes(dirfd, dir, recs, nrec, err)) != KG_OK) goto done;
        if ((rc = write_watch(dirfd, dir, &wl, err)) != KG_OK) goto done;
        if (!r->accepted && (o->progress || strcmp(r->status, "contaminated") == 0))
            fprintf(stderr, "\r\033[Kkgate: process %d %s: %s\n", nrec - 1, r->status, r->reason);
        if (never_quiet) {
            fprintf(stderr, "\r\033[Kkgate: the device never became quiet: slot %d was contaminated %d time(s); the "
                    "campaign stops INVALID (kgate run %s --resume %s tries again)\n", slot, 1 + max_repeats,
                    o->plan_path, dir);
            break;
        }
        if (!o->check_only && plan->campaign.looks > 1 && look_decided(plan, recs, nrec, nslots, dir, err)) {
            fprintf(stderr, "\r\033[Kkgate: the sequential design decided after %d of %d processes\n", nrec, nslots);
            break;
        }
    }
    watch_log(&wl, kg_mono_s() - t_session, -1, "end", "this run ended after %.3f s; device processes were told %s",
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
    kg_plan_free(plan);
    return rc;
}

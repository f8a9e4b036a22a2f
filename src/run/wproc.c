/* wproc.c: one worker process of a campaign, from its start to its
 * records (wproc.h).  Its records come through a pipe (channel.h); the
 * supervisor checks them with rows.c and writes them through the
 * folder's descriptor.  The host is watched while it runs. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <openssl/crypto.h>
#include "run/wproc.h"
#include "plan/shard.h"
#include "run/lock.h"
#include "base/safefs.h"
#include "evidence/salt.h"
#include "run/token.h"

extern char **environ;

typedef kg_proc_rec proc_rec;

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
    }
    /* the raw rows gzip'ed: a million samples in a few megabytes */
    char *z = NULL;
    size_t zlen = 0;
    if ((rc = kg_gzip(ch->part[KG_FRAME_RAW], ch->partlen[KG_FRAME_RAW], &z, &zlen, err)) != KG_OK) return rc;
    snprintf(name, sizeof name, "proc-%03d.csv.gz", proc);
    rc = store(dirfd, dir, "raw", name, z, zlen, err);
    free(z);
    return rc;
}

/* A worker that died (how: "killed by signal 11 (...)") while its last
 * NOW state (its page's, else its last NOW frame's: kg_now_latest) named
 * an arm: a failed "fault" check of that arm in checks/proc-NNN.csv,
 * written by the supervisor.  The process stays excluded; evidence.c
 * folds the check into the arm's state. */
static int record_fault(int dirfd, const char *dir, const kg_plan *plan, const kg_chan *ch, const kg_nowpage *page,
                        int proc, int pdir, const char *how, char *reason, size_t cap, kg_err *err)
{
    kg_now nw;
    kg_now_latest(page, ch, &nw);
    if (!nw.set || nw.kase < 0 || nw.kase >= plan->ncases || nw.arm < 0 || nw.arm >= plan->narms) return KG_OK;
    kg_check_rec k;
    memset(&k, 0, sizeof k);
    k.proc = proc;
    k.dir = pdir;
    k.kase = nw.kase;
    k.arm = nw.arm;
    k.phase = nw.phase == KG_NOW_CHECK_AFTER ? KG_PHASE_POST : KG_PHASE_PRE;
    snprintf(k.check, sizeof k.check, "%s", KG_CHECK_FAULT);
    k.pass = 0;
    char where[160];
    if (nw.phase == KG_NOW_TIME && nw.round >= 0 && nw.round < plan->campaign.rounds)
        snprintf(where, sizeof where, "round %d/%d", nw.round + 1, plan->campaign.rounds);
    else
        snprintf(where, sizeof where, "%s", kg_now_phase_name(nw.phase));
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
void kg_watch_log(kg_sb *wl, double seconds, int proc, const char *event, const char *fmt, ...)
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
    while (kg_quiet_take(q, why, sizeof why)) kg_watch_log(wl, 0, proc, "not-quiet", "%s", why);
    if (q->dropped > 0) {
        kg_watch_log(wl, 0, proc, "not-quiet", "%d further change(s) of reason not listed", q->dropped);
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

/* ---- one worker ---------------------------------------------------- */

/* The pipes a worker is started with: its rows pipe, the input salt's
 * and its token's (each read once), and the go pipe when it is gated. */
typedef struct wp_pipes {
    int rows[2], salt, token, go[2];
    unsigned char tok[KG_TOKEN_BYTES];
} wp_pipes;

static void pipes_close(wp_pipes *pp)
{
    int *fds[] = { &pp->rows[0], &pp->rows[1], &pp->salt, &pp->token, &pp->go[0], &pp->go[1] };
    for (size_t i = 0; i < sizeof fds / sizeof fds[0]; i++) {
        if (*fds[i] >= 0) close(*fds[i]);
        *fds[i] = -1;
    }
    OPENSSL_cleanse(pp->tok, sizeof pp->tok);
}

/* Makes the pipes: the rows pipe's write end is the worker's only way to
 * record anything; the salt and the token go through pipes of their own
 * (a command line or the environment could be read by an arm host). */
static int pipes_open(const kg_wspawn *sp, wp_pipes *pp, kg_err *err)
{
    pp->rows[0] = pp->rows[1] = pp->salt = pp->token = pp->go[0] = pp->go[1] = -1;
    int rc;
    if (pipe2(pp->rows, O_CLOEXEC) != 0) {
        pp->rows[0] = pp->rows[1] = -1;
        return kg_errorf(err, KG_EIO, "cannot make the rows pipe: %s", strerror(errno));
    }
    if ((rc = kg_salt_pipe(sp->salt, &pp->salt, err)) != KG_OK) goto fail;
    if ((rc = kg_token_draw(pp->tok, err)) != KG_OK || (rc = kg_token_pipe(pp->tok, &pp->token, err)) != KG_OK)
        goto fail;
    /* the go pipe: the worker reads one byte before its first timed phase */
    if (sp->gated && pipe2(pp->go, O_CLOEXEC) != 0) {
        pp->go[0] = pp->go[1] = -1;
        rc = kg_errorf(err, KG_EIO, "cannot make the go pipe: %s", strerror(errno));
        goto fail;
    }
    return KG_OK;
fail:
    pipes_close(pp);
    return rc;
}

/* The text of a worker's command line: the argv strings that are not
 * constants live here. */
typedef struct wp_args {
    char exe[PATH_MAX], proc[16], slot[16], rows[16], parent[24], salt[16], token[16], go[16], now[16];
    char wrap[1024], keydir[PATH_MAX], warm[32], shard[32], dev[16], seq[16];
    char skip[4096 * 6];                      /* "3,17,40": the arms a screen's process leaves out */
    char *argv[80];  /* a wrapper's 30 words at most, then 43 of the worker's own and NULL */
    int n;
} wp_args;

static void arg2(wp_args *a, const char *flag, const char *value)
{
    a->argv[a->n++] = (char *)flag;
    a->argv[a->n++] = (char *)value;
}

/* The worker's command line: KGATE_WORKER_WRAPPER's words (e.g.
 * "compute-sanitizer --tool memcheck --error-exitcode 86") first, then
 * `kgate worker` with the run's options and the pipes' descriptors. */
static int worker_argv(const kg_wproc *w, const kg_wspawn *sp, const wp_pipes *pp, double warm_s, wp_args *a,
                       kg_err *err)
{
    const kg_settings *s = sp->s;
    int rc = kg_self_exe(a->exe, sizeof a->exe, err);
    if (rc != KG_OK) return rc;
    a->n = 0;
    if (s->worker_wrapper != NULL) snprintf(a->wrap, sizeof a->wrap, "%s", s->worker_wrapper);
    for (char *tok = strtok(a->wrap, " "); tok != NULL && a->n < 30; tok = strtok(NULL, " ")) a->argv[a->n++] = tok;
    int wrapped = a->n > 0;
    snprintf(a->proc, sizeof a->proc, "%d", w->proc);
    snprintf(a->slot, sizeof a->slot, "%d", w->rec.slot);
    snprintf(a->rows, sizeof a->rows, "%d", pp->rows[1]);
    snprintf(a->salt, sizeof a->salt, "%d", pp->salt);
    snprintf(a->token, sizeof a->token, "%d", pp->token);
    snprintf(a->go, sizeof a->go, "%d", pp->go[0]);
    snprintf(a->now, sizeof a->now, "%d", w->now.fd);
    snprintf(a->parent, sizeof a->parent, "%ld", (long)getpid());
    a->argv[a->n++] = a->exe;
    a->argv[a->n++] = (char *)"worker";
    arg2(a, "--plan", sp->plan_abs);
    arg2(a, "--out", sp->dir);
    arg2(a, "--proc", a->proc);
    arg2(a, "--backend", sp->backend);
    arg2(a, "--rows-fd", a->rows);
    arg2(a, "--salt-fd", a->salt);
    arg2(a, "--token-fd", a->token);
    arg2(a, "--now-fd", a->now);
    /* under a wrapper the worker's parent is the wrapper */
    if (!wrapped) arg2(a, "--parent", a->parent);
    if (sp->progress) a->argv[a->n++] = (char *)"--progress";
    /* the folder of the signing key: the worker's arm hosts cover it */
    if (sp->key_path != NULL && realpath(sp->key_path, a->keydir) != NULL) {
        char *slash = strrchr(a->keydir, '/');
        if (slash != NULL && slash != a->keydir) *slash = '\0';
        arg2(a, "--hide", a->keydir);
    }
    if (warm_s > 0) {
        snprintf(a->warm, sizeof a->warm, "%g", warm_s);
        arg2(a, "--warm", a->warm);
    }
    arg2(a, "--slot", a->slot);
    if (pp->go[0] >= 0) arg2(a, "--go-fd", a->go);
    if (sp->check_only) a->argv[a->n++] = (char *)"--check-only";
    if (sp->plan->campaign.smoke) a->argv[a->n++] = (char *)"--smoke";
    /* a shard's cases, and its device (shard.h) */
    if (sp->shard_n > 0) {
        snprintf(a->shard, sizeof a->shard, "%d/%d", sp->shard_i, sp->shard_n);
        arg2(a, "--shard", a->shard);
        if (sp->by_process) {
            snprintf(a->seq, sizeof a->seq, "%d",
                     kg_shard_seq(w->rec.slot, w->rec.attempt, 2 * sp->plan->campaign.processes));
            arg2(a, "--seq", a->seq);
        }
    }
    if (sp->has_device) {
        snprintf(a->dev, sizeof a->dev, "%d", sp->device);
        arg2(a, "--device", a->dev);
    }
    if (sp->screen) a->argv[a->n++] = (char *)"--screen";
    for (int i = 0, len = 0; sp->skip != NULL && i < sp->plan->narms && len + 8 < (int)sizeof a->skip; i++)
        if (sp->skip[i]) len += snprintf(a->skip + len, sizeof a->skip - (size_t)len, "%s%d", len ? "," : "", i);
    if (a->skip[0] != '\0') arg2(a, "--skip", a->skip);
    if (s->negative) {
        a->argv[a->n++] = (char *)"--negative";
        if (s->negative_arm != NULL && s->negative_arm[0] != '\0') arg2(a, "--negative-arm", s->negative_arm);
    }
    a->argv[a->n] = NULL;
    return KG_OK;
}

/* Spawns the worker in a process group of its own, its stdout and stderr
 * into its log (created through the folder's descriptor, no link
 * followed); the pipes' worker ends are closed here once it has them. */
static int spawn_worker(kg_wproc *w, const kg_wspawn *sp, wp_pipes *pp, wp_args *a, kg_err *err)
{
    char lname[32];
    snprintf(lname, sizeof lname, "proc-%03d.log", w->proc);
    int lfd = kg_create_at(sp->dirfd, "logs", lname, w->log, err);
    if (lfd < 0) return lfd;
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, lfd, 1);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    posix_spawnattr_init(&at);
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&at, 0);
    kg_utc_now(w->rec.start_utc, sizeof w->rec.start_utc);
    w->t0 = kg_mono_s();
    /* the worker's ends are inherited by the worker alone (single-threaded:
     * no other spawn can see them between these lines) */
    (void)fcntl(pp->rows[1], F_SETFD, 0);
    (void)fcntl(pp->salt, F_SETFD, 0);
    (void)fcntl(pp->token, F_SETFD, 0);
    if (pp->go[0] >= 0) (void)fcntl(pp->go[0], F_SETFD, 0);
    (void)fcntl(w->now.fd, F_SETFD, 0);
    pid_t pid;
    /* without a wrapper the worker is this process's own image (the file
     * its path names may have been replaced since: a rebuild) */
    const char *prog = a->argv[0] == a->exe ? "/proc/self/exe" : a->argv[0];
    int e = posix_spawnp(&pid, prog, &fa, &at, a->argv, environ);
    close(lfd);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    int *ends[] = { &pp->rows[1], &pp->salt, &pp->token, &pp->go[0] };
    for (size_t i = 0; i < sizeof ends / sizeof ends[0]; i++) {
        if (*ends[i] >= 0) close(*ends[i]);
        *ends[i] = -1;
    }
    /* the NOW page stays mapped here; its descriptor is the worker's alone */
    kg_nowpage_close_fd(&w->now);
    if (e != 0) return kg_errorf(err, KG_EIO, "cannot start worker %s: %s", a->argv[0], strerror(e));
    w->pid = pid;
    return KG_OK;
}

/* The started worker's state: its pipes here, the lock told its pid, the
 * channel expecting its token's MAC, the clocks of its watch. */
static int begin_watch(kg_wproc *w, const kg_wspawn *sp, wp_pipes *pp, int beside, kg_err *err)
{
    w->pfd = pp->rows[0];
    w->gfd = pp->go[1];
    pp->rows[0] = pp->go[1] = -1;
    w->active = 1;
    w->timeout_s = sp->timeout_s;
    kg_lock_note_worker(sp->lock_fd, (long)w->pid);
    (void)fcntl(w->pfd, F_SETFL, O_NONBLOCK);
    kg_chan_init(&w->ch, w->proc);
    /* its raw rows count only under the HMAC of its token (channel.h) */
    int rc = kg_chan_expect_mac(&w->ch, pp->tok, sizeof pp->tok, err);
    if (rc != KG_OK) {
        kill(-w->pid, SIGKILL);
        waitpid(w->pid, NULL, 0);
        w->exited = 1;
        return rc;
    }
    /* gone: the go was given (or none is needed) */
    w->gone = w->gfd < 0;
    w->next_poll = w->t0;
    w->next_show = w->t0 + 0.5;
    w->current = !beside;
    w->t_current = w->t0;
    w->ov_open = beside;
    w->started_beside = beside;
    w->ov_t = w->t0;
    w->ov_state = KG_OV_START;
    return KG_OK;
}

int kg_wproc_start(kg_wproc *w, const kg_wspawn *sp, int proc, double warm_s, int beside, kg_err *err)
{
    kg_proc_rec keep = w->rec;
    memset(w, 0, sizeof *w);
    w->rec = keep;
    w->proc = proc;
    w->pfd = w->gfd = -1;
    w->t_ready = -1;
    snprintf(w->log, sizeof w->log, "%s/logs/proc-%03d.log", sp->dir, proc);
    wp_pipes pp;
    wp_args *a = calloc(1, sizeof *a);
    if (a == NULL) return kg_errorf(err, KG_ENOMEM, "out of memory starting worker %d", proc);
    /* its NOW page (nowpage.h): what it runs, read when it dies or hangs */
    int rc = kg_nowpage_create(&w->now, err);
    if (rc == KG_OK) rc = pipes_open(sp, &pp, err);
    if (rc == KG_OK) {
        if ((rc = worker_argv(w, sp, &pp, warm_s, a, err)) == KG_OK &&
            (rc = spawn_worker(w, sp, &pp, a, err)) == KG_OK) {
            /* the image exec'd (posix_spawn returns once it is), where
             * this process may read it; under a wrapper it is the wrapper */
            if (sp->s->worker_wrapper == NULL && kg_exe_sha256(w->pid, w->exe_seen, NULL) != KG_OK)
                w->exe_seen[0] = '\0';
            rc = begin_watch(w, sp, &pp, beside, err);
        }
        pipes_close(&pp);
    }
    free(a);
    kg_nowpage_close_fd(&w->now);
    if (rc != KG_OK && !w->active) kg_nowpage_destroy(&w->now);
    return rc;
}

void kg_wproc_promote(kg_wproc *w)
{
    w->current = 1;
    w->t_current = kg_mono_s();
    w->ov_open = 0;
    w->next_poll = w->t_current;   /* judged at once */
}

/* Kills the worker's group and reaps it. */
static void wp_kill(kg_wproc *w)
{
    if (w->pid <= 0 || w->exited) return;
    kill(-w->pid, SIGKILL);
    while (waitpid(w->pid, &w->status, 0) < 0 && errno == EINTR) { }
    w->exited = 1;
}

/* Seconds the timeout does not count: the worker ready and waiting. */
static double wp_blocked(const kg_wproc *w, double now)
{
    return w->waited + (!w->gone && w->t_ready >= 0 ? now - w->t_ready : 0);
}

/* Where the worker beside the running one is, from its NOW state. */
static int ov_state_of(const kg_wproc *w)
{
    kg_now nw;
    kg_now_latest(&w->now, &w->ch, &nw);
    if (!nw.set) return KG_OV_START;
    switch (nw.phase) {
    case KG_NOW_LOAD: return KG_OV_SETUP;
    case KG_NOW_READY: return KG_OV_WAIT;
    default: return KG_OV_CHECKS;
    }
}

static void ov_tick(kg_wproc *w, double now)
{
    if (!w->active || !w->ov_open) return;
    if (now > w->ov_t) w->ov[w->ov_state] += now - w->ov_t;
    w->ov_t = now;
    w->ov_state = ov_state_of(w);
}

/* Reads what the worker's pipe holds; the ready time once it says so. */
static int wp_pump(kg_wproc *w, kg_err *err)
{
    if (w->ch.eof) return KG_OK;
    int rc = kg_chan_pump(&w->ch, w->pfd, err);
    if (rc != KG_OK) return rc;
    if (w->ch.ready && w->t_ready < 0) {
        w->t_ready = kg_mono_s();
        w->next_poll = w->t_ready;   /* judged at once */
    }
    return KG_OK;
}

/* Reaps the worker when it ended; 1 then. */
static int wp_reap(kg_wproc *w, kg_err *err)
{
    if (w->exited) return 1;
    pid_t r = waitpid(w->pid, &w->status, WNOHANG);
    if (r == w->pid) {
        w->exited = 1;
        return 1;
    }
    if (r < 0 && errno != EINTR) {
        kg_errorf(err, KG_EIO, "waiting for worker %d: %s", w->proc, strerror(errno));
        wp_kill(w);
        return -1;
    }
    return 0;
}

/* The files store_records writes for process proc, removed (raw first). */
static void unstore(int dirfd, int proc)
{
    char name[64];
    static const struct { const char *sub, *stem, *ext; } f[] = {
        { "raw", "proc", "csv.gz" }, { "checks", "proc", "csv" }, { "outputs", "proc", "csv" },
        { "outputs", "proc", "bin" }, { "telemetry", "proc", "csv" }, { "telemetry", "resources", "csv" },
    };
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
        snprintf(name, sizeof name, "%s/%s-%03d.%s", f[i].sub, f[i].stem, proc, f[i].ext);
        (void)unlinkat(dirfd, name, 0);
    }
}

/* Once the worker's records are whole (its raw rows came, under its
 * MAC), they are checked and written while it closes its device and
 * ends, off the path to the next worker's go; finish undoes the write
 * should the worker then not end well. */
static int store_early(kg_wproc *w, const kg_wspawn *sp, kg_err *err)
{
    if (w->stored != 0 || w->exited || w->ch.part[KG_FRAME_RAW] == NULL || w->ch.bad[0] != '\0') return KG_OK;
    kg_err verr = { 0 };
    if (check_records(sp->plan, &w->ch, w->proc, &verr) != KG_OK) {
        w->stored = -1;
        snprintf(w->store_why, sizeof w->store_why, "%.250s", verr.msg);
        return KG_OK;
    }
    int rc = store_records(sp->dirfd, sp->dir, &w->ch, w->proc, err);
    if (rc == KG_OK) w->stored = 1;
    return rc;
}

/* Why the worker's binary is not the supervisor's ("" when it is): its
 * hello frame reports the SHA-256 of its own image, and the supervisor
 * read the image it exec'd where it could (w->exe_seen). */
static void hello_why(const kg_wproc *w, const kg_wspawn *sp, char *why, size_t cap)
{
    const char *p = w->ch.part[KG_FRAME_HELLO];
    size_t n = w->ch.partlen[KG_FRAME_HELLO];
    why[0] = '\0';
    if (p == NULL) {
        snprintf(why, cap, "its worker sent records without a hello frame (the SHA-256 of its own image)");
        return;
    }
    char path[256] = "";
    int hex = n >= 66;
    for (size_t i = 0; hex && i < 64; i++) hex = (p[i] >= '0' && p[i] <= '9') || (p[i] >= 'a' && p[i] <= 'f');
    if (!hex || p[64] != ' ' || p[n - 1] != '\n') {
        snprintf(why, cap, "its worker's hello frame is not \"SHA256 PATH\" (%zu bytes)", n);
        return;
    }
    snprintf(path, sizeof path, "%.*s", (int)(n - 66 < 200 ? n - 66 : 200), p + 65);
    for (char *c = path; *c; c++)
        if (*c < ' ' || *c == ',' || *c == '"') *c = '?';
    if (strncmp(p, sp->exe_sha256, 64) != 0)
        snprintf(why, cap, "its worker ran %s, SHA-256 %.16s..., not the supervisor's binary (SHA-256 %.16s...)",
                 path, p, sp->exe_sha256);
    else if (w->exe_seen[0] != '\0' && strcmp(w->exe_seen, sp->exe_sha256) != 0)
        snprintf(why, cap, "the image the supervisor exec'd as its worker has SHA-256 %.16s..., not the "
                 "supervisor's (%.16s...), though its hello said otherwise", w->exe_seen, sp->exe_sha256);
}

/* The worker's binary, once its hello or its records came: one that is
 * not the supervisor's is a "worker" event of the watch and counted; a
 * run that signs stops (KG_EINPUT). */
static int hello_check(kg_wproc *w, const kg_wspawn *sp, const kg_watch_ctx *wc, kg_err *err)
{
    if (w->hello_done || sp->exe_sha256 == NULL || !w->active) return KG_OK;
    if (w->ch.part[KG_FRAME_HELLO] == NULL && w->ch.part[KG_FRAME_RAW] == NULL) return KG_OK;
    w->hello_done = 1;
    char why[400];
    hello_why(w, sp, why, sizeof why);
    if (why[0] == '\0') return KG_OK;
    if (sp->unvouched != NULL) (*sp->unvouched)++;
    kg_watch_log(wc->wl, 0, w->proc, "worker", "%s: %s", why, sp->signing ? "a run that signs stops"
                 : "the folder cannot be signed");
    if (!sp->signing) return KG_OK;
    return kg_errorf(err, KG_EINPUT, "process %d: %s: a run that signs refuses a worker that is not its own binary "
                     "(KGATE_WORKER_WRAPPER must exec this kgate, SHA-256 %.16s..., or be unset; or run without "
                     "--key); recorded in %s/watch.csv", w->proc, why, sp->exe_sha256, sp->dir);
}

/* A stop request (SIGINT, SIGTERM) kills both workers; 1 then. */
static int stop_both(kg_wproc *cur, kg_wproc *next)
{
    if (kg_stop_requested() == 0) return 0;
    wp_kill(cur);
    cur->stopped = 1;
    if (next != NULL) {
        wp_kill(next);
        next->stopped = 1;
    }
    return 1;
}

/* The timeouts, which do not count a worker's wait for its go: 1 when
 * the current worker passed its own (and was killed). */
static int past_timeout(kg_wproc *cur, kg_wproc *next, double now)
{
    if (now - cur->t0 - wp_blocked(cur, now) > cur->timeout_s) {
        wp_kill(cur);
        cur->timed_out = 1;
        return 1;
    }
    if (next != NULL && !next->exited && now - next->t0 - wp_blocked(next, now) > next->timeout_s) {
        wp_kill(next);
        next->timed_out = 1;
    }
    return 0;
}

/* The go: one byte on the go pipe, which is then closed. */
static void give_go(kg_wproc *cur, const kg_watch_ctx *wc)
{
    ssize_t wr;
    do wr = write(cur->gfd, "g", 1);
    while (wr < 0 && errno == EINTR);
    close(cur->gfd);
    cur->gfd = -1;
    cur->gone = 1;
    kg_quiet_process_begins(wc->q);
    if (cur->waited >= 0.001)
        kg_watch_log(wc->wl, cur->waited, cur->proc, "wait", "quiet; the worker was ready to time %.3f s after it "
                     "started, its set-up and first checks done meanwhile", cur->t_ready - cur->t0);
}

/* One look of the host watch, when due.  The watch goes on after a first
 * reason: the quiet time is counted from the last thing seen, between
 * processes too; only what it sees from the go on contaminates the
 * process.  A worker ready and waiting is given its go once the host has
 * been quiet for the window; 1 when the watch gave up on it (killed). */
static int watch_poll(kg_wproc *cur, const kg_watch_ctx *wc, double now)
{
    kg_quiet *q = wc->q;
    if (q == NULL || now < cur->next_poll) return 0;
    char w2[512];
    int bad = kg_quiet_poll(q, (int)cur->pid, w2, sizeof w2);
    /* what is seen after the last timed phase touches no sample */
    if (bad && cur->gone && !cur->dirty && !cur->ch.timed_done) {
        cur->dirty = 1;
        snprintf(cur->why, sizeof cur->why, "%s", w2);
    }
    watch_drain(q, wc->wl, cur->proc);
    cur->next_poll = now + KG_QUIET_POLL_S;
    if (cur->gone || cur->t_ready < 0) return 0;
    /* the wait counts from when it was ready, or from when the worker
     * before it ended, whichever is later; it gives up after give_up_s,
     * or sooner where the run's budget for waits runs out */
    double from = cur->t_ready > cur->t_current ? cur->t_ready : cur->t_current;
    double give_up = wc->give_up_s, left_budget = wc->budget_s - q->waited_s;
    int by_budget = wc->budget_s > 0 && left_budget < give_up;
    if (by_budget) give_up = left_budget > 0 ? left_budget : 0;
    if (bad) kg_quiet_say(w2, cur->said, sizeof cur->said, wc->live, now - from, give_up - (now - from));
    int v = kg_quiet_judge(q, bad, now, wc->window_s, now - from, give_up);
    if (v != KG_QUIET_HOLD) {
        cur->waited = now - cur->t_ready;
        q->waited_s += now - from;
        cur->budget_spent = v == KG_QUIET_GIVE_UP && by_budget;
    }
    /* quiet so far: looked at again when the window completes */
    if (v == KG_QUIET_HOLD && !bad && q->quiet_since + wc->window_s < cur->next_poll)
        cur->next_poll = q->quiet_since + wc->window_s;
    if (v == KG_QUIET_GIVE_UP) {
        snprintf(cur->why, sizeof cur->why, "%s", w2);
        cur->gave_up = 1;
        wp_kill(cur);
        return 1;
    }
    if (v == KG_QUIET_GO) give_go(cur, wc);
    return 0;
}

/* The worker reports "progress: case C round r/R" on its log: appended
 * to the progress line every half second. */
static void show_progress(kg_wproc *cur, const char *pline, double now)
{
    if (pline == NULL || now < cur->next_show) return;
    char ll[256];
    kg_file_last_line(cur->log, ll, sizeof ll);
    if (strncmp(ll, "progress: ", 10) == 0) {
        fprintf(stderr, "\r\033[K%s  %s", pline, ll + 10);
        fflush(stderr);
    }
    cur->next_show = now + 0.5;
}

/* Waits up to 20 ms for either worker's pipe and reads what came; a
 * broken pipe read kills both. */
static int pump_both(kg_wproc *cur, kg_wproc *next, kg_err *err)
{
    struct pollfd pf[2];
    int np = 0, ic = -1, in = -1;
    if (!cur->ch.eof) ic = np, pf[np++] = (struct pollfd){ .fd = cur->pfd, .events = POLLIN };
    if (next != NULL && !next->ch.eof) in = np, pf[np++] = (struct pollfd){ .fd = next->pfd, .events = POLLIN };
    if (np == 0) {
        struct timespec ts = { 0, 20 * 1000 * 1000 };
        nanosleep(&ts, NULL);
        return KG_OK;
    }
    if (poll(pf, (nfds_t)np, 20) <= 0) return KG_OK;
    int rc;
    if (ic >= 0 && pf[ic].revents != 0 && (rc = wp_pump(cur, err)) != KG_OK) {
        wp_kill(cur);
        return rc;
    }
    if (in >= 0 && pf[in].revents != 0 && (rc = wp_pump(next, err)) != KG_OK) {
        wp_kill(cur);
        wp_kill(next);
        return rc;
    }
    return KG_OK;
}

int kg_wproc_drive(kg_wproc *cur, kg_wproc *next, const kg_wspawn *sp, const kg_watch_ctx *wc, const char *pline,
                   int *said_done, kg_err *err)
{
    *said_done = 0;
    if (next != NULL && !next->active) next = NULL;
    for (;;) {
        int r = wp_reap(cur, err);
        if (r < 0) return KG_EIO;
        if (r == 1) break;
        if (next != NULL && wp_reap(next, err) < 0) return KG_EIO;
        if (stop_both(cur, next)) break;
        double now = kg_mono_s();
        if (past_timeout(cur, next, now)) break;
        if (watch_poll(cur, wc, now)) break;
        show_progress(cur, pline, now);
        int rc = pump_both(cur, next, err);
        if (rc != KG_OK) return rc;
        if ((rc = hello_check(cur, sp, wc, err)) != KG_OK ||
            (next != NULL && (rc = hello_check(next, sp, wc, err)) != KG_OK)) {
            wp_kill(cur);
            if (next != NULL) wp_kill(next);
            return rc;
        }
        if (next != NULL) ov_tick(next, kg_mono_s());
        if ((rc = store_early(cur, sp, err)) != KG_OK) {
            wp_kill(cur);
            return rc;
        }
        if (cur->ch.timed_done && !cur->said_done && cur->gone) {
            cur->said_done = 1;
            *said_done = 1;
            return KG_OK;
        }
    }
    /* the one beside it: its time by state up to now */
    if (next != NULL) {
        ov_tick(next, kg_mono_s());
        next->ov_open = 0;
    }
    return KG_OK;
}

/* The time a worker started beside the one before it spent by state,
 * into the log. */
static void log_overlap(const kg_wproc *w, const kg_watch_ctx *wc)
{
    double ov = 0;
    for (int i = 0; i < KG_OV_N; i++) ov += w->ov[i];
    if (ov >= 0.0005)
        kg_watch_log(wc->wl, ov, w->proc, "overlap", "started beside process %d, after its last timed phase: start "
                     "%.3f s, set-up %.3f s, checks %.3f s, ready and waiting %.3f s while it ran (counted once, as "
                     "process %d's)", w->proc - 1, w->ov[KG_OV_START], w->ov[KG_OV_SETUP], w->ov[KG_OV_CHECKS],
                     w->ov[KG_OV_WAIT], w->proc - 1);
}

/* A worker ready and never given the go: nothing of it is kept. */
static void record_gave_up(kg_wproc *w, const kg_watch_ctx *wc)
{
    proc_rec *rec = &w->rec;
    snprintf(rec->status, sizeof rec->status, "contaminated");
    if (w->budget_spent)
        snprintf(rec->reason, sizeof rec->reason, "not started: the campaign's waits for a quiet host passed their "
                 "budget of %.0f s (quiet_budget) (%.150s)", wc->budget_s, w->why);
    else
        snprintf(rec->reason, sizeof rec->reason, "not started: the host never became quiet within %.0f s of the "
                 "worker being ready to time (%.150s)", wc->give_up_s, w->why);
    rec->accepted = 0;
    rec->setup_s = rec->checks_s = rec->timed_s = 0;
    kg_watch_log(wc->wl, w->waited, w->proc, "wait", "gave up: the host never became quiet");
    kg_watch_log(wc->wl, w->waited, w->proc, "contaminated", "%s", rec->reason);
}

/* A worker whose rows came whole: its records checked and written (a
 * write that fails stops the campaign with the process unrecorded), and
 * what its own telemetry saw of the environment. */
static int record_rows(kg_wproc *w, const kg_wspawn *sp, const kg_watch_ctx *wc, kg_err *err)
{
    proc_rec *rec = &w->rec;
    kg_err verr = { 0 };
    if (w->stored < 0 || (w->stored == 0 && check_records(sp->plan, &w->ch, w->proc, &verr) != KG_OK)) {
        snprintf(rec->status, sizeof rec->status, "bad rows");
        snprintf(rec->reason, sizeof rec->reason, "%.250s", w->stored < 0 ? w->store_why : verr.msg);
        return KG_OK;
    }
    int rc;
    if (w->stored == 0 && (rc = store_records(sp->dirfd, sp->dir, &w->ch, w->proc, err)) != KG_OK) return rc;
    w->stored = 2;
    snprintf(rec->status, sizeof rec->status, "ok");
    rec->reason[0] = '\0';
    rec->accepted = 1;
    char ew[300], note[200] = "";
    if (!w->dirty && env_seen(sp->plan, &w->ch, w->proc, ew, sizeof ew, note, sizeof note)) {
        w->dirty = 1;
        snprintf(w->why, sizeof w->why, "%s", ew);
    }
    if (note[0] != '\0') kg_watch_log(wc->wl, 0, w->proc, "note", "%s", note);
    return KG_OK;
}

/* How the worker ended, into its record's status and reason; how (cap
 * 128) says how it died where an arm it ran may be to blame ("" else). */
static int record_outcome(kg_wproc *w, const kg_wspawn *sp, const kg_watch_ctx *wc, char *how, kg_err *err)
{
    proc_rec *rec = &w->rec;
    const kg_chan *ch = &w->ch;
    int status = w->status;
    char last[256];
    read_phases(ch, rec);
    kg_file_last_line(w->log, last, sizeof last);
    rec->accepted = 0;
    how[0] = '\0';
    if (w->timed_out) {
        snprintf(rec->status, sizeof rec->status, "timeout");
        snprintf(rec->reason, sizeof rec->reason, "passed the timeout of %.0f s and was killed", w->timeout_s);
        snprintf(how, 128, "passed the timeout of %.0f s", w->timeout_s);
    } else if (WIFSIGNALED(status)) {
        snprintf(rec->status, sizeof rec->status, "crashed");
        snprintf(rec->reason, sizeof rec->reason, "killed by signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
        snprintf(how, 128, "killed by signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
    } else if (WEXITSTATUS(status) != 0) {
        snprintf(rec->status, sizeof rec->status, "exit %d", WEXITSTATUS(status));
        if (ch->part[KG_FRAME_FAIL] != NULL)   /* the worker's own error: no arm is blamed */
            snprintf(rec->reason, sizeof rec->reason, "%.*s", (int)(ch->partlen[KG_FRAME_FAIL] < 250 ?
                     ch->partlen[KG_FRAME_FAIL] : 250), ch->part[KG_FRAME_FAIL]);
        else {
            snprintf(rec->reason, sizeof rec->reason, "%s", last[0] ? last : "exited with an error");
            snprintf(how, 128, "exited with status %d", WEXITSTATUS(status));
        }
    } else if (ch->bad[0] != '\0') {
        snprintf(rec->status, sizeof rec->status, "bad rows");
        snprintf(rec->reason, sizeof rec->reason, "its pipe broke the frame protocol: %.200s", ch->bad);
    } else if (ch->part[KG_FRAME_RAW] == NULL) {
        snprintf(rec->status, sizeof rec->status, "incomplete");
        snprintf(rec->reason, sizeof rec->reason, "exited 0 without sending its rows");
        kg_now nw;
        kg_now_latest(&w->now, ch, &nw);
        if (nw.set) snprintf(how, 128, "exited 0 without sending its rows");
    } else {
        return record_rows(w, sp, wc, err);
    }
    return KG_OK;
}

/* Records written while the worker closed, of a worker that then did not
 * end well, are not its records (raw first: a raw file means complete);
 * what killed it came after its arms' work, which is not blamed.  A
 * worker that died while it ran an arm is that arm's fault, except for a
 * timeout on a host that was not quiet (the host may be why). */
static int blame(kg_wproc *w, const kg_wspawn *sp, char *how, kg_err *err)
{
    proc_rec *rec = &w->rec;
    int whole = w->ch.part[KG_FRAME_RAW] != NULL && w->ch.bad[0] == '\0';
    if (w->stored == 1) unstore(sp->dirfd, w->proc);
    if (w->stored != 2 && whole && how[0] != '\0') {
        size_t l = strlen(rec->reason);
        snprintf(rec->reason + l, sizeof rec->reason - l, ", after it had sent its records");
        how[0] = '\0';
    }
    if (how[0] == '\0' || (w->timed_out && w->dirty)) return KG_OK;
    char fault[KG_DETAIL_MAX] = "";
    int rc = record_fault(sp->dirfd, sp->dir, sp->plan, &w->ch, &w->now, w->proc, rec->dir, how, fault, sizeof fault,
                          err);
    if (rc == KG_OK && fault[0] != '\0') snprintf(rec->reason, sizeof rec->reason, "%.250s", fault);
    return rc;
}

/* The host, not the kernel, is in question: excluded and repeated. */
static void contaminate(kg_wproc *w, const kg_watch_ctx *wc)
{
    proc_rec *rec = &w->rec;
    char outcome[300];
    snprintf(outcome, sizeof outcome, "%s%s%s", rec->status, rec->reason[0] ? ": " : "", rec->reason);
    snprintf(rec->status, sizeof rec->status, "contaminated");
    snprintf(rec->reason, sizeof rec->reason, "%.140s; the worker ended %.90s", w->why, outcome);
    rec->accepted = 0;
    kg_watch_log(wc->wl, rec->seconds, w->proc, "contaminated", "%s; the worker ended %s", w->why, outcome);
}

/* What the CPU-host watch saw of the host's other work while the worker
 * ran, as a note in the log: recorded whether or not a bound judges it,
 * so that the evidence says how quiet the host was. */
static void log_load(const kg_wproc *w, const kg_watch_ctx *wc)
{
    double mean, max;
    if (wc->q == NULL || !w->gone) return;
    double bound = wc->q->lim.max_foreign_cpu;
    char judged[96], seen[320] = "";
    if (bound > 0) snprintf(judged, sizeof judged, "judged against max_foreign_cpu = %.2f", bound);
    else snprintf(judged, sizeof judged, "recorded, not judged (max_foreign_cpu = 0)");
    if (kg_quiet_seen(wc->q)[0] != '\0')
        snprintf(seen, sizeof seen, "; compilers seen (observed, not judged): %s", kg_quiet_seen(wc->q));
    if (kg_quiet_load(wc->q, &mean, &max) <= 0) {
        /* a process shorter than the watch's window: said, not guessed */
        kg_watch_log(wc->wl, 0, w->proc, "note", "host load: not sampled: the process ended within the watch's "
                     "first window of %.0f s; %s%s", KG_QUIET_CPU_WINDOW_S, judged, seen);
        return;
    }
    kg_watch_log(wc->wl, 0, w->proc, "note", "host load: processes that are not kgate's used %.2f cores on average, "
                 "%.2f at most, over %d window(s) of %.0f s while the process ran; %s%s", mean, max,
                 kg_quiet_load(wc->q, &mean, &max), KG_QUIET_CPU_WINDOW_S, judged, seen);
}

int kg_wproc_finish(kg_wproc *w, const kg_wspawn *sp, const kg_watch_ctx *wc, kg_err *err)
{
    int rc = KG_OK;
    char how[128] = "";
    /* whatever the worker left running in its group goes too */
    kill(-w->pid, SIGKILL);
    if (w->gfd >= 0) close(w->gfd);
    w->gfd = -1;
    w->rec.wait_s = w->waited;
    if (w->stopped) {
        rc = kg_errorf(err, KG_EIO, "interrupted%s: kgate run %s --resume %s continues it",
                       !w->gone && w->t_ready >= 0 ? " while waiting for a quiet host" : "", sp->plan_path, sp->dir);
        goto out;
    }
    /* what the worker sent before it ended (a descendant outside its
     * group may hold the pipe open: only what is there now is read) */
    if (!w->ch.eof && (rc = kg_chan_pump(&w->ch, w->pfd, err)) != KG_OK) goto out;
    if ((rc = hello_check(w, sp, wc, err)) != KG_OK) {
        if (w->stored == 1) unstore(sp->dirfd, w->proc);
        goto out;
    }
    w->rec.seconds = kg_mono_s() - w->t0;
    log_overlap(w, wc);
    log_load(w, wc);
    if (w->gave_up) {
        record_gave_up(w, wc);
        goto out;
    }
    if ((rc = record_outcome(w, sp, wc, how, err)) != KG_OK) goto out;
    if ((rc = blame(w, sp, how, err)) != KG_OK) goto out;
    if (w->dirty) contaminate(w, wc);
    /* the worker's input error (the plan cannot run here): every process would meet it */
    if (w->ch.part[KG_FRAME_REFUSE] != NULL)
        snprintf(w->refused, sizeof w->refused, "%.*s",
                 (int)(w->ch.partlen[KG_FRAME_REFUSE] < sizeof w->refused ? w->ch.partlen[KG_FRAME_REFUSE]
                                                                          : sizeof w->refused - 1),
                 w->ch.part[KG_FRAME_REFUSE]);
out:
    if (w->gfd >= 0) close(w->gfd);
    w->gfd = -1;
    if (w->pfd >= 0) close(w->pfd);
    w->pfd = -1;
    kg_chan_free(&w->ch);
    kg_nowpage_destroy(&w->now);
    w->active = 0;
    return rc;
}

void kg_wproc_discard(kg_wproc *w, int dirfd)
{
    if (!w->active) return;
    if (w->pid > 0 && !w->exited) {
        kill(-w->pid, SIGKILL);
        while (waitpid(w->pid, NULL, 0) < 0 && errno == EINTR) { }
    } else if (w->pid > 0) {
        kill(-w->pid, SIGKILL);
    }
    w->exited = 1;
    if (w->gfd >= 0) close(w->gfd);
    if (w->pfd >= 0) close(w->pfd);
    w->gfd = w->pfd = -1;
    kg_chan_free(&w->ch);
    kg_nowpage_destroy(&w->now);
    char name[48];
    snprintf(name, sizeof name, "logs/proc-%03d.log", w->proc);
    (void)unlinkat(dirfd, name, 0);
    w->active = 0;
}

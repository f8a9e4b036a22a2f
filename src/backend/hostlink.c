/* hostlink.c: the worker's end of an arm host (hostlink.h). */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "backend/hostlink.h"
#include "sandbox/sandbox.h"
#include "toolchain/spawn.h"
#include "base/util.h"

int kg_hostlink_init(kg_hostlink *h, const char *arm, uint32_t violation_kind, uint32_t max_reply, kg_err *err)
{
    memset(h, 0, sizeof *h);
    h->violation_nr = -1;
    snprintf(h->arm, sizeof h->arm, "%s", arm);
    h->violation_kind = violation_kind;
    h->max_reply = max_reply < 4 ? 4 : max_reply;   /* room for a violation's system call */
    h->sock = h->outfd = -1;
    h->out = malloc(KG_HOSTLINK_OUT_CAP);
    h->rx = malloc(KG_FRAME_HEADER + (size_t)h->max_reply);
    if (h->out == NULL || h->rx == NULL) {
        free(h->out);
        free(h->rx);
        h->out = NULL;
        h->rx = NULL;
        return kg_errorf(err, KG_ENOMEM, "out of memory starting arm '%s'", arm);
    }
    return KG_OK;
}

int kg_hostlink_mkdir(kg_hostlink *h, kg_err *err)
{
    snprintf(h->dir, sizeof h->dir, "/tmp/kgate-arm-XXXXXX");
    if (mkdtemp(h->dir) == NULL) {
        h->dir[0] = '\0';
        return kg_errorf(err, KG_EIO, "arm '%s': cannot create its private folder under /tmp: %s (free "
                         "space or permissions of /tmp)", h->arm, strerror(errno));
    }
    chmod(h->dir, 0700);
    return KG_OK;
}

int kg_hostlink_spawn(kg_hostlink *h, const char *exe, char *const argv[], char *const envp[],
                      int sock_fd, kg_err *err)
{
    kg_spawned sp;
    char why[200];
    if (kg_spawn_linked(exe, argv, envp, sock_fd, h->own_session, NULL, NULL, &sp, why, sizeof why) != 0)
        return kg_errorf(err, KG_EIO, "arm '%s': %s", h->arm, why);
    h->pid = sp.pid;
    h->sock = sp.sock;
    h->outfd = sp.outfd;
    h->seq = 0;
    return KG_OK;
}

int kg_hostlink_send(kg_hostlink *h, uint32_t kind, const void *payload, size_t len, const int *fds, int nfd)
{
    if (nfd > KG_MAX_PASSED_FDS) return -1;
    return kg_frame_sendmsg(h->sock, kind, ++h->seq, payload, len, fds, nfd);
}

void kg_hostlink_drain(kg_hostlink *h)
{
    char buf[8192];
    if (h->outfd < 0) return;
    for (;;) {
        ssize_t r = read(h->outfd, buf, sizeof buf);
        if (r <= 0) return;
        size_t keep = h->outlen < KG_HOSTLINK_OUT_CAP ? KG_HOSTLINK_OUT_CAP - h->outlen : 0;
        if (keep > (size_t)r) keep = (size_t)r;
        if (keep > 0 && h->out != NULL) {
            memcpy(h->out + h->outlen, buf, keep);
            h->outlen += keep;
        }
        h->dropped += (unsigned long long)((size_t)r - keep);
    }
}

void kg_hostlink_flush(kg_hostlink *h)
{
    kg_hostlink_drain(h);
    if (h->outlen == 0 && h->dropped == 0) return;
    size_t i = 0;
    while (i < h->outlen) {
        size_t j = i;
        while (j < h->outlen && h->out[j] != '\n') j++;
        fprintf(stderr, "arm %s: %.*s\n", h->arm, (int)(j - i), h->out + i);
        i = j + 1;
    }
    if (h->dropped > 0)
        fprintf(stderr, "arm %s: %llu more bytes of output dropped (%d KiB are kept)\n", h->arm, h->dropped,
                KG_HOSTLINK_OUT_CAP / 1024);
    h->outlen = 0;
    h->dropped = 0;
}

void kg_hostlink_kill(kg_hostlink *h)
{
    if (h->pid <= 0) return;
    kill(-h->pid, SIGKILL);
    kill(h->pid, SIGKILL);
}

int kg_hostlink_reap(kg_hostlink *h, double grace_s, int *status)
{
    if (h->pid <= 0) {
        *status = 0;
        return 1;
    }
    double end = kg_mono_s() + grace_s;
    for (;;) {
        pid_t r = waitpid(h->pid, status, WNOHANG);
        if (r == h->pid) return 1;
        if (r < 0) return errno == ECHILD ? (*status = 0, 1) : 0;
        if (kg_mono_s() >= end) return 0;
        kg_hostlink_drain(h);
        struct timespec ts = { 0, 2000000 };
        nanosleep(&ts, NULL);
    }
}

int kg_hostlink_fault(kg_hostlink *h, int violation, int timed_out, double limit_s, kg_err *err)
{
    int status = 0, ended;
    if (timed_out) {
        kg_hostlink_kill(h);
        ended = kg_hostlink_reap(h, 5.0, &status);
    } else {
        ended = kg_hostlink_reap(h, 1.0, &status);
        if (!ended) {
            kg_hostlink_kill(h);
            ended = kg_hostlink_reap(h, 5.0, &status);
        }
    }
    kg_hostlink_kill(h);   /* whatever is left of its group */
    char why[400];
    if (timed_out) {
        snprintf(why, sizeof why, "hung past its per-request timeout of %.3g s (killed)", limit_s);
    } else if (violation >= 0) {
        h->violation_nr = violation;
        char name[64];
        kg_sandbox_syscall_name(violation, name, sizeof name);
        snprintf(why, sizeof why, "killed by SIGSYS: sandbox violation (syscall %s)", name);
    } else if (ended && WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);
        const char *what = sig == SIGSYS ? ": sandbox violation"
                         : sig == SIGSEGV ? ": a bad memory access (a write to its read-only inputs, or outside its buffers)"
                         : sig == SIGXCPU ? ": it passed its CPU-time limit"
                         : sig == SIGBUS ? ": a bad memory access" : "";
        const char *abbrev = sigabbrev_np(sig);
        if (abbrev != NULL) snprintf(why, sizeof why, "killed by SIG%s%s", abbrev, what);
        else snprintf(why, sizeof why, "killed by signal %d%s", sig, what);
    } else if (ended && WIFEXITED(status)) {
        snprintf(why, sizeof why, "exited with status %d", WEXITSTATUS(status));
    } else {
        snprintf(why, sizeof why, "stopped answering (its socket closed)");
    }
    snprintf(h->dead_why, sizeof h->dead_why, "arm '%s' host %s", h->arm, why);
    h->dead = 1;
    if (ended && h->pid > 0) h->pid = -h->pid;   /* reaped: never signalled again */
    kg_hostlink_flush(h);
    return kg_errorf(err, KG_EARM, "%s", h->dead_why);
}

int kg_hostlink_broken(kg_hostlink *h, const char *why, kg_err *err)
{
    kg_hostlink_kill(h);
    kg_hostlink_fault(h, -1, 0, 0, NULL);
    snprintf(h->dead_why, sizeof h->dead_why, "arm '%s' host %s: killed", h->arm, why);
    return kg_errorf(err, KG_EARM, "%s", h->dead_why);
}

int kg_hostlink_refused(kg_hostlink *h, const char *what, const char *text, kg_err *err)
{
    kg_hostlink_kill(h);
    kg_hostlink_fault(h, -1, 0, 0, NULL);
    snprintf(h->dead_why, sizeof h->dead_why, "arm '%s' host %s: %s", h->arm, what, text);
    return kg_errorf(err, KG_EARM, "%s", h->dead_why);
}

/* One message from the host, without waiting: what kg_frame_recvmsg
 * returns, with the frame in *rx (no descriptors are taken). */
static int receive(kg_hostlink *h, kg_frame_rx *rx)
{
    memset(rx, 0, sizeof *rx);
    rx->buf = h->rx;
    rx->max_len = h->max_reply;
    return kg_frame_recvmsg(h->sock, 0, rx);
}

/* The host's report of the system call its sandbox denied: -1 when rx is
 * not one. */
static int violation(const kg_hostlink *h, const kg_frame_rx *rx)
{
    if (h->violation_kind == 0 || rx->h.kind != h->violation_kind || rx->h.len != 4) return -1;
    int32_t nr = (int32_t)kg_get32(rx->payload);
    return nr >= 0 ? nr : -1;
}

/* A message came while a reply was due: the reply (KG_OK), or the host
 * is lost (KG_EARM). */
static int take_reply(kg_hostlink *h, uint32_t kind, double limit_s, const unsigned char **payload, uint32_t *len,
                      kg_err *err)
{
    kg_frame_rx rx;
    int r = receive(h, &rx);
    char why[300];
    if (r == 0) return 1;   /* nothing after all: wait on */
    if (r == -1) return kg_hostlink_fault(h, -1, 0, limit_s, err);
    if (r == -2) {
        snprintf(why, sizeof why, "broke the protocol (%s)", rx.why);
        return kg_hostlink_broken(h, why, err);
    }
    int nr = violation(h, &rx);
    if (nr >= 0) return kg_hostlink_fault(h, nr, 0, limit_s, err);
    if (rx.h.kind != kind || rx.h.tag != h->seq) {
        snprintf(why, sizeof why, "broke the protocol (a reply of kind %u, sequence %u, where kind %u, sequence "
                 "%u was due)", rx.h.kind, rx.h.tag, kind, h->seq);
        return kg_hostlink_broken(h, why, err);
    }
    *payload = rx.payload;
    *len = rx.h.len;
    return KG_OK;
}

int kg_hostlink_wait(kg_hostlink *h, uint32_t kind, double limit_s, const unsigned char **payload, uint32_t *len,
                     kg_err *err)
{
    double end = kg_mono_s() + limit_s;
    int outfd = h->outfd;
    for (;;) {
        double left = end - kg_mono_s();
        if (left <= 0) return kg_hostlink_fault(h, -1, 1, limit_s, err);
        struct pollfd pf[2] = { { h->sock, POLLIN, 0 }, { outfd, POLLIN, 0 } };
        int ms = left > 1e6 ? 1000000000 : (int)ceil(left * 1e3);
        int r = poll(pf, 2, ms);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) return kg_hostlink_fault(h, -1, 0, limit_s, err);
        if (pf[1].revents) {
            kg_hostlink_drain(h);
            if (pf[1].revents & (POLLHUP | POLLERR)) outfd = -1;
        }
        if (pf[0].revents & POLLIN) {
            int rc = take_reply(h, kind, limit_s, payload, len, err);
            if (rc <= 0) return rc;
            continue;
        }
        if (pf[0].revents & (POLLHUP | POLLERR)) return kg_hostlink_fault(h, -1, 0, limit_s, err);
    }
}

int kg_hostlink_reply(kg_hostlink *h, uint32_t kind, double limit_s, void *rep, size_t len, kg_err *err)
{
    const unsigned char *p = NULL;
    uint32_t n = 0;
    int rc = kg_hostlink_wait(h, kind, limit_s, &p, &n, err);
    if (rc != KG_OK) return rc;
    if (n != len) {
        char why[200];
        snprintf(why, sizeof why, "broke the protocol (a reply of kind %u with %u bytes, where %zu were due)", kind,
                 n, len);
        return kg_hostlink_broken(h, why, err);
    }
    memcpy(rep, p, len);
    return KG_OK;
}

int kg_hostlink_quiet(kg_hostlink *h, kg_err *err)
{
    if (h->dead) return kg_errorf(err, KG_EARM, "%s", h->dead_why);
    struct pollfd pf = { h->sock, POLLIN, 0 };
    if (poll(&pf, 1, 0) <= 0) return KG_OK;
    kg_frame_rx rx;
    int r = receive(h, &rx);
    if (r == 0) return KG_OK;
    if (r == 1 && violation(h, &rx) >= 0) return kg_hostlink_fault(h, violation(h, &rx), 0, 0, err);
    if (r == -1) return kg_hostlink_fault(h, -1, 0, 0, err);
    char why[300];
    if (r == -2) snprintf(why, sizeof why, "broke the protocol (%s)", rx.why);
    else snprintf(why, sizeof why, "sent a message nobody asked for (a frame of kind %u, sequence %u, %u bytes: a "
                  "second reply, or the kernel spoke on the request socket)", rx.h.kind, rx.h.tag, rx.h.len);
    return kg_hostlink_broken(h, why, err);
}

void kg_hostlink_quit(kg_hostlink *h, uint32_t quit_kind)
{
    if (h->pid <= 0 || h->dead || h->sock < 0 || h->quit_sent) return;
    kg_hostlink_send(h, quit_kind, NULL, 0, NULL, 0);
    h->quit_sent = 1;
}

void kg_hostlink_close(kg_hostlink *h, uint32_t quit_kind, int *outlived)
{
    int status;
    if (outlived != NULL) *outlived = 0;
    if (h->pid > 0 && !h->dead && h->sock >= 0) {
        kg_hostlink_quit(h, quit_kind);
        if (!kg_hostlink_reap(h, 0.5, &status)) {
            kg_hostlink_kill(h);
            kg_hostlink_reap(h, 5.0, &status);
        }
        h->pid = -h->pid;
    }
    /* the whole group goes; one still there afterwards outlived it */
    pid_t g = h->pid < 0 ? -h->pid : h->pid;
    if (g > 0 && kill(-g, 0) == 0) {
        fprintf(stderr, "arm %s: escape: a process of its host's group outlived the host (killed)\n", h->arm);
        kill(-g, SIGKILL);
        if (outlived != NULL) *outlived = 1;
    }
    if (h->pid > 0) {
        kg_hostlink_kill(h);
        kg_hostlink_reap(h, 5.0, &status);
        h->pid = -h->pid;
    }
    kg_hostlink_flush(h);
    if (h->sock >= 0) close(h->sock);
    if (h->outfd >= 0) close(h->outfd);
    h->sock = h->outfd = -1;
    if (h->dir[0] != '\0' && rmdir(h->dir) != 0)
        fprintf(stderr, "arm %s: cannot remove its private folder %s: %s\n", h->arm, h->dir, strerror(errno));
    h->dir[0] = '\0';
    free(h->out);
    free(h->rx);
    h->out = NULL;
    h->rx = NULL;
}

/* hostlink.h: the worker's end of an arm host, the process an untrusted
 * arm runs in (the cpu backend's, armhost.h; the cuda backend's,
 * cuda_host.h), and of the library arms' helper (libarm.h).  A host is
 * exec'd fresh (never a bare fork of the worker, whose references and
 * rows would be copied into it), in a process group of its own, with a
 * SOCK_SEQPACKET request socket and its stdout and stderr on a pipe the
 * worker drains with a size cap.
 *
 * Every request and reply is one frame of kgate's one framing
 * (base/frame.h) as one message of the socket, descriptors travelling
 * with it: kind = the message, tag = the request's sequence number (a
 * reply repeats it; the hello a host sends first has 0), payload = the
 * message's fields, whose size the protocol fixes per kind.  The worker
 * takes a reply only when it is one whole frame of the kind it asked
 * for, with the request's sequence number, the exact size of that kind's
 * reply and no descriptors.  Anything else (garbage, a frame of another
 * kind, size or sequence, descriptors, a message nobody asked for, an
 * early end, a timeout) is a fault of the arm: the host is killed,
 * reaped, and the call returns KG_EARM with the reason. */
#ifndef KGATE_HOSTLINK_H
#define KGATE_HOSTLINK_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "base/frame.h"
#include "kgate/err.h"
#include "kgate/plan.h"

#define KG_HOSTLINK_OUT_CAP (64 * 1024)   /* a host's output kept; the rest is counted and dropped */

typedef struct kg_hostlink {
    char arm[KG_NAME_MAX];
    uint32_t violation_kind;   /* the frame a host sends before it dies of the sandbox (the system call's
                                  number, 4 bytes); 0: none */
    uint32_t max_reply;        /* the longest reply payload of this protocol */
    unsigned char *rx;         /* one received message: KG_FRAME_HEADER + max_reply bytes */
    pid_t pid;                 /* also its process group; negated once reaped; 0 none */
    int sock, outfd;
    uint32_t seq;              /* the last request's sequence number (its frame's tag) */
    int dead;
    int violation_nr;          /* the system call its filter denied when it died of one; -1 none */
    int own_session;           /* set before spawn: the host starts a session of its own (no controlling
                                * terminal; a cuda arm host, whose filter admits every ioctl); 0: a process
                                * group of its own in the worker's session */
    int quit_sent;             /* kg_hostlink_quit was called: close only reaps */
    char dead_why[512];
    char *out;                 /* KG_HOSTLINK_OUT_CAP bytes */
    size_t outlen;
    unsigned long long dropped;
    char dir[PATH_MAX];        /* its private folder, removed at close; "" none */
} kg_hostlink;

/* A link not yet started (pid 0, no descriptors). */
int kg_hostlink_init(kg_hostlink *h, const char *arm, uint32_t violation_kind, uint32_t max_reply, kg_err *err);

/* Makes the host's private folder (mode 0700) under /tmp. */
int kg_hostlink_mkdir(kg_hostlink *h, kg_err *err);

/* Forks and execs exe with argv and envp: descriptor 0 /dev/null, 1 and 2
 * the output pipe, sock_fd the request socket, nothing else open. */
int kg_hostlink_spawn(kg_hostlink *h, const char *exe, char *const argv[], char *const envp[],
                      int sock_fd, kg_err *err);

/* Sends one request, a frame of kind with a new sequence number and
 * nfd descriptors: 0, or -1 when the socket is gone. */
int kg_hostlink_send(kg_hostlink *h, uint32_t kind, const void *payload, size_t len, const int *fds, int nfd);

/* Waits up to limit_s for the reply (a frame of kind) to the last
 * request, draining the host's output meanwhile: *payload (into the
 * link's buffer, valid until its next receive) and *len. */
int kg_hostlink_wait(kg_hostlink *h, uint32_t kind, double limit_s, const unsigned char **payload, uint32_t *len,
                     kg_err *err);

/* kg_hostlink_wait for a reply of exactly len bytes, copied into rep. */
int kg_hostlink_reply(kg_hostlink *h, uint32_t kind, double limit_s, void *rep, size_t len, kg_err *err);

/* Before a request (and after a reply that came another way): nothing
 * unasked may be waiting on the socket.  KG_OK, or the host is lost
 * (KG_EARM: a violation, its end, a malformed frame, or a frame nobody
 * asked for, with its kind, sequence number and size). */
int kg_hostlink_quiet(kg_hostlink *h, kg_err *err);

/* The host is lost: kills what is left when timed_out or it does not end,
 * reaps it, records why (violation: the system call the sandbox denied,
 * -1 none) and returns KG_EARM. */
int kg_hostlink_fault(kg_hostlink *h, int violation, int timed_out, double limit_s, kg_err *err);

/* The host answered a request with a refusal: killed, and KG_EARM with
 * "arm 'A' host WHAT: TEXT". */
int kg_hostlink_refused(kg_hostlink *h, const char *what, const char *text, kg_err *err);

/* The host ignored the protocol: killed, and KG_EARM with the reason. */
int kg_hostlink_broken(kg_hostlink *h, const char *why, kg_err *err);

void kg_hostlink_kill(kg_hostlink *h);
/* 1 with *status once the host ended within grace_s. */
int kg_hostlink_reap(kg_hostlink *h, double grace_s, int *status);
void kg_hostlink_drain(kg_hostlink *h);
/* The host's output, into the worker's stderr (its log), prefixed with the arm. */
void kg_hostlink_flush(kg_hostlink *h);

/* Sends quit (an empty frame of kind quit_kind) when the host is alive
 * and returns at once, so that several hosts end side by side; the close
 * that follows reaps it. */
void kg_hostlink_quit(kg_hostlink *h, uint32_t quit_kind);

/* Sends quit (kg_hostlink_quit) when the host is alive, waits
 * briefly, kills what is left of its group (an outliving member is
 * reported as an escape on stderr; *outlived set), flushes its output,
 * closes the descriptors and removes its folder. */
void kg_hostlink_close(kg_hostlink *h, uint32_t quit_kind, int *outlived);

#endif

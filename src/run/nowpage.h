/* nowpage.h: what a worker is doing now, on a page of shared memory
 * its supervisor reads (nowpage.c).
 *
 * The supervisor names the arm a dead or hung worker was running from
 * the worker's last NOW state (case, arm, phase, round).  A NOW frame on
 * the rows pipe (channel.h) before every timed sample woke the
 * supervisor onto the CPUs the sample used (about 0.4 us of the cpu
 * backend's request floor, docs/measurements/cpu-2026-12-04-floor/).
 * So the state goes to a page instead, and a frame only where the
 * supervisor must act on it at once:
 *
 *   - the supervisor makes one page per worker (kg_nowpage_create: a
 *     memfd of one page, sealed against resizing, so that a worker cannot
 *     shrink it under the supervisor's mapping), maps it, and passes its
 *     descriptor to the worker as it passes the rows pipe (`kgate worker
 *     --now-fd N`), closing its own descriptor once the worker is started;
 *   - the worker maps it and closes the descriptor before any arm host or
 *     helper exists (kg_nowpage_attach): no process it starts can inherit
 *     it, and a mapping does not survive an exec;
 *   - the worker's kg_now_tell writes every state to the page, and sends
 *     a NOW frame for every phase but KG_NOW_TIME (loading, checks, the
 *     ready and timed-done events, which the supervisor acts on: the go,
 *     the next worker's start, the overlap's states); a worker without a
 *     page sends every state as a frame, as before;
 *   - the supervisor reads the state through kg_now_latest: the page's
 *     when it holds one (the worker writes the page before it sends any
 *     frame, so the page is never older than the frames), else the last
 *     frame's.
 *
 * The page holds two copies of the state and a sequence number (a
 * latch): the worker, its only writer, advances the sequence to odd,
 * writes copy 0, advances it to even, writes copy 1; a reader reads
 * the copy the sequence's parity names, the one not being written, and
 * takes it only when the sequence did not move meanwhile.  A worker
 * killed in the middle of a write leaves the previous state whole.  The
 * worker is trusted kgate code: the page is no boundary against
 * candidates, who never see it; the supervisor checks every word it
 * reads before it uses it (wproc.c). */
#ifndef KGATE_NOWPAGE_H
#define KGATE_NOWPAGE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include "kgate/err.h"
#include "run/channel.h"

typedef struct kg_now_copy {
    _Atomic int32_t kase, arm, phase, round;
} kg_now_copy;

typedef struct kg_now_shm {
    _Atomic uint32_t seq;    /* 2 per state written; the current state is copy[seq & 1]; < 2: none yet */
    uint32_t pad;
    kg_now_copy copy[2];
} kg_now_shm;

/* One side's page: its mapping, and (the supervisor's until the worker
 * is started) its descriptor. */
typedef struct kg_nowpage {
    kg_now_shm *pg;
    size_t len;
    int fd;
} kg_nowpage;

/* A state: set 0 when none was told. */
typedef struct kg_now {
    int set, kase, arm, phase, round;
} kg_now;

/* The supervisor's: a fresh page (no state), mapped, its descriptor
 * close-on-exec in p->fd. */
int kg_nowpage_create(kg_nowpage *p, kg_err *err);
/* The worker's: maps the page of descriptor fd (refused unless it is a
 * sealed page of the size kg_nowpage_create makes) and closes fd. */
int kg_nowpage_attach(kg_nowpage *p, int fd, kg_err *err);
/* Closes the descriptor, if still open (the supervisor, once the worker
 * has it). */
void kg_nowpage_close_fd(kg_nowpage *p);
/* Unmaps the page and closes its descriptor; nothing for a zeroed one. */
void kg_nowpage_destroy(kg_nowpage *p);

/* Writes a state to the page (the worker, its only writer). */
void kg_nowpage_write(kg_nowpage *p, int kase, int arm, int phase, int round);
/* Reads the page's state: 1 with *out set, 0 when it holds none (or the
 * writer kept moving through every try). */
int kg_nowpage_read(const kg_nowpage *p, kg_now *out);

/* The worker's NOW: the state written to page (NULL: none), and a NOW
 * frame on fd unless the page holds it and the phase is KG_NOW_TIME.
 * Errors: the frame's send. */
int kg_now_tell(kg_nowpage *page, int fd, int proc, int kase, int arm, int phase, int round, kg_err *err);
/* The supervisor's: the newest state of a worker, from its page (NULL:
 * none) and its channel's last NOW frame. */
void kg_now_latest(const kg_nowpage *page, const kg_chan *ch, kg_now *out);

#endif

/* armpage.h: the request page between the cpu backend's worker and a CPU
 * arm host (armhost.h): one page of shared memory, the worker's, through
 * which a RUN request and its reply pass as one futex word, where a
 * socket message each way cost more than a small kernel (the request
 * floor, docs/cpu-backend.md).
 *
 * The worker creates the page (a memfd of one page, sealed against
 * resizing), maps it, and hands its descriptor to the host once, with
 * the PAGE request.  The host maps it read-write and from then on waits
 * on its state word, never on the socket:
 *
 *   state = seq << 2 | phase     seq: the request's sequence number, 30 bits
 *   KG_AP_SOCK  a framed request (BIND, QUIT) waits on the socket: the
 *               host reads it there and replies there
 *   KG_AP_RUN   run `n` calls; `nonce` is the request's (both written
 *               before the state)
 *   KG_AP_DONE  the host's reply to RUN seq: `status`, `cpu`, `echo`
 *               (the nonce), `msg`
 *   KG_AP_SLOW  the worker waited past its bound for a quick reply and
 *               asks for the reply as a frame on the socket instead, where
 *               its watchdog waits (a dead host's socket closes, its
 *               output is drained)
 *
 * The worker writes SOCK and RUN (a store) and SLOW (a compare-and-swap
 * from RUN); the host writes DONE (a compare-and-swap from RUN), so a
 * reply and a request for a frame never cross: exactly one of them wins.
 * Each side waits with FUTEX_WAIT.  The worker wakes the host
 * (FUTEX_WAKE) after each post; the host wakes the worker after its reply
 * only when the worker said it sleeps (`sleeping`, set before it checks
 * the state a last time and sleeps: sequentially consistent on both
 * sides, so a reply either finds the flag or is seen by that check).
 * On one CPU the worker's wake-up usually hands the CPU to the host at
 * once, and the reply is there when the worker runs again: then it never
 * sleeps, and the host makes no wake-up call.  The futex is a shared one (the memfd's page, not the
 * mapping, is its key), so no other process can reach it.
 *
 * Everything on the page may be written by the arm's code as well (it
 * runs in the host's address space).  The worker trusts none of it: it
 * reads each reply field once, checks the state's sequence number, the
 * nonce and the status, and takes a sample's time from its own clock
 * around the post and the reply (cpu.c). */
#ifndef KGATE_ARMPAGE_H
#define KGATE_ARMPAGE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include "kgate/err.h"

#define KG_AP_SEQ_MASK 0x3fffffffu
#define KG_AP_STATE(seq, phase) (((((uint32_t)(seq)) & KG_AP_SEQ_MASK) << 2) | (uint32_t)(phase))
#define KG_AP_SEQ(state) ((state) >> 2)
#define KG_AP_PHASE(state) ((state) & 3u)
#define KG_AP_MSG_TEXT 200

enum { KG_AP_SOCK = 0, KG_AP_RUN = 1, KG_AP_DONE = 2, KG_AP_SLOW = 3 };

typedef struct kg_ah_page {
    _Atomic uint32_t state;       /* the futex word, both ways */
    _Atomic uint32_t sleeping;    /* the worker's: 1 while it sleeps on state (the host wakes it only then) */
    uint32_t pad0[14];
    /* the request: the worker's, written before it posts RUN */
    volatile int32_t n;
    volatile uint32_t pad1;
    volatile uint64_t nonce;
    uint32_t pad2[12];
    /* the reply: the host's, written before DONE */
    volatile uint64_t echo;       /* the request's nonce */
    volatile int32_t status;      /* KG_AH_OK, else msg says why */
    volatile int32_t cpu;         /* sched_getcpu() after the calls; -1 unknown (the host's word, kg_ah_reply) */
    volatile char msg[KG_AP_MSG_TEXT];
} kg_ah_page;

/* The worker's page: its mapping and descriptor. */
typedef struct kg_armpage {
    kg_ah_page *pg;
    size_t len;
    int fd;
} kg_armpage;

/* Creates the page (zeroed: state SOCK of sequence 0). */
int kg_armpage_create(kg_armpage *p, const char *arm, kg_err *err);
/* Unmaps it and closes its descriptor (if still open); nothing for a
 * page never created (a zeroed kg_armpage). */
void kg_armpage_destroy(kg_armpage *p);

/* The state now (an acquire load). */
uint32_t kg_armpage_state(kg_ah_page *pg);
/* Stores state (release) and wakes the other side. */
void kg_armpage_post(kg_ah_page *pg, uint32_t state);
/* Compare-and-swap from expect to want, waking the other side when it
 * took; 1 when it took, else 0 with the state found in *seen. */
int kg_armpage_swap(kg_ah_page *pg, uint32_t expect, uint32_t want, uint32_t *seen);
/* Sleeps while the state is `from`, at most limit_s (< 0: no bound);
 * returns on a wake-up, a change, a signal or the bound (the caller
 * reads the state again).  The host's wait. */
void kg_armpage_wait(kg_ah_page *pg, uint32_t from, double limit_s);
/* The worker's wait: kg_armpage_wait with `sleeping` set around it, so
 * that the host's swap to DONE wakes it only when it sleeps. */
void kg_armpage_sleep(kg_ah_page *pg, uint32_t from, double limit_s);
/* The host's reply: swaps expect to want (kg_armpage_swap) and wakes
 * the worker only when it said it sleeps; 1 when it took, else 0 with
 * the state found in *seen. */
int kg_armpage_answer(kg_ah_page *pg, uint32_t expect, uint32_t want, uint32_t *seen);
/* The phase of a state, as a word (SOCK, RUN, DONE, SLOW). */
const char *kg_armpage_phase_name(uint32_t state);

#endif

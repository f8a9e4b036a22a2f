/* channel.h: the pipe from a worker to its supervisor (channel.c).
 *
 * A worker writes nothing into the evidence folder: it sends every
 * record through an inherited pipe (`kgate worker --rows-fd N`) as
 * frames of kgate's one framing (base/frame.h: a 16-byte header magic |
 * kind | tag | payload length, then the payload), the tag naming the
 * worker's process, and the supervisor checks each with the strict
 * readers of rows.c before it writes the file.
 *
 * Kinds: HELLO (the worker's first frame: the SHA-256 of the image it
 * runs, /proc/self/exe, which the supervisor compares with its own), NOW
 * (before every arm operation: which case, arm, phase and round, four
 * 32-bit words; a worker with its NOW page, nowpage.h, writes a timed
 * sample's there only and sends no frame for it), the text of a row kind (checks, saved
 * outputs' index, telemetry, resources, raw: one frame each, raw last),
 * the saved outputs' bytes, and FAIL (the worker's own error message,
 * before it exits with an error that is not an arm's).
 *
 * MAC, the last frame before RAW: the HMAC-SHA256 (kg_frame_mac), under
 * the worker's token (token.h), of every frame the worker sent (header
 * and payload, NOW frames included) but the MAC frame itself, RAW
 * included.  A supervisor that expects it (kg_chan_expect_mac) refuses
 * raw rows without a matching MAC, and any frame after RAW. */
#ifndef KGATE_CHANNEL_H
#define KGATE_CHANNEL_H

#include <stddef.h>
#include <stdint.h>
#include "base/frame.h"
#include "kgate/err.h"

typedef enum {
    KG_FRAME_NOW = 1,         /* case, arm, phase (kg_now_phase), round (-1: none) */
    KG_FRAME_CHECKS,
    KG_FRAME_OUTPUTS_BIN,
    KG_FRAME_OUTPUTS,
    KG_FRAME_TELEMETRY,
    KG_FRAME_RESOURCES,
    KG_FRAME_RAW,             /* last: the process is complete */
    KG_FRAME_FAIL,            /* the worker's own error (text) */
    KG_FRAME_PHASES,          /* where its time went: "setup_s checks_s timed_s\n" (before raw) */
    KG_FRAME_MAC,             /* HMAC-SHA256 under the token of every other frame, RAW included (32 bytes) */
    KG_FRAME_HELLO,           /* first: the SHA-256 of the worker's own image and its path, "HEX PATH\n" */
    KG_FRAME_REFUSE,          /* with FAIL, for an input error (KG_EINPUT: the plan cannot run here, as in
                               * every process): the text; the supervisor stops the campaign */
    KG_FRAME_NKINDS
} kg_frame_kind;

/* What the worker is about to do with an arm. */
/* KG_NOW_READY: its set-up and checks before timing are done, and it
 * waits on its go pipe for the supervisor to see a quiet host (the first
 * timed phase of the process comes next).  KG_NOW_PREPARE: a case's
 * inputs and float64 references (check time).  KG_NOW_TIMED_DONE: the
 * last timed phase of the process is over; only checks and its records
 * are left (the supervisor may start the next worker's set-up). */
typedef enum { KG_NOW_LOAD, KG_NOW_CHECK_BEFORE, KG_NOW_TIME, KG_NOW_CHECK_AFTER, KG_NOW_READY, KG_NOW_PREPARE,
               KG_NOW_TIMED_DONE } kg_now_phase;
const char *kg_now_phase_name(int phase);    /* "loading", "checks before timing", ... */

/* Sends one frame on fd (blocking, whole). */
int kg_frame_send(int fd, int kind, int proc, const void *data, size_t len, kg_err *err);
/* Sends a NOW frame. */
int kg_frame_now(int fd, int proc, int kase, int arm, int phase, int round, kg_err *err);

/* The worker's side of the MAC: from now on every frame sent is
 * authenticated under key (KG_TOKEN_BYTES bytes). */
int kg_frame_mac_begin(const unsigned char *key, size_t keylen, kg_err *err);
/* Sends the MAC frame, then the RAW frame holding raw (the last two). */
int kg_frame_send_raw_mac(int fd, int proc, const void *raw, size_t len, kg_err *err);

/* The supervisor's side: what one worker has sent so far. */
typedef struct kg_chan {
    int proc;                          /* the process every frame must name */
    kg_frame_in in;                    /* bytes received, not yet taken as frames */
    char *part[KG_FRAME_NKINDS];       /* the payload of each data kind (NULL: none yet) */
    size_t partlen[KG_FRAME_NKINDS];
    int now_set;                       /* a NOW frame arrived: the four words below */
    int now_case, now_arm, now_phase, now_round;
    int eof;
    char bad[256];                     /* a broken protocol: why ("" while none) */
    kg_frame_mac *mac;                 /* the HMAC of the frames (kg_chan_expect_mac; NULL: none expected) */
    unsigned char mac_sent[32];
    int mac_seen, mac_ok;              /* a MAC frame arrived; it matched the frames through RAW */
    int ready;                         /* a NOW frame of phase KG_NOW_READY arrived */
    int timed_done;                    /* a NOW frame of phase KG_NOW_TIMED_DONE arrived */
} kg_chan;

void kg_chan_init(kg_chan *c, int proc);
/* The process must authenticate its frames under key (token.h): raw
 * rows without a matching MAC frame before them break the protocol. */
int kg_chan_expect_mac(kg_chan *c, const unsigned char *key, size_t keylen, kg_err *err);
/* Reads what fd (non-blocking) holds now and takes in every whole frame.
 * Returns KG_OK (also at end of file: c->eof), or an error when reading
 * fails.  A frame that breaks the protocol sets c->bad and stops taking
 * frames. */
int kg_chan_pump(kg_chan *c, int fd, kg_err *err);
void kg_chan_free(kg_chan *c);

#endif

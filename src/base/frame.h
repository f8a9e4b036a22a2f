/* frame.h: the one framing of every pipe and socket protocol of kgate
 * (frame.c): supervisor <-> worker, worker <-> arm host (cpu and cuda),
 * worker <-> library helper, verify <-> op server.
 *
 * A frame is a 16-byte header of four little-endian 32-bit words, then
 * the payload:
 *
 *   magic "KGF1" (0x3146474b) | kind | tag | payload length
 *
 * A protocol names its kinds and what its tag means (the worker's
 * process number, a request's sequence number).  On a stream (a pipe) a
 * reader takes frames from the bytes as they come (kg_frame_in); on a
 * SOCK_SEQPACKET socket every frame is one message (kg_frame_sendmsg,
 * kg_frame_recvmsg), descriptors travelling with it.  A frame's length is
 * checked against the protocol's limit before its payload is read.
 *
 * kg_frame_mac is an HMAC-SHA256 over frames (header and payload), for
 * the protocols whose records must come from the process that was given
 * a token.  The Python helper (src/backend/libarm_helper.py) writes and
 * reads the same header. */
#ifndef KGATE_FRAME_H
#define KGATE_FRAME_H

#include <stddef.h>
#include <stdint.h>
#include "kgate/err.h"

#define KG_FRAME_MAGIC 0x3146474bu      /* "KGF1" */
#define KG_FRAME_HEADER 16
#define KG_FRAME_MAX (1u << 30)         /* no protocol takes a longer payload */

typedef struct kg_frame_hdr {
    uint32_t kind, tag, len;
} kg_frame_hdr;

/* Little-endian words. */
void kg_put32(unsigned char *p, uint32_t v);
uint32_t kg_get32(const unsigned char *p);
void kg_put64(unsigned char *p, uint64_t v);
uint64_t kg_get64(const unsigned char *p);

/* The header of a frame. */
void kg_frame_pack(unsigned char h[KG_FRAME_HEADER], uint32_t kind, uint32_t tag, uint32_t len);

/* Checks and unpacks a header: 0, or -1 with why filled (not a frame, or
 * a payload over max_len). */
int kg_frame_unpack(const unsigned char h[KG_FRAME_HEADER], uint32_t max_len, kg_frame_hdr *out, char *why,
                    size_t cap);

/* Writes one frame whole on a stream (blocking; EINTR retried).  what
 * names the peer in a message ("the supervisor"). */
int kg_frame_write(int fd, uint32_t kind, uint32_t tag, const void *data, size_t len, const char *what,
                   kg_err *err);

/* Reads one whole frame from a stream, waiting at most timeout_s (< 0:
 * without a limit).  *payload is malloc'd (NUL-terminated after len
 * bytes, for text payloads).  KG_EIO with a message on an early end, a
 * timeout, a malformed header or a payload over max_len. */
int kg_frame_read(int fd, uint32_t max_len, double timeout_s, kg_frame_hdr *h, char **payload, const char *what,
                  kg_err *err);

/* The most descriptors one message carries (the kernel's SCM_MAX_FD). */
#define KG_FRAME_MAX_FDS 253

/* Sends one frame as one message of a SOCK_SEQPACKET socket, with nfd
 * descriptors (SCM_RIGHTS), blocking while the socket is full: 0, or -1
 * with errno set (EINVAL: over KG_FRAME_MAX bytes or KG_FRAME_MAX_FDS
 * descriptors; EPIPE and others: the socket is gone). */
int kg_frame_sendmsg(int sock, uint32_t kind, uint32_t tag, const void *data, size_t len, const int *fds, int nfd);

/* One message of a SOCK_SEQPACKET socket, as kg_frame_recvmsg takes it.
 * The caller sets buf (room for a header and max_len bytes of payload),
 * max_len, and fds with maxfd (the most descriptors the protocol sends
 * with one message; NULL and 0 when it sends none). */
typedef struct kg_frame_rx {
    unsigned char *buf;
    uint32_t max_len;
    int *fds;
    int maxfd;
    kg_frame_hdr h;                 /* the frame received */
    const unsigned char *payload;   /* into buf */
    int nfd;                        /* descriptors received into fds */
    char why[160];                  /* not a frame: why */
} kg_frame_rx;

/* Receives one message (wait: block until one comes; else return at
 * once).  1: a frame (rx->h, ->payload, ->nfd set; the descriptors are
 * the caller's).  0: nothing yet (not waiting).  -1: the socket is gone
 * (errno; 0 at its end).  -2: not one whole frame of at most max_len
 * bytes with at most maxfd descriptors (a short or truncated message, a
 * malformed header, a length that disagrees with the message, more
 * descriptors than asked for): rx->why says which, and every descriptor
 * that came with it is closed. */
int kg_frame_recvmsg(int sock, int wait, kg_frame_rx *rx);

/* Frames taken from a stream as its bytes come. */
typedef struct kg_frame_in {
    unsigned char *buf;
    size_t at, len, cap;    /* bytes [at, len) are not taken yet */
    uint32_t max_len;    /* the protocol's limit on one payload */
    char bad[256];       /* a malformed frame: why; nothing more is taken */
} kg_frame_in;

void kg_frame_in_init(kg_frame_in *in, uint32_t max_len);
void kg_frame_in_free(kg_frame_in *in);

/* Appends n bytes: KG_OK or KG_ENOMEM. */
int kg_frame_in_add(kg_frame_in *in, const void *data, size_t n, kg_err *err);

/* The next whole frame: 1 (h set; *header and *payload point into in's
 * buffer until the next kg_frame_in_add or _fill), 0 none whole yet, -1
 * malformed (in->bad says why). */
int kg_frame_in_next(kg_frame_in *in, kg_frame_hdr *h, const unsigned char **header, const unsigned char **payload);

/* Reads what fd has now (non-blocking descriptor) into in: KG_OK, with
 * *eof set at its end.  Once the stream is malformed (or stopped) what
 * comes is read and dropped, so that its writer never blocks. */
int kg_frame_in_fill(kg_frame_in *in, int fd, int *eof, kg_err *err);

/* The protocol refuses the stream (a frame it does not take): why goes
 * into in->bad, and nothing more is taken. */
void kg_frame_in_stop(kg_frame_in *in, const char *why);

/* An HMAC-SHA256 over frames. */
typedef struct kg_frame_mac kg_frame_mac;
kg_frame_mac *kg_frame_mac_new(const unsigned char *key, size_t keylen);
void kg_frame_mac_add(kg_frame_mac *m, const unsigned char h[KG_FRAME_HEADER], const void *data, size_t len);
/* The MAC of the frames so far (the MAC goes on): 0, or -1. */
int kg_frame_mac_now(kg_frame_mac *m, unsigned char out[32]);
/* 1 when a and b (32 bytes each) are equal, in constant time. */
int kg_frame_mac_equal(const unsigned char *a, const unsigned char *b);
void kg_frame_mac_free(kg_frame_mac *m);

#endif

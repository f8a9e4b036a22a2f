/* channel.c: frames on the pipe from a worker to its supervisor
 * (channel.h): the sending side of the worker and the receiving side of
 * the supervisor.  It knows the frame format only; what a payload means
 * is rows.c's and the supervisor's. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include "run/channel.h"

static const char *const now_names[] = { "loading", "checks before timing", "timing", "checks after timing",
                                         "waiting for a quiet host", "inputs and references",
                                         "checks after the last timed phase" };

const char *kg_now_phase_name(int phase)
{
    return phase >= 0 && phase < (int)(sizeof now_names / sizeof now_names[0]) ? now_names[phase] : "?";
}

static void put32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
    p[2] = (unsigned char)(v >> 16);
    p[3] = (unsigned char)(v >> 24);
}

static uint32_t get32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static int write_all(int fd, const void *data, size_t len, kg_err *err)
{
    const char *p = data;
    while (len > 0) {
        ssize_t w = write(fd, p, len);
        if (w < 0) {
            if (errno == EINTR) continue;
            return kg_errorf(err, KG_EIO, "cannot send rows to the supervisor: %s%s", strerror(errno),
                             errno == EPIPE ? " (the supervisor is gone)" : "");
        }
        p += w;
        len -= (size_t)w;
    }
    return KG_OK;
}

/* HMAC-SHA256 contexts (OpenSSL's EVP_MAC). */
static EVP_MAC_CTX *mac_new(const unsigned char *key, size_t keylen)
{
    EVP_MAC *m = EVP_MAC_fetch(NULL, "HMAC", NULL);
    EVP_MAC_CTX *c = m != NULL ? EVP_MAC_CTX_new(m) : NULL;
    EVP_MAC_free(m);
    OSSL_PARAM params[] = { OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, (char *)"SHA256", 0),
                            OSSL_PARAM_construct_end() };
    if (c != NULL && EVP_MAC_init(c, key, keylen, params) != 1) {
        EVP_MAC_CTX_free(c);
        c = NULL;
    }
    return c;
}

/* The MAC so far (the context goes on). */
static int mac_now(EVP_MAC_CTX *c, unsigned char out[32])
{
    EVP_MAC_CTX *d = EVP_MAC_CTX_dup(c);
    size_t n = 0;
    int ok = d != NULL && EVP_MAC_final(d, out, &n, 32) == 1 && n == 32;
    EVP_MAC_CTX_free(d);
    return ok;
}

/* The worker's: every frame it sends from kg_frame_mac_begin on. */
static EVP_MAC_CTX *send_mac;

static void mac_frame(EVP_MAC_CTX *c, const unsigned char *h, const void *data, size_t len)
{
    if (c == NULL) return;
    EVP_MAC_update(c, h, KG_FRAME_HEADER);
    if (len > 0) EVP_MAC_update(c, data, len);
}

int kg_frame_mac_begin(const unsigned char *key, size_t keylen, kg_err *err)
{
    EVP_MAC_CTX_free(send_mac);
    if ((send_mac = mac_new(key, keylen)) == NULL)
        return kg_errorf(err, KG_EINTERNAL, "OpenSSL has no HMAC-SHA256 for the rows' MAC");
    return KG_OK;
}

static int frame_send(int fd, int kind, int proc, const void *data, size_t len, kg_err *err);

int kg_frame_send_raw_mac(int fd, int proc, const void *raw, size_t len, kg_err *err)
{
    if (send_mac == NULL) return kg_errorf(err, KG_EINTERNAL, "the rows' MAC was not begun (no token)");
    unsigned char h[KG_FRAME_HEADER], mac[32];
    put32(h, KG_FRAME_MAGIC);
    put32(h + 4, KG_FRAME_RAW);
    put32(h + 8, (uint32_t)proc);
    put32(h + 12, (uint32_t)len);
    /* the MAC covers the RAW frame that follows it */
    mac_frame(send_mac, h, raw, len);
    if (!mac_now(send_mac, mac)) return kg_errorf(err, KG_EINTERNAL, "OpenSSL could not compute the rows' MAC");
    EVP_MAC_CTX_free(send_mac);
    send_mac = NULL;
    int rc = frame_send(fd, KG_FRAME_MAC, proc, mac, sizeof mac, err);
    if (rc == KG_OK) rc = frame_send(fd, KG_FRAME_RAW, proc, raw, len, err);
    return rc;
}

int kg_frame_send(int fd, int kind, int proc, const void *data, size_t len, kg_err *err)
{
    return frame_send(fd, kind, proc, data, len, err);
}

static int frame_send(int fd, int kind, int proc, const void *data, size_t len, kg_err *err)
{
    if (len > KG_FRAME_MAX)
        return kg_errorf(err, KG_EIO, "a record of %zu bytes is longer than a frame may be (%u): fewer saved "
                         "outputs or smaller cases", len, KG_FRAME_MAX);
    unsigned char h[KG_FRAME_HEADER];
    put32(h, KG_FRAME_MAGIC);
    put32(h + 4, (uint32_t)kind);
    put32(h + 8, (uint32_t)proc);
    put32(h + 12, (uint32_t)len);
    if (kind != KG_FRAME_MAC) mac_frame(send_mac, h, data, len);
    int rc = write_all(fd, h, sizeof h, err);
    if (rc == KG_OK && len > 0) rc = write_all(fd, data, len, err);
    return rc;
}

int kg_frame_now(int fd, int proc, int kase, int arm, int phase, int round, kg_err *err)
{
    /* one write of 32 bytes: cheap enough before every timed sample */
    unsigned char f[KG_FRAME_HEADER + 16];
    put32(f, KG_FRAME_MAGIC);
    put32(f + 4, KG_FRAME_NOW);
    put32(f + 8, (uint32_t)proc);
    put32(f + 12, 16);
    put32(f + 16, (uint32_t)kase);
    put32(f + 20, (uint32_t)arm);
    put32(f + 24, (uint32_t)phase);
    put32(f + 28, (uint32_t)round);
    mac_frame(send_mac, f, f + KG_FRAME_HEADER, 16);
    return write_all(fd, f, sizeof f, err);
}

void kg_chan_init(kg_chan *c, int proc)
{
    memset(c, 0, sizeof *c);
    c->proc = proc;
    c->now_round = -1;
}

int kg_chan_expect_mac(kg_chan *c, const unsigned char *key, size_t keylen, kg_err *err)
{
    EVP_MAC_CTX_free(c->mac);
    if ((c->mac = mac_new(key, keylen)) == NULL)
        return kg_errorf(err, KG_EINTERNAL, "OpenSSL has no HMAC-SHA256 for the rows' MAC");
    return KG_OK;
}

void kg_chan_free(kg_chan *c)
{
    EVP_MAC_CTX_free(c->mac);
    OPENSSL_cleanse(c->mac_sent, sizeof c->mac_sent);
    free(c->in);
    for (int k = 0; k < KG_FRAME_NKINDS; k++) free(c->part[k]);
    memset(c, 0, sizeof *c);
}

/* The MAC's part of one whole frame: nonzero (c->bad set) when the
 * frame breaks it. */
static int take_mac(kg_chan *c, uint32_t kind, const unsigned char *h, const char *p, uint32_t len)
{
    if (c->part[KG_FRAME_RAW] != NULL) {
        snprintf(c->bad, sizeof c->bad, "a frame of kind %u after the raw rows", kind);
        return 1;
    }
    if (kind == KG_FRAME_MAC) {
        if (len != sizeof c->mac_sent || c->mac_seen) {
            snprintf(c->bad, sizeof c->bad, "a MAC frame of %u bytes%s (one of 32 expected)", len,
                     c->mac_seen ? ", a second one" : "");
            return 1;
        }
        memcpy(c->mac_sent, p, sizeof c->mac_sent);
        c->mac_seen = 1;
        return 0;
    }
    mac_frame(c->mac, h, p, len);
    if (kind != KG_FRAME_RAW) return 0;
    unsigned char want[32];
    if (!c->mac_seen) {
        snprintf(c->bad, sizeof c->bad, "raw rows without the HMAC of its token: not sent by a worker this "
                 "supervisor started");
        return 1;
    }
    if (!mac_now(c->mac, want) || CRYPTO_memcmp(want, c->mac_sent, sizeof want) != 0) {
        snprintf(c->bad, sizeof c->bad, "the HMAC of its frames does not match its token: the rows were changed "
                 "or not sent by the worker this supervisor started");
        return 1;
    }
    c->mac_ok = 1;
    return 0;
}

/* Takes in the whole frames at the start of c->in. */
static void take_frames(kg_chan *c)
{
    size_t at = 0;
    while (c->bad[0] == '\0' && c->inlen - at >= KG_FRAME_HEADER) {
        const unsigned char *h = (const unsigned char *)c->in + at;
        uint32_t magic = get32(h), kind = get32(h + 4), proc = get32(h + 8), len = get32(h + 12);
        if (magic != KG_FRAME_MAGIC) {
            snprintf(c->bad, sizeof c->bad, "not a kgate frame at byte %zu of the pipe", at);
            break;
        }
        if (kind < KG_FRAME_NOW || kind >= KG_FRAME_NKINDS || len > KG_FRAME_MAX || (int)proc != c->proc) {
            snprintf(c->bad, sizeof c->bad, "a frame of kind %u, process %u, %u bytes: not one process %d sends",
                     kind, proc, len, c->proc);
            break;
        }
        if (c->inlen - at - KG_FRAME_HEADER < len) break;   /* not whole yet */
        const char *p = c->in + at + KG_FRAME_HEADER;
        if (c->mac != NULL && take_mac(c, kind, h, p, len) != 0) break;
        if (kind == KG_FRAME_MAC) {
            /* kept by take_mac */
        } else if (kind == KG_FRAME_NOW) {
            if (len != 16) {
                snprintf(c->bad, sizeof c->bad, "a NOW frame of %u bytes (16 expected)", len);
                break;
            }
            c->now_set = 1;
            c->now_case = (int)get32((const unsigned char *)p);
            c->now_arm = (int)get32((const unsigned char *)p + 4);
            c->now_phase = (int)get32((const unsigned char *)p + 8);
            c->now_round = (int)get32((const unsigned char *)p + 12);
            if (c->now_phase == KG_NOW_READY) c->ready = 1;
            if (c->now_phase == KG_NOW_TIMED_DONE) c->timed_done = 1;
        } else if (c->part[kind] != NULL) {
            snprintf(c->bad, sizeof c->bad, "a second frame of kind %u", kind);
            break;
        } else {
            c->part[kind] = malloc(len > 0 ? len : 1);
            if (c->part[kind] == NULL) {
                snprintf(c->bad, sizeof c->bad, "out of memory for a frame of %u bytes", len);
                break;
            }
            memcpy(c->part[kind], p, len);
            c->partlen[kind] = len;
        }
        at += KG_FRAME_HEADER + len;
    }
    memmove(c->in, c->in + at, c->inlen - at);
    c->inlen -= at;
}

int kg_chan_pump(kg_chan *c, int fd, kg_err *err)
{
    for (;;) {
        if (c->incap - c->inlen < 65536) {
            size_t cap = c->incap ? 2 * c->incap : 131072;
            char *p = realloc(c->in, cap);
            if (p == NULL) return kg_errorf(err, KG_ENOMEM, "out of memory reading the rows of process %d", c->proc);
            c->in = p;
            c->incap = cap;
        }
        ssize_t r = read(fd, c->in + c->inlen, c->incap - c->inlen);
        if (r < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) return KG_OK;
            return kg_errorf(err, KG_EIO, "reading the rows of process %d: %s", c->proc, strerror(errno));
        }
        if (r == 0) {
            c->eof = 1;
            return KG_OK;
        }
        c->inlen += (size_t)r;
        take_frames(c);
        if (c->bad[0] != '\0') {
            c->inlen = 0;   /* nothing more is taken; the pipe is still drained */
        }
    }
}

/* channel.c: frames on the pipe from a worker to its supervisor
 * (channel.h): the sending side of the worker and the receiving side of
 * the supervisor, on base/frame.c's framing.  It knows the kinds and the
 * MAC; what a payload means is rows.c's and the supervisor's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/crypto.h>
#include "run/channel.h"

static const char *const now_names[] = { "loading", "checks before timing", "timing", "checks after timing",
                                         "waiting for a quiet host", "inputs and references",
                                         "checks after the last timed phase" };

const char *kg_now_phase_name(int phase)
{
    return phase >= 0 && phase < (int)(sizeof now_names / sizeof now_names[0]) ? now_names[phase] : "?";
}

/* The worker's: every frame it sends from kg_frame_mac_begin on. */
static kg_frame_mac *send_mac;

int kg_frame_mac_begin(const unsigned char *key, size_t keylen, kg_err *err)
{
    kg_frame_mac_free(send_mac);
    if ((send_mac = kg_frame_mac_new(key, keylen)) == NULL)
        return kg_errorf(err, KG_EINTERNAL, "OpenSSL has no HMAC-SHA256 for the rows' MAC");
    return KG_OK;
}

/* Adds the frame to the worker's MAC (while one is begun) and sends it. */
static int frame_send(int fd, int kind, int proc, const void *data, size_t len, kg_err *err)
{
    if (len > KG_FRAME_MAX)
        return kg_errorf(err, KG_EIO, "a record of %zu bytes is longer than a frame may be (%u): fewer saved "
                         "outputs or smaller cases", len, KG_FRAME_MAX);
    if (send_mac != NULL && kind != KG_FRAME_MAC) {
        unsigned char h[KG_FRAME_HEADER];
        kg_frame_pack(h, (uint32_t)kind, (uint32_t)proc, (uint32_t)len);
        kg_frame_mac_add(send_mac, h, data, len);
    }
    return kg_frame_write(fd, (uint32_t)kind, (uint32_t)proc, data, len, "the supervisor", err);
}

int kg_frame_send_raw_mac(int fd, int proc, const void *raw, size_t len, kg_err *err)
{
    if (send_mac == NULL) return kg_errorf(err, KG_EINTERNAL, "the rows' MAC was not begun (no token)");
    if (len > KG_FRAME_MAX) return frame_send(fd, KG_FRAME_RAW, proc, raw, len, err);
    unsigned char h[KG_FRAME_HEADER], mac[32];
    /* the MAC covers the RAW frame that follows it */
    kg_frame_pack(h, KG_FRAME_RAW, (uint32_t)proc, (uint32_t)len);
    kg_frame_mac_add(send_mac, h, raw, len);
    int ok = kg_frame_mac_now(send_mac, mac) == 0;
    kg_frame_mac_free(send_mac);
    send_mac = NULL;
    if (!ok) return kg_errorf(err, KG_EINTERNAL, "OpenSSL could not compute the rows' MAC");
    int rc = frame_send(fd, KG_FRAME_MAC, proc, mac, sizeof mac, err);
    if (rc == KG_OK) rc = frame_send(fd, KG_FRAME_RAW, proc, raw, len, err);
    return rc;
}

int kg_frame_send(int fd, int kind, int proc, const void *data, size_t len, kg_err *err)
{
    return frame_send(fd, kind, proc, data, len, err);
}

int kg_frame_now(int fd, int proc, int kase, int arm, int phase, int round, kg_err *err)
{
    /* one write of 32 bytes (kg_frame_write), which wakes the supervisor:
     * a timed sample's state goes to the NOW page instead (nowpage.h) */
    unsigned char w[16];
    kg_put32(w, (uint32_t)kase);
    kg_put32(w + 4, (uint32_t)arm);
    kg_put32(w + 8, (uint32_t)phase);
    kg_put32(w + 12, (uint32_t)round);
    return frame_send(fd, KG_FRAME_NOW, proc, w, sizeof w, err);
}

void kg_chan_init(kg_chan *c, int proc)
{
    memset(c, 0, sizeof *c);
    c->proc = proc;
    c->now_round = -1;
    kg_frame_in_init(&c->in, KG_FRAME_MAX);
}

int kg_chan_expect_mac(kg_chan *c, const unsigned char *key, size_t keylen, kg_err *err)
{
    kg_frame_mac_free(c->mac);
    if ((c->mac = kg_frame_mac_new(key, keylen)) == NULL)
        return kg_errorf(err, KG_EINTERNAL, "OpenSSL has no HMAC-SHA256 for the rows' MAC");
    return KG_OK;
}

void kg_chan_free(kg_chan *c)
{
    kg_frame_mac_free(c->mac);
    OPENSSL_cleanse(c->mac_sent, sizeof c->mac_sent);
    kg_frame_in_free(&c->in);
    for (int k = 0; k < KG_FRAME_NKINDS; k++) free(c->part[k]);
    memset(c, 0, sizeof *c);
}

/* The MAC's part of one whole frame: nonzero (c->bad set) when the
 * frame breaks it. */
static int take_mac(kg_chan *c, const kg_frame_hdr *f, const unsigned char *h, const unsigned char *p)
{
    if (c->part[KG_FRAME_RAW] != NULL) {
        snprintf(c->bad, sizeof c->bad, "a frame of kind %u after the raw rows", f->kind);
        return 1;
    }
    if (f->kind == KG_FRAME_MAC) {
        if (f->len != sizeof c->mac_sent || c->mac_seen) {
            snprintf(c->bad, sizeof c->bad, "a MAC frame of %u bytes%s (one of 32 expected)", f->len,
                     c->mac_seen ? ", a second one" : "");
            return 1;
        }
        memcpy(c->mac_sent, p, sizeof c->mac_sent);
        c->mac_seen = 1;
        return 0;
    }
    kg_frame_mac_add(c->mac, h, p, f->len);
    if (f->kind != KG_FRAME_RAW) return 0;
    unsigned char want[32];
    if (!c->mac_seen) {
        snprintf(c->bad, sizeof c->bad, "raw rows without the HMAC of its token: not sent by a worker this "
                 "supervisor started");
        return 1;
    }
    if (kg_frame_mac_now(c->mac, want) != 0 || !kg_frame_mac_equal(want, c->mac_sent)) {
        snprintf(c->bad, sizeof c->bad, "the HMAC of its frames does not match its token: the rows were changed "
                 "or not sent by the worker this supervisor started");
        return 1;
    }
    c->mac_ok = 1;
    return 0;
}

/* A NOW frame's four words. */
static int take_now(kg_chan *c, const kg_frame_hdr *f, const unsigned char *p)
{
    if (f->len != 16) {
        snprintf(c->bad, sizeof c->bad, "a NOW frame of %u bytes (16 expected)", f->len);
        return 1;
    }
    c->now_set = 1;
    c->now_case = (int)kg_get32(p);
    c->now_arm = (int)kg_get32(p + 4);
    c->now_phase = (int)kg_get32(p + 8);
    c->now_round = (int)kg_get32(p + 12);
    if (c->now_phase == KG_NOW_READY) c->ready = 1;
    if (c->now_phase == KG_NOW_TIMED_DONE) c->timed_done = 1;
    return 0;
}

/* Takes one whole frame: nonzero (c->bad set) when it breaks the protocol. */
static int take_frame(kg_chan *c, const kg_frame_hdr *f, const unsigned char *h, const unsigned char *p)
{
    if (f->kind < KG_FRAME_NOW || f->kind >= KG_FRAME_NKINDS || (int)f->tag != c->proc) {
        snprintf(c->bad, sizeof c->bad, "a frame of kind %u, process %u, %u bytes: not one process %d sends",
                 f->kind, f->tag, f->len, c->proc);
        return 1;
    }
    if (c->mac != NULL && take_mac(c, f, h, p) != 0) return 1;
    if (f->kind == KG_FRAME_MAC) return 0;   /* kept by take_mac */
    if (f->kind == KG_FRAME_NOW) return take_now(c, f, p);
    if (c->part[f->kind] != NULL) {
        snprintf(c->bad, sizeof c->bad, "a second frame of kind %u", f->kind);
        return 1;
    }
    c->part[f->kind] = malloc(f->len > 0 ? f->len : 1);
    if (c->part[f->kind] == NULL) {
        snprintf(c->bad, sizeof c->bad, "out of memory for a frame of %u bytes", f->len);
        return 1;
    }
    memcpy(c->part[f->kind], p, f->len);
    c->partlen[f->kind] = f->len;
    return 0;
}

int kg_chan_pump(kg_chan *c, int fd, kg_err *err)
{
    int rc = kg_frame_in_fill(&c->in, fd, &c->eof, err);
    if (rc != KG_OK) return rc;
    kg_frame_hdr f;
    const unsigned char *h, *p;
    int r;
    while (c->bad[0] == '\0' && (r = kg_frame_in_next(&c->in, &f, &h, &p)) != 0) {
        if (r < 0) {
            snprintf(c->bad, sizeof c->bad, "%s", c->in.bad);
            break;
        }
        /* nothing more is taken; what the worker still sends is drained */
        if (take_frame(c, &f, h, p) != 0) kg_frame_in_stop(&c->in, c->bad);
    }
    return KG_OK;
}

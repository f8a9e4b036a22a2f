/* frame.c: the one framing of kgate's pipe and socket protocols
 * (frame.h). */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include "base/frame.h"

void kg_put32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
    p[2] = (unsigned char)(v >> 16);
    p[3] = (unsigned char)(v >> 24);
}

uint32_t kg_get32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

void kg_put64(unsigned char *p, uint64_t v)
{
    kg_put32(p, (uint32_t)v);
    kg_put32(p + 4, (uint32_t)(v >> 32));
}

uint64_t kg_get64(const unsigned char *p)
{
    return (uint64_t)kg_get32(p) | (uint64_t)kg_get32(p + 4) << 32;
}

void kg_frame_pack(unsigned char h[KG_FRAME_HEADER], uint32_t kind, uint32_t tag, uint32_t len)
{
    kg_put32(h, KG_FRAME_MAGIC);
    kg_put32(h + 4, kind);
    kg_put32(h + 8, tag);
    kg_put32(h + 12, len);
}

int kg_frame_unpack(const unsigned char h[KG_FRAME_HEADER], uint32_t max_len, kg_frame_hdr *out, char *why,
                    size_t cap)
{
    if (kg_get32(h) != KG_FRAME_MAGIC) {
        snprintf(why, cap, "not a kgate frame (magic %08x)", kg_get32(h));
        return -1;
    }
    out->kind = kg_get32(h + 4);
    out->tag = kg_get32(h + 8);
    out->len = kg_get32(h + 12);
    if (out->len > max_len || out->len > KG_FRAME_MAX) {
        snprintf(why, cap, "a frame of kind %u with %u bytes, over the %u this protocol takes", out->kind, out->len,
                 max_len);
        return -1;
    }
    return 0;
}

static int write_all(int fd, const void *data, size_t len, const char *what, kg_err *err)
{
    const char *p = data;
    while (len > 0) {
        ssize_t w = write(fd, p, len);
        if (w < 0) {
            if (errno == EINTR) continue;
            return kg_errorf(err, KG_EIO, "cannot send to %s: %s%s", what, strerror(errno),
                             errno == EPIPE ? " (it is gone)" : "");
        }
        p += w;
        len -= (size_t)w;
    }
    return KG_OK;
}

int kg_frame_write(int fd, uint32_t kind, uint32_t tag, const void *data, size_t len, const char *what,
                   kg_err *err)
{
    if (len > KG_FRAME_MAX)
        return kg_errorf(err, KG_EIO, "a frame of %zu bytes for %s is longer than a frame may be (%u)", len, what,
                         KG_FRAME_MAX);
    unsigned char h[KG_FRAME_HEADER];
    kg_frame_pack(h, kind, tag, (uint32_t)len);
    if (len > 0 && len <= 4096) {
        /* header and a short payload in one write: one wake-up of the reader */
        unsigned char one[KG_FRAME_HEADER + 4096];
        memcpy(one, h, sizeof h);
        memcpy(one + KG_FRAME_HEADER, data, len);
        return write_all(fd, one, KG_FRAME_HEADER + len, what, err);
    }
    int rc = write_all(fd, h, sizeof h, what, err);
    if (rc == KG_OK && len > 0) rc = write_all(fd, data, len, what, err);
    return rc;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Reads exactly n bytes before the deadline (< 0: none). */
static int read_exact(int fd, void *buf, size_t n, double deadline, const char *what, kg_err *err)
{
    char *p = buf;
    while (n > 0) {
        if (deadline >= 0) {
            double left = deadline - now_s();
            if (left <= 0) return kg_errorf(err, KG_EIO, "%s did not answer in time", what);
            struct pollfd pf = { .fd = fd, .events = POLLIN };
            int pr = poll(&pf, 1, left > 1e6 ? 1000000000 : (int)(left * 1000) + 1);
            if (pr < 0 && errno == EINTR) continue;
            if (pr < 0) return kg_errorf(err, KG_EIO, "waiting for %s: %s", what, strerror(errno));
            if (pr == 0) continue;
        }
        ssize_t r = read(fd, p, n);
        if (r < 0) {
            if (errno == EINTR || errno == EAGAIN) continue;
            return kg_errorf(err, KG_EIO, "reading from %s: %s", what, strerror(errno));
        }
        if (r == 0) return kg_errorf(err, KG_EIO, "%s ended before a whole frame", what);
        p += r;
        n -= (size_t)r;
    }
    return KG_OK;
}

int kg_frame_read(int fd, uint32_t max_len, double timeout_s, kg_frame_hdr *h, char **payload, const char *what,
                  kg_err *err)
{
    unsigned char hb[KG_FRAME_HEADER];
    char why[160];
    double deadline = timeout_s < 0 ? -1 : now_s() + timeout_s;
    *payload = NULL;
    int rc = read_exact(fd, hb, sizeof hb, deadline, what, err);
    if (rc != KG_OK) return rc;
    if (kg_frame_unpack(hb, max_len, h, why, sizeof why) != 0)
        return kg_errorf(err, KG_EIO, "%s sent %s", what, why);
    char *p = malloc((size_t)h->len + 1);
    if (p == NULL) return kg_errorf(err, KG_ENOMEM, "out of memory for a frame of %u bytes from %s", h->len, what);
    if ((rc = read_exact(fd, p, h->len, deadline, what, err)) != KG_OK) {
        free(p);
        return rc;
    }
    p[h->len] = '\0';
    *payload = p;
    return KG_OK;
}

/* Room for the most descriptors a message carries, aligned for cmsghdr. */
typedef union fd_control {
    char buf[CMSG_SPACE(sizeof(int) * KG_FRAME_MAX_FDS)];
    struct cmsghdr align;
} fd_control;

int kg_frame_sendmsg(int sock, uint32_t kind, uint32_t tag, const void *data, size_t len, const int *fds, int nfd)
{
    if (len > KG_FRAME_MAX || nfd < 0 || nfd > KG_FRAME_MAX_FDS) {
        errno = EINVAL;
        return -1;
    }
    unsigned char h[KG_FRAME_HEADER];
    kg_frame_pack(h, kind, tag, (uint32_t)len);
    struct iovec iov[2] = { { h, sizeof h }, { (void *)data, len } };
    fd_control cm;
    struct msghdr m = { 0 };
    m.msg_iov = iov;
    m.msg_iovlen = len > 0 ? 2 : 1;
    if (nfd > 0) {
        memset(cm.buf, 0, CMSG_SPACE(sizeof(int) * (size_t)nfd));
        m.msg_control = cm.buf;
        m.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)nfd);
        struct cmsghdr *c = CMSG_FIRSTHDR(&m);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)nfd);
        memcpy(CMSG_DATA(c), fds, sizeof(int) * (size_t)nfd);
    }
    ssize_t w;
    do w = sendmsg(sock, &m, MSG_NOSIGNAL);
    while (w < 0 && errno == EINTR);
    if (w < 0) return -1;
    if ((size_t)w != sizeof h + len) {
        errno = EMSGSIZE;
        return -1;
    }
    return 0;
}

/* The descriptors of a received message: into rx->fds while maxfd
 * allows; the count of all that came. */
static int take_fds(struct msghdr *m, kg_frame_rx *rx)
{
    int all = 0;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(m); c != NULL; c = CMSG_NXTHDR(m, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
        int n = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
        for (int i = 0; i < n; i++, all++) {
            int fd;
            memcpy(&fd, CMSG_DATA(c) + (size_t)i * sizeof(int), sizeof fd);
            if (rx->fds != NULL && rx->nfd < rx->maxfd) rx->fds[rx->nfd++] = fd;
            else close(fd);
        }
    }
    return all;
}

/* What makes message m of r bytes, with `all` descriptors, not one frame
 * of rx's protocol: "" when nothing does. */
static void judge(const struct msghdr *m, ssize_t r, int all, kg_frame_rx *rx)
{
    size_t cap = KG_FRAME_HEADER + (size_t)rx->max_len;
    if (m->msg_flags & MSG_CTRUNC)
        snprintf(rx->why, sizeof rx->why, "a message with more descriptors than one may carry (%d)", KG_FRAME_MAX_FDS);
    else if (all > (rx->fds != NULL ? rx->maxfd : 0))
        snprintf(rx->why, sizeof rx->why, "a message with %d descriptors, where this protocol sends at most %d", all,
                 rx->fds != NULL ? rx->maxfd : 0);
    else if ((m->msg_flags & MSG_TRUNC) || (size_t)r < KG_FRAME_HEADER)
        snprintf(rx->why, sizeof rx->why, "a message of %zd bytes that is not one whole frame of at most %zu", r, cap);
    else if (kg_frame_unpack(rx->buf, rx->max_len, &rx->h, rx->why, sizeof rx->why) == 0 &&
             (size_t)r != KG_FRAME_HEADER + rx->h.len)
        snprintf(rx->why, sizeof rx->why, "a message of %zd bytes whose frame says %u: not one whole frame", r,
                 rx->h.len);
}

int kg_frame_recvmsg(int sock, int wait, kg_frame_rx *rx)
{
    fd_control cm;
    struct iovec iov = { rx->buf, KG_FRAME_HEADER + (size_t)rx->max_len };
    struct msghdr m = { 0 };
    m.msg_iov = &iov;
    m.msg_iovlen = 1;
    m.msg_control = cm.buf;
    m.msg_controllen = sizeof cm.buf;
    rx->nfd = 0;
    rx->why[0] = '\0';
    rx->payload = NULL;
    ssize_t r;
    do r = recvmsg(sock, &m, MSG_CMSG_CLOEXEC | (wait ? 0 : MSG_DONTWAIT));
    while (r < 0 && errno == EINTR);
    if (r < 0) return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -1;
    int all = take_fds(&m, rx);
    if (r == 0 && all == 0 && !(m.msg_flags & (MSG_TRUNC | MSG_CTRUNC))) {
        errno = 0;   /* the peer's end */
        return -1;
    }
    judge(&m, r, all, rx);
    if (rx->why[0] != '\0') {
        for (int i = 0; i < rx->nfd; i++) close(rx->fds[i]);
        rx->nfd = 0;
        return -2;
    }
    rx->payload = rx->buf + KG_FRAME_HEADER;
    return 1;
}

void kg_frame_in_init(kg_frame_in *in, uint32_t max_len)
{
    memset(in, 0, sizeof *in);
    in->max_len = max_len;
}

void kg_frame_in_free(kg_frame_in *in)
{
    free(in->buf);
    memset(in, 0, sizeof *in);
}

/* Room for `more` bytes after the untaken ones (the taken are dropped). */
static int reserve(kg_frame_in *in, size_t more, kg_err *err)
{
    if (in->at > 0) {
        memmove(in->buf, in->buf + in->at, in->len - in->at);
        in->len -= in->at;
        in->at = 0;
    }
    if (in->cap - in->len >= more) return KG_OK;
    size_t cap = in->cap ? in->cap : 131072;
    while (cap - in->len < more) cap *= 2;
    unsigned char *p = realloc(in->buf, cap);
    if (p == NULL) return kg_errorf(err, KG_ENOMEM, "out of memory for %zu bytes of frames", cap);
    in->buf = p;
    in->cap = cap;
    return KG_OK;
}

int kg_frame_in_add(kg_frame_in *in, const void *data, size_t n, kg_err *err)
{
    int rc = reserve(in, n, err);
    if (rc != KG_OK) return rc;
    memcpy(in->buf + in->len, data, n);
    in->len += n;
    return KG_OK;
}

int kg_frame_in_next(kg_frame_in *in, kg_frame_hdr *h, const unsigned char **header, const unsigned char **payload)
{
    if (in->bad[0] != '\0') return -1;
    size_t have = in->len - in->at;
    if (have < KG_FRAME_HEADER) return 0;
    const unsigned char *p = in->buf + in->at;
    if (kg_frame_unpack(p, in->max_len, h, in->bad, sizeof in->bad) != 0) {
        in->at = in->len = 0;
        return -1;
    }
    if (have - KG_FRAME_HEADER < h->len) return 0;
    if (header != NULL) *header = p;
    *payload = p + KG_FRAME_HEADER;
    in->at += KG_FRAME_HEADER + h->len;
    return 1;
}

void kg_frame_in_stop(kg_frame_in *in, const char *why)
{
    snprintf(in->bad, sizeof in->bad, "%s", why != NULL && why[0] != '\0' ? why : "a frame the protocol refuses");
    in->at = in->len = 0;
}

int kg_frame_in_fill(kg_frame_in *in, int fd, int *eof, kg_err *err)
{
    *eof = 0;
    for (;;) {
        if (in->bad[0] != '\0') in->at = in->len = 0;   /* a refused stream: drained, not kept */
        int rc = reserve(in, 65536, err);
        if (rc != KG_OK) return rc;
        ssize_t r = read(fd, in->buf + in->len, in->cap - in->len);
        if (r < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) return KG_OK;
            return kg_errorf(err, KG_EIO, "reading frames: %s", strerror(errno));
        }
        if (r == 0) {
            *eof = 1;
            return KG_OK;
        }
        in->len += (size_t)r;
    }
}

struct kg_frame_mac {
    EVP_MAC_CTX *ctx;
};

kg_frame_mac *kg_frame_mac_new(const unsigned char *key, size_t keylen)
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
    if (c == NULL) return NULL;
    kg_frame_mac *f = malloc(sizeof *f);
    if (f == NULL) {
        EVP_MAC_CTX_free(c);
        return NULL;
    }
    f->ctx = c;
    return f;
}

void kg_frame_mac_add(kg_frame_mac *m, const unsigned char h[KG_FRAME_HEADER], const void *data, size_t len)
{
    if (m == NULL) return;
    EVP_MAC_update(m->ctx, h, KG_FRAME_HEADER);
    if (len > 0) EVP_MAC_update(m->ctx, data, len);
}

int kg_frame_mac_now(kg_frame_mac *m, unsigned char out[32])
{
    if (m == NULL) return -1;
    EVP_MAC_CTX *d = EVP_MAC_CTX_dup(m->ctx);
    size_t n = 0;
    int ok = d != NULL && EVP_MAC_final(d, out, &n, 32) == 1 && n == 32;
    EVP_MAC_CTX_free(d);
    return ok ? 0 : -1;
}

int kg_frame_mac_equal(const unsigned char *a, const unsigned char *b)
{
    return CRYPTO_memcmp(a, b, 32) == 0;
}

void kg_frame_mac_free(kg_frame_mac *m)
{
    if (m == NULL) return;
    EVP_MAC_CTX_free(m->ctx);
    free(m);
}

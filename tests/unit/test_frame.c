/* test_frame.c: the one framing of kgate's pipe and socket protocols
 * (src/base/frame.h): the header's bytes, malformed and oversized
 * headers, whole frames over a pipe with a deadline, frames taken from a
 * stream one byte at a time, SOCK_SEQPACKET messages with descriptors
 * (and every way a message can fail to be one frame), and the HMAC over
 * frames against OpenSSL's one-shot HMAC of the same bytes. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include "base/frame.h"
#include "check.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Descriptors open in this process. */
static int open_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    if (d == NULL) return -1;
    int n = 0;
    while (readdir(d) != NULL) n++;
    closedir(d);
    return n - 3;   /* ".", ".." and the DIR's own */
}

static void test_words(void)
{
    unsigned char b[8];
    kg_put32(b, 0x04030201u);
    CHECK(b[0] == 1 && b[1] == 2 && b[2] == 3 && b[3] == 4);
    CHECK(kg_get32(b) == 0x04030201u);
    kg_put64(b, 0x0807060504030201ull);
    for (int i = 0; i < 8; i++) CHECK(b[i] == i + 1);
    CHECK(kg_get64(b) == 0x0807060504030201ull);
    kg_put32(b, 0xffffffffu);
    CHECK(kg_get32(b) == 0xffffffffu);
}

static void test_header(void)
{
    unsigned char h[KG_FRAME_HEADER];
    kg_frame_pack(h, 7, 0xdeadbeefu, 1234);
    /* "KGF1", then kind, tag and length, little-endian */
    CHECK(memcmp(h, "KGF1", 4) == 0);
    CHECK(h[4] == 7 && h[5] == 0 && h[6] == 0 && h[7] == 0);
    CHECK(h[8] == 0xef && h[9] == 0xbe && h[10] == 0xad && h[11] == 0xde);
    CHECK(h[12] == 0xd2 && h[13] == 0x04 && h[14] == 0 && h[15] == 0);
    kg_frame_hdr f = { 0 };
    char why[160] = "";
    CHECK(kg_frame_unpack(h, 1234, &f, why, sizeof why) == 0);
    CHECK(f.kind == 7 && f.tag == 0xdeadbeefu && f.len == 1234);
    CHECK(why[0] == '\0');

    /* one byte over the protocol's limit */
    CHECK(kg_frame_unpack(h, 1233, &f, why, sizeof why) == -1);
    CHECK_STR_CONTAINS(why, "1234 bytes, over the 1233");
    /* over the limit of every protocol, whatever the caller allows */
    kg_frame_pack(h, 1, 0, KG_FRAME_MAX + 1);
    why[0] = '\0';
    CHECK(kg_frame_unpack(h, UINT32_MAX, &f, why, sizeof why) == -1);
    CHECK_STR_CONTAINS(why, "bytes, over the");
    /* an empty payload is a frame */
    kg_frame_pack(h, 2, 0, 0);
    CHECK(kg_frame_unpack(h, 0, &f, why, sizeof why) == 0 && f.len == 0);

    /* a wrong magic in any byte */
    for (int i = 0; i < 4; i++) {
        kg_frame_pack(h, 1, 2, 3);
        h[i] ^= 0x20;
        why[0] = '\0';
        CHECK(kg_frame_unpack(h, 100, &f, why, sizeof why) == -1);
        CHECK_STR_CONTAINS(why, "not a kgate frame");
    }
    memset(h, 0, sizeof h);
    CHECK(kg_frame_unpack(h, 100, &f, why, sizeof why) == -1);
}

typedef struct writer {
    int fd;
    const unsigned char *data;
    size_t len;
    int rc;
} writer;

static void *write_frame(void *p)
{
    writer *w = p;
    kg_err e = { 0 };
    w->rc = kg_frame_write(w->fd, 9, 77, w->data, w->len, "the test's reader", &e);
    return NULL;
}

static void test_pipe(void)
{
    int fd[2];
    CHECK(pipe(fd) == 0);
    kg_err err = { 0 };
    kg_frame_hdr h;
    char *p = NULL;

    /* short, empty */
    CHECK(kg_frame_write(fd[1], 3, 5, "hello", 5, "the reader", &err) == KG_OK);
    CHECK(kg_frame_write(fd[1], 4, 6, NULL, 0, "the reader", &err) == KG_OK);
    CHECK(kg_frame_read(fd[0], 100, 1.0, &h, &p, "the writer", &err) == KG_OK);
    CHECK(h.kind == 3 && h.tag == 5 && h.len == 5 && p != NULL && memcmp(p, "hello", 6) == 0);
    free(p);
    CHECK(kg_frame_read(fd[0], 100, 1.0, &h, &p, "the writer", &err) == KG_OK);
    CHECK(h.kind == 4 && h.tag == 6 && h.len == 0 && p != NULL && p[0] == '\0');
    free(p);

    /* longer than a pipe holds: written by a thread while it is read */
    size_t big = 300000;
    unsigned char *data = malloc(big);
    CHECK(data != NULL);
    if (data != NULL) {
        for (size_t i = 0; i < big; i++) data[i] = (unsigned char)(i * 31 + 7);
        writer w = { fd[1], data, big, -1 };
        pthread_t t;
        CHECK(pthread_create(&t, NULL, write_frame, &w) == 0);
        CHECK(kg_frame_read(fd[0], (uint32_t)big, -1, &h, &p, "the writer", &err) == KG_OK);
        pthread_join(t, NULL);
        CHECK(w.rc == KG_OK);
        CHECK(h.kind == 9 && h.tag == 77 && h.len == big && p != NULL && memcmp(p, data, big) == 0);
        free(p);
        free(data);
    }

    /* nothing comes: the deadline */
    double t0 = now_s();
    kg_err_clear(&err);
    CHECK(kg_frame_read(fd[0], 100, 0.1, &h, &p, "the writer", &err) == KG_EIO);
    double waited = now_s() - t0;
    CHECK_MSG(waited >= 0.09 && waited < 5, "waited %.3f s", waited);
    CHECK_STR_CONTAINS(err.msg, "the writer did not answer in time");
    CHECK(p == NULL);

    /* a header over the reader's limit: refused before its payload */
    kg_err_clear(&err);
    CHECK(kg_frame_write(fd[1], 3, 5, "0123456789", 10, "the reader", &err) == KG_OK);
    CHECK(kg_frame_read(fd[0], 9, 1.0, &h, &p, "the writer", &err) == KG_EIO);
    CHECK_STR_CONTAINS(err.msg, "the writer sent a frame of kind 3 with 10 bytes, over the 9");
    CHECK(p == NULL);
    close(fd[0]);
    close(fd[1]);

    /* garbage */
    CHECK(pipe(fd) == 0);
    CHECK(write(fd[1], "GET / HTTP/1.1\r\n", 16) == 16);
    kg_err_clear(&err);
    CHECK(kg_frame_read(fd[0], 100, 1.0, &h, &p, "the writer", &err) == KG_EIO);
    CHECK_STR_CONTAINS(err.msg, "not a kgate frame");
    close(fd[0]);
    close(fd[1]);

    /* the writer ends in the middle of a header, then of a payload */
    CHECK(pipe(fd) == 0);
    unsigned char hb[KG_FRAME_HEADER];
    kg_frame_pack(hb, 1, 1, 8);
    CHECK(write(fd[1], hb, 10) == 10);
    close(fd[1]);
    kg_err_clear(&err);
    CHECK(kg_frame_read(fd[0], 100, 1.0, &h, &p, "the writer", &err) == KG_EIO);
    CHECK_STR_CONTAINS(err.msg, "the writer ended before a whole frame");
    close(fd[0]);
    CHECK(pipe(fd) == 0);
    CHECK(write(fd[1], hb, sizeof hb) == (ssize_t)sizeof hb && write(fd[1], "abc", 3) == 3);
    close(fd[1]);
    kg_err_clear(&err);
    CHECK(kg_frame_read(fd[0], 100, -1, &h, &p, "the writer", &err) == KG_EIO);
    CHECK_STR_CONTAINS(err.msg, "ended before a whole frame");
    CHECK(p == NULL);
    close(fd[0]);

    /* a frame longer than any may be is refused before a byte is written */
    CHECK(pipe(fd) == 0);
    kg_err_clear(&err);
    CHECK(kg_frame_write(fd[1], 1, 1, "", (size_t)KG_FRAME_MAX + 1, "the reader", &err) == KG_EIO);
    CHECK_STR_CONTAINS(err.msg, "longer than a frame may be");
    fcntl(fd[0], F_SETFL, O_NONBLOCK);
    char c;
    CHECK(read(fd[0], &c, 1) < 0 && errno == EAGAIN);
    /* a reader that is gone */
    close(fd[0]);
    signal(SIGPIPE, SIG_IGN);
    kg_err_clear(&err);
    CHECK(kg_frame_write(fd[1], 1, 1, "x", 1, "the reader", &err) == KG_EIO);
    CHECK_STR_CONTAINS(err.msg, "cannot send to the reader");
    CHECK_STR_CONTAINS(err.msg, "(it is gone)");
    close(fd[1]);
}

/* A stream of frames fed one byte at a time: each frame comes out exactly
 * when its last byte is in, with its header and payload. */
static void test_stream_bytes(void)
{
    unsigned char s[256];
    size_t n = 0;
    const char *pay[3] = { "first", "", "the third frame" };
    size_t ends[3];
    for (int i = 0; i < 3; i++) {
        size_t len = strlen(pay[i]);
        kg_frame_pack(s + n, (uint32_t)(10 + i), (uint32_t)(100 + i), (uint32_t)len);
        memcpy(s + n + KG_FRAME_HEADER, pay[i], len);
        n += KG_FRAME_HEADER + len;
        ends[i] = n;
    }
    kg_frame_in in;
    kg_frame_in_init(&in, 64);
    kg_err err = { 0 };
    int got = 0;
    for (size_t i = 0; i < n; i++) {
        CHECK(kg_frame_in_add(&in, s + i, 1, &err) == KG_OK);
        kg_frame_hdr h;
        const unsigned char *hp = NULL, *pp = NULL;
        int r;
        while ((r = kg_frame_in_next(&in, &h, &hp, &pp)) == 1) {
            CHECK_MSG(got < 3 && i + 1 == ends[got], "frame %d came at byte %zu", got, i + 1);
            if (got >= 3) break;
            size_t len = strlen(pay[got]);
            CHECK(h.kind == (uint32_t)(10 + got) && h.tag == (uint32_t)(100 + got) && h.len == len);
            CHECK(memcmp(pp, pay[got], len) == 0);
            CHECK(hp != NULL && memcmp(hp, s + ends[got] - len - KG_FRAME_HEADER, KG_FRAME_HEADER) == 0);
            got++;
        }
        CHECK(r == 0 || r == 1);
    }
    CHECK(got == 3);
    CHECK(in.bad[0] == '\0');
    kg_frame_in_free(&in);

    /* a header over the limit is refused as soon as the header is in,
     * before any of its payload */
    kg_frame_in_init(&in, 4);
    unsigned char h5[KG_FRAME_HEADER];
    kg_frame_pack(h5, 1, 1, 5);
    kg_frame_hdr h;
    const unsigned char *pp;
    CHECK(kg_frame_in_add(&in, h5, KG_FRAME_HEADER - 1, &err) == KG_OK);
    CHECK(kg_frame_in_next(&in, &h, NULL, &pp) == 0);
    CHECK(kg_frame_in_add(&in, h5 + KG_FRAME_HEADER - 1, 1, &err) == KG_OK);
    CHECK(kg_frame_in_next(&in, &h, NULL, &pp) == -1);
    CHECK_STR_CONTAINS(in.bad, "5 bytes, over the 4");
    kg_frame_in_free(&in);

    /* garbage after a good frame: the good one, then nothing more, ever */
    kg_frame_in_init(&in, 64);
    CHECK(kg_frame_in_add(&in, s, ends[0], &err) == KG_OK);
    CHECK(kg_frame_in_add(&in, "garbage and more garbage", 24, &err) == KG_OK);
    CHECK(kg_frame_in_next(&in, &h, NULL, &pp) == 1 && h.kind == 10);
    CHECK(kg_frame_in_next(&in, &h, NULL, &pp) == -1);
    CHECK_STR_CONTAINS(in.bad, "not a kgate frame");
    CHECK(kg_frame_in_add(&in, s, ends[0], &err) == KG_OK);
    CHECK(kg_frame_in_next(&in, &h, NULL, &pp) == -1);
    kg_frame_in_free(&in);

    /* a protocol that stops the stream */
    kg_frame_in_init(&in, 64);
    CHECK(kg_frame_in_add(&in, s, n, &err) == KG_OK);
    CHECK(kg_frame_in_next(&in, &h, NULL, &pp) == 1);
    kg_frame_in_stop(&in, "a frame of a kind this protocol does not take");
    CHECK(kg_frame_in_next(&in, &h, NULL, &pp) == -1);
    CHECK_STR_CONTAINS(in.bad, "does not take");
    kg_frame_in_free(&in);
}

/* kg_frame_in_fill from a non-blocking pipe: frames as they come, the
 * end; a malformed stream is drained so that its writer never blocks. */
static void test_stream_fill(void)
{
    int fd[2];
    CHECK(pipe(fd) == 0);
    fcntl(fd[0], F_SETFL, O_NONBLOCK);
    kg_err err = { 0 };
    kg_frame_in in;
    kg_frame_in_init(&in, 1u << 20);
    int eof = 1;
    kg_frame_hdr h;
    const unsigned char *pp;
    CHECK(kg_frame_in_fill(&in, fd[0], &eof, &err) == KG_OK && eof == 0);
    CHECK(kg_frame_in_next(&in, &h, NULL, &pp) == 0);
    CHECK(kg_frame_write(fd[1], 1, 2, "abc", 3, "r", &err) == KG_OK);
    CHECK(kg_frame_write(fd[1], 2, 2, "defg", 4, "r", &err) == KG_OK);
    CHECK(kg_frame_in_fill(&in, fd[0], &eof, &err) == KG_OK && eof == 0);
    CHECK(kg_frame_in_next(&in, &h, NULL, &pp) == 1 && h.kind == 1 && h.len == 3 && memcmp(pp, "abc", 3) == 0);
    CHECK(kg_frame_in_next(&in, &h, NULL, &pp) == 1 && h.kind == 2 && h.len == 4 && memcmp(pp, "defg", 4) == 0);
    CHECK(kg_frame_in_next(&in, &h, NULL, &pp) == 0);
    /* half a frame, then the rest */
    unsigned char f[KG_FRAME_HEADER + 2];
    kg_frame_pack(f, 3, 4, 2);
    memcpy(f + KG_FRAME_HEADER, "xy", 2);
    CHECK(write(fd[1], f, 9) == 9);
    CHECK(kg_frame_in_fill(&in, fd[0], &eof, &err) == KG_OK);
    CHECK(kg_frame_in_next(&in, &h, NULL, &pp) == 0);
    CHECK(write(fd[1], f + 9, sizeof f - 9) == (ssize_t)(sizeof f - 9));
    CHECK(kg_frame_in_fill(&in, fd[0], &eof, &err) == KG_OK);
    CHECK(kg_frame_in_next(&in, &h, NULL, &pp) == 1 && h.kind == 3 && h.tag == 4 && memcmp(pp, "xy", 2) == 0);

    /* garbage: refused; then 1 MiB more is read and dropped, not kept */
    CHECK(write(fd[1], "not a frame at all", 18) == 18);
    CHECK(kg_frame_in_fill(&in, fd[0], &eof, &err) == KG_OK);
    CHECK(kg_frame_in_next(&in, &h, NULL, &pp) == -1);
    char junk[4096];
    memset(junk, 'j', sizeof junk);
    size_t kept_cap = in.cap;
    for (int i = 0; i < 256; i++) {
        CHECK(write(fd[1], junk, sizeof junk) == (ssize_t)sizeof junk);
        if (i % 8 == 7) CHECK(kg_frame_in_fill(&in, fd[0], &eof, &err) == KG_OK);
    }
    close(fd[1]);
    CHECK(kg_frame_in_fill(&in, fd[0], &eof, &err) == KG_OK && eof == 1);
    CHECK_MSG(in.cap == kept_cap && in.len - in.at < sizeof junk, "kept %zu bytes in %zu", in.len - in.at, in.cap);
    CHECK(kg_frame_in_next(&in, &h, NULL, &pp) == -1);
    kg_frame_in_free(&in);
    close(fd[0]);
}

static int seqpair(int sv[2])
{
    return socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv);
}

/* A raw message (not through kg_frame_sendmsg) with nfd copies of fd. */
static ssize_t send_raw(int sock, const void *data, size_t len, int fd, int nfd)
{
    union {
        char buf[CMSG_SPACE(sizeof(int) * 8)];
        struct cmsghdr align;
    } cm;
    struct iovec iov = { (void *)data, len };
    struct msghdr m = { 0 };
    m.msg_iov = &iov;
    m.msg_iovlen = 1;
    if (nfd > 0) {
        memset(&cm, 0, sizeof cm);
        m.msg_control = cm.buf;
        m.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)nfd);
        struct cmsghdr *c = CMSG_FIRSTHDR(&m);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)nfd);
        for (int i = 0; i < nfd; i++) memcpy(CMSG_DATA(c) + (size_t)i * sizeof(int), &fd, sizeof fd);
    }
    return sendmsg(sock, &m, MSG_NOSIGNAL);
}

static void rx_init(kg_frame_rx *rx, unsigned char *buf, uint32_t max_len, int *fds, int maxfd)
{
    memset(rx, 0, sizeof *rx);
    rx->buf = buf;
    rx->max_len = max_len;
    rx->fds = fds;
    rx->maxfd = maxfd;
}

static void test_seqpacket(void)
{
    int sv[2];
    CHECK(seqpair(sv) == 0);
    unsigned char buf[KG_FRAME_HEADER + 64];
    int fds[4];
    kg_frame_rx rx;
    rx_init(&rx, buf, 64, fds, 4);

    /* nothing yet */
    CHECK(kg_frame_recvmsg(sv[0], 0, &rx) == 0);

    /* a frame with two descriptors: the two ends of a pipe */
    int p[2];
    CHECK(pipe(p) == 0);
    CHECK(kg_frame_sendmsg(sv[1], 5, 42, "payload", 7, p, 2) == 0);
    close(p[0]);
    close(p[1]);
    CHECK(kg_frame_recvmsg(sv[0], 1, &rx) == 1);
    CHECK(rx.h.kind == 5 && rx.h.tag == 42 && rx.h.len == 7 && memcmp(rx.payload, "payload", 7) == 0);
    CHECK(rx.nfd == 2);
    if (rx.nfd == 2) {
        CHECK(write(rx.fds[1], "z", 1) == 1);
        char c = 0;
        CHECK(read(rx.fds[0], &c, 1) == 1 && c == 'z');
        CHECK(fcntl(rx.fds[0], F_GETFD) & FD_CLOEXEC);
        close(rx.fds[0]);
        close(rx.fds[1]);
    }

    /* an empty payload, no descriptors; waiting */
    CHECK(kg_frame_sendmsg(sv[1], 6, 0, NULL, 0, NULL, 0) == 0);
    CHECK(kg_frame_recvmsg(sv[0], 1, &rx) == 1 && rx.h.kind == 6 && rx.h.len == 0 && rx.nfd == 0);

    /* as many descriptors as an arm host's BIND brings */
    int many[140];
    int dn = open("/dev/null", O_RDONLY | O_CLOEXEC);
    for (int i = 0; i < 140; i++) many[i] = dn;
    int got[140];
    kg_frame_rx big;
    rx_init(&big, buf, 64, got, 140);
    int before = open_fds();
    CHECK(kg_frame_sendmsg(sv[1], 7, 1, "m", 1, many, 140) == 0);
    CHECK(kg_frame_recvmsg(sv[0], 1, &big) == 1 && big.nfd == 140);
    CHECK(open_fds() == before + big.nfd);
    for (int i = 0; i < big.nfd; i++) close(got[i]);

    /* too many to send */
    int lots[KG_FRAME_MAX_FDS + 1];
    for (int i = 0; i <= KG_FRAME_MAX_FDS; i++) lots[i] = dn;
    errno = 0;
    CHECK(kg_frame_sendmsg(sv[1], 7, 1, "m", 1, lots, KG_FRAME_MAX_FDS + 1) == -1 && errno == EINVAL);
    errno = 0;
    CHECK(kg_frame_sendmsg(sv[1], 7, 1, "m", (size_t)KG_FRAME_MAX + 1, NULL, 0) == -1 && errno == EINVAL);
    CHECK(kg_frame_recvmsg(sv[0], 0, &rx) == 0);

    /* more descriptors than the protocol sends: refused, every one closed */
    before = open_fds();
    CHECK(kg_frame_sendmsg(sv[1], 5, 1, "x", 1, many, 5) == 0);
    CHECK(kg_frame_recvmsg(sv[0], 1, &rx) == -2);
    CHECK_STR_CONTAINS(rx.why, "5 descriptors");
    CHECK(rx.nfd == 0);
    CHECK(open_fds() == before);
    /* descriptors where none are expected */
    kg_frame_rx none;
    rx_init(&none, buf, 64, NULL, 0);
    CHECK(kg_frame_sendmsg(sv[1], 5, 1, "x", 1, many, 1) == 0);
    CHECK(kg_frame_recvmsg(sv[0], 1, &none) == -2);
    CHECK(open_fds() == before);

    /* a message longer than the buffer (truncated), with a descriptor */
    unsigned char long_msg[KG_FRAME_HEADER + 100];
    kg_frame_pack(long_msg, 5, 1, 100);
    memset(long_msg + KG_FRAME_HEADER, 'a', 100);
    CHECK(send_raw(sv[1], long_msg, sizeof long_msg, dn, 1) == (ssize_t)sizeof long_msg);
    CHECK(kg_frame_recvmsg(sv[0], 1, &rx) == -2);
    CHECK_STR_CONTAINS(rx.why, "not one whole frame");
    CHECK(open_fds() == before);
    /* one byte over the protocol's limit */
    kg_frame_pack(long_msg, 5, 1, 65);
    CHECK(send_raw(sv[1], long_msg, KG_FRAME_HEADER + 65, -1, 0) == KG_FRAME_HEADER + 65);
    CHECK(kg_frame_recvmsg(sv[0], 1, &rx) == -2);
    /* shorter than a header */
    CHECK(send_raw(sv[1], "KGF1", 4, dn, 1) == 4);
    CHECK(kg_frame_recvmsg(sv[0], 1, &rx) == -2);
    CHECK(open_fds() == before);
    /* a length that disagrees with the message, both ways */
    kg_frame_pack(long_msg, 5, 1, 10);
    CHECK(send_raw(sv[1], long_msg, KG_FRAME_HEADER + 9, dn, 1) == KG_FRAME_HEADER + 9);
    CHECK(kg_frame_recvmsg(sv[0], 1, &rx) == -2);
    CHECK(send_raw(sv[1], long_msg, KG_FRAME_HEADER + 11, -1, 0) == KG_FRAME_HEADER + 11);
    CHECK(kg_frame_recvmsg(sv[0], 1, &rx) == -2);
    CHECK(open_fds() == before);
    /* not a frame: a header of another magic, with a descriptor */
    unsigned char other[KG_FRAME_HEADER];
    kg_frame_pack(other, 5, 1, 0);
    other[0] = 'X';
    CHECK(send_raw(sv[1], other, sizeof other, dn, 1) == (ssize_t)sizeof other);
    CHECK(kg_frame_recvmsg(sv[0], 1, &rx) == -2);
    CHECK_STR_CONTAINS(rx.why, "not a kgate frame");
    CHECK(open_fds() == before);

    /* after all that, a good frame still comes whole */
    CHECK(kg_frame_sendmsg(sv[1], 8, 9, "ok", 2, NULL, 0) == 0);
    CHECK(kg_frame_recvmsg(sv[0], 1, &rx) == 1 && rx.h.kind == 8 && rx.h.tag == 9 && memcmp(rx.payload, "ok", 2) == 0);

    /* the peer is gone: its end, then a send that fails */
    close(sv[1]);
    errno = -1;
    CHECK(kg_frame_recvmsg(sv[0], 1, &rx) == -1 && errno == 0);
    CHECK(kg_frame_recvmsg(sv[0], 0, &rx) == -1);
    CHECK(kg_frame_sendmsg(sv[0], 1, 1, "x", 1, NULL, 0) == -1);
    close(sv[0]);
    close(dn);
}

static void test_mac(void)
{
    const unsigned char key[32] = "0123456789abcdef0123456789abcde";
    unsigned char h1[KG_FRAME_HEADER], h2[KG_FRAME_HEADER];
    kg_frame_pack(h1, 1, 3, 5);
    kg_frame_pack(h2, 7, 3, 0);
    kg_frame_mac *m = kg_frame_mac_new(key, sizeof key);
    CHECK(m != NULL);
    if (m == NULL) return;
    kg_frame_mac_add(m, h1, "hello", 5);
    unsigned char a[32], b[32], want[32];
    CHECK(kg_frame_mac_now(m, a) == 0);
    /* the same bytes through OpenSSL's one-shot HMAC */
    unsigned char all[2 * KG_FRAME_HEADER + 5];
    memcpy(all, h1, KG_FRAME_HEADER);
    memcpy(all + KG_FRAME_HEADER, "hello", 5);
    unsigned int n = 0;
    CHECK(HMAC(EVP_sha256(), key, sizeof key, all, KG_FRAME_HEADER + 5, want, &n) != NULL && n == 32);
    CHECK(kg_frame_mac_equal(a, want));
    /* the MAC goes on after a look */
    kg_frame_mac_add(m, h2, NULL, 0);
    CHECK(kg_frame_mac_now(m, b) == 0);
    memcpy(all + KG_FRAME_HEADER + 5, h2, KG_FRAME_HEADER);
    CHECK(HMAC(EVP_sha256(), key, sizeof key, all, sizeof all, want, &n) != NULL);
    CHECK(kg_frame_mac_equal(b, want));
    CHECK(!kg_frame_mac_equal(a, b));
    /* another key, or one byte of the header changed, gives another MAC */
    kg_frame_mac *o = kg_frame_mac_new((const unsigned char *)"another key", 11);
    kg_frame_mac_add(o, h1, "hello", 5);
    CHECK(kg_frame_mac_now(o, b) == 0 && !kg_frame_mac_equal(a, b));
    kg_frame_mac_free(o);
    o = kg_frame_mac_new(key, sizeof key);
    h1[8] ^= 1;
    kg_frame_mac_add(o, h1, "hello", 5);
    CHECK(kg_frame_mac_now(o, b) == 0 && !kg_frame_mac_equal(a, b));
    kg_frame_mac_free(o);
    kg_frame_mac_free(m);
    /* no MAC: nothing to add, nothing to give */
    kg_frame_mac_add(NULL, h1, "x", 1);
    CHECK(kg_frame_mac_now(NULL, a) == -1);
    kg_frame_mac_free(NULL);
}

int main(void)
{
    test_words();
    test_header();
    test_pipe();
    test_stream_bytes();
    test_stream_fill();
    test_seqpacket();
    test_mac();
    return kg_test_finish("test_frame");
}

/* test_attest.c: base64 and the DSSE encoding (attest.h), and the
 * frames' HMAC under the worker's token (channel.h, token.h). */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "check.h"
#include "evidence/attest.h"
#include "run/channel.h"
#include "run/token.h"

static void b64_round(const char *in, const char *want)
{
    char *e = kg_b64_encode(in, strlen(in));
    CHECK_MSG(e != NULL && strcmp(e, want) == 0, "'%s' -> '%s', want '%s'", in, e ? e : "(null)", want);
    unsigned char *d = NULL;
    size_t dl = 0;
    kg_err err = { 0 };
    CHECK(kg_b64_decode(want, &d, &dl, &err) == KG_OK && dl == strlen(in) && memcmp(d, in, dl) == 0);
    free(e);
    free(d);
}

/* One worker's frames through a pipe into a channel that expects the MAC
 * under rkey; the sender keys it with skey (NULL: no MAC, a plain RAW);
 * extra: a frame after RAW.  Returns the channel's verdict in c. */
static void exchange(const unsigned char *skey, const unsigned char *rkey, int extra, kg_chan *c)
{
    int p[2];
    kg_err err = { 0 };
    CHECK(pipe(p) == 0);
    if (skey != NULL) CHECK(kg_frame_mac_begin(skey, KG_TOKEN_BYTES, &err) == KG_OK);
    CHECK(kg_frame_now(p[1], 3, 0, 1, KG_NOW_TIME, 2, &err) == KG_OK);
    CHECK(kg_frame_send(p[1], KG_FRAME_CHECKS, 3, "checks\n", 7, &err) == KG_OK);
    if (skey != NULL) CHECK(kg_frame_send_raw_mac(p[1], 3, "raw\n", 4, &err) == KG_OK);
    else CHECK(kg_frame_send(p[1], KG_FRAME_RAW, 3, "raw\n", 4, &err) == KG_OK);
    if (extra) CHECK(kg_frame_send(p[1], KG_FRAME_TELEMETRY, 3, "t\n", 2, &err) == KG_OK);
    close(p[1]);
    kg_chan_init(c, 3);
    CHECK(kg_chan_expect_mac(c, rkey, KG_TOKEN_BYTES, &err) == KG_OK);
    (void)fcntl(p[0], F_SETFL, O_NONBLOCK);
    while (!c->eof) CHECK(kg_chan_pump(c, p[0], &err) == KG_OK);
    close(p[0]);
}

int main(void)
{
    /* RFC 4648's vectors */
    b64_round("", "");
    b64_round("f", "Zg==");
    b64_round("fo", "Zm8=");
    b64_round("foo", "Zm9v");
    b64_round("foob", "Zm9vYg==");
    b64_round("fooba", "Zm9vYmE=");
    b64_round("foobar", "Zm9vYmFy");
    unsigned char *d = NULL;
    size_t dl = 0;
    kg_err err = { 0 };
    CHECK(kg_b64_decode("Zm9v!", &d, &dl, &err) == KG_EINPUT);
    CHECK(kg_b64_decode("Zm9vY", &d, &dl, &err) == KG_EINPUT);

    /* DSSE's own example of the pre-authentication encoding */
    unsigned char *pae = NULL;
    size_t pl = 0;
    CHECK(kg_dsse_pae("http://example.com/HelloWorld", "hello world", 11, &pae, &pl, &err) == KG_OK);
    const char *want = "DSSEv1 29 http://example.com/HelloWorld 11 hello world";
    CHECK(pl == strlen(want) && memcmp(pae, want, pl) == 0);
    free(pae);

    /* tokens: 32 fresh bytes through a pipe */
    unsigned char a[KG_TOKEN_BYTES], b[KG_TOKEN_BYTES], r[KG_TOKEN_BYTES];
    CHECK(kg_token_draw(a, &err) == KG_OK && kg_token_draw(b, &err) == KG_OK);
    CHECK(memcmp(a, b, sizeof a) != 0);
    int fd = -1;
    CHECK(kg_token_pipe(a, &fd, &err) == KG_OK);
    CHECK(kg_token_read_fd(fd, r, &err) == KG_OK && memcmp(a, r, sizeof a) == 0);
    int p[2];
    CHECK(pipe(p) == 0);
    close(p[1]);
    kg_err e2 = { 0 };
    CHECK(kg_token_read_fd(p[0], r, &e2) == KG_EIO);
    CHECK_STR_CONTAINS(e2.msg, "kgate run");

    /* the frames' HMAC: the same token passes, another fails, none fails,
     * and nothing may follow the raw rows */
    kg_chan c;
    exchange(a, a, 0, &c);
    CHECK_MSG(c.bad[0] == '\0' && c.mac_ok && c.part[KG_FRAME_RAW] != NULL, "%s", c.bad);
    kg_chan_free(&c);
    exchange(b, a, 0, &c);
    CHECK(!c.mac_ok);
    CHECK_STR_CONTAINS(c.bad, "HMAC");
    kg_chan_free(&c);
    exchange(NULL, a, 0, &c);
    CHECK(!c.mac_ok);
    CHECK_STR_CONTAINS(c.bad, "without the HMAC");
    kg_chan_free(&c);
    exchange(a, a, 1, &c);
    CHECK_STR_CONTAINS(c.bad, "after the raw rows");
    kg_chan_free(&c);
    return kg_test_finish("test_attest");
}

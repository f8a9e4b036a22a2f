/* test_salt.c: the campaign's input salt (salt.h) and the seeds it salts
 * (protocol.h). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "check.h"
#include "plan/protocol.h"
#include "evidence/salt.h"

int main(void)
{
    kg_err err = { 0 };
    /* draws: nonzero, and two draws differ (a 2^-64 chance otherwise) */
    uint64_t a = 0, b = 0;
    CHECK(kg_salt_draw(&a, &err) == KG_OK);
    CHECK(kg_salt_draw(&b, &err) == KG_OK);
    CHECK(a != 0 && b != 0 && a != b);

    /* text form round trip, and strict parsing */
    char buf[19];
    kg_salt_format(0x0123456789abcdefull, buf);
    CHECK(strcmp(buf, "0x0123456789abcdef") == 0);
    uint64_t v = 0;
    CHECK(kg_salt_parse("t", buf, &v, &err) == KG_OK && v == 0x0123456789abcdefull);
    CHECK(kg_salt_parse("t", "0x0123456789ABCDEF", &v, &err) == KG_EINPUT);
    CHECK_STR_CONTAINS(err.msg, "lowercase hex");
    CHECK(kg_salt_parse("t", "0x123", &v, &err) == KG_EINPUT);
    CHECK(kg_salt_parse("t", "123456789abcdef012", &v, &err) == KG_EINPUT);

    /* meta.json: found, absent (an older folder), malformed */
    int found = -1;
    CHECK(kg_salt_from_meta("{\"schema\": 3, \"input_salt\": \"0x00000000000000ff\"}", &v, &found, &err) == KG_OK);
    CHECK(found == 1 && v == 0xff);
    CHECK(kg_salt_from_meta("{\"schema\": 3}", &v, &found, &err) == KG_OK);
    CHECK(found == 0 && v == 0);
    CHECK(kg_salt_from_meta("{\"input_salt\": 7}", &v, &found, &err) == KG_EINPUT);
    CHECK(kg_salt_from_meta("not json", &v, &found, &err) == KG_EINPUT);

    /* the pipe hands the salt over whole */
    int fd = -1;
    CHECK(kg_salt_pipe(a, &fd, &err) == KG_OK && fd >= 0);
    v = 0;
    CHECK(kg_salt_read_fd(fd, &v, &err) == KG_OK && v == a);
    int p[2];
    CHECK(pipe(p) == 0);
    CHECK(write(p[1], "0x12", 4) == 4);
    close(p[1]);
    CHECK(kg_salt_read_fd(p[0], &v, &err) == KG_EIO);

    /* seeds: salt 0 is the plan's seed (older folders replay), two salts
     * give two bases, and every check seed of one differs from the other's */
    CHECK(kg_protocol_input_base(1, 0) == 1);
    uint64_t ba = kg_protocol_input_base(1, a), bb = kg_protocol_input_base(1, b);
    CHECK(ba != 1 && bb != 1 && ba != bb);
    int same = 0;
    for (int proc = 0; proc < 8; proc++)
        for (int c = 0; c < 4; c++)
            for (int ph = 0; ph < 4; ph++)
                for (int proc2 = 0; proc2 < 8; proc2++)
                    same += kg_protocol_check_seed(ba, proc, c, ph) == kg_protocol_check_seed(bb, proc2, c, ph);
    CHECK(same == 0);
    /* held-out seeds: a domain apart from the check phases */
    CHECK(kg_protocol_heldout_seed(ba, 0, 0, 0) != kg_protocol_check_seed(ba, 0, 0, 0));
    CHECK(kg_protocol_heldout_seed(ba, 0, 0, 0) != kg_protocol_heldout_seed(ba, 0, 0, 1));
    CHECK(kg_protocol_heldout_seed(ba, 0, 0, 0) != kg_protocol_heldout_seed(bb, 0, 0, 0));
    return kg_test_finish("test_salt");
}

/* test_protocol.c: visiting orders of a process. */
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "plan/protocol.h"
#include "kgate/backend.h"

static kg_plan *make_plan(void)
{
    static const char text[] =
        "[campaign]\nbackend = fake\n"
        "[case a]\nop = rowsum\ndtype = f32\nM = 2\nN = 2\n"
        "[case b]\nop = rowsum\ndtype = f32\nM = 2\nN = 3\n"
        "[case c]\nop = gemm_bt\ndtype = f32\nM = 2\nN = 2\nK = 2\n"
        "[arm base]\nop = rowsum\nrole = baseline\nsource = x.c\n"
        "[arm cand]\nop = rowsum\nsource = y.c\n"
        "[arm only_b]\nop = rowsum\nsource = z.c\ncases = b\n"
        "[arm gbase]\nop = gemm_bt\nrole = baseline\nsource = g.c\n";
    kg_plan *p = NULL;
    kg_err err = { 0 };
    int rc = kg_plan_parse(text, strlen(text), "mem.kg", ".", &p, &err);
    CHECK_MSG(rc == KG_OK, "%s", err.msg);
    return p;
}

/* The seed a sampled@N/Q check regenerates (worker and verify) is the one
 * the operation's input set was written from: the binding's rule
 * (kgate/backend.h) names the set, the protocol its seed. */
static void test_op_input_seed(void)
{
    for (int pack = 1; pack <= 16; pack++)
        for (int q = 0; q < pack; q++) {
            int set = kg_binding_op_set(pack - 1, q, pack);
            uint64_t want = set == 0 ? kg_protocol_sample_seed(7, 2, 1, 33) : kg_protocol_op_seed(7, 2, 1, 33, set - 1);
            CHECK_MSG(kg_protocol_op_input_seed(7, 2, 1, 33, pack, q) == want, "pack %d, operation %d", pack, q);
        }
    /* the last operation reads the sample's own inputs; the others differ from it and each other */
    CHECK(kg_protocol_op_input_seed(7, 2, 1, 33, 8, 7) == kg_protocol_sample_seed(7, 2, 1, 33));
    CHECK(kg_protocol_op_input_seed(7, 2, 1, 33, 8, 0) != kg_protocol_op_input_seed(7, 2, 1, 33, 8, 1));
    CHECK(kg_protocol_op_input_seed(7, 2, 1, 33, 8, 6) != kg_protocol_sample_seed(7, 2, 1, 33));
}

int main(void)
{
    test_op_input_seed();
    CHECK(kg_protocol_direction(0) == 0);
    CHECK(kg_protocol_direction(1) == 1);
    CHECK(kg_protocol_direction(6) == 0);

    kg_plan *p = make_plan();
    if (p == NULL) return kg_test_finish("test_protocol");
    int order[8];
    CHECK(kg_protocol_case_order(p, 0, order, 8) == 3);
    CHECK(order[0] == 0 && order[1] == 1 && order[2] == 2);
    CHECK(kg_protocol_case_order(p, 1, order, 3) == 3);
    CHECK(order[0] == 2 && order[1] == 1 && order[2] == 0);

    /* Arms apply by op and by the cases list. */
    int n = kg_protocol_arm_order(p, 0, 0, order, 8);
    CHECK(n == 2 && order[0] == 0 && order[1] == 1);
    n = kg_protocol_arm_order(p, 1, 0, order, 8);
    CHECK(n == 3 && order[0] == 0 && order[1] == 1 && order[2] == 2);
    n = kg_protocol_arm_order(p, 1, 1, order, 8);
    CHECK(n == 3 && order[0] == 2 && order[1] == 1 && order[2] == 0);
    /* processes 2 and 3 (the second of each direction) rotate by one */
    n = kg_protocol_arm_order(p, 1, 2, order, 8);
    CHECK(n == 3 && order[0] == 1 && order[1] == 2 && order[2] == 0);
    n = kg_protocol_arm_order(p, 1, 3, order, 8);
    CHECK(n == 3 && order[0] == 0 && order[1] == 2 && order[2] == 1);
    /* a Latin square: over 3 processes per direction every arm takes every
     * load slot once in each direction, whatever the plan's listing */
    for (int d = 0; d < 2; d++) {
        int slot_count[3][3];
        memset(slot_count, 0, sizeof slot_count);
        for (int k = 0; k < 3; k++) {
            n = kg_protocol_arm_order(p, 1, 2 * k + d, order, 8);
            CHECK(n == 3);
            for (int i = 0; i < 3 && n == 3; i++) slot_count[order[i]][i]++;
        }
        for (int a = 0; a < 3; a++)
            for (int i = 0; i < 3; i++) CHECK_MSG(slot_count[a][i] == 1, "direction %d arm %d slot %d: %d", d, a, i, slot_count[a][i]);
    }
    /* the processes that complete the squares: lcm(2, 3, 1) */
    CHECK(kg_plan_square(p) == 6);
    CHECK(p->campaign.processes == 6);
    /* capacity: never a write past cap, and -1 when the arms do not fit */
    int small[3] = { -7, -7, -7 };
    CHECK(kg_protocol_arm_order(p, 1, 0, small, 2) == -1);
    CHECK(small[2] == -7);
    CHECK(kg_protocol_case_order(p, 0, small, 2) == -1);
    n = kg_protocol_arm_order(p, 2, 0, order, 8);
    CHECK(n == 1 && order[0] == 3);

    /* Rotation: every arm takes every position once over n rounds. */
    int base[3] = { 7, 8, 9 }, r0[3], pos_count[3][3];
    memset(pos_count, 0, sizeof pos_count);
    for (int r = 0; r < 3; r++) {
        kg_protocol_round_order(base, 3, r, r0);
        for (int i = 0; i < 3; i++) pos_count[r0[i] - 7][i]++;
    }
    for (int a = 0; a < 3; a++)
        for (int i = 0; i < 3; i++) CHECK(pos_count[a][i] == 1);
    kg_protocol_round_order(base, 3, 1, r0);
    CHECK(r0[0] == 8 && r0[1] == 9 && r0[2] == 7);

    /* Interleave = sample: sample s of every arm before s + 1 of any. */
    kg_step st[64];
    int k = kg_protocol_round_steps(3, 2, 4, KG_INTERLEAVE_SAMPLE, st);
    CHECK(k == 3 * 6);
    for (int i = 0; i < 6; i++) CHECK(st[i].sample == -1);
    int last_sample = -1;
    for (int i = 6; i < k; i++) {
        CHECK(st[i].sample >= last_sample);
        CHECK(st[i].slot == (i - 6) % 3);
        CHECK(st[i].sample == (i - 6) / 3);
        last_sample = st[i].sample;
    }
    /* Interleave = block: each arm's warmups and samples together. */
    k = kg_protocol_round_steps(2, 1, 3, KG_INTERLEAVE_BLOCK, st);
    CHECK(k == 8);
    CHECK(st[0].slot == 0 && st[0].sample == -1);
    CHECK(st[3].slot == 0 && st[3].sample == 2);
    CHECK(st[4].slot == 1 && st[4].sample == -1);
    CHECK(st[7].slot == 1 && st[7].sample == 2);

    /* Check seeds: deterministic and distinct per process, case, phase. */
    uint64_t s1 = kg_protocol_check_seed(1, 0, 0, 0);
    CHECK(s1 == kg_protocol_check_seed(1, 0, 0, 0));
    CHECK(s1 != kg_protocol_check_seed(1, 0, 0, 1));
    CHECK(s1 != kg_protocol_check_seed(1, 1, 0, 0));
    CHECK(s1 != kg_protocol_check_seed(1, 0, 1, 0));
    CHECK(s1 != kg_protocol_check_seed(2, 0, 0, 0));

    /* One CPU per process: in range, deterministic, every direction
     * cycling over every CPU alike (2n processes per direction on n
     * CPUs: each CPU twice), the first CPU drawn from the salted base. */
    for (int ncpu = 1; ncpu <= 5; ncpu++) {
        int seen[2][8] = { { 0 } };
        for (int proc = 0; proc < 4 * ncpu; proc++) {
            int c = kg_protocol_cpu(0x1234, proc, proc % 2, ncpu);
            CHECK(c >= 0 && c < ncpu && c == kg_protocol_cpu(0x1234, proc, proc % 2, ncpu));
            seen[proc % 2][c]++;
        }
        for (int d = 0; d < 2; d++)
            for (int c = 0; c < ncpu; c++)
                CHECK_MSG(seen[d][c] == 2, "%d CPUs, direction %d, CPU %d: %d", ncpu, d, c, seen[d][c]);
    }
    int firsts[2] = { 0 };
    for (uint64_t b = 0; b < 64; b++) firsts[kg_protocol_cpu(b, 0, 0, 2)]++;
    CHECK_MSG(firsts[0] > 8 && firsts[1] > 8, "first CPU of 64 bases: %d on 0, %d on 1", firsts[0], firsts[1]);
    CHECK(kg_protocol_cpu(7, 0, 0, 2) != kg_protocol_cpu(7, 2, 0, 2));   /* the next process of a direction moves */
    kg_plan_free(p);
    return kg_test_finish("test_protocol");
}

/* protocol.c: visiting orders of a process (see protocol.h). */
#include "plan/protocol.h"

int kg_protocol_direction(int proc)
{
    return proc % 2;
}

int kg_protocol_case_order(const kg_plan *plan, int dir, int *out, int cap)
{
    if (cap < plan->ncases) return -1;
    for (int i = 0; i < plan->ncases; i++)
        out[i] = dir == 0 ? i : plan->ncases - 1 - i;
    return plan->ncases;
}

static void reverse(int *v, int from, int to)
{
    for (int i = from, j = to - 1; i < j; i++, j--) {
        int t = v[i];
        v[i] = v[j];
        v[j] = t;
    }
}

int kg_protocol_arm_order(const kg_plan *plan, int c, int proc, int *out, int cap)
{
    int n = 0;
    for (int a = 0; a < plan->narms; a++) {
        if (!kg_plan_arm_applies(plan, a, c)) continue;
        if (n == cap) return -1;
        out[n++] = a;
    }
    if (n < 2) return n;
    /* the k-th process of a direction rotates the plan's list left by k
     * (mod n), and a reverse process mirrors the forward one: over n
     * processes per direction every arm is loaded in every slot once,
     * in each direction */
    int k = (proc / 2) % n;
    /* rotate left by k: reverse [0, k), [k, n), then the whole */
    reverse(out, 0, k);
    reverse(out, k, n);
    reverse(out, 0, n);
    if (kg_protocol_direction(proc) == 1) reverse(out, 0, n);
    return n;
}


void kg_protocol_round_order(const int *base, int n, int round, int *out)
{
    for (int i = 0; i < n; i++) out[i] = base[(i + round) % n];
}

int kg_protocol_round_steps(int n, int warmup, int samples, kg_interleave mode, kg_step *out)
{
    int k = 0;
    if (mode == KG_INTERLEAVE_SAMPLE) {
        for (int w = 0; w < warmup; w++)
            for (int a = 0; a < n; a++) out[k++] = (kg_step){ a, -1 };
        for (int s = 0; s < samples; s++)
            for (int a = 0; a < n; a++) out[k++] = (kg_step){ a, s };
    } else {
        for (int a = 0; a < n; a++) {
            for (int w = 0; w < warmup; w++) out[k++] = (kg_step){ a, -1 };
            for (int s = 0; s < samples; s++) out[k++] = (kg_step){ a, s };
        }
    }
    return k;
}

/* splitmix64 finaliser: a bijective mix, so distinct inputs stay distinct. */
static uint64_t mix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

uint64_t kg_protocol_check_seed(uint64_t campaign_seed, int proc, int kase, int phase)
{
    uint64_t x = mix64(campaign_seed);
    x = mix64(x ^ ((uint64_t)(uint32_t)proc << 20) ^ ((uint64_t)(uint32_t)kase << 2) ^ (uint64_t)(phase & 3));
    return x;
}

uint64_t kg_protocol_input_base(uint64_t campaign_seed, uint64_t salt)
{
    if (salt == 0) return campaign_seed;
    /* "salt" in ASCII keeps this domain apart from the other mixes */
    return mix64(mix64(campaign_seed) ^ mix64(salt ^ 0x73616c74u));
}

uint64_t kg_protocol_heldout_seed(uint64_t base, int proc, int kase, int idx)
{
    uint64_t x = mix64(base ^ 0x68656c646f7574ull);   /* "heldout" */
    x = mix64(x ^ ((uint64_t)(uint32_t)proc << 32) ^ ((uint64_t)(uint32_t)kase << 8) ^ (uint64_t)(idx & 0xff));
    return x;
}

uint64_t kg_protocol_sample_seed(uint64_t base, int proc, int kase, int64_t n)
{
    uint64_t x = mix64(base ^ 0x73616d706c65ull);   /* "sample" */
    x = mix64(x ^ ((uint64_t)(uint32_t)proc << 40) ^ ((uint64_t)(uint32_t)kase << 24));
    return mix64(x ^ (uint64_t)n);
}

uint64_t kg_protocol_op_seed(uint64_t base, int proc, int kase, int64_t n, int j)
{
    uint64_t x = mix64(kg_protocol_sample_seed(base, proc, kase, n) ^ 0x6f70736574ull);   /* "opset" */
    return mix64(x ^ (uint64_t)(uint32_t)j);
}

uint64_t kg_protocol_op_input_seed(uint64_t base, int proc, int kase, int64_t n, int pack, int q)
{
    if (pack <= 1 || q >= pack - 1 || q < 0) return kg_protocol_sample_seed(base, proc, kase, n);
    return kg_protocol_op_seed(base, proc, kase, n, pack - 2 - q);
}

uint64_t kg_protocol_aux_seed(uint64_t base, int proc, int kase, uint32_t what)
{
    uint64_t x = mix64(base ^ 0x61757869ull);   /* "auxi" */
    x = mix64(x ^ ((uint64_t)(uint32_t)proc << 40) ^ ((uint64_t)(uint32_t)kase << 24));
    return mix64(x ^ (uint64_t)what);
}

int kg_protocol_cpu(uint64_t base, int proc, int dir, int ncpus)
{
    if (ncpus <= 1 || proc < 0) return 0;
    uint64_t first = kg_protocol_aux_seed(base, dir, 0, KG_AUX_CPU) % (uint64_t)ncpus;
    return (int)((first + (uint64_t)(proc / 2)) % (uint64_t)ncpus);
}

size_t kg_protocol_pad_bytes(uint64_t seed)
{
    uint64_t x = mix64(seed ^ 0x706164ull);   /* "pad" */
    return (size_t)(x % (KG_PAD_MAX / KG_PAD_UNIT)) * KG_PAD_UNIT;
}

/* protocol.h: the order in which a process visits cases, arms and samples.
 *
 * Pure functions, no I/O: the worker follows them and the tests check
 * them.  Direction forward keeps the plan's case and arm order; reverse
 * reverses both.  Process i runs in direction i % 2, so directions
 * alternate.  Within a case, round r rotates the direction's arm order
 * left by r.  With interleave = sample, sample s of every arm is taken
 * before sample s + 1 of any arm (warmups likewise, before the first
 * sample); with interleave = block each arm runs its warmups and samples
 * in one block. */
#ifndef KGATE_PROTOCOL_H
#define KGATE_PROTOCOL_H

#include "kgate/plan.h"

/* Direction of process index proc. */
int kg_protocol_direction(int proc);

/* Case visiting order for direction dir into out[0..cap).  Returns the
 * number of cases, or -1 (writing nothing) when cap < plan->ncases. */
int kg_protocol_case_order(const kg_plan *plan, int dir, int *out, int cap);

/* The load (and buffer allocation) order of the arms that apply to case c
 * in process proc, into out[0..cap): a cyclic Latin square over the
 * processes of a direction (the k-th rotates the plan's list by k), each
 * reverse process the mirror of its forward one, so that over a multiple
 * of n processes per direction every arm takes every load slot equally
 * often and a slot effect enters the process variance instead of the
 * estimate (kg_plan_square: the processes per direction that complete
 * it).  Returns their count, or -1 (writing at most cap) when they do not
 * fit; cap = plan->narms always suffices. */
int kg_protocol_arm_order(const kg_plan *plan, int c, int proc, int *out, int cap);

/* Arm order of round r: base rotated left by r. */
void kg_protocol_round_order(const int *base, int n, int round, int *out);

typedef struct kg_step {
    int slot;     /* index into the round's arm order */
    int sample;   /* timed sample index, or -1 for a warmup execution */
} kg_step;

/* Steps of one round for n arms; out has n * (warmup + samples) slots.
 * Returns the number of steps written. */
int kg_protocol_round_steps(int n, int warmup, int samples, kg_interleave mode, kg_step *out);

/* Seed of the inputs of a check: distinct for every (process, case,
 * phase) and derived from the campaign seed alone, so that verify can
 * recompute it. phase 0 = before timing, 1 = after timing. */
uint64_t kg_protocol_check_seed(uint64_t campaign_seed, int proc, int kase, int phase);

/* The base every input seed of a campaign derives from: the plan's seed
 * mixed with the campaign's input salt (salt.h), drawn fresh by the
 * supervisor, so that no two campaigns share inputs.  Salt 0 (a folder
 * written before the salt) gives the plan's seed unchanged.  Pass the
 * result as kg_protocol_check_seed's campaign_seed. */
uint64_t kg_protocol_input_base(uint64_t campaign_seed, uint64_t salt);

/* Seed of held-out shape number idx of a case (heldout.h), from the
 * salted base: a domain of its own, apart from the check phases. */
uint64_t kg_protocol_heldout_seed(uint64_t base, int proc, int kase, int idx);

/* The inputs of an arm's n-th timed execution (warmups counted, from 1)
 * in process proc and case kase under inputs = fresh: every arm's n-th
 * execution gets the same inputs, so the comparisons stay paired. */
uint64_t kg_protocol_sample_seed(uint64_t base, int proc, int kase, int64_t n);
/* With pack > 1, the inputs of the operation j + 2 places before the
 * last of that execution (the last reads the execution's own inputs, of
 * kg_protocol_sample_seed): kgate/backend.h's op_in[j]. */
uint64_t kg_protocol_op_seed(uint64_t base, int proc, int kase, int64_t n, int j);
/* The inputs operation q (0-based) of a sample of pack operations read
 * in execution n under inputs = fresh (pack <= 16: every operation but
 * the last has a set of its own): the sample's seed for the last, else
 * kg_protocol_op_seed of set j = pack - 2 - q.  What a sampled@N/Q check
 * regenerates, in the worker and in verify. */
uint64_t kg_protocol_op_input_seed(uint64_t base, int proc, int kase, int64_t n, int pack, int q);

/* Seeds of the checks around timing that draw positions: KG_AUX_PICK
 * (which timed executions are checked), KG_AUX_PERTURB (the perturbation
 * check's elements and values). */
enum { KG_AUX_PICK = 1, KG_AUX_PERTURB = 2, KG_AUX_CPU = 3, KG_AUX_PAD = 0x100 /* + the arm's index */ };

/* The CPU process proc of direction dir is pinned to, as an index
 * 0..ncpus-1 into the CPUs the campaign may use (the affinity mask kgate
 * was started with, in increasing order).  Process proc takes the CPU
 * proc / 2 places after a first CPU drawn from base (the salted input
 * base) and the direction (KG_AUX_CPU): as processes alternate
 * directions, each direction cycles over every CPU alike, so that a
 * CPU's own speed enters the process variance and is never confounded
 * with a direction, and where a campaign starts is not known in advance. */
int kg_protocol_cpu(uint64_t base, int proc, int dir, int ncpus);

/* The placement pad allocated before arm a's buffers in a process (the
 * seed: kg_protocol_aux_seed(plan seed, proc, kase, KG_AUX_PAD + a), the
 * plan's seed unsalted, so that placement is reproducible): a
 * multiple of KG_PAD_UNIT below KG_PAD_MAX bytes, so that every process
 * places every arm's buffers at other addresses and a placement effect
 * enters the process variance instead of biasing one arm. */
#define KG_PAD_UNIT ((size_t)64 << 10)
#define KG_PAD_MAX ((size_t)32 << 20)
size_t kg_protocol_pad_bytes(uint64_t seed);
uint64_t kg_protocol_aux_seed(uint64_t base, int proc, int kase, uint32_t what);

#endif

/* keys.c: the key table and values.
 *
 * Every key of every section is one row of plan_keys[]: its name, kind,
 * field, bounds, default and the help shown in messages.  Parsing,
 * defaults, the canonical writer and the "unknown key" message all walk
 * that table, so a new key is one row (plus its struct field). */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include "plan/plan_impl.h"

const char *const plan_sec_names[] = {"", "campaign", "case", "arm", "gate", "op"};

const char *const kg_plan_backends[] = { "auto", "cpu", "fake", "cuda", NULL };

static const char *const w_interleave[] = {"sample", "block", NULL};
static const char *const w_l2[] = {"warm", "cold", NULL};
static const char *const w_inputs[] = {"resident", "fresh", NULL};
static const char *const w_keep[] = {"replay", "failing", "all", NULL};
static const char *const w_dtype[] = {"f32", "f16", "bf16", "f64", "i32", "i8", "e4m3", "e5m2", NULL};
static const char *const w_role[] = {"baseline", "candidate", "control", "reference", NULL};
static const char *const w_rule[] = {"interval", "classic", NULL};
static const char *const w_gate_cases[] = {"primary", "all", NULL};
static const char *const w_mult[] = {"holm", "maxt", "none", NULL};
static const char *const w_precision[] = {"dtype", "tf32", "f16acc", "bf16acc", NULL};
static const char *const w_fake_tails[] = {"normal", "t3", NULL};
static const char *const w_devices[] = {"same", "any", NULL};
static const char *const w_shard[] = {"auto", "case", "process", NULL};
static const char *const w_onoff[] = {"on", "off", NULL};

/* K_ENUM fields are C enums stored through an int. */
_Static_assert(sizeof(kg_dtype) == sizeof(int), "enum size");
_Static_assert(sizeof(kg_role) == sizeof(int), "enum size");
_Static_assert(sizeof(kg_interleave) == sizeof(int), "enum size");
_Static_assert(sizeof(kg_gate_rule) == sizeof(int), "enum size");
_Static_assert(sizeof(kg_l2_mode) == sizeof(int), "enum size");
_Static_assert(sizeof(kg_inputs_mode) == sizeof(int), "enum size");
_Static_assert(sizeof(kg_precision) == sizeof(int), "enum size");

#define FIELD(type, f) offsetof(type, f), sizeof(((type *)0)->f)
#define CAMP(f) FIELD(kg_campaign, f)
#define CASE(f) FIELD(kg_case, f)
#define ARM(f) FIELD(kg_arm, f)
#define GATE(f) FIELD(kg_gate, f)
#define IMAX ((double)INT_MAX)
#define DIM_MAX 4611686018427387904.0 /* 2^62 */
/* upper bounds that keep a campaign finite (each well above any useful plan) */
#define KG_PLAN_MAX_DEVICE 4095
#define KG_PLAN_MAX_WARMUP 100000
#define KG_PLAN_MAX_SAMPLES 100000
#define KG_PLAN_MAX_ROUNDS 10000
#define KG_PLAN_MAX_PACK 100000
#define KG_PLAN_MAX_WAIT_S 604800.0 /* a week */

const plan_key plan_keys[] = {
    /* [campaign] */
    {SEC_CAMPAIGN, "name", K_NAME, CAMP(name), 0, 0, F_DERIVED, NULL, NULL,
     "1-63 letters, digits, '_', '.', '-'; defaults to the plan file's stem"},
    {SEC_CAMPAIGN, "backend", K_WORD, CAMP(backend), 0, 0, 0, "auto", kg_plan_backends,
     "auto, cpu, fake or cuda"},
    {SEC_CAMPAIGN, "device", K_INT, CAMP(device), 0, KG_PLAN_MAX_DEVICE, 0, "0", NULL,
     "a device ordinal, an integer in [0, 4095]"},
    {SEC_CAMPAIGN, "warmup", K_INT, CAMP(warmup), 0, KG_PLAN_MAX_WARMUP, 0, "3", NULL,
     "untimed executions per arm per round, an integer in [0, 100000]"},
    {SEC_CAMPAIGN, "samples", K_INT, CAMP(samples), 1, KG_PLAN_MAX_SAMPLES, 0, "10", NULL,
     "timed executions per arm per round, an integer in [1, 100000]"},
    {SEC_CAMPAIGN, "rounds", K_INT, CAMP(rounds), 1, KG_PLAN_MAX_ROUNDS, 0, "5", NULL,
     "rounds per case per process, an integer in [1, 10000]"},
    {SEC_CAMPAIGN, "processes", K_INT, CAMP(processes), 1, KG_PLAN_MAX_PROCESSES, 0, "2", NULL,
     "processes per direction, an integer in [1, 10000]"},
    {SEC_CAMPAIGN, "pack", K_INT, CAMP(pack), 1, KG_PLAN_MAX_PACK, 0, "1", NULL,
     "operations per timed sample, an integer in [1, 100000]"},
    {SEC_CAMPAIGN, "interleave", K_ENUM, CAMP(interleave), 0, 0, 0, "sample", w_interleave,
     "sample or block"},
    {SEC_CAMPAIGN, "seed", K_U64, CAMP(seed), 0, 0, 0, "1", NULL,
     "an unsigned 64-bit decimal integer"},
    {SEC_CAMPAIGN, "alpha", K_FRAC, CAMP(alpha), 0, 0.5, F_LO_OPEN | F_HI_OPEN, "0.05", NULL,
     "a fraction strictly between 0 and 0.5, e.g. 0.05 or 5%"},
    {SEC_CAMPAIGN, "margin", K_FRAC, CAMP(margin), 0, 1, F_HI_OPEN, "0.005", NULL,
     "a fraction in [0, 1), e.g. 0.02 or 2%"},
    {SEC_CAMPAIGN, "equivalence", K_FRAC, CAMP(equivalence), 0, 1, F_HI_OPEN, "0.01", NULL,
     "a fraction in [0, 1), e.g. 0.01 or 1%"},
    {SEC_CAMPAIGN, "control_margin", K_FRAC, CAMP(control_margin), 0, 1, F_HI_OPEN, "0.0025",
     NULL, "a fraction in [0, 1), e.g. 0.0025 or 0.25%"},
    {SEC_CAMPAIGN, "order_min", K_FRAC, CAMP(order_min), 0, 1, F_HI_OPEN, "0.0025", NULL,
     "a fraction in [0, 1), e.g. 0.0025 or 0.25%"},
    {SEC_CAMPAIGN, "timeout", K_REAL, CAMP(timeout_s), 1, KG_PLAN_MAX_WAIT_S, 0, "600", NULL,
     "seconds a process may run, a number in [1, 604800] (a week)"},
    {SEC_CAMPAIGN, "l2", K_ENUM, CAMP(l2), 0, 0, 0, "warm", w_l2, "warm or cold"},
    {SEC_CAMPAIGN, "inputs", K_ENUM, CAMP(inputs), 0, 0, 0, "fresh", w_inputs,
     "resident or fresh"},
    {SEC_CAMPAIGN, "keep_outputs", K_ENUM, CAMP(keep_outputs), 0, 0, F_QUIET, "replay", w_keep,
     "replay, failing or all"},
    {SEC_CAMPAIGN, "rotate", K_INT, CAMP(rotate), 1, KG_PLAN_MAX_ROTATE, 0, "1", NULL,
     "input sets rotated between samples, an integer in [1, 16]"},
    {SEC_CAMPAIGN, "quiet", K_REAL, CAMP(quiet_s), 0, 86400, 0, "30", NULL,
     "seconds of quiet host before a process, a number in [0, 86400] (a day)"},
    {SEC_CAMPAIGN, "forbid", K_LIST, CAMP(forbid), 0, 0, 0, NULL, NULL,
     "comma-separated process names, e.g. cc1,nvcc,ptxas"},
    {SEC_CAMPAIGN, "max_load", K_REAL, CAMP(max_load), 0, 1e6, 0, "0", NULL,
     "a 1-minute load average bound, a number >= 0 (0: none)"},
    {SEC_CAMPAIGN, "repeats", K_INT, CAMP(repeats), 0, 100, 0, "3", NULL,
     "repeats of a contaminated process, an integer in [0, 100]"},
    {SEC_CAMPAIGN, "quiet_timeout", K_REAL, CAMP(quiet_timeout_s), 1, KG_PLAN_MAX_WAIT_S, F_QUIET, "600", NULL,
     "seconds a process waits for a quiet host before it counts as contaminated, a number in [1, 604800]"},
    {SEC_CAMPAIGN, "quiet_budget", K_REAL, CAMP(quiet_budget_s), 0, KG_PLAN_MAX_WAIT_S, F_QUIET, "120", NULL,
     "seconds the whole campaign may wait for a quiet host, over all its processes, before it stops INVALID, a "
     "number in [0, 604800] (0: no budget)"},
    {SEC_CAMPAIGN, "max_steal", K_FRAC, CAMP(max_steal), 0, 1, F_QUIET, "0.1", NULL,
     "steal time over a second, of the CPU time the host's work used or was owed, a fraction in [0, 1], e.g. 10% (0: not watched)"},
    {SEC_CAMPAIGN, "max_foreign_cpu", K_REAL, CAMP(max_foreign_cpu), 0, 1e6, F_QUIET, "0", NULL,
     "cores used over a second by processes that are not kgate's that contaminate a process, a number >= 0 (0: "
     "measured and recorded, not judged)"},
    {SEC_CAMPAIGN, "max_freq_change", K_FRAC, CAMP(max_freq_change), 0, 1, F_QUIET, "0.15", NULL,
     "fall of the fastest core's clock during a process, a fraction in [0, 1], e.g. 15% (0: not watched)"},
    {SEC_CAMPAIGN, "warm", K_REAL, CAMP(warm_s), 0, 600, F_QUIET, "5", NULL,
     "seconds at most spent warming the device to a steady clock before the first process, a number in [0, 600]"},
    {SEC_CAMPAIGN, "overlap", K_BOOL, CAMP(overlap), 0, 0, F_QUIET, "yes", NULL,
     "yes or no: the next worker loads, binds and checks while the current one runs its checks after its last timed phase"},
    {SEC_CAMPAIGN, "devices", K_ENUM, CAMP(devices_any), 0, 0, F_QUIET, "same", w_devices,
     "same or any: whether the shards of a campaign (kgate merge) must run on one device model (docs/scale-out.md)"},
    {SEC_CAMPAIGN, "shard", K_ENUM, CAMP(shard_by), 0, 0, F_QUIET, "auto", w_shard,
     "auto, case or process: what --shard I/N deals to the shards, whole cases or whole processes (auto: "
     "processes when the plan has fewer cases than shards; docs/scale-out.md)"},
    {SEC_CAMPAIGN, "bound_audit", K_ENUM, CAMP(bound_audit_off), 0, 0, F_QUIET, "on", w_onoff,
     "on or off: off gates on an op whose bound admits errors no correct kernel makes, and every report says "
     "its bound was not audited (docs/ops.md, \"The bound audit\")"},
    {SEC_CAMPAIGN, "looks", K_INT, CAMP(looks), 1, KG_PLAN_MAX_LOOKS, 0, "1", NULL,
     "analyses of a group-sequential design, an integer in [1, 4] dividing processes (1: a fixed design)"},
    {SEC_CAMPAIGN, "selected_from", K_TEXT, CAMP(selected_from), 0, 0, 0, NULL, NULL,
     "free text: the screen this plan's candidates were selected from (kgate screen writes it)"},
    {SEC_CAMPAIGN, "screen", K_BOOL, CAMP(screen), 0, 0, F_QUIET, "no", NULL,
     "yes or no: a screen's exploration plan (kgate screen): its processes need not complete the load-order square "
     "(a slot effect may move its ranking, never a claim: the confirmation plan completes the square)"},
    {SEC_CAMPAIGN, "smoke", K_BOOL, CAMP(smoke), 0, 0, F_QUIET, "no", NULL,
     "yes or no: a smoke run's plan (kgate run --smoke writes it: a few samples, no verdict)"},
    {SEC_CAMPAIGN, "reference", K_NAME, CAMP(reference), 0, 0, F_REF, NULL, NULL,
     "the name of a baseline arm: every candidate's contrast is against it (without it, against every baseline)"},

    /* [case NAME] */
    {SEC_CASE, "op", K_NAME, CASE(op), 0, 0, F_REQ, NULL, NULL, "an op name, e.g. gemm_bt"},
    {SEC_CASE, "dtype", K_ENUM, CASE(dtype), 0, 0, F_REQ | F_AXIS, NULL, w_dtype, "f32, f16, bf16, f64, i32, i8, e4m3 or e5m2"},
    {SEC_CASE, "M", K_I64, CASE(M), 1, DIM_MAX, F_UNSET | F_AXIS, NULL, NULL, "an integer >= 1"},
    {SEC_CASE, "N", K_I64, CASE(N), 1, DIM_MAX, F_UNSET | F_AXIS, NULL, NULL, "an integer >= 1"},
    {SEC_CASE, "K", K_I64, CASE(K), 1, DIM_MAX, F_UNSET | F_AXIS, NULL, NULL, "an integer >= 1"},
    {SEC_CASE, "splits", K_I64, CASE(splits), 1, DIM_MAX, F_UNSET | F_AXIS, NULL, NULL,
     "a split-K factor, an integer >= 1"},
    {SEC_CASE, "eps", K_REAL, CASE(eps), 0, 1e9, F_LO_OPEN | F_AXIS, "1e-05", NULL, "a number > 0"},
    {SEC_CASE, "scale", K_REAL, CASE(scale), 0, 1e9, F_LO_OPEN | F_AXIS, "1", NULL, "a number > 0"},
    {SEC_CASE, "primary", K_BOOL, CASE(primary), 0, 0, 0, "yes", NULL,
     "yes/no/true/false/1/0"},

    /* [arm NAME] */
    {SEC_ARM, "op", K_NAME, ARM(op), 0, 0, F_REQ, NULL, NULL, "an op name, e.g. gemm_bt"},
    {SEC_ARM, "role", K_ENUM, ARM(role), 0, 0, 0, "candidate", w_role,
     "baseline, candidate, control or reference"},
    {SEC_ARM, "of", K_NAME, ARM(of), 0, 0, F_REF, NULL, NULL, "the name of a baseline arm"},
    {SEC_ARM, "source", K_TEXT, ARM(source), 0, 0, F_INHERIT, NULL, NULL,
     "a kernel source path, relative to the plan's folder"},
    {SEC_ARM, "image", K_TEXT, ARM(image), 0, 0, F_INHERIT, NULL, NULL,
     "a precompiled kernel path, relative to the plan's folder: .so (cpu), .cubin, .ptx or .fatbin (cuda)"},
    {SEC_ARM, "builtin", K_NAME, ARM(builtin), 0, 0, F_INHERIT, NULL, NULL,
     "a built-in arm name: cublas, torch or numpy"},
    {SEC_ARM, "call", K_TEXT, ARM(call), 0, 0, F_INHERIT | F_QUIET, NULL, NULL,
     "the library call of a builtin = torch or numpy arm: a name from the op's table, or python:FILE:FUNCTION "
     "(docs/library-arms.md)"},
    {SEC_ARM, "call_sha256", K_TEXT, ARM(call_sha256), 0, 0, F_INHERIT | F_QUIET, NULL, NULL,
     "the SHA-256 of a python: call's file, 64 lowercase hex digits (kgate writes it; leave it out)"},
    {SEC_ARM, "compile", K_BOOL, ARM(compile), 0, 0, F_INHERIT | F_QUIET, "no", NULL,
     "yes/no: a builtin = torch arm's call through torch.compile, with a fresh cache per case"},
    {SEC_ARM, "entry", K_IDENT, ARM(entry), 0, 0, F_INHERIT | F_AXIS, "kernel", NULL,
     "a C identifier"},
    {SEC_ARM, "defines", K_TEXT, ARM(defines), 0, 0, F_INHERIT | F_AXIS, NULL, NULL,
     "NAME=VALUE NAME2 ..."},
    {SEC_ARM, "cflags", K_TEXT, ARM(cflags), 0, 0, F_INHERIT | F_AXIS, NULL, NULL,
     "extra compiler flags"},
    {SEC_ARM, "cases", K_LIST, ARM(cases), 0, 0, 0, NULL, NULL,
     "comma-separated case names"},
    {SEC_ARM, "grid", K_TEXT, ARM(grid), 0, 0, F_INHERIT | F_AXIS, NULL, NULL,
     "a grid expression over the case variables"},
    {SEC_ARM, "block", K_TEXT, ARM(block), 0, 0, F_INHERIT | F_AXIS, NULL, NULL,
     "a block expression over the case variables"},
    {SEC_ARM, "shared", K_TEXT, ARM(shared), 0, 0, F_INHERIT | F_AXIS, NULL, NULL,
     "a dynamic shared bytes expression"},
    {SEC_ARM, "args", K_TEXT, ARM(args), 0, 0, F_INHERIT | F_AXIS, NULL, NULL,
     "argument names from the op's vocabulary"},
    {SEC_ARM, "entry2", K_IDENT, ARM(extra[0].entry), 0, 0, F_INHERIT | F_AXIS, NULL, NULL,
     "the entry of launch 2 of the chain (a C identifier)"},
    {SEC_ARM, "grid2", K_TEXT, ARM(extra[0].grid), 0, 0, F_INHERIT | F_AXIS, NULL, NULL,
     "the grid expression of launch 2"},
    {SEC_ARM, "block2", K_TEXT, ARM(extra[0].block), 0, 0, F_INHERIT | F_AXIS, NULL, NULL,
     "the block expression of launch 2"},
    {SEC_ARM, "shared2", K_TEXT, ARM(extra[0].shared), 0, 0, F_INHERIT | F_AXIS, NULL, NULL,
     "the dynamic shared bytes of launch 2"},
    {SEC_ARM, "args2", K_TEXT, ARM(extra[0].args), 0, 0, F_INHERIT | F_AXIS, NULL, NULL,
     "the arguments of launch 2"},
    {SEC_ARM, "entry3", K_IDENT, ARM(extra[1].entry), 0, 0, F_INHERIT | F_AXIS, NULL, NULL,
     "the entry of launch 3 of the chain (a C identifier)"},
    {SEC_ARM, "grid3", K_TEXT, ARM(extra[1].grid), 0, 0, F_INHERIT | F_AXIS, NULL, NULL,
     "the grid expression of launch 3"},
    {SEC_ARM, "block3", K_TEXT, ARM(extra[1].block), 0, 0, F_INHERIT | F_AXIS, NULL, NULL,
     "the block expression of launch 3"},
    {SEC_ARM, "shared3", K_TEXT, ARM(extra[1].shared), 0, 0, F_INHERIT | F_AXIS, NULL, NULL,
     "the dynamic shared bytes of launch 3"},
    {SEC_ARM, "args3", K_TEXT, ARM(extra[1].args), 0, 0, F_INHERIT | F_AXIS, NULL, NULL,
     "the arguments of launch 3"},
    {SEC_ARM, "parity", K_NAME, ARM(parity), 0, 0, F_REF, NULL, NULL,
     "the name of another arm of the same op"},
    {SEC_ARM, "trusted", K_BOOL, ARM(trusted), 0, 0, F_INHERIT, "no", NULL, "yes/no/true/false/1/0"},
    {SEC_ARM, "specialize", K_BOOL, ARM(specialize), 0, 0, F_INHERIT | F_QUIET | F_AXIS, "no", NULL,
     "yes/no: a CUDA arm compiled per case, its variables defined as KG_VAR_NAME"},
    {SEC_ARM, "requires", K_TEXT, ARM(requires), 0, 0, F_INHERIT, NULL, NULL,
     "conditions over the case variables, e.g. K % 16 == 0, N % 64 == 0"},
    {SEC_ARM, "precision", K_ENUM, ARM(contract.precision), 0, 0, F_INHERIT | F_QUIET | F_AXIS, "dtype",
     w_precision, "dtype, tf32, f16acc or bf16acc"},
    {SEC_ARM, "tolerance", K_REAL, ARM(contract.tolerance), 0, 1, F_INHERIT | F_QUIET | F_AXIS, "0", NULL,
     "a number in [0, 1]: the largest error relative to the row scale (0: none)"},
    {SEC_ARM, "fake_ns", K_REAL, ARM(fake_ns), 0.001, 1e12, F_AXIS, "1000", NULL,
     "nanoseconds, a number in [0.001, 1e12]"},
    {SEC_ARM, "fake_noise", K_REAL, ARM(fake_noise), 0, 10, F_AXIS, "0.01", NULL,
     "a lognormal sigma, a number in [0, 10]"},
    {SEC_ARM, "fake_drift", K_REAL, ARM(fake_drift), -10, 10, F_AXIS, "0", NULL,
     "a log-time change per round, a number in [-10, 10]"},
    {SEC_ARM, "fake_first", K_REAL, ARM(fake_first), -10, 10, F_AXIS, "0", NULL,
     "a log-time penalty, a number in [-10, 10]"},
    {SEC_ARM, "fake_proc_sd", K_REAL, ARM(fake_proc_sd), -1, 10, F_QUIET | F_AXIS, "-1", NULL,
     "the SD of the arm x process log-time effect, a number in [0, 10], or -1 for fake_noise / 4"},
    {SEC_ARM, "fake_round_sd", K_REAL, ARM(fake_round_sd), 0, 10, F_QUIET | F_AXIS, "0", NULL,
     "the SD of the arm x round log-time effect, a number in [0, 10]"},
    {SEC_ARM, "fake_outliers", K_FRAC, ARM(fake_outliers), 0, 1, F_QUIET | F_AXIS, "0", NULL,
     "the fraction of samples with an outlier, in [0, 1], e.g. 0.01 or 1%"},
    {SEC_ARM, "fake_outlier_scale", K_REAL, ARM(fake_outlier_scale), 0, 10, F_QUIET | F_AXIS, "0", NULL,
     "the mean log-time excess of an outlier (exponential), a number in [0, 10]"},
    {SEC_ARM, "fake_tails", K_ENUM, ARM(fake_tails), 0, 0, F_QUIET | F_AXIS, "normal", w_fake_tails,
     "normal or t3"},
    {SEC_ARM, "fake_slot", K_REAL, ARM(fake_slot), -10, 10, F_QUIET | F_AXIS, "0", NULL,
     "a log-time effect when the arm is loaded first in its process, a number in [-10, 10]"},
    {SEC_ARM, "fake_slot_linear", K_REAL, ARM(fake_slot_linear), -10, 10, F_QUIET | F_AXIS, "0", NULL,
     "a log-time effect per load slot, a number in [-10, 10]"},
    {SEC_ARM, "fake_place", K_REAL, ARM(fake_place), 0, 10, F_QUIET | F_AXIS, "0", NULL,
     "the SD of a per-(arm, process) placement log-time offset, a number in [0, 10]"},
    {SEC_ARM, "fake_offset", K_REAL, ARM(fake_offset), -10, 10, F_QUIET | F_AXIS, "0", NULL,
     "a fixed log-time offset, a number in [-10, 10]"},
    {SEC_ARM, "fake_crash", K_INT, ARM(fake_crash), -1, IMAX, F_AXIS, "-1", NULL,
     "a process index, or -1 for none"},
    {SEC_ARM, "fake_hang", K_INT, ARM(fake_hang), -1, IMAX, F_AXIS, "-1", NULL,
     "a process index, or -1 for none"},
    {SEC_ARM, "fake_fault", K_INT, ARM(fake_fault), -1, IMAX, F_UNSET | F_AXIS, NULL, NULL,
     "a process index: the arm's first timed call there fails as the arm's own fault (KG_EARM)"},
    {SEC_ARM, "fake_refuse", K_INT, ARM(fake_refuse), -1, IMAX, F_UNSET | F_AXIS, NULL, NULL,
     "a case index (0 = the plan's first case): the device refuses the arm's launch there (KG_EINADMISSIBLE)"},
    {SEC_ARM, "fake_wrong", K_BOOL, ARM(fake_wrong), 0, 0, F_AXIS, "no", NULL,
     "yes/no/true/false/1/0"},

    /* [gate] */
    {SEC_GATE, "rule", K_ENUM, GATE(rule), 0, 0, 0, "interval", w_rule, "interval or classic"},
    {SEC_GATE, "min_reduction", K_FRAC, GATE(min_reduction), 0, 1, F_HI_OPEN | F_DERIVED, NULL,
     NULL, "a fraction in [0, 1), e.g. 0.1 or 10%; defaults to the campaign's margin"},
    {SEC_GATE, "cases", K_ENUM, GATE(all_cases), 0, 0, 0, "primary", w_gate_cases,
     "primary or all"},
    {SEC_GATE, "multiplicity", K_ENUM, GATE(multiplicity), 0, 0, 0, "holm", w_mult,
     "holm, maxt or none: how the FASTER verdicts of the candidates on the gated cases share alpha"},
    {SEC_GATE, "require_order", K_BOOL, GATE(require_order), 0, 0, 0, "yes", NULL,
     "yes/no/true/false/1/0"},
    {SEC_GATE, "require_control", K_BOOL, GATE(require_control), 0, 0, 0, "yes", NULL,
     "yes/no/true/false/1/0"},
    {SEC_GATE, "same_precision", K_BOOL, GATE(same_precision), 0, 0, F_QUIET, "yes", NULL,
     "yes/no/true/false/1/0"},
    {SEC_GATE, "require_negative", K_BOOL, GATE(require_negative), 0, 0, F_QUIET, "no", NULL,
     "yes/no/true/false/1/0: every gated candidate must be a source arm, whose numerical negative kgate can build"},
};

const int plan_nkeys = (int)(sizeof plan_keys / sizeof plan_keys[0]);
_Static_assert(sizeof plan_keys / sizeof plan_keys[0] <= KEYS_CAP, "KEYS_CAP too small");

void *plan_field_ptr(void *base, const plan_key *k) { return (char *)base + k->off; }
const void *plan_field_cptr(const void *base, const plan_key *k)
{
    return (const char *)base + k->off;
}

void *plan_section_base(plan_ctx *ctx, int sec, int idx)
{
    switch (sec) {
    case SEC_CAMPAIGN: return &ctx->plan->campaign;
    case SEC_GATE: return &ctx->plan->gate;
    case SEC_CASE: return &ctx->plan->cases[idx];
    case SEC_ARM: return &ctx->plan->arms[idx];
    default: return NULL;
    }
}

key_lines *plan_section_lines(plan_ctx *ctx, int sec, int idx)
{
    switch (sec) {
    case SEC_CAMPAIGN: return &ctx->camp_lines;
    case SEC_GATE: return &ctx->gate_lines;
    case SEC_CASE: return &ctx->case_lines[idx];
    case SEC_ARM: return &ctx->arm_lines[idx];
    default: return NULL;
    }
}

int plan_key_index(int sec, const char *key)
{
    for (int i = 0; i < plan_nkeys; i++)
        if (plan_keys[i].sec == sec && strcmp(plan_keys[i].key, key) == 0) return i;
    return -1;
}

static int parse_i64(const char *s, long long *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (end == s || *end != '\0' || errno == ERANGE || isspace((unsigned char)s[0])) return -1;
    *out = v;
    return 0;
}

static int parse_u64(const char *s, uint64_t *out)
{
    char *end;
    if (!isdigit((unsigned char)s[0]) && s[0] != '+') return -1; /* strtoull wraps "-1" */
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (end == s || *end != '\0' || errno == ERANGE) return -1;
    *out = (uint64_t)v;
    return 0;
}

static int parse_real(const char *s, double *out)
{
    char *end;
    if (isspace((unsigned char)s[0])) return -1;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end != '\0' || !isfinite(v) || (errno == ERANGE && fabs(v) > 1.0)) return -1;
    *out = v;
    return 0;
}

/* "0.02" or "2%".  A plain decimal percentage is read as "2e-2", so that
 * "0.1%" gives the double nearest 0.001, not 0.1/100. */
static int parse_frac(const char *s, double *out)
{
    size_t n = strlen(s);
    if (n == 0 || s[n - 1] != '%') return parse_real(s, out);
    char buf[96];
    if (n - 1 == 0 || n - 1 > 64) return -1;
    memcpy(buf, s, n - 1);
    buf[n - 1] = '\0';
    if (strpbrk(buf, "eExXpPnNiI") == NULL) {
        memcpy(buf + n - 1, "e-2", 4);
        return parse_real(buf, out);
    }
    double v;
    if (parse_real(buf, &v) != 0) return -1;
    *out = v / 100.0;
    return 0;
}

static int parse_bool(const char *s, int *out)
{
    if (!strcmp(s, "yes") || !strcmp(s, "true") || !strcmp(s, "1")) { *out = 1; return 0; }
    if (!strcmp(s, "no") || !strcmp(s, "false") || !strcmp(s, "0")) { *out = 0; return 0; }
    return -1;
}

static int word_index(const char *const *words, const char *s)
{
    for (int i = 0; words[i]; i++)
        if (strcmp(words[i], s) == 0) return i;
    return -1;
}

/* "[1, 604800]", "(0, 1e+09]": the bounds of k, for messages. */
static void bounds_text(const plan_key *k, char *buf, size_t cap)
{
    snprintf(buf, cap, "%c%.15g, %.15g%c", k->flags & F_LO_OPEN ? '(' : '[', k->lo, k->hi,
             k->flags & F_HI_OPEN ? ')' : ']');
}

static int in_bounds(const plan_key *k, double v)
{
    if (k->flags & F_LO_OPEN ? !(v > k->lo) : !(v >= k->lo)) return 0;
    if (k->flags & F_HI_OPEN ? !(v < k->hi) : !(v <= k->hi)) return 0;
    return 1;
}

/* A value out of key k's bounds; the bounds are named unless its help
 * names them already. */
static int perr_range(plan_ctx *ctx, const plan_key *k, const char *value, int line)
{
    char b[80];
    bounds_text(k, b, sizeof b);
    int named = strstr(k->help, b) != NULL;
    plan_perr(ctx, line, "value out of range", value, strlen(value), "%s: %s%s%s", k->key, k->help,
              named ? "" : "; allowed: ", named ? "" : b);
    return -1;
}

static int set_integer(plan_ctx *ctx, const plan_key *k, void *f, const char *value, int line)
{
    if (k->kind == K_U64) {
        uint64_t v;
        if (parse_u64(value, &v) != 0) goto bad;
        memcpy(f, &v, sizeof v);
        return 0;
    }
    long long v;
    if (parse_i64(value, &v) != 0) goto bad;
    if (!in_bounds(k, (double)v)) return perr_range(ctx, k, value, line);
    if (k->kind == K_INT) {
        int iv = (int)v;
        memcpy(f, &iv, sizeof iv);
    } else {
        int64_t iv = (int64_t)v;
        memcpy(f, &iv, sizeof iv);
    }
    return 0;
bad:
    plan_perr(ctx, line, "bad integer", value, strlen(value), "%s: %s", k->key, k->help);
    return -1;
}

static int set_real(plan_ctx *ctx, const plan_key *k, void *f, const char *value, int line)
{
    double v;
    size_t vlen = strlen(value);
    if ((k->kind == K_FRAC ? parse_frac(value, &v) : parse_real(value, &v)) != 0) {
        plan_perr(ctx, line, "bad number", value, vlen, "%s: %s", k->key, k->help);
        return -1;
    }
    if (fpclassify(v) == FP_SUBNORMAL) {
        plan_perr(ctx, line, "subnormal number", value, vlen, "%s: %s; a number this close to 0 is refused", k->key,
                  k->help);
        return -1;
    }
    if (!in_bounds(k, v)) return perr_range(ctx, k, value, line);
    memcpy(f, &v, sizeof v);
    return 0;
}

/* K_BOOL, K_ENUM and K_WORD: one of a list of words. */
static int set_word(plan_ctx *ctx, const plan_key *k, void *f, const char *value, int line)
{
    int v = -1;
    if (k->kind != K_BOOL) v = word_index(k->words, value);
    else if (parse_bool(value, &v) != 0) v = -1;
    if (v < 0) {
        plan_perr(ctx, line, k->kind == K_BOOL ? "bad boolean" : "unknown value", value, strlen(value), "%s: %s",
                  k->key, k->help);
        return -1;
    }
    if (k->kind == K_WORD) snprintf(f, k->size, "%s", value);
    else memcpy(f, &v, sizeof v);
    return 0;
}

static int set_text(plan_ctx *ctx, const plan_key *k, void *f, const char *value, int line)
{
    size_t vlen = strlen(value);
    int ok = k->kind == K_NAME ? (k->flags & F_REF ? plan_any_name_ok(value, vlen) : plan_simple_name_ok(value, vlen))
           : k->kind == K_IDENT ? plan_ident_ok(value)
           : vlen < k->size;
    if (!ok) {
        plan_perr(ctx, line, k->kind == K_TEXT ? "value too long" : "bad name", value, vlen, "%s: %s", k->key, k->help);
        return -1;
    }
    snprintf(f, k->size, "%s", value);
    return 0;
}

/* A list of names, normalised to "a,b" so that spacing does not change
 * the hash. */
static int set_list(plan_ctx *ctx, const plan_key *k, char *out, const char *value, int line)
{
    size_t o = 0;
    const char *p = value;
    for (;;) {
        const char *e = p + plan_list_item(p);
        const char *comma = *e == ',' ? e : NULL;
        while (p < e && isspace((unsigned char)*p)) p++;
        const char *q = e;
        while (q > p && isspace((unsigned char)q[-1])) q--;
        if (!plan_any_name_ok(p, (size_t)(q - p))) {
            plan_perr(ctx, line, "bad name in list", p, (size_t)(q - p),
                      "%s: %s, each 1-63 letters, digits, '_', '.', '-'", k->key, k->help);
            return -1;
        }
        if (o + (size_t)(q - p) + 2 > k->size) {
            plan_perr(ctx, line, "value too long", value, strlen(value), "%s: %s", k->key, k->help);
            return -1;
        }
        if (o > 0) out[o++] = ',';
        memcpy(out + o, p, (size_t)(q - p));
        o += (size_t)(q - p);
        out[o] = '\0';
        if (!comma) break;
        p = comma + 1;
    }
    return 0;
}

int plan_set_value(plan_ctx *ctx, const plan_key *k, void *base, const char *value, int line)
{
    void *f = plan_field_ptr(base, k);
    switch (k->kind) {
    case K_INT: case K_I64: case K_U64: return set_integer(ctx, k, f, value, line);
    case K_REAL: case K_FRAC: return set_real(ctx, k, f, value, line);
    case K_BOOL: case K_ENUM: case K_WORD: return set_word(ctx, k, f, value, line);
    case K_NAME: case K_IDENT: case K_TEXT: return set_text(ctx, k, f, value, line);
    case K_LIST: return set_list(ctx, k, f, value, line);
    default: break;
    }
    plan_perr(ctx, line, "internal error: unknown key kind", k->key, strlen(k->key), "report this");
    ctx->code = KG_EINTERNAL;
    return -1;
}

/* Fills a section's struct with the table's defaults. */
void plan_apply_defaults(plan_ctx *ctx, int sec, void *base)
{
    for (int i = 0; i < plan_nkeys; i++) {
        const plan_key *k = &plan_keys[i];
        if (k->sec != sec) continue;
        if (k->flags & F_UNSET) {
            if (k->kind == K_I64) {
                int64_t v = -1;
                memcpy(plan_field_ptr(base, k), &v, sizeof v);
            } else {
                int v = -1;
                memcpy(plan_field_ptr(base, k), &v, sizeof v);
            }
        } else if (k->def != NULL) {
            if (plan_set_value(ctx, k, base, k->def, 0) != 0) ctx->code = KG_EINTERNAL;
        }
    }
}

/* A name a case variable may have: a letter or '_', then letters, digits
 * and '_', at most KG_VAR_NAME_MAX - 1 characters. */
int plan_var_name_ok(const char *n)
{
    size_t l = strlen(n);
    if (l == 0 || l >= KG_VAR_NAME_MAX || !(isalpha((unsigned char)n[0]) || n[0] == '_')) return 0;
    for (size_t i = 1; i < l; i++)
        if (!(isalnum((unsigned char)n[i]) || n[i] == '_')) return 0;
    return 1;
}

/* Sets variable x (its name already set) from its text v: an integer, a
 * real or yes/no.  Returns 0, or -1 with a message in ctx. */
int plan_set_var_value(plan_ctx *ctx, kg_var *x, const char *v, int line, const char *ltext, size_t llen)
{
    size_t vl = strlen(v);
    if (vl == 0 || vl >= sizeof x->text) {
        plan_perr(ctx, line, vl == 0 ? "missing value" : "value too long", ltext, llen,
             "an op variable is an integer, a real or yes/no, e.g. S = 1024");
        return -1;
    }
    snprintf(x->text, sizeof x->text, "%s", v);
    x->i = 0;
    x->r = 0;
    char *end = NULL;
    errno = 0;
    long long ll = strtoll(v, &end, 10);
    if (end != v && *end == '\0' && errno == 0) {
        x->type = KG_VAR_INT;
        x->i = ll;
        x->r = (double)ll;
    } else if (strcmp(v, "yes") == 0 || strcmp(v, "true") == 0 || strcmp(v, "no") == 0 || strcmp(v, "false") == 0) {
        x->type = KG_VAR_BOOL;
        x->i = v[0] == 'y' || v[0] == 't';
        x->r = (double)x->i;
    } else {
        errno = 0;
        double r = strtod(v, &end);
        if (end == v || *end != '\0' || errno != 0 || !isfinite(r)) {
            plan_perr(ctx, line, "bad value", ltext, llen,
                 "op variable '%s': an integer, a real or yes/no, e.g. %s = 1024", x->name, x->name);
            return -1;
        }
        x->type = KG_VAR_REAL;
        x->r = r;
    }
    return 0;
}

/* The shortest %g text that reads back as exactly v, without an exponent
 * for numbers from 1 to 1e17 ("2000", not "2e+03"). */
void plan_format_real(double v, char *out, size_t cap)
{
    int int_digits = 0;
    if (fabs(v) >= 1.0 && fabs(v) < 1e17) int_digits = (int)floor(log10(fabs(v))) + 1;
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(out, cap, "%.*g", prec > int_digits ? prec : int_digits, v);
        if (strtod(out, NULL) == v) return;
    }
}

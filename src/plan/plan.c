/* plan.c: campaign plans (see kgate/plan.h): INI parsing through libinih,
 * the plan's own consistency rules, defaults, the canonical form and its
 * SHA-256.
 *
 * Every key of every section is one row of plan_keys[]: its name, kind,
 * field, bounds, default and the help shown in messages.  Parsing,
 * defaults, the canonical writer and the "unknown key" message all walk
 * that table, so a new key is one row (plus its struct field).
 *
 * Lines reach libinih through our own reader (ini_parse_stream).  The
 * reader counts lines, so every message has the right line whatever the
 * libinih build; it takes section headers itself (libinih truncates long
 * section names and never reports empty sections); it strips leading
 * blanks so that no line becomes a libinih continuation line; and it
 * refuses lines that libinih would split.
 *
 * Not here: ops and backends.  Whether an op exists, which shape variables
 * it needs, and whether a backend can run an arm are checked against the
 * op registry by kg_plan_check_ops (kgate/op.h, src/ops/ops.c). */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <ini.h>

#include "kgate/backend.h"
#include "kgate/plan.h"
#include "plan/expr.h"
#include "base/util.h"

/* The longest line accepted.  libinih's line buffer is 200 bytes in the
 * Debian build; a longer line would reach the handler in pieces. */
#define PLAN_LINE_MAX 196
/* The longest value: "key = value" of the canonical form must itself fit
 * in PLAN_LINE_MAX whatever spacing the author used. */
#define PLAN_VALUE_MAX 160
#define PLAN_FILE_MAX_BYTES (16u << 20)
#define PLAN_SECTIONS_MAX 4096
#define PLAN_SHOW_MAX 80 /* offending text shown in a message */
/* Axes (docs/plan-format.md, "Axes"): a section's {a, b} lists expand it
 * into the Cartesian product of their values. */
#define PLAN_AXES_MAX 8          /* axes in one section */
/* the key index an axis over the case's i-th op variable has (plan_axis.ki) */
#define AXIS_VAR(i) (-2 - (i))
#define AXIS_VAR_INDEX(ki) (-2 - (ki))
#define PLAN_AXIS_VALUES_MAX 64  /* values in one list */
#define PLAN_EXPAND_MAX 256      /* sections one section expands to */

enum { SEC_NONE = 0, SEC_CAMPAIGN, SEC_CASE, SEC_ARM, SEC_GATE, SEC_OP };
static const char *const sec_names[] = {"", "campaign", "case", "arm", "gate", "op"};

enum {
    K_INT,   /* int */
    K_I64,   /* int64_t */
    K_U64,   /* uint64_t, decimal */
    K_REAL,  /* double */
    K_FRAC,  /* double; "0.02" or "2%" */
    K_BOOL,  /* int 0/1 */
    K_ENUM,  /* int (or C enum): index into words */
    K_WORD,  /* char[]: one of words */
    K_NAME,  /* char[]: [A-Za-z0-9_.-]{1,63} */
    K_IDENT, /* char[]: a C identifier */
    K_TEXT,  /* char[]: free text */
    K_LIST   /* char[]: comma-separated names, stored as "a,b" */
};

enum {
    F_REQ = 1u << 0,      /* must be given */
    F_LO_OPEN = 1u << 1,  /* value > lo (else >= lo) */
    F_HI_OPEN = 1u << 2,  /* value < hi (else <= hi) */
    F_UNSET = 1u << 3,    /* -1 when not given, and left out of the canonical form */
    F_INHERIT = 1u << 4,  /* a control arm takes it from its `of` arm */
    F_DERIVED = 1u << 5,  /* default computed after parsing (see plan_defaults_late) */
    F_QUIET = 1u << 6,    /* left out of the canonical form while it holds its default, so that
                           * adding the key changed no existing plan's hash */
    F_AXIS = 1u << 7,     /* takes axes: {a, b} lists that expand the section (see "axes" below) */
    F_REF = 1u << 8       /* K_NAME naming an arm: an expanded name such as fma[SPLITS=4] is accepted */
};

typedef struct plan_key {
    int sec;
    const char *key;
    int kind;
    size_t off, size;
    double lo, hi;
    unsigned flags;
    const char *def;           /* default, written as a value; NULL: empty / see flags */
    const char *const *words;  /* K_ENUM, K_WORD: the accepted values, NULL-terminated */
    const char *help;          /* what a valid value looks like */
} plan_key;

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
#define KG_PLAN_MAX_PROCESSES 10000
#define KG_PLAN_MAX_PACK 100000
#define KG_PLAN_MAX_WAIT_S 604800.0 /* a week */

static const plan_key plan_keys[] = {
    /* [campaign] */
    {SEC_CAMPAIGN, "name", K_NAME, CAMP(name), 0, 0, F_DERIVED, NULL, NULL,
     "1-63 letters, digits, '_', '.', '-'; defaults to the plan file's stem"},
    {SEC_CAMPAIGN, "backend", K_WORD, CAMP(backend), 0, 0, 0, "auto", kg_backend_words,
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
    {SEC_CAMPAIGN, "max_steal", K_FRAC, CAMP(max_steal), 0, 1, F_QUIET, "0.1", NULL,
     "steal time over a second, of the CPU time the host's work used or was owed, a fraction in [0, 1], e.g. 10% (0: not watched)"},
    {SEC_CAMPAIGN, "max_foreign_cpu", K_REAL, CAMP(max_foreign_cpu), 0, 1e6, F_QUIET, "0.5", NULL,
     "cores used over a second by processes that are not kgate's, a number >= 0 (0: not watched)"},
    {SEC_CAMPAIGN, "max_freq_change", K_FRAC, CAMP(max_freq_change), 0, 1, F_QUIET, "0.15", NULL,
     "fall of the fastest core's clock during a process, a fraction in [0, 1], e.g. 15% (0: not watched)"},
    {SEC_CAMPAIGN, "warm", K_REAL, CAMP(warm_s), 0, 600, F_QUIET, "5", NULL,
     "seconds at most spent warming the device to a steady clock before the first process, a number in [0, 600]"},
    {SEC_CAMPAIGN, "overlap", K_BOOL, CAMP(overlap), 0, 0, F_QUIET, "yes", NULL,
     "yes or no: the next worker loads, binds and checks while the current one runs its checks after its last timed phase"},
    {SEC_CAMPAIGN, "devices", K_ENUM, CAMP(devices_any), 0, 0, F_QUIET, "same", w_devices,
     "same or any: whether the shards of a campaign (kgate merge) must run on one device model (docs/scale-out.md)"},
    {SEC_CAMPAIGN, "looks", K_INT, CAMP(looks), 1, KG_PLAN_MAX_LOOKS, 0, "1", NULL,
     "analyses of a group-sequential design, an integer in [1, 4] dividing processes (1: a fixed design)"},
    {SEC_CAMPAIGN, "selected_from", K_TEXT, CAMP(selected_from), 0, 0, 0, NULL, NULL,
     "free text: the screen this plan's candidates were selected from (kgate screen writes it)"},
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
    {SEC_ARM, "call", K_NAME, ARM(call), 0, 0, F_INHERIT | F_QUIET, NULL, NULL,
     "the library call of a builtin = torch or numpy arm, from the op's table (docs/library-arms.md)"},
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

#define PLAN_NKEYS ((int)(sizeof plan_keys / sizeof plan_keys[0]))
enum { KEYS_CAP = 112 };
_Static_assert(sizeof plan_keys / sizeof plan_keys[0] <= KEYS_CAP, "KEYS_CAP too small");

/* Line of each key given in one section (0: not given), indexed like plan_keys. */
typedef struct key_lines { int at[KEYS_CAP]; } key_lines;

/* One axis: the g-th {...} list in the value of key ki.  tmpl is that
 * value as written; value v is tmpl[vpos[v], vpos[v] + vlen[v]). */
typedef struct plan_axis {
    int ki, g, line;
    char name[KG_NAME_MAX];
    char tmpl[PLAN_LINE_MAX + 1];
    int nvalues;
    unsigned char vpos[PLAN_AXIS_VALUES_MAX], vlen[PLAN_AXIS_VALUES_MAX];
} plan_axis;

/* The axes of one [case] or [arm] section (its index as parsed). */
typedef struct sec_axes {
    int sec, idx, naxes;
    plan_axis ax[PLAN_AXES_MAX];
} sec_axes;

typedef struct plan_ctx {
    const char *text;
    size_t len, pos;
    const char *name;         /* file name used in messages */
    int lineno;               /* line the reader handed out last */
    int nsections;
    int sec, idx;             /* current section and case/arm index */
    kg_plan *plan;
    key_lines camp_lines, gate_lines;
    key_lines *case_lines, *arm_lines;
    int cases_cap, arms_cap;
    sec_axes **axes;          /* sections with axes, in file order */
    int naxsec, axsec_cap;
    int bracketed;            /* the current section's name is an expanded one, "x[A=1]" */
    /* first error: kept here, so that an earlier libinih syntax error can
     * still take its place once ini_parse_stream returns */
    int failed, code, eline;
    char emsg[KG_ERR_MSG_MAX];
} plan_ctx;

/* ---- messages ------------------------------------------------------ */

/* Copies text into out with non-printable bytes escaped, so that junk in
 * a plan never reaches a terminal raw. */
static void show_text(char *out, size_t cap, const char *text, size_t len)
{
    size_t o = 0;
    for (size_t i = 0; i < len && o + 5 < cap; i++) {
        unsigned char c = (unsigned char)text[i];
        if (o >= PLAN_SHOW_MAX) {
            memcpy(out + o, "...", 3);
            o += 3;
            break;
        }
        if (c >= 0x20 && c < 0x7f && c != '\\') {
            out[o++] = (char)c;
        } else {
            o += (size_t)snprintf(out + o, cap - o, "\\x%02x", c);
        }
    }
    out[o] = '\0';
}

__attribute__((format(printf, 6, 7)))
static void perr(plan_ctx *ctx, int line, const char *problem, const char *text, size_t len,
                 const char *fix_fmt, ...)
{
    if (ctx->failed) return;
    char shown[PLAN_SHOW_MAX * 4 + 16];
    char fix[512];
    va_list ap;
    va_start(ap, fix_fmt);
    vsnprintf(fix, sizeof fix, fix_fmt, ap);
    va_end(ap);
    show_text(shown, sizeof shown, text ? text : "", text ? len : 0);
    snprintf(ctx->emsg, sizeof ctx->emsg, "%s:%d: %s: '%s' (%s)", ctx->name, line, problem,
             shown, fix);
    ctx->failed = 1;
    ctx->code = KG_EINPUT;
    ctx->eline = line;
}

static void perr_nomem(plan_ctx *ctx)
{
    if (ctx->failed) return;
    snprintf(ctx->emsg, sizeof ctx->emsg, "%s: out of memory while parsing the plan", ctx->name);
    ctx->failed = 1;
    ctx->code = KG_ENOMEM;
    ctx->eline = 0;
}

/* Text of line n (1-based) of the plan, without its newline. */
static const char *line_text(const plan_ctx *ctx, int n, size_t *len)
{
    const char *p = ctx->text, *end = ctx->text + ctx->len;
    for (int i = 1; i < n && p < end; i++) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        p = nl ? nl + 1 : end;
    }
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    size_t l = nl ? (size_t)(nl - p) : (size_t)(end - p);
    while (l > 0 && (p[l - 1] == '\r' || p[l - 1] == ' ' || p[l - 1] == '\t')) l--;
    while (l > 0 && (*p == ' ' || *p == '\t')) { p++; l--; }
    *len = l;
    return p;
}

/* ---- small helpers ------------------------------------------------- */

static int name_ok(const char *s, size_t len)
{
    if (len < 1 || len > KG_NAME_MAX - 1) return 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (!(isalnum(c) || c == '_' || c == '.' || c == '-') || c >= 0x80) return 0;
    }
    return 1;
}

static int ident_ok(const char *s)
{
    size_t len = strlen(s);
    if (len < 1 || len > KG_NAME_MAX - 1) return 0;
    if (!(isalpha((unsigned char)s[0]) || s[0] == '_')) return 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x80 || !(isalnum(c) || c == '_')) return 0;
    }
    return 1;
}

/* A character of an axis value: a letter, a digit, '_', '.', '-' or '+'. */
static int axis_char(unsigned char c)
{
    return c < 0x80 && (isalnum(c) || c == '_' || c == '.' || c == '-' || c == '+');
}

/* An expanded name, the name of one variant of a section with axes:
 * BASE[A=1] or BASE[A=1,B=2]; BASE and each axis name as name_ok, each
 * value 1+ axis_char; 63 characters at most in all. */
static int expanded_name_ok(const char *s, size_t len)
{
    if (len < 4 || len > KG_NAME_MAX - 1 || s[len - 1] != ']') return 0;
    const char *open = memchr(s, '[', len);
    if (open == NULL || !name_ok(s, (size_t)(open - s))) return 0;
    const char *p = open + 1, *end = s + len - 1;
    if (p == end) return 0;
    for (;;) {
        const char *q = p;
        while (q < end && *q != '=') q++;
        if (q == end || !name_ok(p, (size_t)(q - p))) return 0;
        p = q + 1;
        q = p;
        while (q < end && *q != ',') q++;
        if (q == p) return 0;
        for (const char *c = p; c < q; c++)
            if (!axis_char((unsigned char)*c)) return 0;
        if (q == end) return 1;
        p = q + 1;
        if (p == end) return 0;
    }
}

/* A case or arm name: a plain one or an expanded one. */
static int plan_name_ok(const char *s, size_t len) { return name_ok(s, len) || expanded_name_ok(s, len); }

/* Length of the first item of the comma-separated list at p; a comma
 * inside [...] (an expanded name's) does not end it. */
static size_t list_item(const char *p)
{
    size_t i = 0;
    int depth = 0;
    for (; p[i] != '\0'; i++) {
        if (p[i] == '[') depth++;
        else if (p[i] == ']' && depth > 0) depth--;
        else if (p[i] == ',' && depth == 0) break;
    }
    return i;
}

static void *field_ptr(void *base, const plan_key *k) { return (char *)base + k->off; }
static const void *field_cptr(const void *base, const plan_key *k)
{
    return (const char *)base + k->off;
}

static void *section_base(plan_ctx *ctx, int sec, int idx)
{
    switch (sec) {
    case SEC_CAMPAIGN: return &ctx->plan->campaign;
    case SEC_GATE: return &ctx->plan->gate;
    case SEC_CASE: return &ctx->plan->cases[idx];
    case SEC_ARM: return &ctx->plan->arms[idx];
    default: return NULL;
    }
}

static key_lines *section_lines(plan_ctx *ctx, int sec, int idx)
{
    switch (sec) {
    case SEC_CAMPAIGN: return &ctx->camp_lines;
    case SEC_GATE: return &ctx->gate_lines;
    case SEC_CASE: return &ctx->case_lines[idx];
    case SEC_ARM: return &ctx->arm_lines[idx];
    default: return NULL;
    }
}

static int key_index(int sec, const char *key)
{
    for (int i = 0; i < PLAN_NKEYS; i++)
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

/* Stores value into the field of key k in the struct at base.  Returns 0,
 * or -1 with a message in ctx (at line). */
static int set_value(plan_ctx *ctx, const plan_key *k, void *base, const char *value, int line)
{
    void *f = field_ptr(base, k);
    size_t vlen = strlen(value);
    switch (k->kind) {
    case K_INT: case K_I64: {
        long long v;
        if (parse_i64(value, &v) != 0) {
            perr(ctx, line, "bad integer", value, vlen, "%s: %s", k->key, k->help);
            return -1;
        }
        if (!in_bounds(k, (double)v)) {
            char b[80];
            bounds_text(k, b, sizeof b);
            perr(ctx, line, "value out of range", value, vlen, "%s: %s%s%s", k->key, k->help,
                 strstr(k->help, b) != NULL ? "" : "; allowed: ", strstr(k->help, b) != NULL ? "" : b);
            return -1;
        }
        if (k->kind == K_INT) {
            int iv = (int)v;
            memcpy(f, &iv, sizeof iv);
        } else {
            int64_t iv = (int64_t)v;
            memcpy(f, &iv, sizeof iv);
        }
        return 0;
    }
    case K_U64: {
        uint64_t v;
        if (parse_u64(value, &v) != 0) {
            perr(ctx, line, "bad integer", value, vlen, "%s: %s", k->key, k->help);
            return -1;
        }
        memcpy(f, &v, sizeof v);
        return 0;
    }
    case K_REAL: case K_FRAC: {
        double v;
        if ((k->kind == K_FRAC ? parse_frac(value, &v) : parse_real(value, &v)) != 0) {
            perr(ctx, line, "bad number", value, vlen, "%s: %s", k->key, k->help);
            return -1;
        }
        if (fpclassify(v) == FP_SUBNORMAL) {
            perr(ctx, line, "subnormal number", value, vlen, "%s: %s; a number this close to 0 is refused",
                 k->key, k->help);
            return -1;
        }
        if (!in_bounds(k, v)) {
            char b[80];
            bounds_text(k, b, sizeof b);
            perr(ctx, line, "value out of range", value, vlen, "%s: %s%s%s", k->key, k->help,
                 strstr(k->help, b) != NULL ? "" : "; allowed: ", strstr(k->help, b) != NULL ? "" : b);
            return -1;
        }
        memcpy(f, &v, sizeof v);
        return 0;
    }
    case K_BOOL: {
        int v;
        if (parse_bool(value, &v) != 0) {
            perr(ctx, line, "bad boolean", value, vlen, "%s: %s", k->key, k->help);
            return -1;
        }
        memcpy(f, &v, sizeof v);
        return 0;
    }
    case K_ENUM: case K_WORD: {
        int v = word_index(k->words, value);
        if (v < 0) {
            perr(ctx, line, "unknown value", value, vlen, "%s: %s", k->key, k->help);
            return -1;
        }
        if (k->kind == K_ENUM) memcpy(f, &v, sizeof v);
        else snprintf(f, k->size, "%s", value);
        return 0;
    }
    case K_NAME: case K_IDENT: case K_TEXT: {
        int ok = k->kind == K_NAME ? (k->flags & F_REF ? plan_name_ok(value, vlen) : name_ok(value, vlen))
               : k->kind == K_IDENT ? ident_ok(value)
               : vlen < k->size;
        if (!ok) {
            perr(ctx, line, k->kind == K_TEXT ? "value too long" : "bad name", value, vlen,
                 "%s: %s", k->key, k->help);
            return -1;
        }
        snprintf(f, k->size, "%s", value);
        return 0;
    }
    case K_LIST: {
        /* normalised to "a,b" so that spacing does not change the hash */
        char *out = f;
        size_t o = 0;
        const char *p = value;
        for (;;) {
            const char *e = p + list_item(p);
            const char *comma = *e == ',' ? e : NULL;
            while (p < e && isspace((unsigned char)*p)) p++;
            const char *q = e;
            while (q > p && isspace((unsigned char)q[-1])) q--;
            if (!plan_name_ok(p, (size_t)(q - p))) {
                perr(ctx, line, "bad name in list", p, (size_t)(q - p),
                     "%s: %s, each 1-63 letters, digits, '_', '.', '-'", k->key, k->help);
                return -1;
            }
            if (o + (size_t)(q - p) + 2 > k->size) {
                perr(ctx, line, "value too long", value, vlen, "%s: %s", k->key, k->help);
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
    default:
        break;
    }
    perr(ctx, line, "internal error: unknown key kind", k->key, strlen(k->key), "report this");
    ctx->code = KG_EINTERNAL;
    return -1;
}

/* Fills a section's struct with the table's defaults. */
static void apply_defaults(plan_ctx *ctx, int sec, void *base)
{
    for (int i = 0; i < PLAN_NKEYS; i++) {
        const plan_key *k = &plan_keys[i];
        if (k->sec != sec) continue;
        if (k->flags & F_UNSET) {
            if (k->kind == K_I64) {
                int64_t v = -1;
                memcpy(field_ptr(base, k), &v, sizeof v);
            } else {
                int v = -1;
                memcpy(field_ptr(base, k), &v, sizeof v);
            }
        } else if (k->def != NULL) {
            if (set_value(ctx, k, base, k->def, 0) != 0) ctx->code = KG_EINTERNAL;
        }
    }
}

/* ---- sections ------------------------------------------------------ */

static int grow(plan_ctx *ctx, void **arr, size_t elem, int *cap, int n, void **lines)
{
    if (n < *cap) return 0;
    int ncap = *cap ? *cap * 2 : 8;
    void *a = realloc(*arr, (size_t)ncap * elem);
    if (a == NULL) { perr_nomem(ctx); return -1; }
    *arr = a;
    void *l = realloc(*lines, (size_t)ncap * sizeof(key_lines));
    if (l == NULL) { perr_nomem(ctx); return -1; }
    *lines = l;
    *cap = ncap;
    return 0;
}

/* A section header line p[0..n) starting with '['. */
static void section_begin(plan_ctx *ctx, const char *p, size_t n)
{
    const int line = ctx->lineno;
    kg_plan *plan = ctx->plan;
    /* the ']' that closes the '[' of p[0]: an expanded name, [arm x[A=1]], holds a pair of its own */
    const char *close = NULL;
    int depth = 0;
    for (size_t i = 0; i < n && close == NULL; i++) {
        if (p[i] == '[') depth++;
        else if (p[i] == ']' && --depth == 0) close = p + i;
    }
    if (close == NULL) {
        perr(ctx, line, "unterminated section header", p, n,
             "close it with ']', e.g. [case NAME]");
        return;
    }
    const char *after = close + 1;
    while (after < p + n && (*after == ' ' || *after == '\t')) after++;
    if (after < p + n && *after != ';' && *after != '#') {
        perr(ctx, line, "text after section header", p, n,
             "put keys on their own lines below the header");
        return;
    }
    const char *s = p + 1, *e = close;
    while (s < e && isspace((unsigned char)*s)) s++;
    while (e > s && isspace((unsigned char)e[-1])) e--;
    const char *w = s;
    while (w < e && !isspace((unsigned char)*w)) w++;
    size_t wlen = (size_t)(w - s);
    const char *nm = w;
    while (nm < e && isspace((unsigned char)*nm)) nm++;
    size_t nlen = (size_t)(e - nm);
    size_t hlen = (size_t)(close + 1 - p);
    int sec = SEC_NONE;
    for (int i = SEC_CAMPAIGN; i <= SEC_OP; i++)
        if (wlen == strlen(sec_names[i]) && memcmp(s, sec_names[i], wlen) == 0) sec = i;
    if (sec == SEC_NONE) {
        perr(ctx, line, "unknown section", p, hlen,
             "sections are [campaign], [op NAME], [case NAME], [arm NAME] and [gate]");
        return;
    }
    if (sec == SEC_OP) {
        /* an op declared in the plan (docs/ops.md) */
        ctx->nsections++;
        ctx->bracketed = 0;
        if (nlen == 0 || !name_ok(nm, nlen)) {
            perr(ctx, line, nlen == 0 ? "section needs a name" : "bad op name", p, hlen,
                 "write [op NAME], NAME of 1-63 letters, digits, '_', '.', '-'");
            return;
        }
        char onm[KG_NAME_MAX];
        memcpy(onm, nm, nlen);
        onm[nlen] = '\0';
        int prev_op = kg_plan_find_op(plan, onm);
        if (prev_op >= 0) {
            perr(ctx, line, "duplicate op", p, hlen, "op names must differ; '%s' is on line %d", onm,
                 plan->ops[prev_op].line);
            return;
        }
        if (plan->nops >= KG_PLAN_MAX_OPS) {
            perr(ctx, line, "too many ops", p, hlen, "a plan declares at most %d ops", KG_PLAN_MAX_OPS);
            return;
        }
        kg_opdecl *od = &plan->ops[plan->nops];
        memset(od, 0, sizeof *od);
        memcpy(od->name, onm, nlen + 1);
        od->line = line;
        ctx->idx = plan->nops++;
        ctx->sec = SEC_OP;
        return;
    }
    ctx->nsections++;
    ctx->bracketed = 0;
    if (sec == SEC_CAMPAIGN || sec == SEC_GATE) {
        if (nlen != 0) {
            perr(ctx, line, "section takes no name", p, hlen, "write [%s]", sec_names[sec]);
            return;
        }
        int *prev = sec == SEC_CAMPAIGN ? &plan->campaign.line : &plan->gate.line;
        if (*prev != 0) {
            perr(ctx, line, "duplicate section", p, hlen,
                 "[%s] may appear once; the first is on line %d", sec_names[sec], *prev);
            return;
        }
        *prev = line;
        ctx->sec = sec;
        ctx->idx = 0;
        return;
    }
    if (nlen == 0) {
        perr(ctx, line, "section needs a name", p, hlen, "write [%s NAME]", sec_names[sec]);
        return;
    }
    if (!plan_name_ok(nm, nlen)) {
        perr(ctx, line, "bad section name", p, hlen,
             "names are 1-63 letters, digits, '_', '.', '-' (or a variant's expanded name, NAME[AXIS=VALUE,...])");
        return;
    }
    ctx->bracketed = memchr(nm, '[', nlen) != NULL;
    char nbuf[KG_NAME_MAX];
    memcpy(nbuf, nm, nlen);
    nbuf[nlen] = '\0';
    int is_case = sec == SEC_CASE;
    int prev = is_case ? kg_plan_find_case(plan, nbuf) : kg_plan_find_arm(plan, nbuf);
    int *count = is_case ? &plan->ncases : &plan->narms;
    if (prev >= 0) {
        perr(ctx, line, is_case ? "duplicate case" : "duplicate arm", p, hlen,
             "%s names must differ; '%s' is on line %d", is_case ? "case" : "arm", nbuf,
             is_case ? plan->cases[prev].line : plan->arms[prev].line);
        return;
    }
    if (*count >= PLAN_SECTIONS_MAX) {
        perr(ctx, line, is_case ? "too many cases" : "too many arms", p, hlen, "at most %d", PLAN_SECTIONS_MAX);
        return;
    }
    int grown = is_case ? grow(ctx, (void **)&plan->cases, sizeof *plan->cases, &ctx->cases_cap, *count,
                               (void **)&ctx->case_lines)
                        : grow(ctx, (void **)&plan->arms, sizeof *plan->arms, &ctx->arms_cap, *count,
                               (void **)&ctx->arm_lines);
    if (grown != 0) return;
    int i = (*count)++;
    key_lines *kl = is_case ? &ctx->case_lines[i] : &ctx->arm_lines[i];
    memset(kl, 0, sizeof *kl);
    if (is_case) {
        kg_case *k = &plan->cases[i];
        memset(k, 0, sizeof *k);
        apply_defaults(ctx, SEC_CASE, k);
        memcpy(k->name, nbuf, nlen + 1);
        k->line = line;
    } else {
        kg_arm *a = &plan->arms[i];
        memset(a, 0, sizeof *a);
        apply_defaults(ctx, SEC_ARM, a);
        memcpy(a->name, nbuf, nlen + 1);
        a->line = line;
    }
    ctx->idx = i;
    ctx->sec = sec;
}

/* ---- libinih glue ---------------------------------------------------- */

/* fgets-style reader over the plan text: one plan line per call. */
static char *plan_reader(char *str, int num, void *stream)
{
    plan_ctx *ctx = stream;
    if (ctx->failed || ctx->pos >= ctx->len) return NULL;
    const char *line = ctx->text + ctx->pos;
    size_t rest = ctx->len - ctx->pos;
    const char *nl = memchr(line, '\n', rest);
    size_t n = nl ? (size_t)(nl - line) : rest;
    ctx->pos += nl ? n + 1 : n;
    ctx->lineno++;
    if (ctx->lineno == 1 && n >= 3 && memcmp(line, "\xef\xbb\xbf", 3) == 0) {
        line += 3;
        n -= 3;
    }
    if (n > 0 && line[n - 1] == '\r') n--;
    while (n > 0 && (*line == ' ' || *line == '\t')) { line++; n--; }
    while (n > 0 && (line[n - 1] == ' ' || line[n - 1] == '\t')) n--;
    if (n > PLAN_LINE_MAX || num < 3 || n + 2 > (size_t)num) {
        perr(ctx, ctx->lineno, "line too long", line, n, "keep lines to %d characters",
             PLAN_LINE_MAX);
        return NULL;
    }
    if (n > 0 && line[0] == '[') {
        section_begin(ctx, line, n);
        if (ctx->failed) return NULL;
        n = 0; /* libinih sees an empty line: sections are ours */
    }
    memcpy(str, line, n);
    str[n] = '\n';
    str[n + 1] = '\0';
    return str;
}

/* ---- axes ---------------------------------------------------------- */

/* "case keys dtype M N ...; arm keys entry defines ...": the keys that take
 * axes, for messages (launch 2 and 3 keys and the fake_ keys folded). */
static void axis_keys_text(char *buf, size_t cap)
{
    size_t o = 0;
    buf[0] = '\0';
    for (int sec = SEC_CASE; sec <= SEC_ARM; sec++) {
        int fake = 0;
        o += (size_t)snprintf(buf + o, o < cap ? cap - o : 0, "%s%s keys", sec == SEC_CASE ? "" : "; ",
                              sec_names[sec]);
        if (sec == SEC_CASE) o += (size_t)snprintf(buf + o, o < cap ? cap - o : 0, " (and the op's variables)");
        for (int i = 0; i < PLAN_NKEYS && o < cap; i++) {
            const plan_key *k = &plan_keys[i];
            size_t kl = strlen(k->key);
            if (k->sec != sec || !(k->flags & F_AXIS) || isdigit((unsigned char)k->key[kl - 1])) continue;
            if (strncmp(k->key, "fake_", 5) == 0 && fake++) continue;
            o += (size_t)snprintf(buf + o, o < cap ? cap - o : 0, " %s",
                                  strncmp(k->key, "fake_", 5) == 0 ? "fake_*" : k->key);
        }
    }
    if (o < cap) snprintf(buf + o, cap - o, " (and entry2, grid2, ... of launches 2 and 3)");
}

/* The axes of the current section, made on first use; NULL when out of memory. */
static sec_axes *current_axes(plan_ctx *ctx)
{
    if (ctx->naxsec > 0) {
        sec_axes *last = ctx->axes[ctx->naxsec - 1];
        if (last->sec == ctx->sec && last->idx == ctx->idx) return last;
    }
    if (ctx->naxsec == ctx->axsec_cap) {
        int ncap = ctx->axsec_cap ? ctx->axsec_cap * 2 : 8;
        sec_axes **a = realloc(ctx->axes, (size_t)ncap * sizeof *a);
        if (a == NULL) return NULL;
        ctx->axes = a;
        ctx->axsec_cap = ncap;
    }
    sec_axes *sa = calloc(1, sizeof *sa);
    if (sa == NULL) return NULL;
    sa->sec = ctx->sec;
    sa->idx = ctx->idx;
    ctx->axes[ctx->naxsec++] = sa;
    return sa;
}

static const sec_axes *find_axes(const plan_ctx *ctx, int sec, int idx)
{
    for (int i = 0; i < ctx->naxsec; i++)
        if (ctx->axes[i]->sec == sec && ctx->axes[i]->idx == idx) return ctx->axes[i];
    return NULL;
}

/* The value v of key ki (line `line`) holds '{' or '}': records its axes.
 * Returns 0, or -1 with a message in ctx. */
static int parse_axes_of(plan_ctx *ctx, int ki, const char *key, const char *v, int line, const char *ltext,
                         size_t llen);

static int parse_axes(plan_ctx *ctx, int ki, const char *v, int line, const char *ltext, size_t llen)
{
    const plan_key *k = &plan_keys[ki];
    if (!(k->flags & F_AXIS)) {
        char keys[600];
        axis_keys_text(keys, sizeof keys);
        perr(ctx, line, "this key takes no axis", ltext, llen, "'%s' takes one value; {a, b} lists go in %s",
             k->key, keys);
        return -1;
    }
    return parse_axes_of(ctx, ki, k->key, v, line, ltext, llen);
}

/* The axes of a value: key names the axis of a whole-value list; ki is
 * the key's plan_keys index, or AXIS_VAR(i) for the case's i-th op
 * variable. */
static int parse_axes_of(plan_ctx *ctx, int ki, const char *key, const char *v, int line, const char *ltext,
                         size_t llen)
{
    if (ctx->bracketed) {
        perr(ctx, line, "axis in a section with an expanded name", ltext, llen,
             "a section named NAME[AXIS=VALUE] is one variant already: give the {a, b} lists in the section NAME");
        return -1;
    }
    sec_axes *sa = current_axes(ctx);
    if (sa == NULL) {
        perr_nomem(ctx);
        return -1;
    }
    size_t n = strlen(v);
    int g = 0;
    for (size_t i = 0; i < n; i++) {
        if (v[i] == '}') {
            perr(ctx, line, "'}' without '{'", ltext, llen, "an axis is a list in braces, e.g. %s = {1, 2}", key);
            return -1;
        }
        if (v[i] != '{') continue;
        size_t j = i + 1;
        while (j < n && v[j] != '}' && v[j] != '{') j++;
        if (j == n || v[j] == '{') {
            perr(ctx, line, j == n ? "unclosed '{'" : "'{' inside an axis", ltext, llen,
                 "an axis is one list {a, b, c}: close it with '}'; lists do not nest");
            return -1;
        }
        /* its name: the key's for a whole value, else NAME of "NAME={" or "-DNAME={" */
        char name[KG_NAME_MAX];
        if (i == 0 && j == n - 1) {
            snprintf(name, sizeof name, "%s", key);
        } else {
            size_t e = i > 0 && v[i - 1] == '=' ? i - 1 : i, b = e;
            while (b > 0 && (isalnum((unsigned char)v[b - 1]) || v[b - 1] == '_')) b--;
            int starts = b == 0 || v[b - 1] == ' ' || v[b - 1] == '\t';
            if (!starts && v[b - 1] == '-' && v[b] == 'D' && (b == 1 || v[b - 2] == ' ' || v[b - 2] == '\t')) {
                starts = 1;
                b++;
            }
            if (e == i || b == e || !starts || !(isalpha((unsigned char)v[b]) || v[b] == '_') || e - b >= sizeof name) {
                perr(ctx, line, "axis without a name", ltext, llen,
                     "a list inside a value follows its name, NAME={a, b} (e.g. defines = PITCH={36, 40}); or the "
                     "whole value is the list, %s = {a, b}", key);
                return -1;
            }
            if (j + 1 < n && v[j + 1] != ' ' && v[j + 1] != '\t') {
                perr(ctx, line, "text right after an axis", ltext, llen,
                     "NAME={a, b} ends its word: put a blank after '}'");
                return -1;
            }
            snprintf(name, sizeof name, "%.*s", (int)(e - b), v + b);
        }
        for (int x = 0; x < sa->naxes; x++)
            if (strcmp(sa->ax[x].name, name) == 0) {
                perr(ctx, line, "axis named twice", ltext, llen,
                     "axis '%s' is already a list on line %d; a section has one axis of a name", name, sa->ax[x].line);
                return -1;
            }
        if (sa->naxes >= PLAN_AXES_MAX) {
            perr(ctx, line, "too many axes", ltext, llen, "a section has at most %d axes", PLAN_AXES_MAX);
            return -1;
        }
        plan_axis *ax = &sa->ax[sa->naxes];
        memset(ax, 0, sizeof *ax);
        ax->ki = ki;
        ax->g = g;
        ax->line = line;
        snprintf(ax->name, sizeof ax->name, "%s", name);
        snprintf(ax->tmpl, sizeof ax->tmpl, "%s", v);
        for (size_t p = i + 1; p <= j;) {
            size_t q = p;
            while (q < j && v[q] != ',') q++;
            size_t a = p, z = q;
            while (a < z && isspace((unsigned char)v[a])) a++;
            while (z > a && isspace((unsigned char)v[z - 1])) z--;
            if (a == z) {
                int empty = 1;
                for (size_t t = i + 1; t < j; t++) empty &= isspace((unsigned char)v[t]) != 0;
                perr(ctx, line, empty ? "empty axis" : "empty value in an axis", ltext, llen,
                     "%s: give one or more values, separated by commas, e.g. {1, 2}", name);
                return -1;
            }
            for (size_t t = a; t < z; t++)
                if (!axis_char((unsigned char)v[t])) {
                    perr(ctx, line, "bad value in an axis", v + a, z - a,
                         "%s: a value is letters, digits, '_', '.', '-' or '+' (it becomes part of the names)", name);
                    return -1;
                }
            for (int w = 0; w < ax->nvalues; w++)
                if (ax->vlen[w] == z - a && memcmp(v + ax->vpos[w], v + a, z - a) == 0) {
                    perr(ctx, line, "duplicate value in an axis", v + a, z - a,
                         "%s: each value once; two variants would have one name", name);
                    return -1;
                }
            if (ax->nvalues >= PLAN_AXIS_VALUES_MAX) {
                perr(ctx, line, "too many values in an axis", ltext, llen, "%s: at most %d values", name,
                     PLAN_AXIS_VALUES_MAX);
                return -1;
            }
            ax->vpos[ax->nvalues] = (unsigned char)a;
            ax->vlen[ax->nvalues] = (unsigned char)(z - a);
            ax->nvalues++;
            p = q + 1;
        }
        sa->naxes++;
        g++;
        i = j;
    }
    return 0;
}

/* A name a case variable may have: a letter or '_', then letters, digits
 * and '_', at most KG_VAR_NAME_MAX - 1 characters. */
static int var_name_ok(const char *n)
{
    size_t l = strlen(n);
    if (l == 0 || l >= KG_VAR_NAME_MAX || !(isalpha((unsigned char)n[0]) || n[0] == '_')) return 0;
    for (size_t i = 1; i < l; i++)
        if (!(isalnum((unsigned char)n[i]) || n[i] == '_')) return 0;
    return 1;
}

/* Sets variable x (its name already set) from its text v: an integer, a
 * real or yes/no.  Returns 0, or -1 with a message in ctx. */
static int set_var_value(plan_ctx *ctx, kg_var *x, const char *v, int line, const char *ltext, size_t llen)
{
    size_t vl = strlen(v);
    if (vl == 0 || vl >= sizeof x->text) {
        perr(ctx, line, vl == 0 ? "missing value" : "value too long", ltext, llen,
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
            perr(ctx, line, "bad value", ltext, llen,
                 "op variable '%s': an integer, a real or yes/no, e.g. %s = 1024", x->name, x->name);
            return -1;
        }
        x->type = KG_VAR_REAL;
        x->r = r;
    }
    return 0;
}

/* A key of [case] outside the key table: a variable of the case's op
 * (kg_plan_check_ops checks it against the op's declaration).  A value
 * that is one list, S = {128, 256}, is an axis over the variable: the
 * case expands like a case with axes over its keys. */
static int case_var(plan_ctx *ctx, const char *name, const char *v, int line, const char *ltext, size_t llen)
{
    kg_case *c = &ctx->plan->cases[ctx->idx];
    for (int i = 0; i < c->nvars; i++)
        if (strcmp(c->vars[i].name, name) == 0) {
            perr(ctx, line, "duplicate key", ltext, llen, "variable '%s' is already set in case '%s'", name,
                 c->name);
            return 1;
        }
    if (c->nvars >= KG_CASE_VARS) {
        perr(ctx, line, "too many variables", ltext, llen, "a case sets at most %d op variables", KG_CASE_VARS);
        return 1;
    }
    kg_var *x = &c->vars[c->nvars];
    memset(x, 0, sizeof *x);
    snprintf(x->name, sizeof x->name, "%s", name);
    if (strpbrk(v, "{}") != NULL) {
        size_t vl = strlen(v);
        if (v[0] != '{' || vl < 2 || v[vl - 1] != '}' || strchr(v + 1, '{') != NULL || strchr(v, '}') != v + vl - 1) {
            perr(ctx, line, "an op variable's axis is its whole value", ltext, llen,
                 "write %s = {a, b, c}: one list, nothing before or after it", name);
            return 1;
        }
        if (parse_axes_of(ctx, AXIS_VAR(c->nvars), name, v, line, ltext, llen) != 0) return 1;
        /* the values are set when the section expands (expand_kind); the
         * text stays the list until then */
        snprintf(x->text, sizeof x->text, "%.*s", (int)(sizeof x->text - 1), v);
        c->nvars++;
        return 1;
    }
    if (set_var_value(ctx, x, v, line, ltext, llen) != 0) return 1;
    c->nvars++;
    return 1;
}

/* The keys of [op NAME]: source (required) and sha256 (the source's, as
 * the canonical form writes it). */
static int op_key(plan_ctx *ctx, const char *name, const char *v, int line, const char *ltext, size_t llen)
{
    kg_opdecl *od = &ctx->plan->ops[ctx->idx];
    int is_src = strcmp(name, "source") == 0, is_sha = strcmp(name, "sha256") == 0;
    if (!is_src && !is_sha) {
        perr(ctx, line, "unknown key", name, strlen(name), "keys of [op]: source sha256");
        return 1;
    }
    char *dst = is_src ? od->source : od->sha256;
    if (dst[0] != '\0') {
        perr(ctx, line, "duplicate key", ltext, llen, "'%s' is already set in op '%s'", name, od->name);
        return 1;
    }
    size_t vl = strlen(v);
    if (vl == 0) {
        perr(ctx, line, "missing value", ltext, llen, is_src ? "source: the op's C file, e.g. ops/conv1d.c"
                                                            : "sha256: 64 lowercase hex digits");
        return 1;
    }
    if (is_src && vl >= sizeof od->source) {
        perr(ctx, line, "value too long", ltext, llen, "keep paths under %d characters", (int)sizeof od->source);
        return 1;
    }
    if (is_sha && (vl != 64 || strspn(v, "0123456789abcdef") != 64)) {
        perr(ctx, line, "bad sha256", ltext, llen, "64 lowercase hex digits (kgate writes it; leave it out)");
        return 1;
    }
    memcpy(dst, v, vl + 1);
    return 1;
}

static int plan_handler(void *user, const char *section, const char *name, const char *value)
{
    plan_ctx *ctx = user;
    (void)section; /* libinih never sees a header; ctx->sec is the section */
    if (ctx->failed) return 1;
    const int line = ctx->lineno;
    size_t llen;
    const char *ltext = line_text(ctx, line, &llen);
    if (ctx->sec == SEC_NONE) {
        perr(ctx, line, "key outside any section", ltext, llen,
             "put it below [campaign], [case NAME], [arm NAME] or [gate]");
        return 1;
    }
    /* a '#' after a blank starts a comment too (libinih only knows ';') */
    char v[PLAN_LINE_MAX + 1];
    snprintf(v, sizeof v, "%s", value ? value : "");
    for (char *h = strchr(v, '#'); h != NULL; h = strchr(h + 1, '#')) {
        if (h > v && (h[-1] == ' ' || h[-1] == '\t')) {
            *h = '\0';
            break;
        }
    }
    size_t vlen = strlen(v);
    while (vlen > 0 && isspace((unsigned char)v[vlen - 1])) v[--vlen] = '\0';

    if (ctx->sec == SEC_OP) return op_key(ctx, name, v, line, ltext, llen);
    int ki = key_index(ctx->sec, name);
    if (ki < 0 && ctx->sec == SEC_CASE && var_name_ok(name)) return case_var(ctx, name, v, line, ltext, llen);
    if (ki < 0) {
        char keys[600];
        size_t o = 0;
        keys[0] = '\0';
        for (int i = 0; i < PLAN_NKEYS && o < sizeof keys; i++)
            if (plan_keys[i].sec == ctx->sec)
                o += (size_t)snprintf(keys + o, sizeof keys - o, "%s%s", o ? " " : "",
                                      plan_keys[i].key);
        perr(ctx, line, "unknown key", name, strlen(name), "keys of [%s]: %s",
             sec_names[ctx->sec], keys);
        return 1;
    }
    const plan_key *k = &plan_keys[ki];
    key_lines *kl = section_lines(ctx, ctx->sec, ctx->idx);
    if (kl->at[ki] != 0) {
        perr(ctx, line, "duplicate key", ltext, llen, "'%s' is already set on line %d", k->key,
             kl->at[ki]);
        return 1;
    }
    if (vlen == 0) {
        perr(ctx, line, "missing value", ltext, llen, "%s: %s", k->key, k->help);
        return 1;
    }
    if (vlen > PLAN_VALUE_MAX) {
        perr(ctx, line, "value too long", ltext, llen, "keep values to %d characters",
             PLAN_VALUE_MAX);
        return 1;
    }
    if (v[0] == ';') {
        /* would read as a comment in the canonical form's "key = value" */
        perr(ctx, line, "value starts with ';'", ltext, llen, "%s: %s", k->key, k->help);
        return 1;
    }
    if (strpbrk(v, "{}") != NULL && (ctx->sec == SEC_CASE || ctx->sec == SEC_ARM || k->kind != K_TEXT)) {
        /* an axis: the values are set when the section expands (expand_axes) */
        if (parse_axes(ctx, ki, v, line, ltext, llen) == 0) kl->at[ki] = line;
        return 1;
    }
    if (set_value(ctx, k, section_base(ctx, ctx->sec, ctx->idx), v, line) != 0) return 1;
    kl->at[ki] = line;
    return 1;
}

/* Rejects NUL bytes, control characters and invalid UTF-8 before libinih
 * sees the text. */
static void check_bytes(plan_ctx *ctx)
{
    const unsigned char *s = (const unsigned char *)ctx->text;
    size_t n = ctx->len;
    int line = 1;
    size_t line_start = 0;
    for (size_t i = 0; i < n;) {
        unsigned c = s[i];
        size_t len = 1;
        int bad = 0;
        if (c == '\n') {
            line++;
            line_start = ++i;
            continue;
        }
        if (c < 0x80) {
            if (c == '\r') bad = !(i + 1 < n && s[i + 1] == '\n');
            else bad = (c < 0x20 && c != '\t') || c == 0x7f;
        } else {
            uint32_t cp;
            if (c >= 0xc2 && c <= 0xdf) { len = 2; cp = c & 0x1f; }
            else if (c >= 0xe0 && c <= 0xef) { len = 3; cp = c & 0x0f; }
            else if (c >= 0xf0 && c <= 0xf4) { len = 4; cp = c & 0x07; }
            else { bad = 1; cp = 0; }
            if (!bad && i + len > n) bad = 1;
            for (size_t j = 1; !bad && j < len; j++) {
                if ((s[i + j] & 0xc0) != 0x80) bad = 1;
                else cp = (cp << 6) | (s[i + j] & 0x3f);
            }
            if (!bad) {
                if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
                    (cp >= 0xd800 && cp <= 0xdfff) || (cp >= 0x80 && cp <= 0x9f))
                    bad = 1;
            }
            if (bad) len = 1;
        }
        if (bad) {
            size_t end = i;
            while (end < n && s[end] != '\n' && end - line_start < PLAN_SHOW_MAX) end++;
            perr(ctx, line, c == 0 ? "NUL byte in plan" : "binary or non-UTF-8 text in plan",
                 ctx->text + line_start, end - line_start,
                 "a plan is UTF-8 text; byte 0x%02x at column %zu", c, i - line_start + 1);
            return;
        }
        i += len;
    }
}

/* ---- after parsing --------------------------------------------------- */

static const char *arm_key_name(int ki) { return plan_keys[ki].key; }

/* 1 when the list item p[0..l) names the case or arm `name`: its name, or
 * the base of a variant (the item "sq" names sq[M=96] and sq[M=256]). */
static int item_names(const char *p, size_t l, const char *name)
{
    return strncmp(name, p, l) == 0 && (name[l] == '\0' || name[l] == '[');
}

static int list_has(const char *list, const char *name)
{
    const char *p = list;
    while (*p) {
        size_t l = list_item(p);
        if (item_names(p, l, name)) return 1;
        if (p[l] == '\0') break;
        p += l + 1;
    }
    return 0;
}

/* Whitespace-separated words of s. */
static int count_tokens(const char *s)
{
    int n = 0;
    for (const char *p = s; *p;) {
        while (*p == ' ' || *p == '\t') p++;
        if (*p == '\0') break;
        n++;
        while (*p != '\0' && *p != ' ' && *p != '\t') p++;
    }
    return n;
}

static void header_text(char *buf, size_t cap, const char *sec, const char *name)
{
    snprintf(buf, cap, "[%s %s]", sec, name);
}

static void check_required(plan_ctx *ctx, int sec, int idx, const char *name, int line)
{
    key_lines *kl = section_lines(ctx, sec, idx);
    for (int i = 0; i < PLAN_NKEYS; i++) {
        if (plan_keys[i].sec != sec || !(plan_keys[i].flags & F_REQ) || kl->at[i]) continue;
        char h[KG_NAME_MAX + 16];
        header_text(h, sizeof h, sec_names[sec], name);
        perr(ctx, line, "missing required key", h, strlen(h), "add '%s = ...' (%s)",
             plan_keys[i].key, plan_keys[i].help);
        return;
    }
}

/* "" or, when name is the base of arms with axes, "; arm 'fma' has axes: name one
 * variant, e.g. fma[PITCH=36]", for the messages of keys that name one arm. */
static const char *variant_hint(const kg_plan *plan, const char *name, char *buf, size_t cap)
{
    buf[0] = '\0';
    size_t n = strlen(name);
    for (int a = 0; a < plan->narms; a++)
        if (kg_plan_name_base(plan->arms[a].name) == n && strncmp(plan->arms[a].name, name, n) == 0) {
            snprintf(buf, cap, "; arm '%s' has axes: name one variant, e.g. %s", name, plan->arms[a].name);
            break;
        }
    return buf;
}

static void check_arm(plan_ctx *ctx, int a)
{
    kg_plan *plan = ctx->plan;
    kg_arm *arm = &plan->arms[a];
    key_lines *kl = &ctx->arm_lines[a];
    char h[KG_NAME_MAX + 16];
    header_text(h, sizeof h, "arm", arm->name);
    check_required(ctx, SEC_ARM, a, arm->name, arm->line);
    if (ctx->failed) return;
    int k_of = key_index(SEC_ARM, "of"), k_source = key_index(SEC_ARM, "source");
    int k_builtin = key_index(SEC_ARM, "builtin"), k_cases = key_index(SEC_ARM, "cases");
    int k_parity = key_index(SEC_ARM, "parity"), k_image = key_index(SEC_ARM, "image");
    if (arm->role == KG_ROLE_CONTROL) {
        if (!kl->at[k_of]) {
            perr(ctx, arm->line, "control arm without 'of'", h, strlen(h),
                 "add 'of = NAME' naming the baseline arm it replicates");
            return;
        }
        for (int i = 0; i < PLAN_NKEYS; i++) {
            if (plan_keys[i].sec != SEC_ARM || !(plan_keys[i].flags & F_INHERIT) || !kl->at[i])
                continue;
            size_t l;
            const char *t = line_text(ctx, kl->at[i], &l);
            perr(ctx, kl->at[i], "control arm sets its own kernel", t, l,
                 "a control takes '%s' from its 'of' arm; remove it", arm_key_name(i));
            return;
        }
        int o = kg_plan_find_arm(plan, arm->of);
        size_t l;
        const char *t = line_text(ctx, kl->at[k_of], &l);
        if (o < 0) {
            char hint[2 * KG_NAME_MAX + 64];
            perr(ctx, kl->at[k_of], "unknown arm", arm->of, strlen(arm->of),
                 "'of' must name a baseline arm of this plan%s", variant_hint(plan, arm->of, hint, sizeof hint));
            return;
        }
        if (plan->arms[o].role != KG_ROLE_BASELINE) {
            perr(ctx, kl->at[k_of], "'of' names an arm that is not a baseline", t, l,
                 "arm '%s' has role %s; a control replicates a baseline", arm->of,
                 kg_role_name(plan->arms[o].role));
            return;
        }
        if (strcmp(plan->arms[o].op, arm->op) != 0) {
            perr(ctx, kl->at[k_of], "'of' names an arm of another op", t, l,
                 "arm '%s' implements %s, this arm %s", arm->of, plan->arms[o].op, arm->op);
            return;
        }
    } else {
        if (kl->at[k_of]) {
            size_t l;
            const char *t = line_text(ctx, kl->at[k_of], &l);
            perr(ctx, kl->at[k_of], "'of' on an arm that is not a control", t, l,
                 "remove it, or set role = control");
            return;
        }
        if (!kl->at[k_source] && !kl->at[k_builtin] && !kl->at[k_image]) {
            perr(ctx, arm->line, "arm has no kernel", h, strlen(h),
                 "add 'source = PATH', 'image = PATH' (a precompiled kernel) or 'builtin = NAME'");
            return;
        }
        if (kl->at[k_source] && kl->at[k_builtin]) {
            size_t l;
            const char *t = line_text(ctx, kl->at[k_builtin], &l);
            perr(ctx, kl->at[k_builtin], "arm has both source and builtin", t, l,
                 "keep one of them");
            return;
        }
        if (kl->at[k_image] && (kl->at[k_source] || kl->at[k_builtin])) {
            int at = kl->at[k_image];
            size_t l;
            const char *t = line_text(ctx, at, &l);
            perr(ctx, at, kl->at[k_source] ? "arm has both source and image" : "arm has both builtin and image",
                 t, l, "keep one of them: 'source' is compiled by kgate, 'image' is a kernel compiled before");
            return;
        }
    }
    if (kl->at[k_image]) {
        size_t l;
        const char *t = line_text(ctx, kl->at[k_image], &l);
        if (kg_image_kind_of(arm->image) == KG_IMAGE_NONE) {
            perr(ctx, kl->at[k_image], "unknown kind of image", t, l,
                 "an image's name ends in .so (a shared object, cpu backend) or .cubin, .ptx or .fatbin "
                 "(cuda backend)");
            return;
        }
        int k_def = key_index(SEC_ARM, "defines"), k_cfl = key_index(SEC_ARM, "cflags");
        if (kl->at[k_def] || kl->at[k_cfl]) {
            int at = kl->at[k_def] ? kl->at[k_def] : kl->at[k_cfl];
            t = line_text(ctx, at, &l);
            perr(ctx, at, "compiler options on a precompiled arm", t, l,
                 "an image is not compiled by kgate: remove '%s' and pass it to the compiler that built the image",
                 kl->at[k_def] ? "defines" : "cflags");
            return;
        }
    }
    /* call and compile belong to library arms */
    int k_call = key_index(SEC_ARM, "call"), k_comp = key_index(SEC_ARM, "compile");
    int library = strcmp(arm->builtin, "torch") == 0 || strcmp(arm->builtin, "numpy") == 0;
    if ((kl->at[k_call] || kl->at[k_comp]) && !library && arm->role != KG_ROLE_CONTROL) {
        int at = kl->at[k_call] ? kl->at[k_call] : kl->at[k_comp];
        size_t l;
        const char *t = line_text(ctx, at, &l);
        perr(ctx, at, "a library key on an arm that is not a library arm", t, l,
             "'%s' needs 'builtin = torch' or 'builtin = numpy' (docs/library-arms.md)", arm_key_name(kl->at[k_call] ? k_call : k_comp));
        return;
    }
    if (kl->at[k_comp] && arm->compile && strcmp(arm->builtin, "torch") != 0) {
        size_t l;
        const char *t = line_text(ctx, kl->at[k_comp], &l);
        perr(ctx, kl->at[k_comp], "compile = yes on a numpy arm", t, l, "torch.compile needs 'builtin = torch'");
        return;
    }
    /* the compiler options a backend passes are bounded (KG_ARM_MAX_FLAGS) */
    int k_def = key_index(SEC_ARM, "defines"), k_cfl = key_index(SEC_ARM, "cflags");
    int nflags = count_tokens(arm->defines) + count_tokens(arm->cflags);
    if (nflags > KG_ARM_MAX_FLAGS) {
        int at = kl->at[k_cfl] ? kl->at[k_cfl] : kl->at[k_def] ? kl->at[k_def] : arm->line;
        size_t l;
        const char *t = line_text(ctx, at, &l);
        perr(ctx, at, "too many compiler options", t, l, "defines and cflags of arm '%s' hold %d words; at most %d",
             arm->name, nflags, KG_ARM_MAX_FLAGS);
        return;
    }
    if (kl->at[k_cases]) {
        const char *p = arm->cases;
        while (*p) {
            size_t l = list_item(p);
            const char *comma = p[l] == ',' ? p + l : NULL;
            char nm[KG_NAME_MAX];
            snprintf(nm, sizeof nm, "%.*s", (int)l, p);
            int found = 0;
            for (int c = 0; c < plan->ncases; c++) {
                if (!item_names(p, l, plan->cases[c].name)) continue;
                found = 1;
                if (strcmp(plan->cases[c].op, arm->op) != 0) {
                    perr(ctx, kl->at[k_cases], "case of another op", nm, strlen(nm),
                         "case '%s' is %s, arm '%s' implements %s", plan->cases[c].name, plan->cases[c].op,
                         arm->name, arm->op);
                    return;
                }
            }
            if (!found) {
                perr(ctx, kl->at[k_cases], "unknown case", nm, strlen(nm),
                     "'cases' must list [case NAME] sections of this plan (a case with axes by its name, for all "
                     "its variants, or one variant by its expanded name)");
                return;
            }
            if (!comma) break;
            p = comma + 1;
        }
    }
    if (kl->at[k_parity]) {
        int o = kg_plan_find_arm(plan, arm->parity);
        if (o < 0 || o == a) {
            char hint[2 * KG_NAME_MAX + 64];
            perr(ctx, kl->at[k_parity], o < 0 ? "unknown arm" : "parity with itself",
                 arm->parity, strlen(arm->parity), "'parity' must name another arm of this plan%s",
                 variant_hint(plan, arm->parity, hint, sizeof hint));
            return;
        }
        if (strcmp(plan->arms[o].op, arm->op) != 0) {
            perr(ctx, kl->at[k_parity], "parity with an arm of another op", arm->parity,
                 strlen(arm->parity), "arm '%s' implements %s, this arm %s", arm->parity,
                 plan->arms[o].op, arm->op);
            return;
        }
    }
    int k_prec = key_index(SEC_ARM, "precision"), k_tol = key_index(SEC_ARM, "tolerance");
    if (kl->at[k_prec] && kl->at[k_tol]) {
        perr(ctx, kl->at[k_tol], "both precision and tolerance", "tolerance", 9,
             "give 'precision' (an error analysis) or 'tolerance' (a declared error), not both");
        return;
    }
}

/* Campaign name from the plan file's stem: "dir/gemm.kg" -> "gemm". */
static void stem_name(const char *path, char *out, size_t cap)
{
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    size_t n = strlen(b);
    const char *dot = strrchr(b, '.');
    if (dot != NULL && dot != b) n = (size_t)(dot - b);
    if (n > cap - 1) n = cap - 1;
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)b[i];
        out[o++] = (c < 0x80 && (isalnum(c) || c == '_' || c == '.' || c == '-')) ? (char)c : '_';
    }
    out[o] = '\0';
    if (o == 0) snprintf(out, cap, "plan");
}

static void plan_note(kg_plan *plan, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* An arm's `requires`: its syntax, and a note for every case of the plan
 * the arm runs on that does not meet it: the arm is INADMISSIBLE there,
 * recorded by the worker before any load or launch (a failed
 * `admissible` check), never skipped as if it passed. */
static void check_requires(plan_ctx *ctx, int a)
{
    kg_plan *plan = ctx->plan;
    const kg_arm *arm = &plan->arms[a];
    if (arm->requires[0] == '\0') return;
    int k_req = key_index(SEC_ARM, "requires");
    int src = arm->role == KG_ROLE_CONTROL ? kg_plan_find_arm(plan, arm->of) : a;
    int line = src >= 0 && ctx->arm_lines[src].at[k_req] ? ctx->arm_lines[src].at[k_req] : arm->line;
    size_t l;
    const char *t = line_text(ctx, line, &l);
    kg_err e = { 0 };
    if (kg_expr_check_conds("requires", arm->requires, &e) != KG_OK) {
        perr(ctx, line, "bad requires", t, l, "%s", e.msg);
        return;
    }
    for (int c = 0; c < plan->ncases; c++) {
        if (!kg_plan_arm_applies(plan, a, c)) continue;
        int ok = 1;
        char failed[KG_TEXT_MAX + 64];
        kg_err_clear(&e);
        if (kg_expr_eval_conds("requires", arm->requires, &plan->cases[c], &ok, failed, sizeof failed, &e) !=
            KG_OK) {
            perr(ctx, line, "requires cannot be evaluated on a case", t, l, "case '%s': %s", plan->cases[c].name,
                 e.msg);
            return;
        }
        if (!ok)
            plan_note(plan, "arm '%s' is INADMISSIBLE on case '%s': its requires %s does not hold; it is not run "
                            "there (restrict it with 'cases = ...' to leave the case out)", arm->name,
                      plan->cases[c].name, failed);
    }
}

/* A case must be runnable by a baseline: one that meets its requires. */
static void check_case_baselines(plan_ctx *ctx)
{
    kg_plan *plan = ctx->plan;
    for (int c = 0; c < plan->ncases && !ctx->failed; c++) {
        int found = 0, line = 0;
        char failed[KG_TEXT_MAX + 64] = "";
        for (int a = 0; a < plan->narms && !found; a++) {
            const kg_arm *arm = &plan->arms[a];
            if (arm->role != KG_ROLE_BASELINE || !kg_plan_arm_applies(plan, a, c)) continue;
            int ok = 1;
            kg_err e = { 0 };
            if (arm->requires[0] != '\0' &&
                kg_expr_eval_conds("requires", arm->requires, &plan->cases[c], &ok, failed, sizeof failed, &e) !=
                    KG_OK)
                ok = 0;
            found = ok;
            if (!ok && line == 0) line = arm->line;
        }
        if (!found && line > 0) {
            size_t l;
            const char *t = line_text(ctx, plan->cases[c].line, &l);
            perr(ctx, plan->cases[c].line, "no baseline arm of the case meets its requires", t, l,
                 "case '%s': %s does not hold for the baseline on line %d (from the plan or its kernel contract); "
                 "add a baseline that runs this shape, or change the case", plan->cases[c].name, failed, line);
        }
    }
}

static void plan_note(kg_plan *plan, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void plan_note(kg_plan *plan, const char *fmt, ...)
{
    if (plan->nnotes >= KG_PLAN_MAX_NOTES) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(plan->notes[plan->nnotes++], KG_PLAN_NOTE_MAX, fmt, ap);
    va_end(ap);
}

/* Gates the plan's own control cannot support are refused; a zero margin
 * is allowed and noted. */
static void plan_notes(plan_ctx *ctx)
{
    kg_plan *plan = ctx->plan;
    const kg_campaign *cp = &plan->campaign;
    int has_control = 0;
    for (int a = 0; a < plan->narms; a++) has_control |= plan->arms[a].role == KG_ROLE_CONTROL;
    if (has_control && plan->gate.require_control && plan->gate.min_reduction < cp->control_margin) {
        int ln = ctx->gate_lines.at[key_index(SEC_GATE, "min_reduction")];
        if (ln == 0) ln = ctx->camp_lines.at[key_index(SEC_CAMPAIGN, "margin")];
        if (ln == 0) ln = ctx->camp_lines.at[key_index(SEC_CAMPAIGN, "control_margin")];
        size_t l;
        const char *t = line_text(ctx, ln > 0 ? ln : 1, &l);
        perr(ctx, ln > 0 ? ln : 1, "the gate asks for less than the plan's control can support", t, l,
             "the gate's min_reduction %.3g%% is below control_margin %.3g%%, the difference two loads of one "
             "kernel may show: raise min_reduction (or margin) to at least control_margin",
             100.0 * plan->gate.min_reduction, 100.0 * cp->control_margin);
        return;
    }
    int sq = kg_plan_square(plan);
    if (!ctx->camp_lines.at[key_index(SEC_CAMPAIGN, "processes")]) {
        /* the default: 2 per direction, raised to complete the square */
        plan->campaign.processes = sq >= 2 ? sq : 2;
    } else if (sq > 1 && plan->campaign.processes % sq != 0) {
        plan_note(plan, "processes = %d per direction does not complete the load-order square of %d arms: some "
                        "arms take the first load slot more often than others, and a slot effect biases them (use a "
                        "multiple of %d, or leave processes out)", plan->campaign.processes, sq, sq);
    }
    if (cp->looks > 1 && plan->campaign.processes % cp->looks != 0) {
        int ln = ctx->camp_lines.at[key_index(SEC_CAMPAIGN, "looks")];
        size_t l;
        const char *t = line_text(ctx, ln > 0 ? ln : 1, &l);
        perr(ctx, ln > 0 ? ln : 1, "looks must divide processes", t, l,
             "processes = %d per direction: use looks that divide it, or processes a multiple of %d",
             plan->campaign.processes, cp->looks);
        return;
    }
    if (cp->looks > 1 && sq > 1 && (plan->campaign.processes / cp->looks) % sq != 0)
        plan_note(plan, "looks = %d: each look adds %d processes per direction, which do not complete the load-order "
                        "square of %d arms, so an interim analysis sees some arms in the first load slot more often "
                        "than others (use processes a multiple of %d)", cp->looks, plan->campaign.processes / cp->looks,
                  sq, cp->looks * sq);
    if (cp->margin == 0.0)
        plan_note(plan, "margin = 0: any interval above zero is FASTER, and an offset of 0.055%% between two loads "
                        "of one kernel (measured on an H200) is enough for a false one; the default is 0.5%% "
                        "(docs/statistics.md)");
}

/* Sections of kind sec (SEC_CASE or SEC_ARM) with axes become their
 * variants, in place: the Cartesian product of the axes, the first axis
 * varying slowest, each variant named BASE[A=1,B=2] and holding its
 * values in the keys of its axes. */
static void expand_kind(plan_ctx *ctx, int sec)
{
    kg_plan *plan = ctx->plan;
    int is_case = sec == SEC_CASE;
    int n = is_case ? plan->ncases : plan->narms;
    size_t elem = is_case ? sizeof(kg_case) : sizeof(kg_arm);
    char *old = is_case ? (char *)plan->cases : (char *)plan->arms;
    key_lines *oldl = is_case ? ctx->case_lines : ctx->arm_lines;
    long total = 0;
    int any = 0;
    for (int i = 0; i < n; i++) {
        const sec_axes *sa = find_axes(ctx, sec, i);
        long prod = 1;
        for (int x = 0; sa != NULL && x < sa->naxes && prod <= PLAN_EXPAND_MAX; x++) prod *= sa->ax[x].nvalues;
        const char *nm = old + (size_t)i * elem; /* name is the first member of kg_case and kg_arm */
        int line = is_case ? ((kg_case *)(void *)nm)->line : ((kg_arm *)(void *)nm)->line;
        if (prod > PLAN_EXPAND_MAX) {
            char h[KG_NAME_MAX + 16];
            header_text(h, sizeof h, sec_names[sec], nm);
            perr(ctx, line, "a section expands to too many variants", h, strlen(h),
                 "its axes give more than %d combinations; at most %d: shorten the lists or split the section",
                 PLAN_EXPAND_MAX, PLAN_EXPAND_MAX);
            return;
        }
        any |= sa != NULL;
        total += prod;
    }
    if (!any) return;
    if (total > PLAN_SECTIONS_MAX) {
        perr(ctx, 1, is_case ? "too many cases" : "too many arms", "", 0,
             "the axes expand the plan to %ld %s; at most %d", total, is_case ? "cases" : "arms", PLAN_SECTIONS_MAX);
        return;
    }
    char *nw = calloc((size_t)total, elem);
    key_lines *nwl = calloc((size_t)total, sizeof *nwl);
    if (nw == NULL || nwl == NULL) {
        free(nw);
        free(nwl);
        perr_nomem(ctx);
        return;
    }
    int o = 0;
    for (int i = 0; i < n && !ctx->failed; i++) {
        const char *src = old + (size_t)i * elem;
        const sec_axes *sa = find_axes(ctx, sec, i);
        if (sa == NULL) {
            memcpy(nw + (size_t)o * elem, src, elem);
            nwl[o++] = oldl[i];
            continue;
        }
        int line = is_case ? ((const kg_case *)(const void *)src)->line : ((const kg_arm *)(const void *)src)->line;
        long prod = 1;
        for (int x = 0; x < sa->naxes; x++) prod *= sa->ax[x].nvalues;
        for (long combo = 0; combo < prod && !ctx->failed; combo++) {
            int pick[PLAN_AXES_MAX];
            long rest = combo;
            for (int x = sa->naxes - 1; x >= 0; x--) {
                pick[x] = (int)(rest % sa->ax[x].nvalues);
                rest /= sa->ax[x].nvalues;
            }
            char *dst = nw + (size_t)o * elem;
            memcpy(dst, src, elem);
            nwl[o] = oldl[i];
            /* the name */
            char name[2 * KG_NAME_MAX + PLAN_AXES_MAX * (KG_NAME_MAX + PLAN_LINE_MAX)];
            size_t nl = (size_t)snprintf(name, sizeof name, "%s[", src);
            for (int x = 0; x < sa->naxes && nl < sizeof name; x++) {
                const plan_axis *ax = &sa->ax[x];
                nl += (size_t)snprintf(name + nl, sizeof name - nl, "%s%s=%.*s", x ? "," : "", ax->name,
                                       (int)ax->vlen[pick[x]], ax->tmpl + ax->vpos[pick[x]]);
            }
            if (nl < sizeof name) nl += (size_t)snprintf(name + nl, sizeof name - nl, "]");
            if (nl > KG_NAME_MAX - 1) {
                perr(ctx, line, "expanded name too long", name, strlen(name),
                     "a variant's name BASE[AXIS=VALUE,...] has at most %d characters: shorten the section name, "
                     "the axis names or the values", KG_NAME_MAX - 1);
                break;
            }
            memcpy(dst, name, nl + 1);
            /* the values of the keys with axes, each key once */
            for (int x = 0; x < sa->naxes && !ctx->failed; x++) {
                const plan_axis *ax = &sa->ax[x];
                int first = 1;
                for (int y = 0; y < x; y++) first &= sa->ax[y].ki != ax->ki;
                if (!first) continue;
                char val[PLAN_LINE_MAX + 1];
                size_t vo = 0;
                int g = 0;
                for (const char *t = ax->tmpl; *t && vo + 1 < sizeof val;) {
                    if (*t != '{') {
                        val[vo++] = *t++;
                        continue;
                    }
                    const plan_axis *gx = NULL;
                    int gi = 0;
                    for (int y = 0; y < sa->naxes; y++)
                        if (sa->ax[y].ki == ax->ki && sa->ax[y].g == g) {
                            gx = &sa->ax[y];
                            gi = y;
                        }
                    if (gx != NULL && vo + gx->vlen[pick[gi]] + 1 < sizeof val) {
                        memcpy(val + vo, gx->tmpl + gx->vpos[pick[gi]], gx->vlen[pick[gi]]);
                        vo += gx->vlen[pick[gi]];
                    }
                    const char *close = strchr(t, '}');
                    t = close ? close + 1 : t + strlen(t);
                    g++;
                }
                val[vo] = '\0';
                if (ax->ki >= 0) {
                    set_value(ctx, &plan_keys[ax->ki], dst, val, ax->line);
                } else {
                    size_t ll;
                    const char *lt = line_text(ctx, ax->line, &ll);
                    set_var_value(ctx, &((kg_case *)(void *)dst)->vars[AXIS_VAR_INDEX(ax->ki)], val, ax->line, lt, ll);
                }
            }
            o++;
        }
    }
    if (ctx->failed) {
        free(nw);
        free(nwl);
        return;
    }
    free(old);
    free(oldl);
    if (is_case) {
        plan->cases = (kg_case *)(void *)nw;
        plan->ncases = o;
        ctx->case_lines = nwl;
        ctx->cases_cap = (int)total;
    } else {
        plan->arms = (kg_arm *)(void *)nw;
        plan->narms = o;
        ctx->arm_lines = nwl;
        ctx->arms_cap = (int)total;
    }
}

/* [op NAME]: a source, found beside the plan and hashed; a sha256
 * written in the plan (a canonical plan) must be the source's.  A
 * canonical plan read from an evidence folder takes the folder's copy,
 * sources/op-NAME.c, wherever the plan's source is (an absolute path may
 * name a file edited since the campaign); one read where neither is
 * keeps the sha256 as written. */
static void check_op(plan_ctx *ctx, int o)
{
    kg_plan *plan = ctx->plan;
    kg_opdecl *od = &plan->ops[o];
    size_t l;
    const char *t = line_text(ctx, od->line, &l);
    if (od->source[0] == '\0') {
        perr(ctx, od->line, "op has no source", t, l, "add source = the op's C file (docs/ops.md)");
        return;
    }
    char path[2 * KG_PATH_MAX + 2];
    kg_plan_op_source_path(plan, o, path, sizeof path);
    if (od->sha256[0] != '\0' && plan->base_dir[0] != '\0') {
        char copy[2 * KG_PATH_MAX + 2];
        snprintf(copy, sizeof copy, "%s/sources/op-%s.c", plan->base_dir, od->name);
        struct stat st;
        if (stat(copy, &st) == 0) snprintf(path, sizeof path, "%s", copy);
    }
    char hex[65];
    kg_err e = { 0 };
    if (kg_sha256_file(path, hex, &e) != KG_OK) {
        if (od->sha256[0] != '\0') return;
        perr(ctx, od->line, "op source not found", t, l, "%s: %s", path, e.msg);
        return;
    }
    if (od->sha256[0] != '\0' && strcmp(od->sha256, hex) != 0) {
        perr(ctx, od->line, "op source changed", t, l, "%s hashes to %.12s, the plan says %.12s: remove the sha256 "
             "line to take the source as it is", path, hex, od->sha256);
        return;
    }
    memcpy(od->sha256, hex, sizeof hex);
}

static void expand_axes(plan_ctx *ctx)
{
    kg_plan *plan = ctx->plan;
    if (ctx->naxsec == 0) return;
    expand_kind(ctx, SEC_CASE);
    if (!ctx->failed) expand_kind(ctx, SEC_ARM);
    for (int pass = 0; pass < 2 && !ctx->failed; pass++) {
        int n = pass ? plan->narms : plan->ncases;
        for (int j = 1; j < n && !ctx->failed; j++) {
            const char *nj = pass ? plan->arms[j].name : plan->cases[j].name;
            for (int i = 0; i < j; i++) {
                const char *ni = pass ? plan->arms[i].name : plan->cases[i].name;
                if (strcmp(ni, nj) != 0) continue;
                int li = pass ? plan->arms[i].line : plan->cases[i].line;
                int lj = pass ? plan->arms[j].line : plan->cases[j].line;
                perr(ctx, lj, pass ? "duplicate arm" : "duplicate case", nj, strlen(nj),
                     "the sections on lines %d and %d both give this name (a section with axes names each variant "
                     "BASE[AXIS=VALUE]): rename one", li, lj);
                break;
            }
        }
    }
}

/* ---- kernel contracts ---------------------------------------------------- */

/* A kernel source may carry its own launch geometry and preconditions in
 * its leading comment (docs/plan-format.md, "Kernel contracts"):
 *
 *   kgate: requires = M % 32 == 0, N % 64 == 0
 *   kgate: grid = N / 64, M / 32, splits; block = 128
 *   kgate: [splitk_accum] grid = ...        (for one entry only)
 *
 * An arm with that source takes each contract key it does not set itself.
 * The launch geometry (grid, block, shared and launches 2 and 3) comes as
 * a whole: an arm that sets any of its keys takes none of the contract's.  A [ENTRY] line applies only
 * to an arm whose entry is ENTRY, and wins over a file-wide line of the
 * same key. */
#define CONTRACT_MAX_LINES 64
#define CONTRACT_MAX_BYTES (1u << 20)

typedef struct contract_item {
    char entry[KG_NAME_MAX];   /* "" = file-wide */
    int ki;                    /* plan_keys index; -1 for ops */
    int line;                  /* line in the kernel file */
    char value[PLAN_VALUE_MAX + 1];
} contract_item;

typedef struct kernel_contract {
    contract_item it[CONTRACT_MAX_LINES];
    int n;
} kernel_contract;

/* the keys a contract may give */
static const char *const contract_keys[] = {
    "entry", "requires", "grid", "block", "shared", "args",
    "entry2", "grid2", "block2", "shared2", "args2",
    "entry3", "grid3", "block3", "shared3", "args3", NULL};

/* 1 for the keys of the launch geometry (grid, block and shared of the
 * first launch, every key of launches 2 and 3), which an arm takes from a
 * contract only as a whole; entry, args and requires are taken one by one */
static int chain_key(const char *key)
{
    return strcmp(key, "entry") != 0 && strcmp(key, "requires") != 0 && strcmp(key, "args") != 0;
}

static void trim(const char **p, const char **e)
{
    while (*p < *e && isspace((unsigned char)**p)) (*p)++;
    while (*e > *p && isspace((unsigned char)(*e)[-1])) (*e)--;
}

/* Line n of a kernel file as messages show it: from its "kgate:" on. */
static const char *contract_line_text(const plan_ctx *sub, int n, size_t *len)
{
    const char *t = line_text(sub, n, len);
    for (size_t i = 0; i + 6 <= *len; i++)
        if (memcmp(t + i, "kgate:", 6) == 0) {
            *len -= i;
            return t + i;
        }
    return t;
}

/* One "KEY = VALUE" of a contract line into k->it; sub names the kernel
 * file in messages. */
static void contract_item_add(plan_ctx *sub, kernel_contract *k, const char *entry, const char *p, const char *pend,
                              int line)
{
    size_t ll;
    const char *lt = contract_line_text(sub, line, &ll);
    const char *eq = memchr(p, '=', (size_t)(pend - p));
    if (eq == NULL) {
        perr(sub, line, "expected 'kgate: KEY = VALUE' in a kernel contract", lt, ll,
             "one KEY = VALUE per line, or several separated by ';'");
        return;
    }
    const char *kp = p, *ke = eq, *vp = eq + 1, *ve = pend;
    trim(&kp, &ke);
    trim(&vp, &ve);
    int is_ops = (size_t)(ke - kp) == 3 && memcmp(kp, "ops", 3) == 0;
    int ki = -1, allowed = is_ops;
    for (int i = 0; !is_ops && contract_keys[i]; i++)
        if (strlen(contract_keys[i]) == (size_t)(ke - kp) && memcmp(contract_keys[i], kp, (size_t)(ke - kp)) == 0) {
            allowed = 1;
            ki = key_index(SEC_ARM, contract_keys[i]);
        }
    if (!allowed) {
        perr(sub, line, "unknown key in a kernel contract", lt, ll,
             "a contract gives entry, requires, grid, block, shared, args (and their 2 and 3 forms) or ops");
        return;
    }
    if (ki >= 0 && entry[0] != '\0' && strcmp(plan_keys[ki].key, "entry") == 0) {
        perr(sub, line, "'entry' inside an [ENTRY] contract line", lt, ll,
             "an [ENTRY] line gives the keys of that entry; name the default entry on a line of its own");
        return;
    }
    if (vp == ve) {
        perr(sub, line, "empty value in a kernel contract", lt, ll, "give a value, or remove the key");
        return;
    }
    if ((size_t)(ve - vp) > PLAN_VALUE_MAX) {
        perr(sub, line, "value too long in a kernel contract", lt, ll, "at most %d characters", PLAN_VALUE_MAX);
        return;
    }
    for (int i = 0; i < k->n; i++)
        if (k->it[i].ki == ki && strcmp(k->it[i].entry, entry) == 0) {
            perr(sub, line, "key given twice in a kernel contract", lt, ll, "line %d gives it too; keep one",
                 k->it[i].line);
            return;
        }
    if (k->n >= CONTRACT_MAX_LINES) {
        perr(sub, line, "too many keys in a kernel contract", lt, ll, "at most %d", CONTRACT_MAX_LINES);
        return;
    }
    for (const char *s = vp; s < ve; s++)
        if ((unsigned char)*s < 0x20 || (unsigned char)*s >= 0x7f) {
            perr(sub, line, "a kernel contract value holds a byte that is not printable ASCII", lt, ll,
                 "write the value in plain ASCII");
            return;
        }
    contract_item *it = &k->it[k->n];
    memset(it, 0, sizeof *it);
    snprintf(it->entry, sizeof it->entry, "%s", entry);
    it->ki = ki;
    it->line = line;
    memcpy(it->value, vp, (size_t)(ve - vp));
    it->value[ve - vp] = '\0';
    /* the value must be one the plan would accept */
    if (ki >= 0) {
        kg_arm scratch;
        memset(&scratch, 0, sizeof scratch);
        if (set_value(sub, &plan_keys[ki], &scratch, it->value, line) != 0) return;
        if (strcmp(plan_keys[ki].key, "requires") == 0) {
            kg_err e = { 0 };
            if (kg_expr_check_conds("requires", it->value, &e) != KG_OK) {
                perr(sub, line, "bad requires in a kernel contract", lt, ll, "%s", e.msg);
                return;
            }
        }
    } else {
        kg_arm scratch;
        memset(&scratch, 0, sizeof scratch);
        if (set_value(sub, &plan_keys[key_index(SEC_ARM, "cases")], &scratch, it->value, line) != 0) return;
        snprintf(it->value, sizeof it->value, "%.*s", PLAN_VALUE_MAX, scratch.cases);
    }
    k->n++;
}

/* Parses the contract lines of the leading comment of text (the kernel
 * file named sub->name): a block comment, or a run of // lines, after
 * nothing but blank space.  Errors go to sub. */
static void contract_parse(plan_ctx *sub, kernel_contract *k)
{
    const char *p = sub->text, *end = sub->text + sub->len;
    k->n = 0;
    while (p < end && isspace((unsigned char)*p)) p++;
    if (end - p < 2 || p[0] != '/' || (p[1] != '*' && p[1] != '/')) return;
    int block = p[1] == '*';
    const char *cend = end;
    if (block) {
        const char *q = p + 2;
        while (q + 1 < end && !(q[0] == '*' && q[1] == '/')) q++;
        cend = q + 1 < end ? q : end;
        p += 2;
    }
    int line = 1;
    for (const char *s = sub->text; s < p; s++) line += *s == '\n';
    const char *ls = p;
    while (ls < cend && !sub->failed) {
        const char *le = memchr(ls, '\n', (size_t)(cend - ls));
        if (le == NULL) le = cend;
        const char *q = ls, *qe = le;
        trim(&q, &qe);
        if (!block) {
            /* a run of // lines: it ends at the first other line */
            if (qe - q < 2 || q[0] != '/' || q[1] != '/') break;
            q += 2;
        } else if (q < qe && *q == '*') {
            q++;
        }
        while (q < qe && isspace((unsigned char)*q)) q++;
        if (qe - q >= 6 && memcmp(q, "kgate:", 6) == 0) {
            q += 6;
            while (q < qe && isspace((unsigned char)*q)) q++;
            char entry[KG_NAME_MAX] = "";
            if (q < qe && *q == '[') {
                const char *rb = memchr(q, ']', (size_t)(qe - q));
                const char *np = q + 1, *ne = rb ? rb : q;
                if (rb != NULL) trim(&np, &ne);
                if (rb == NULL || ne == np || (size_t)(ne - np) >= sizeof entry) {
                    size_t ll;
                    const char *lt = contract_line_text(sub, line, &ll);
                    perr(sub, line, "bad [ENTRY] in a kernel contract", lt, ll,
                         "write 'kgate: [ENTRY] KEY = VALUE', ENTRY a kernel's entry symbol");
                    break;
                }
                memcpy(entry, np, (size_t)(ne - np));
                entry[ne - np] = '\0';
                if (!ident_ok(entry)) {
                    size_t ll;
                    const char *lt = contract_line_text(sub, line, &ll);
                    perr(sub, line, "bad [ENTRY] in a kernel contract", lt, ll, "ENTRY must be a C identifier");
                    break;
                }
                q = rb + 1;
            }
            /* "a = 1; b = 2": ';' never appears in a value */
            while (!sub->failed) {
                const char *semi = memchr(q, ';', (size_t)(qe - q));
                const char *pe = semi ? semi : qe;
                contract_item_add(sub, k, entry, q, pe, line);
                if (semi == NULL) break;
                q = semi + 1;
            }
        }
        line++;
        ls = le + 1;
    }
}

/* The contract item for key ki of an arm with entry e: its [e] line, else
 * the file-wide one; NULL when neither. */
static const contract_item *contract_find(const kernel_contract *k, int ki, const char *e)
{
    const contract_item *wide = NULL;
    for (int i = 0; i < k->n; i++) {
        if (k->it[i].ki != ki) continue;
        if (k->it[i].entry[0] == '\0') wide = &k->it[i];
        else if (strcmp(k->it[i].entry, e) == 0) return &k->it[i];
    }
    return wide;
}

/* Arm a takes the contract of its source (see above).  A source that
 * cannot be read has no contract here: loading it reports that. */
static void apply_contract(plan_ctx *ctx, int a)
{
    kg_plan *plan = ctx->plan;
    kg_arm *arm = &plan->arms[a];
    key_lines *kl = &ctx->arm_lines[a];
    if (arm->role == KG_ROLE_CONTROL || arm->source[0] == '\0' || arm->image[0] != '\0') return;
    char path[KG_PATH_MAX + 8];
    int n = arm->source[0] == '/' || plan->base_dir[0] == '\0'
                ? snprintf(path, sizeof path, "%s", arm->source)
                : snprintf(path, sizeof path, "%s/%s", plan->base_dir, arm->source);
    if (n < 0 || (size_t)n >= sizeof path) return;
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > (off_t)CONTRACT_MAX_BYTES) return;
    char *text = NULL;
    size_t len = 0;
    if (kg_read_file(path, &text, &len, NULL) != KG_OK) return;
    plan_ctx sub;
    memset(&sub, 0, sizeof sub);
    sub.text = text;
    sub.len = len;
    sub.name = path;
    kernel_contract *k = malloc(sizeof *k);
    if (k == NULL) {
        free(text);
        perr_nomem(ctx);
        return;
    }
    contract_parse(&sub, k);
    if (sub.failed) {
        snprintf(ctx->emsg, sizeof ctx->emsg, "%.900s (the kernel contract of [arm %s])", sub.emsg, arm->name);
        ctx->failed = 1;
        ctx->code = sub.code;
        ctx->eline = arm->line;
        goto done;
    }
    int k_entry = key_index(SEC_ARM, "entry");
    if (!kl->at[k_entry]) {
        const contract_item *it = contract_find(k, k_entry, "");
        if (it != NULL) snprintf(arm->entry, sizeof arm->entry, "%.*s", (int)sizeof arm->entry - 1, it->value);
    }
    const contract_item *ops = contract_find(k, -1, arm->entry);
    if (ops != NULL && !list_has(ops->value, arm->op)) {
        size_t ll;
        const char *lt = contract_line_text(&sub, ops->line, &ll);
        perr(&sub, ops->line, "the kernel contract does not list the arm's op", lt, ll,
             "[arm %s] implements %s: fix its op, or its source", arm->name, arm->op);
        snprintf(ctx->emsg, sizeof ctx->emsg, "%s", sub.emsg);
        ctx->failed = 1;
        ctx->code = KG_EINPUT;
        ctx->eline = arm->line;
        goto done;
    }
    int own_chain = 0;
    for (int i = 0; contract_keys[i]; i++)
        if (chain_key(contract_keys[i]) && kl->at[key_index(SEC_ARM, contract_keys[i])]) own_chain = 1;
    for (int i = 0; contract_keys[i]; i++) {
        int ki = key_index(SEC_ARM, contract_keys[i]);
        if (ki == k_entry || kl->at[ki] || (own_chain && chain_key(contract_keys[i]))) continue;
        const contract_item *it = contract_find(k, ki, arm->entry);
        if (it != NULL) snprintf((char *)field_ptr(arm, &plan_keys[ki]), plan_keys[ki].size, "%s", it->value);
    }
done:
    free(k);
    free(text);
}

static void finish(plan_ctx *ctx)
{
    kg_plan *plan = ctx->plan;
    if (ctx->nsections == 0) {
        size_t l;
        const char *t = line_text(ctx, 1, &l);
        perr(ctx, 1, "empty plan", t, l,
             "a plan needs [case NAME] and [arm NAME] sections; see docs/plan-format.md");
        return;
    }
    expand_axes(ctx);
    if (ctx->failed) return;
    if (plan->ncases == 0) {
        size_t l;
        const char *t = line_text(ctx, 1, &l);
        perr(ctx, 1, "plan has no cases", t, l, "add a [case NAME] section with op and dtype");
        return;
    }
    if (plan->narms == 0) {
        size_t l;
        const char *t = line_text(ctx, 1, &l);
        perr(ctx, 1, "plan has no arms", t, l, "add an [arm NAME] section with op and source");
        return;
    }
    for (int o = 0; o < plan->nops && !ctx->failed; o++) check_op(ctx, o);
    for (int c = 0; c < plan->ncases && !ctx->failed; c++)
        check_required(ctx, SEC_CASE, c, plan->cases[c].name, plan->cases[c].line);
    for (int a = 0; a < plan->narms && !ctx->failed; a++) check_arm(ctx, a);
    /* the kernel contracts of the arms' sources, before a control copies its baseline */
    for (int a = 0; a < plan->narms && !ctx->failed; a++) apply_contract(ctx, a);
    if (!ctx->failed && plan->campaign.inputs == KG_INPUTS_FRESH && plan->campaign.pack > KG_PLAN_MAX_FRESH_PACK) {
        /* every operation of a sample reads inputs of its own */
        int ln = ctx->camp_lines.at[key_index(SEC_CAMPAIGN, "pack")];
        size_t l;
        const char *t = line_text(ctx, ln, &l);
        perr(ctx, ln, "inputs = fresh holds an input set per operation of a sample", t, l,
             "use pack <= %d, or inputs = resident (whose samples reuse their inputs)", KG_PLAN_MAX_FRESH_PACK);
    }
    if (!ctx->failed && plan->campaign.reference[0] != '\0') {
        int ra = kg_plan_find_arm(plan, plan->campaign.reference);
        if (ra < 0 || plan->arms[ra].role != KG_ROLE_BASELINE) {
            int ln = ctx->camp_lines.at[key_index(SEC_CAMPAIGN, "reference")];
            size_t l;
            const char *t = line_text(ctx, ln, &l);
            char hint[2 * KG_NAME_MAX + 64];
            perr(ctx, ln, ra < 0 ? "reference names no arm" : "reference names an arm that is not a baseline", t, l,
                 "name an arm with role = baseline, or remove the key to compare with every baseline%s",
                 variant_hint(plan, plan->campaign.reference, hint, sizeof hint));
        }
    }
    for (int c = 0; c < plan->ncases && !ctx->failed; c++) {
        int found = 0;
        for (int a = 0; a < plan->narms && !found; a++)
            found = plan->arms[a].role == KG_ROLE_BASELINE && kg_plan_arm_applies(plan, a, c);
        if (!found)
            perr(ctx, plan->cases[c].line, "case has no baseline arm", plan->cases[c].name,
                 strlen(plan->cases[c].name),
                 "add an arm with op = %s and role = baseline that runs this case",
                 plan->cases[c].op);
    }
    if (ctx->failed) return;

    if (!ctx->camp_lines.at[key_index(SEC_CAMPAIGN, "name")])
        stem_name(plan->path, plan->campaign.name, sizeof plan->campaign.name);
    if (!ctx->gate_lines.at[key_index(SEC_GATE, "min_reduction")])
        plan->gate.min_reduction = plan->campaign.margin;
    plan_notes(ctx);

    /* a control is a second instance of its baseline's kernel */
    for (int a = 0; a < plan->narms; a++) {
        kg_arm *arm = &plan->arms[a];
        if (arm->role != KG_ROLE_CONTROL) continue;
        const kg_arm *of = &plan->arms[kg_plan_find_arm(plan, arm->of)];
        for (int i = 0; i < PLAN_NKEYS; i++) {
            const plan_key *k = &plan_keys[i];
            if (k->sec == SEC_ARM && (k->flags & F_INHERIT))
                memcpy(field_ptr(arm, k), field_cptr(of, k), k->size);
        }
    }
    for (int a = 0; a < plan->narms && !ctx->failed; a++) check_requires(ctx, a);
    if (!ctx->failed) check_case_baselines(ctx);
}

/* ---- canonical form ---------------------------------------------------- */

/* The shortest %g text that reads back as exactly v, without an exponent
 * for numbers from 1 to 1e17 ("2000", not "2e+03"). */
static void format_double(double v, char *out, size_t cap)
{
    int int_digits = 0;
    if (fabs(v) >= 1.0 && fabs(v) < 1e17) int_digits = (int)floor(log10(fabs(v))) + 1;
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(out, cap, "%.*g", prec > int_digits ? prec : int_digits, v);
        if (strtod(out, NULL) == v) return;
    }
}

/* 1 when a F_QUIET key holds its default (enum, real or bool keys). */
static int quiet_default(const plan_key *k, const void *f)
{
    if (!(k->flags & F_QUIET) || k->def == NULL) return 0;
    if (k->kind == K_ENUM) {
        int v;
        memcpy(&v, f, sizeof v);
        return k->words[v >= 0 ? v : 0] != NULL && v >= 0 && strcmp(k->words[v], k->def) == 0;
    }
    if (k->kind == K_REAL || k->kind == K_FRAC) {
        double v;
        memcpy(&v, f, sizeof v);
        return v == strtod(k->def, NULL);
    }
    if (k->kind == K_BOOL) {
        int v;
        memcpy(&v, f, sizeof v);
        return v == (strcmp(k->def, "yes") == 0);
    }
    return 0;
}

static void write_section(kg_sb *tb, int sec, const void *base, int is_control)
{
    for (int i = 0; i < PLAN_NKEYS; i++) {
        const plan_key *k = &plan_keys[i];
        if (k->sec != sec || (is_control && (k->flags & F_INHERIT))) continue;
        const void *f = (const char *)base + k->off;
        if (quiet_default(k, f)) continue;
        switch (k->kind) {
        case K_INT: {
            int v;
            memcpy(&v, f, sizeof v);
            if (!((k->flags & F_UNSET) && v == -1)) kg_sb_printf(tb, "%s = %d\n", k->key, v);
            break;
        }
        case K_I64: {
            int64_t v;
            memcpy(&v, f, sizeof v);
            if (!((k->flags & F_UNSET) && v == -1))
                kg_sb_printf(tb, "%s = %" PRId64 "\n", k->key, v);
            break;
        }
        case K_U64: {
            uint64_t v;
            memcpy(&v, f, sizeof v);
            kg_sb_printf(tb, "%s = %" PRIu64 "\n", k->key, v);
            break;
        }
        case K_REAL: case K_FRAC: {
            double v;
            char num[40];
            memcpy(&v, f, sizeof v);
            format_double(v, num, sizeof num);
            kg_sb_printf(tb, "%s = %s\n", k->key, num);
            break;
        }
        case K_BOOL: {
            int v;
            memcpy(&v, f, sizeof v);
            kg_sb_printf(tb, "%s = %s\n", k->key, v ? "yes" : "no");
            break;
        }
        case K_ENUM: {
            int v, n = 0;
            memcpy(&v, f, sizeof v);
            while (k->words[n]) n++;
            kg_sb_printf(tb, "%s = %s\n", k->key, v >= 0 && v < n ? k->words[v] : "?");
            break;
        }
        default: {
            const char *s = f;
            if (s[0] != '\0') kg_sb_printf(tb, "%s = %.*s\n", k->key, (int)k->size, s);
            break;
        }
        }
    }
}

static int make_canonical(kg_plan *plan)
{
    int rc = KG_OK;
    kg_sb tb = {0};
    kg_sb_printf(&tb, "[campaign]\n");
    write_section(&tb, SEC_CAMPAIGN, &plan->campaign, 0);
    for (int o = 0; o < plan->nops; o++)
        kg_sb_printf(&tb, "\n[op %s]\nsource = %s\nsha256 = %s\n", plan->ops[o].name, plan->ops[o].source,
                     plan->ops[o].sha256);
    for (int c = 0; c < plan->ncases; c++) {
        kg_sb_printf(&tb, "\n[case %s]\n", plan->cases[c].name);
        write_section(&tb, SEC_CASE, &plan->cases[c], 0);
        /* the op's variables, by name: the order they were written in
         * does not change the hash */
        const kg_case *kc = &plan->cases[c];
        int order[KG_CASE_VARS];
        kg_case_var_order(kc, order);
        for (int k = 0; k < kc->nvars; k++)
            kg_sb_printf(&tb, "%s = %s\n", kc->vars[order[k]].name, kc->vars[order[k]].text);
    }
    for (int a = 0; a < plan->narms; a++) {
        kg_sb_printf(&tb, "\n[arm %s]\n", plan->arms[a].name);
        write_section(&tb, SEC_ARM, &plan->arms[a], plan->arms[a].role == KG_ROLE_CONTROL);
    }
    kg_sb_printf(&tb, "\n[gate]\n");
    write_section(&tb, SEC_GATE, &plan->gate, 0);
    if (tb.oom) {
        rc = KG_ENOMEM;
        goto done;
    }
    kg_sha256_hex(tb.buf, tb.len, plan->hash);
    plan->canonical = tb.buf;
    tb.buf = NULL;
done:
    free(tb.buf);
    return rc;
}

/* ---- public API -------------------------------------------------------- */

int kg_plan_parse(const char *text, size_t len, const char *name, const char *base_dir,
                  kg_plan **out, kg_err *err)
{
    int rc = KG_OK;
    plan_ctx ctx;
    kg_plan *plan = NULL;
    memset(&ctx, 0, sizeof ctx);
    if (out == NULL) return kg_errorf(err, KG_EINTERNAL, "kg_plan_parse: out is NULL");
    *out = NULL;
    if (name == NULL) name = "<plan>";
    if (text == NULL && len > 0) return kg_errorf(err, KG_EINTERNAL, "kg_plan_parse: text is NULL");
    if (len > PLAN_FILE_MAX_BYTES)
        return kg_errorf(err, KG_EINPUT, "%s:1: plan too large: '%zu bytes' (at most %u bytes)",
                         name, len, PLAN_FILE_MAX_BYTES);
    plan = calloc(1, sizeof *plan);
    if (plan == NULL) return kg_errorf(err, KG_ENOMEM, "%s: out of memory", name);
    snprintf(plan->path, sizeof plan->path, "%s", name);
    snprintf(plan->base_dir, sizeof plan->base_dir, "%s", base_dir ? base_dir : ".");

    ctx.text = text ? text : "";
    ctx.len = len;
    ctx.name = name;
    ctx.plan = plan;
    apply_defaults(&ctx, SEC_CAMPAIGN, &plan->campaign);
    apply_defaults(&ctx, SEC_GATE, &plan->gate);
    if (ctx.code == KG_EINTERNAL) {
        rc = kg_errorf(err, KG_EINTERNAL, "%s", ctx.emsg);
        goto done;
    }
    check_bytes(&ctx);
    if (!ctx.failed) {
        int r = ini_parse_stream(plan_reader, &ctx, plan_handler, &ctx);
        /* r > 0: libinih found a line without '=' (its only complaint, as it
         * never sees headers); it wins when it is the earlier line */
        if (r > 0 && ctx.code != KG_ENOMEM && (!ctx.failed || r < ctx.eline)) {
            size_t l;
            const char *t = line_text(&ctx, r, &l);
            ctx.failed = 0;
            perr(&ctx, r, "expected 'key = value'", t, l,
                 "a line is a [section], a 'key = value' or a comment starting with ; or #");
        } else if (r < 0 && !ctx.failed) {
            perr_nomem(&ctx);
        }
    }
    if (!ctx.failed) finish(&ctx);
    if (ctx.failed) {
        rc = kg_errorf(err, ctx.code, "%s", ctx.emsg);
        goto done;
    }
    rc = make_canonical(plan);
    if (rc != KG_OK) {
        kg_errorf(err, rc, "%s: cannot build the canonical plan: %s", name, kg_strerror(rc));
        goto done;
    }
    *out = plan;
    plan = NULL;
done:
    for (int i = 0; i < ctx.naxsec; i++) free(ctx.axes[i]);
    free(ctx.axes);
    free(ctx.case_lines);
    free(ctx.arm_lines);
    kg_plan_free(plan);
    return rc;
}

int kg_plan_load(const char *path, kg_plan **out, kg_err *err)
{
    int rc = KG_OK;
    FILE *fp = NULL;
    char *text = NULL;
    size_t len = 0, cap = 0;
    if (out == NULL || path == NULL)
        return kg_errorf(err, KG_EINTERNAL, "kg_plan_load: NULL argument");
    *out = NULL;
    fp = fopen(path, "rb");
    if (fp == NULL) {
        rc = kg_errorf(err, KG_EIO, "%s: cannot open plan: %s", path, strerror(errno));
        goto done;
    }
    for (;;) {
        if (len == cap) {
            if (cap > PLAN_FILE_MAX_BYTES) {
                rc = kg_errorf(err, KG_EINPUT, "%s:1: plan too large: '%zu bytes' (at most %u bytes)",
                               path, len, PLAN_FILE_MAX_BYTES);
                goto done;
            }
            size_t ncap = cap ? cap * 2 : 4096;
            char *t = realloc(text, ncap + 1);
            if (t == NULL) {
                rc = kg_errorf(err, KG_ENOMEM, "%s: out of memory reading the plan", path);
                goto done;
            }
            text = t;
            cap = ncap;
        }
        size_t n = fread(text + len, 1, cap - len, fp);
        len += n;
        if (n == 0) break;
    }
    if (ferror(fp)) {
        rc = kg_errorf(err, KG_EIO, "%s: cannot read plan: %s", path, strerror(errno));
        goto done;
    }
    text[len] = '\0';

    /* relative sources resolve against the plan's own folder */
    char dir[KG_PATH_MAX];
    const char *slash = strrchr(path, '/');
    if (slash == NULL) snprintf(dir, sizeof dir, ".");
    else if (slash == path) snprintf(dir, sizeof dir, "/");
    else snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
    char *real = realpath(dir, NULL);
    if (real != NULL && strlen(real) < sizeof dir) snprintf(dir, sizeof dir, "%s", real);
    free(real);
    rc = kg_plan_parse(text, len, path, dir, out, err);
done:
    if (fp != NULL) fclose(fp);
    free(text);
    return rc;
}

void kg_plan_free(kg_plan *plan)
{
    if (plan == NULL) return;
    free(plan->cases);
    free(plan->arms);
    free(plan->canonical);
    free(plan);
}

int kg_case_var(const kg_case *c, const char *name, kg_var_type *type, int64_t *i, double *r)
{
    if (c == NULL || name == NULL) return 0;
    const struct { const char *n; int64_t v; } ints[] = { { "M", c->M }, { "N", c->N }, { "K", c->K },
                                                        { "splits", c->splits } };
    for (size_t k = 0; k < sizeof ints / sizeof ints[0]; k++)
        if (strcmp(name, ints[k].n) == 0) {
            if (ints[k].v < 0) return 0;
            if (type) *type = KG_VAR_INT;
            if (i) *i = ints[k].v;
            if (r) *r = (double)ints[k].v;
            return 1;
        }
    if (strcmp(name, "eps") == 0 || strcmp(name, "scale") == 0) {
        double v = name[0] == 'e' ? c->eps : c->scale;
        if (type) *type = KG_VAR_REAL;
        if (i) *i = (int64_t)v;
        if (r) *r = v;
        return 1;
    }
    for (int k = 0; k < c->nvars; k++)
        if (strcmp(name, c->vars[k].name) == 0) {
            if (type) *type = c->vars[k].type;
            if (i) *i = c->vars[k].i;
            if (r) *r = c->vars[k].r;
            return 1;
        }
    return 0;
}

int kg_var_is_shape(const char *name)
{
    return strcmp(name, "M") == 0 || strcmp(name, "N") == 0 || strcmp(name, "K") == 0 || strcmp(name, "splits") == 0;
}

void kg_case_var_order(const kg_case *c, int order[KG_CASE_VARS])
{
    int done[KG_CASE_VARS] = { 0 };
    for (int k = 0; k < c->nvars; k++) {
        int best = -1;
        for (int j = 0; j < c->nvars; j++)
            if (!done[j] && (best < 0 || strcmp(c->vars[j].name, c->vars[best].name) < 0)) best = j;
        done[best] = 1;
        order[k] = best;
    }
}

void kg_plan_op_source_path(const kg_plan *plan, int o, char *out, size_t cap)
{
    const char *src = plan->ops[o].source;
    if (src[0] == '/' || plan->base_dir[0] == '\0') snprintf(out, cap, "%s", src);
    else snprintf(out, cap, "%s/%s", plan->base_dir, src);
}

int kg_plan_find_op(const kg_plan *plan, const char *name)
{
    if (plan == NULL || name == NULL) return -1;
    for (int i = 0; i < plan->nops; i++)
        if (strcmp(plan->ops[i].name, name) == 0) return i;
    return -1;
}

int kg_plan_find_case(const kg_plan *plan, const char *name)
{
    if (plan == NULL || name == NULL) return -1;
    for (int i = 0; i < plan->ncases; i++)
        if (strcmp(plan->cases[i].name, name) == 0) return i;
    return -1;
}

int kg_plan_find_arm(const kg_plan *plan, const char *name)
{
    if (plan == NULL || name == NULL) return -1;
    for (int i = 0; i < plan->narms; i++)
        if (strcmp(plan->arms[i].name, name) == 0) return i;
    return -1;
}

int kg_plan_arm_applies(const kg_plan *plan, int a, int c)
{
    if (plan == NULL || a < 0 || a >= plan->narms || c < 0 || c >= plan->ncases) return 0;
    const kg_arm *arm = &plan->arms[a];
    const kg_case *cs = &plan->cases[c];
    if (strcmp(arm->op, cs->op) != 0) return 0;
    return arm->cases[0] == '\0' || list_has(arm->cases, cs->name);
}

size_t kg_plan_name_base(const char *name)
{
    if (name == NULL) return 0;
    const char *open = strchr(name, '[');
    return open != NULL && open != name && expanded_name_ok(name, strlen(name)) ? (size_t)(open - name) : 0;
}

/* The j-th "AXIS=VALUE" of expanded name nm: its axis and value spans; 0 when it has none. */
int kg_plan_name_axis(const char *nm, int j, const char **ax, size_t *axl, const char **val, size_t *vall)
{
    const char *p = strchr(nm, '[');
    if (p == NULL) return 0;
    p++;
    for (int k = 0; *p != '\0' && *p != ']'; k++) {
        const char *eq = strchr(p, '='), *e = p + strcspn(p, ",]");
        if (eq == NULL || eq > e) return 0;
        if (k == j) {
            *ax = p;
            *axl = (size_t)(eq - p);
            *val = eq + 1;
            *vall = (size_t)(e - eq - 1);
            return 1;
        }
        p = *e == ',' ? e + 1 : e;
    }
    return 0;
}

int kg_plan_axes_text(const kg_plan *plan, int is_arm, int i, char *buf, size_t cap)
{
    if (cap > 0) buf[0] = '\0';
    int n = plan == NULL ? 0 : is_arm ? plan->narms : plan->ncases;
    if (i < 0 || i >= n || cap == 0) return 0;
#define NAME_AT(k) (is_arm ? plan->arms[k].name : plan->cases[k].name)
    const char *nm = NAME_AT(i);
    size_t b = kg_plan_name_base(nm);
    if (b == 0) return 0;
    int count = 0;
    for (int k = 0; k < n; k++)
        count += kg_plan_name_base(NAME_AT(k)) == b && strncmp(NAME_AT(k), nm, b) == 0;
    size_t o = 0;
    const char *ax, *val;
    size_t axl, vall;
    for (int j = 0; kg_plan_name_axis(nm, j, &ax, &axl, &val, &vall) && o < cap; j++) {
        o += (size_t)snprintf(buf + o, cap - o, "%s%.*s =", j ? "; " : "", (int)axl, ax);
        /* its values, each once, in the order the variants come */
        int nv = 0;
        for (int k = 0; k < n && o < cap; k++) {
            const char *vk = NAME_AT(k), *axk, *valk;
            size_t axlk, vallk;
            if (!(kg_plan_name_base(vk) == b && strncmp(vk, nm, b) == 0)) continue;
            if (!kg_plan_name_axis(vk, j, &axk, &axlk, &valk, &vallk)) continue;
            int seen = 0;
            for (int q = 0; q < k && !seen; q++) {
                const char *vq = NAME_AT(q), *axq, *valq;
                size_t axlq, vallq;
                seen = kg_plan_name_base(vq) == b && strncmp(vq, nm, b) == 0 &&
                       kg_plan_name_axis(vq, j, &axq, &axlq, &valq, &vallq) && vallq == vallk &&
                       memcmp(valq, valk, vallk) == 0;
            }
            if (seen) continue;
            o += (size_t)snprintf(buf + o, cap - o, "%s %.*s", nv++ ? "," : "", (int)vallk, valk);
        }
    }
#undef NAME_AT
    return count;
}

int kg_arm_is_image(const kg_arm *arm)
{
    return arm != NULL && arm->image[0] != '\0';
}

kg_image_kind kg_image_kind_of(const char *path)
{
    if (path == NULL) return KG_IMAGE_NONE;
    const char *base = strrchr(path, '/');
    base = base != NULL ? base + 1 : path;
    const char *dot = strrchr(base, '.');
    if (dot == NULL || dot == base) return KG_IMAGE_NONE;
    if (strcmp(dot, ".so") == 0) return KG_IMAGE_SO;
    if (strcmp(dot, ".cubin") == 0) return KG_IMAGE_CUBIN;
    if (strcmp(dot, ".ptx") == 0) return KG_IMAGE_PTX;
    if (strcmp(dot, ".fatbin") == 0) return KG_IMAGE_FATBIN;
    return KG_IMAGE_NONE;
}

const char *kg_image_kind_name(kg_image_kind k)
{
    switch (k) {
    case KG_IMAGE_SO: return "so";
    case KG_IMAGE_CUBIN: return "cubin";
    case KG_IMAGE_PTX: return "ptx";
    case KG_IMAGE_FATBIN: return "fatbin";
    case KG_IMAGE_NONE: break;
    }
    return "none";
}

int kg_plan_source_path(const kg_plan *plan, int a, char *out, size_t cap, kg_err *err)
{
    if (plan == NULL || out == NULL || cap == 0 || a < 0 || a >= plan->narms)
        return kg_errorf(err, KG_EINTERNAL, "kg_plan_source_path: bad arguments");
    out[0] = '\0';
    const kg_arm *arm = &plan->arms[a];
    /* a control's source is written in its baseline's section */
    int where = a;
    if (arm->role == KG_ROLE_CONTROL) {
        int o = kg_plan_find_arm(plan, arm->of);
        if (o >= 0) where = o;
    }
    int line = plan->arms[where].line;
    char shown[PLAN_SHOW_MAX * 4 + 16];
    int image = kg_arm_is_image(arm);
    const char *file = image ? arm->image : arm->source;
    const char *what = image ? "kernel image" : "kernel source";
    if (file[0] == '\0')
        return kg_errorf(err, KG_EINPUT,
                         "%s:%d: arm has no source: '%s' (it is a builtin arm: %s)", plan->path,
                         line, arm->name, arm->builtin[0] ? arm->builtin : "none");
    int n;
    if (file[0] == '/' || plan->base_dir[0] == '\0')
        n = snprintf(out, cap, "%s", file);
    else
        n = snprintf(out, cap, "%s/%s", plan->base_dir, file);
    if (n < 0 || (size_t)n >= cap) {
        show_text(shown, sizeof shown, file, strlen(file));
        out[0] = '\0';
        return kg_errorf(err, KG_EINPUT, "%s:%d: %s path too long: '%s' (shorten it)",
                         plan->path, line, what, shown);
    }
    struct stat st;
    if (stat(out, &st) != 0 || !S_ISREG(st.st_mode)) {
        show_text(shown, sizeof shown, out, strlen(out));
        int exists = stat(out, &st) == 0;
        out[0] = '\0';
        return kg_errorf(err, KG_EINPUT,
                         "%s:%d: %s %s: '%s' (fix '%s' of [arm %s]; relative "
                         "paths start at the plan's folder %s)",
                         plan->path, line, what, exists ? "is not a regular file" : "not found", shown,
                         image ? "image" : "source", plan->arms[where].name, plan->base_dir);
    }
    return KG_OK;
}

const char *kg_dtype_name(kg_dtype dt)
{
    switch (dt) {
    case KG_DT_F32: return "f32";
    case KG_DT_F16: return "f16";
    case KG_DT_BF16: return "bf16";
    case KG_DT_F64: return "f64";
    case KG_DT_I32: return "i32";
    case KG_DT_I8: return "i8";
    case KG_DT_E4M3: return "e4m3";
    case KG_DT_E5M2: return "e5m2";
    }
    return "?";
}

size_t kg_dtype_size(kg_dtype dt)
{
    switch (dt) {
    case KG_DT_F32: return 4;
    case KG_DT_F16: return 2;
    case KG_DT_BF16: return 2;
    case KG_DT_F64: return 8;
    case KG_DT_I32: return 4;
    case KG_DT_I8: case KG_DT_E4M3: case KG_DT_E5M2: return 1;
    }
    return 0;
}

const char *kg_role_name(kg_role role)
{
    switch (role) {
    case KG_ROLE_BASELINE: return "baseline";
    case KG_ROLE_CANDIDATE: return "candidate";
    case KG_ROLE_CONTROL: return "control";
    case KG_ROLE_REFERENCE: return "reference";
    }
    return "?";
}

/* ---- precision contracts ---------------------------------------------- */

int kg_contract_is_default(const kg_contract *ct)
{
    return ct == NULL || (ct->precision == KG_PREC_DTYPE && !(ct->tolerance > 0.0));
}

void kg_contract_text(const kg_contract *ct, kg_dtype dt, char *buf, size_t cap)
{
    if (cap == 0) return;
    if (ct != NULL && ct->tolerance > 0.0) {
        char num[40];
        format_double(ct->tolerance, num, sizeof num);
        snprintf(buf, cap, "tol %s", num);
        return;
    }
    kg_precision p = ct != NULL ? ct->precision : KG_PREC_DTYPE;
    snprintf(buf, cap, "%s", p == KG_PREC_TF32 ? "tf32" : p == KG_PREC_F16ACC ? "f16acc"
                             : p == KG_PREC_BF16ACC ? "bf16acc" : kg_dtype_name(dt));
}

/* log2 of the unit roundoff of the inputs and of the accumulation a
 * named contract allows on a case of dtype dt (-inf: inputs exact) */
static void contract_units(kg_precision p, kg_dtype dt, double *in, double *acc)
{
    *in = p == KG_PREC_TF32 && dt == KG_DT_F32 ? -11.0 : -1e9;
    *acc = p == KG_PREC_F16ACC ? -11.0 : p == KG_PREC_BF16ACC ? -8.0 : -24.0;
}

int kg_contract_weaker(const kg_contract *cand, const kg_contract *base, kg_dtype dt, char *why,
                       size_t cap)
{
    kg_contract d = { KG_PREC_DTYPE, 0.0 };
    if (cand == NULL) cand = &d;
    if (base == NULL) base = &d;
    int weaker;
    if (cand->tolerance > 0.0)
        weaker = !(base->tolerance > 0.0 && cand->tolerance <= base->tolerance);
    else if (base->tolerance > 0.0)
        weaker = 0;
    else {
        double ci, ca, bi, ba;
        contract_units(cand->precision, dt, &ci, &ca);
        contract_units(base->precision, dt, &bi, &ba);
        weaker = ci > bi || ca > ba;
    }
    if (weaker && why != NULL && cap > 0) {
        char a[48], b[48];
        kg_contract_text(cand, dt, a, sizeof a);
        kg_contract_text(base, dt, b, sizeof b);
        snprintf(why, cap, "contract %s is weaker than %s", a, b);
    }
    return weaker;
}

int kg_plan_square(const kg_plan *plan)
{
    long long need = 1;
    for (int c = 0; c < plan->ncases; c++) {
        long long n = 0;
        for (int a = 0; a < plan->narms; a++) n += kg_plan_arm_applies(plan, a, c);
        if (n < 1) continue;
        long long g = need, h = n;
        while (h != 0) {
            long long t = g % h;
            g = h;
            h = t;
        }
        need = need / g * n;
        if (need > 64) return 64;
    }
    return (int)need;
}

/* kgate/plan.h: campaign plans (INI files), their canonical form and hash.
 *
 * A plan declares everything about a campaign before the first sample
 * exists: the protocol ([campaign]), the problem instances ([case NAME]),
 * the implementations ([arm NAME]) and the decision rule ([gate]).
 * The parser (libinih) rejects unknown keys, missing required keys, bad
 * numbers, duplicate names and junk with a one-line message naming
 * file:line and the offending text.  The canonical form is a normalised
 * re-serialisation (fixed section and key order, defaults made explicit,
 * comments and spacing dropped); its SHA-256 identifies the plan.
 *
 * This module does not know ops or backends; kg_plan_check_ops() in
 * kgate/op.h checks the plan against the op registry, and the backend
 * registry checks the backend's name (kgate/backend.h). */
#ifndef KGATE_PLAN_H
#define KGATE_PLAN_H

#include <stddef.h>
#include <stdint.h>
#include "kgate/err.h"

#define KG_NAME_MAX 64
#define KG_PATH_MAX 1024
#define KG_TEXT_MAX 512
/* Capacities the parser enforces, each with a file:line error. */
#define KG_PLAN_MAX_ROTATE 16   /* campaign key rotate: input sets an arm rotates through */
#define KG_PLAN_MAX_NOTES 4
#define KG_PLAN_MAX_LOOKS 4
#define KG_PLAN_MAX_PROCESSES 10000   /* per direction */
#define KG_PLAN_NOTE_MAX 320
#define KG_MAX_IN 8   /* inputs an op may have (kgate/kernel.h KG_KARGS_MAX_IN) */
#define KG_MAX_OUT 4  /* outputs an op may have (KG_KARGS_MAX_OUT) */
#define KG_PLAN_MAX_FRESH_PACK 16 /* inputs = fresh: the largest pack (an input set per operation) */
#define KG_ARM_MAX_FLAGS 64     /* words in an arm's defines and cflags together */

/* Element types.  The built-in ops take f32, f16 and bf16 inputs; an op a
 * plan declares (docs/ops.md) may give its tensors any of them: outputs
 * f32, f16, bf16, f64 or i32, inputs also i8 and the OCP 8-bit floats
 * e4m3 and e5m2.  The values are kgate/gen.h's KG_GEN_* and the
 * kernels' KG_KDT_*. */
typedef enum {
    KG_DT_F32 = 0, KG_DT_F16 = 1, KG_DT_BF16 = 2, KG_DT_F64 = 3,
    KG_DT_I32 = 4, KG_DT_I8 = 5, KG_DT_E4M3 = 6, KG_DT_E5M2 = 7
} kg_dtype;
#define KG_DT_COUNT 8

typedef enum {
    KG_ROLE_BASELINE = 0,  /* the incumbent ("dev"); the fastest baseline of a round is the reference point */
    KG_ROLE_CANDIDATE = 1, /* what the campaign is about; gated */
    KG_ROLE_CONTROL = 2,   /* a second, separately loaded instance of a baseline (A/A) */
    KG_ROLE_REFERENCE = 3  /* an external reference (e.g. cuBLAS): reported, not gated */
} kg_role;

typedef enum { KG_INTERLEAVE_SAMPLE = 0, KG_INTERLEAVE_BLOCK = 1 } kg_interleave;
typedef enum { KG_GATE_INTERVAL = 0, KG_GATE_CLASSIC = 1 } kg_gate_rule;
/* how the FASTER verdicts of a family (candidates x gated cases) share alpha */
typedef enum { KG_MULT_HOLM = 0, KG_MULT_MAXT = 1, KG_MULT_NONE = 2 } kg_multiplicity;
typedef enum { KG_L2_WARM = 0, KG_L2_COLD = 1 } kg_l2_mode;
typedef enum { KG_INPUTS_RESIDENT = 0, KG_INPUTS_FRESH = 1 } kg_inputs_mode;
/* Which checked outputs the evidence keeps (outputs/, docs/evidence.md):
 * replay, the two checks of every arm verify replays (default); failing,
 * only the outputs of failed checks; all, every output check whose
 * inputs verify can regenerate. */
typedef enum { KG_KEEP_REPLAY = 0, KG_KEEP_FAILING = 1, KG_KEEP_ALL = 2 } kg_keep_mode;
/* An arm's precision contract (docs/admission.md, "Precision contracts"):
 * the error analysis its outputs are checked against.  DTYPE (the
 * default): inputs used exactly, float32 accumulation.  TF32: f32 inputs
 * rounded to 10 mantissa bits before multiplying.  F16ACC, BF16ACC:
 * accumulation in float16 or bfloat16. */
typedef enum { KG_PREC_DTYPE = 0, KG_PREC_TF32 = 1, KG_PREC_F16ACC = 2, KG_PREC_BF16ACC = 3 } kg_precision;
typedef struct kg_contract {
    kg_precision precision;  /* dtype (default), tf32, f16acc, bf16acc */
    double tolerance;        /* > 0: |y - ref| <= tolerance x the row scale instead; 0: none */
} kg_contract;

typedef struct kg_campaign {
    char name[KG_NAME_MAX];
    char backend[16];        /* "auto" (default), "cpu", "fake", "cuda" */
    int device;              /* device ordinal for GPU backends; 0 */
    int warmup;              /* untimed executions per arm per round; 3 */
    int samples;             /* timed executions per arm per round; 10 */
    int rounds;              /* rounds per case per process; 5 */
    int processes;           /* processes per direction; 2 */
    int pack;                /* operations per timed sample; 1 */
    kg_interleave interleave;/* sample (default) or block */
    uint64_t seed;           /* campaign seed for inputs and the fake backend; 1 */
    double alpha;            /* one-sided error rate of the decision; 0.05 */
    double margin;           /* delta_min as a reduction fraction (0.02 = 2%); 0.005 */
    double equivalence;      /* delta_eq as a reduction fraction; 0.01 */
    double control_margin;   /* delta_aa: control/baseline tolerance; 0.0025 */
    double order_min;        /* smallest order effect flagged; 0.0025 */
    double timeout_s;        /* wall-clock limit of one worker process; 600 */
    kg_l2_mode l2;           /* warm (default) or cold */
    kg_inputs_mode inputs;   /* resident (default) or fresh */
    int rotate;              /* input sets rotated between samples; 1 */
    kg_keep_mode keep_outputs; /* which checked outputs the evidence keeps; replay */
    double quiet_s;          /* quiet window before each process, s; 30 */
    char forbid[KG_TEXT_MAX];/* process names that contaminate; "" = the default list */
    double max_load;         /* 1-minute load average bound; 0 = none */
    int repeats;             /* repeats of a contaminated process; 3 */
    char reference[KG_NAME_MAX]; /* the baseline every candidate is compared with; "" = every baseline */
    char selected_from[KG_TEXT_MAX]; /* a confirmation plan: the screen it was selected from; "" = none */
    int looks;               /* group-sequential design: analyses after processes / looks per direction; 1 */
    /* the host watch (quiet.h): the longest wait for a quiet host, s (600),
     * and on the cpu backend the bounds on steal time (10%), on CPU used by
     * other processes, in cores (0: measured and recorded, not judged), and
     * on a fall of the fastest core's clock (15%); 0: not judged */
    double quiet_timeout_s, max_steal, max_foreign_cpu, max_freq_change;
    double quiet_budget_s;   /* the whole campaign's wait for a quiet host, s; 120 (0: no budget) */
    double warm_s;           /* bound on warming the device to a steady clock, s; 5 (0: none) */
    int overlap;             /* the next worker sets up beside the current one's last checks; 1 */
    /* whether the device is a case variable (1: `devices = any`, the
     * shards of a merged campaign may run on different device models);
     * 0: `devices = same`, the default: kgate merge refuses mixed models */
    int devices_any;
    /* how `--shard I/N` splits the campaign (shard.h): KG_SHARD_BY_AUTO
     * (0, the default: by process when the plan has fewer cases than
     * shards, else by case), KG_SHARD_BY_CASE or KG_SHARD_BY_PROCESS */
    int shard_by;
    /* bound_audit = off: a weak-bounded op (docs/ops.md, "The bound
     * audit") is recorded but not refused, and the reports say its bound
     * was not audited; 0: on, the default */
    int bound_audit_off;
    int line;                /* line of the [campaign] header, 0 if absent */
    /* 1: a smoke run's plan (kgate run --smoke, kg_plan_smoke): the
     * plan's checks on a few samples, which decide nothing */
    int smoke;
    int screen;              /* a screen's exploration plan: processes need not complete the load-order square */
} kg_campaign;


/* A case variable an op declares (kgate/op.h kg_op.vars): any name, an
 * integer, a real or a yes/no (1/0).  text is the value as written. */
#define KG_CASE_VARS 16
#define KG_VAR_NAME_MAX 32
typedef enum { KG_VAR_INT = 0, KG_VAR_REAL = 1, KG_VAR_BOOL = 2 } kg_var_type;
typedef struct kg_var {
    char name[KG_VAR_NAME_MAX];
    char text[48];
    kg_var_type type;        /* as written: an integer, a real, or yes/no */
    int64_t i;               /* INT and BOOL */
    double r;                /* every type, as a real */
} kg_var;

typedef struct kg_case {
    char name[KG_NAME_MAX];
    char op[KG_NAME_MAX];    /* op name, e.g. "gemm_bt" (required) */
    kg_dtype dtype;          /* input dtype (required) */
    int64_t M, N, K;         /* shape variables, -1 when not given */
    int64_t splits;          /* split-K factor, -1 when not given */
    double eps;              /* normalisation epsilon, 1e-5 when not given */
    double scale;            /* input value scale; 1.0 */
    int primary;             /* counts for the gate; 1 */
    int line;                /* line of the section header */
    /* the variables of the case's op beyond the keys above
     * (docs/ops.md), e.g. S = 1024 or causal = yes, in the order given */
    int nvars;
    kg_var vars[KG_CASE_VARS];
} kg_case;

/* A further launch of a multi-kernel operation (e.g. the accumulation
 * pass after split-K partials): the same keys as the first launch with
 * a suffix, entry2/grid2/block2/shared2/args2 and entry3/...  An empty
 * entry means no such launch. */
#define KG_EXTRA_LAUNCHES 2
typedef struct kg_launch {
    char entry[KG_NAME_MAX];
    char grid[KG_TEXT_MAX];
    char block[KG_TEXT_MAX];
    char shared[KG_TEXT_MAX];
    char args[KG_TEXT_MAX];
} kg_launch;

typedef struct kg_arm {
    char name[KG_NAME_MAX];
    char op[KG_NAME_MAX];          /* the op this arm implements (required) */
    kg_role role;                  /* candidate when not given */
    char of[KG_NAME_MAX];          /* control: the baseline arm it replicates */
    char source[KG_PATH_MAX];      /* kernel source, relative to the plan's folder */
    char builtin[KG_NAME_MAX];     /* a built-in arm instead of a source ("cublas", "ref") */
    char entry[KG_NAME_MAX];       /* entry symbol; "kernel" */
    char defines[KG_TEXT_MAX];     /* "NAME=VALUE NAME2" passed as -D */
    char cflags[KG_TEXT_MAX];      /* extra compiler flags (cpu backend) */
    char cases[KG_TEXT_MAX];       /* comma-separated case names; empty = every case of the op */
    char grid[KG_TEXT_MAX];        /* GPU: grid expression "x, y, z" over case variables */
    char block[KG_TEXT_MAX];       /* GPU: block expression */
    char shared[KG_TEXT_MAX];      /* GPU: dynamic shared bytes expression */
    char args[KG_TEXT_MAX];        /* GPU: argument names from the op's vocabulary */
    kg_launch extra[KG_EXTRA_LAUNCHES]; /* GPU: launches 2 and 3 of the chain */
    char parity[KG_NAME_MAX];      /* arm whose outputs must be bit-identical */
    int trusted;                   /* 0: untrusted (default) */
    int specialize;                /* cuda: compiled per case with -DKG_VAR_NAME=VALUE for its variables; 0 */
    kg_contract contract;          /* precision contract; inherited by a control */
    /* fake backend script (ignored by other backends) */
    double fake_ns;                /* median time of one operation, ns; 1000 */
    double fake_noise;             /* lognormal sigma of one sample; 0.01 */
    double fake_drift;             /* log-time change per round; 0 */
    double fake_first;             /* log-time penalty when listed first in the process's arm order; 0 */
    double fake_proc_sd;           /* SD of the arm x process effect; -1 (default): fake_noise / 4 */
    double fake_round_sd;          /* SD of the arm x round effect; 0 */
    double fake_outliers;          /* fraction of samples with an outlier; 0 */
    double fake_outlier_scale;     /* mean of the outlier's Exp log-time excess; 0 */
    int fake_tails;                /* sample noise: 0 normal (default), 1 t with 3 degrees of freedom */
    double fake_slot;              /* log-time effect when loaded first (load slot 0); 0 */
    double fake_slot_linear;       /* log-time effect per load slot; 0 */
    double fake_place;             /* SD of the per-(arm, process) placement offset; 0 */
    double fake_offset;            /* fixed log-time offset; 0 */
    int fake_crash;                /* process index whose worker crashes; -1 */
    int fake_hang;                 /* process index whose worker hangs; -1 */
    int fake_fault;                /* process index whose first timed call of the arm fails (KG_EARM); -1 */
    int fake_refuse;               /* case index whose load the device refuses (KG_EINADMISSIBLE); -1 */
    int fake_wrong;                /* 1: outputs are wrong */
    int line;                      /* line of the section header */
    /* the arm's preconditions, conditions over the case
     * variables ("K % 16 == 0, N % 64 == 0"), from the plan or the kernel
     * contract of its source; on a plan case that does not meet them the
     * arm is INADMISSIBLE (never loaded), and held-out shapes that do not
     * are skipped */
    char requires[KG_TEXT_MAX];
    /* a precompiled image instead of a source (exclusive with
     * source and builtin): a .so on the cpu backend, a .cubin, .ptx or
     * .fatbin on cuda, relative to the plan's folder.  kgate cannot
     * rebuild it, so its numerical negative is not applicable. */
    char image[KG_PATH_MAX];
    /* a library arm (builtin = torch or numpy, docs/library-arms.md):
     * the call from the op's table (empty: the op's default call), or a
     * user's call "python:FILE:FUNCTION" (FILE relative to the plan's
     * folder), and compile = yes for the call through torch.compile */
    char call[KG_TEXT_MAX];
    int compile;
    /* a python: call's file, its SHA-256 (lowercase hex), computed when
     * the plan is read or, in a canonical plan, as written and checked
     * against the file; "" for every other arm */
    char call_sha256[65];
} kg_arm;

typedef struct kg_gate {
    kg_gate_rule rule;       /* interval (default) or classic */
    double min_reduction;    /* g as a fraction; defaults to campaign.margin */
    int all_cases;           /* 0: primary cases only (default); 1: every case */
    int require_order;       /* order check must pass; 1 */
    int require_control;     /* control must be valid; 1 */
    int same_precision;      /* a candidate's contract may not be weaker than a baseline's; 1 */
    int line;
    kg_multiplicity multiplicity; /* holm (default), maxt or none */
    int require_negative;    /* every gated candidate must be an arm whose numerical negative kgate can build
                              * (a source arm: not an image, not a builtin); 0 */
} kg_gate;

/* An op declared in the plan: [op NAME] with source = a C file compiled
 * against kgate/op.h (docs/ops.md).  sha256 is the source's, computed
 * when the plan is read (or, in a canonical plan whose source is not
 * beside it, as written); it is in the canonical text and so in the plan
 * hash. */
#define KG_PLAN_MAX_OPS 8
/* An op declared in Python (reference = python:FILE:FUNCTION, docs/ops.md
 * "Ops in Python"): its keys as written (each checked when the plan is
 * read) and the line of each. */
enum { KG_PYK_REFERENCE, KG_PYK_TENSORS, KG_PYK_VARS, KG_PYK_INPUTS, KG_PYK_OUTPUTS, KG_PYK_REQUIRES,
       KG_PYK_FLOPS, KG_PYK_BYTES, KG_PYK_HELDOUT, KG_PYK_BOUND, KG_PYK_RTOL, KG_PYK_ATOL, KG_PYK_COUNT };
typedef struct kg_pyopdecl {
    char function[KG_NAME_MAX];  /* FUNCTION of reference = python:FILE:FUNCTION (FILE is the op's source) */
    int torch;                   /* tensors = torch (default numpy) */
    char vars[KG_TEXT_MAX];      /* as a C op's .vars: NAME, NAME:real, NAME:bool */
    char inputs[KG_TEXT_MAX];    /* NAME[dim, ...][:DTYPE] ... */
    char outputs[KG_TEXT_MAX];
    char requires[KG_TEXT_MAX];  /* conditions; "" none */
    char flops[KG_TEXT_MAX];     /* integer expressions; "" 0 */
    char bytes[KG_TEXT_MAX];
    char heldout[KG_TEXT_MAX];   /* the held-out variables when has_heldout */
    int has_heldout;
    int tolerance;               /* bound = tolerance (rtol, atol); 0: bound = library */
    double rtol, atol;
    int lines[KG_PYK_COUNT];     /* the line of each key; 0 not given */
} kg_pyopdecl;

typedef struct kg_opdecl {
    char name[KG_NAME_MAX];
    char source[KG_PATH_MAX];    /* as written, relative to the plan's folder: the C source, or the
                                  * Python reference's FILE */
    char sha256[65];
    int line;
    int python;                  /* declared in Python: py holds its keys */
    kg_pyopdecl py;
} kg_opdecl;

/* One tensor of a Python op's inputs or outputs key: NAME[dim, ...] with
 * an optional :DTYPE; dims are integer expressions (src/plan/expr.h). */
#define KG_PLAN_MAX_DIMS 8
typedef struct kg_tensordecl {
    char name[KG_VAR_NAME_MAX];
    char dims[KG_PLAN_MAX_DIMS][KG_TEXT_MAX / 4];
    int ndims;
    int dtype;                   /* a kg_dtype, or -1: the case's dtype */
} kg_tensordecl;

/* Parses a Python op's inputs or outputs text into at most max tensors:
 * the count, or -1 with why (the offending text and the fix). */
int kg_plan_tensors(const char *text, kg_tensordecl *out, int max, char *why, size_t cap);


typedef struct kg_plan {
    char path[KG_PATH_MAX];     /* as given */
    char base_dir[KG_PATH_MAX]; /* folder of the plan, for relative sources */
    kg_campaign campaign;
    kg_case *cases;  int ncases;
    kg_arm *arms;    int narms;
    kg_gate gate;
    char *canonical;            /* canonical text, owned */
    char hash[65];              /* SHA-256 of canonical, lowercase hex */
    /* what the plan check says about a valid plan (margin = 0, a load
     * order the processes do not balance); the CLI prints them and
     * report.md lists them */
    char notes[KG_PLAN_MAX_NOTES][KG_PLAN_NOTE_MAX];
    int nnotes;
    /* the ops declared in the plan, [op NAME] (docs/ops.md) */
    int nops;
    kg_opdecl ops[KG_PLAN_MAX_OPS];
} kg_plan;

/* Kernel contracts (docs/plan-format.md): the `kgate: KEY = VALUE` lines
 * of the leading comment of an arm's source give the arm each of entry,
 * requires, args and the launch geometry (grid, block, shared and
 * launches 2 and 3, as a whole) that it does not set itself; the parser
 * reads the source (relative to base_dir) while it parses, and the
 * canonical form holds the merged values.  A malformed contract line is
 * KG_EINPUT naming the kernel file and its line.
 *
 * Parses the plan file at path.  On success *out owns a new plan (free it
 * with kg_plan_free); on failure *out is NULL and err says
 * "path:line: problem: 'offending text' (fix)".  Returns KG_OK, KG_EIO or
 * KG_EINPUT. */
int kg_plan_load(const char *path, kg_plan **out, kg_err *err);

/* The values of a plan's backend key: "auto" and the name of every
 * backend of the registry (src/backend/backend.c; a unit test checks the
 * two agree), NULL-terminated. */
extern const char *const kg_plan_backends[];

/* Parses plan text held in memory; name is used in messages and base_dir
 * is the folder relative sources resolve against. */
int kg_plan_parse(const char *text, size_t len, const char *name,
                  const char *base_dir, kg_plan **out, kg_err *err);

/* The same for the plan an evidence folder recorded: a design the plan
 * check now refuses but an earlier kgate ran (processes or looks that do
 * not complete the load-order square, looks with one process per
 * direction) is read with the note that kgate gave it then, so that the
 * folder's reports can be regenerated and verified; the analysis treats
 * a look without an interval as undecided.  Every other rule holds. */
int kg_plan_parse_recorded(const char *text, size_t len, const char *name,
                           const char *base_dir, kg_plan **out, kg_err *err);

void kg_plan_free(kg_plan *plan); /* NULL-safe */

/* The smoke run of plan (kgate run --smoke), in place: KG_SMOKE_PROCESSES
 * process per direction of KG_SMOKE_ROUNDS rounds of KG_SMOKE_SAMPLES
 * samples after KG_SMOKE_WARMUP warm-up executions, no quiet window, one
 * look, and the key smoke = yes; its canonical text and hash are made
 * again (a smoke run is another plan than the one it shrinks: --frozen
 * refuses it, and its folder says what it was).  Every arm's checks run
 * as in the plan; the analysis gives no verdict (kgate/stats.h). */
#define KG_SMOKE_PROCESSES 1
#define KG_SMOKE_ROUNDS 2
#define KG_SMOKE_SAMPLES 3
#define KG_SMOKE_WARMUP 1
int kg_plan_smoke(kg_plan *plan, kg_err *err);

/* Case c's variable name: its integer (or yes/no as 1/0) in *i and its
 * value as a real in *r (either may be NULL); the keys M, N, K and
 * splits (when set), eps and scale first, then c->vars.  1 when found,
 * 0 when the case has no such variable. */
int kg_case_var(const kg_case *c, const char *name, kg_var_type *type, int64_t *i, double *r);

/* 1 for the shape keys M, N, K and splits (unset in a case: -1). */
int kg_var_is_shape(const char *name);

/* The indices of c->vars in the order of their names (the canonical
 * form's and the report's order). */
void kg_case_var_order(const kg_case *c, int order[KG_CASE_VARS]);

/* Where plan->ops[o]'s source is: as written when absolute, else
 * against the plan's folder. */
void kg_plan_op_source_path(const kg_plan *plan, int o, char *out, size_t cap);

/* The name of declared op o's copy in an evidence folder's sources/:
 * "op-NAME.c", or "op-NAME.py" for an op declared in Python. */
void kg_plan_op_copy_name(const kg_plan *plan, int o, char *out, size_t cap);

/* The declared op name of the plan: its index in plan->ops, -1 if none. */
int kg_plan_find_op(const kg_plan *plan, const char *name);

/* Index of a case or arm by name, -1 if absent. */
int kg_plan_find_case(const kg_plan *plan, const char *name);
int kg_plan_find_arm(const kg_plan *plan, const char *name);

/* The processes per direction that complete every case's load-order
 * square (kg_protocol_arm_order): the least common multiple of the
 * numbers of arms that apply to each case; KG_PLAN_MAX_PROCESSES + 1 when
 * it is larger than that. */
int kg_plan_square(const kg_plan *plan);

/* 1 when arm a runs on case c: same op, and c listed in a->cases when
 * that list is not empty. */
int kg_plan_arm_applies(const kg_plan *plan, int a, int c);

/* Every name in an arm's launch expressions (grid, block, shared and the
 * extra launches') and preconditions (requires) is a variable of each
 * case the arm runs on: KG_EINPUT naming the arm's file:line otherwise.
 * Any name may be a variable, so parsing cannot tell; kg_plan_check_ops
 * calls this once the cases' variables are checked against their ops
 * (src/plan/expr.c). */
int kg_plan_check_arm_names(const kg_plan *plan, kg_err *err);

/* Axes (docs/plan-format.md): a section with {a, b} lists is expanded into
 * variants named BASE[AXIS=VALUE,...].  kg_plan_name_base: the length of
 * BASE in such a name, 0 for a plain name.  kg_plan_axes_text: for the
 * case (is_arm 0) or arm (1) at index i, a variant, the axes of its base
 * with their values in the order of the expansion, "PITCH = 36, 40;
 * SPLITS = 1, 2", into buf; returns the number of variants of that base,
 * 0 (and "") when i is no variant. */
size_t kg_plan_name_base(const char *name);
/* The j-th AXIS=VALUE of a variant's name (from 0): 1 with the axis and
 * its value as pointers into name and their lengths, 0 past the last. */
int kg_plan_name_axis(const char *name, int j, const char **ax, size_t *axl, const char **val, size_t *vall);
int kg_plan_axes_text(const kg_plan *plan, int is_arm, int i, char *buf, size_t cap);

/* Resolves arm a's kernel file (its source, or its image when it is a
 * precompiled arm) against the plan's folder into out; the file must be
 * a regular file. */
int kg_plan_source_path(const kg_plan *plan, int a, char *out, size_t cap,
                        kg_err *err);

/* 1 when arm is a precompiled arm (image = PATH). */
int kg_arm_is_image(const kg_arm *arm);

/* A user's Python call as a library arm (call = python:FILE:FUNCTION,
 * docs/library-arms.md; src/plan/pycall.c). */
#define KG_PYCALL_PREFIX "python:"
/* 1 when the arm's call is python:FILE:FUNCTION. */
int kg_arm_is_pycall(const kg_arm *arm);
/* Its FILE (as written) and FUNCTION: 0, or -1 when the call is not one
 * or a part does not fit. */
int kg_arm_pycall_parts(const kg_arm *arm, char *file, size_t fcap, char *func, size_t ncap);
/* The file's path: FILE beside the plan (absolute as written). */
void kg_plan_call_path(const kg_plan *plan, int a, char *out, size_t cap);
/* The evidence folder's copy of arm a's call file, "sources/call-ARM.py"
 * ("" for an arm without one). */
void kg_plan_call_copy(const kg_plan *plan, int a, char *out, size_t cap);

/* The kind of a precompiled image, from its name's extension. */
typedef enum kg_image_kind {
    KG_IMAGE_NONE = 0,   /* not an image arm, or an unknown extension */
    KG_IMAGE_SO,         /* .so: a shared object for the cpu backend */
    KG_IMAGE_CUBIN,      /* .cubin: an ELF for one SM architecture (cuda) */
    KG_IMAGE_PTX,        /* .ptx: PTX text, compiled by the driver at load (cuda) */
    KG_IMAGE_FATBIN      /* .fatbin: a container of cubins and PTX (cuda) */
} kg_image_kind;

/* The kind of the image path (its extension); KG_IMAGE_NONE for another. */
kg_image_kind kg_image_kind_of(const char *path);
/* "so", "cubin", "ptx", "fatbin", or "none". */
const char *kg_image_kind_name(kg_image_kind k);

const char *kg_dtype_name(kg_dtype dt);      /* "f32", "f16", "bf16", "f64", "i32", "i8", "e4m3", "e5m2" */
size_t kg_dtype_size(kg_dtype dt);
const char *kg_role_name(kg_role role);      /* "baseline", ... */

/* The contract of an arm on a case, as reports print it: the case dtype
 * ("f32", "bf16") for the default, "tf32", "f16acc", "bf16acc", or
 * "tol 0.0001" for an explicit tolerance. */
void kg_contract_text(const kg_contract *ct, kg_dtype dt, char *buf, size_t cap);
/* 1 when contract a is the default one (no reduced precision, no tolerance). */
int kg_contract_is_default(const kg_contract *ct);
/* 1 when contract `cand` admits more error than `base` on a case of dtype
 * dt (a weaker contract); an explicit tolerance is weaker than any
 * analysis-based contract unless the baseline declares a tolerance at
 * least as large.  why (may be NULL) says how. */
int kg_contract_weaker(const kg_contract *cand, const kg_contract *base, kg_dtype dt, char *why,
                       size_t cap);

#endif

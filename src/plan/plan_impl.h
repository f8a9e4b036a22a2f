/* plan_impl.h: what the pieces of the plan parser share (src/plan/),
 * private to the plan part; the API is kgate/plan.h.
 *
 * A plan is parsed in steps, one job per file (plan.c runs them in order):
 *
 *   reader.c     the text: bytes, lines, section headers, key = value
 *                lines through libinih, each value into its field
 *   keys.c       the key table (plan_keys[]), values read and checked
 *   cases.c      a case's op variables and the [op NAME] sections
 *   axes.c       {a, b} lists, and the sections they expand into variants
 *   check.c      the checks after parsing, the late defaults and notes
 *   contract.c   kernel contracts, read from the arms' source files
 *   canonical.c  the canonical form and its SHA-256
 *   precision.c  precision contracts (kg_contract_*)
 *   lookup.c     the queries of a parsed plan, names and lists
 *   pycall.c     a python:FILE:FUNCTION call's parts, file and hash
 *   msg.c        messages: file:line, the offending text, the fix
 *
 * Every message goes through plan_perr, which keeps the first error in
 * the plan_ctx; a step does nothing once ctx->failed is set. */
#ifndef KGATE_PLAN_IMPL_H
#define KGATE_PLAN_IMPL_H

#include <stddef.h>
#include <stdint.h>
#include "kgate/plan.h"

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
extern const char *const plan_sec_names[];   /* indexed by SEC_* */

/* The kind of a key's value, and of its field. */
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
    F_DERIVED = 1u << 5,  /* default computed after parsing (check.c, plan_complete) */
    F_QUIET = 1u << 6,    /* left out of the canonical form while it holds its default, so that
                           * adding the key changed no existing plan's hash */
    F_AXIS = 1u << 7,     /* takes axes: {a, b} lists that expand the section (axes.c) */
    F_REF = 1u << 8       /* K_NAME naming an arm: an expanded name such as fma[SPLITS=4] is accepted */
};

/* One key of one section: one row of plan_keys[] (keys.c). */
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

extern const plan_key plan_keys[];
extern const int plan_nkeys;
enum { KEYS_CAP = 112 };

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
    /* 1: the value was quoted ("-O2 -march=native"): vpos, vlen are its
     * text inside the quotes, and in a variant's name each character
     * outside A-Z a-z 0-9 _ . - + is '_' */
    unsigned char vquoted[PLAN_AXIS_VALUES_MAX];
} plan_axis;

/* The axes of one [case] or [arm] section (its index as parsed). */
typedef struct sec_axes {
    int sec, idx, naxes;
    plan_axis ax[PLAN_AXES_MAX];
} sec_axes;

/* One plan (or one kernel file's contract) while it is parsed. */
typedef struct plan_ctx {
    int recorded;             /* the plan of an evidence folder (kg_plan_parse_recorded) */
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

/* ---- msg.c ---- */

/* Copies text into out with non-printable bytes escaped, so that junk in
 * a plan never reaches a terminal raw. */
void plan_show_text(char *out, size_t cap, const char *text, size_t len);
/* The first error: "FILE:LINE: PROBLEM: 'TEXT' (FIX)", KG_EINPUT. */
void plan_perr(plan_ctx *ctx, int line, const char *problem, const char *text, size_t len, const char *fix_fmt, ...)
    __attribute__((format(printf, 6, 7)));
void plan_perr_nomem(plan_ctx *ctx);
/* Text of line n (1-based) of the plan, without its newline and blanks. */
const char *plan_line_text(const plan_ctx *ctx, int n, size_t *len);
/* "[SEC NAME]", for messages about a whole section. */
void plan_header_text(char *buf, size_t cap, const char *sec, const char *name);

/* ---- pycall.c ---- */

/* Arm a's call = python:FILE:FUNCTION: well formed, the file beside the
 * plan (or the folder's copy), unchanged against a written call_sha256,
 * defining FUNCTION at its top level; its SHA-256 into call_sha256. */
void plan_check_pycall(plan_ctx *ctx, int a);

/* ---- lookup.c: names and lists ---- */

int plan_simple_name_ok(const char *s, size_t len);   /* 1-63 of [A-Za-z0-9_.-] */
int plan_ident_ok(const char *s);                     /* a C identifier */
int plan_axis_char(unsigned char c);                  /* a character of an axis value */
int plan_expanded_name_ok(const char *s, size_t len); /* BASE[A=1,B=2] */
int plan_any_name_ok(const char *s, size_t len);      /* a plain or an expanded name */
/* Length of the first item of the comma-separated list at p; a comma
 * inside [...] (an expanded name's) does not end it. */
size_t plan_list_item(const char *p);
/* 1 when the list item p[0..l) names the case or arm `name`: its name, or
 * the base of a variant (the item "sq" names sq[M=96] and sq[M=256]). */
int plan_item_names(const char *p, size_t l, const char *name);
int plan_list_has(const char *list, const char *name);

/* ---- keys.c: the key table and values ---- */

/* Index of key `key` of section sec in plan_keys; -1 when none. */
int plan_key_index(int sec, const char *key);
void *plan_field_ptr(void *base, const plan_key *k);
const void *plan_field_cptr(const void *base, const plan_key *k);
/* The struct a section's keys fill, and the lines its keys were given on. */
void *plan_section_base(plan_ctx *ctx, int sec, int idx);
key_lines *plan_section_lines(plan_ctx *ctx, int sec, int idx);
/* Stores value into the field of key k in the struct at base.  Returns 0,
 * or -1 with a message in ctx (at line). */
int plan_set_value(plan_ctx *ctx, const plan_key *k, void *base, const char *value, int line);
/* Fills a section's struct with the table's defaults. */
void plan_apply_defaults(plan_ctx *ctx, int sec, void *base);
/* A name a case variable may have. */
int plan_var_name_ok(const char *n);
/* Sets variable x (its name already set) from its text v: an integer, a
 * real or yes/no.  Returns 0, or -1 with a message in ctx. */
int plan_set_var_value(plan_ctx *ctx, kg_var *x, const char *v, int line, const char *ltext, size_t llen);
/* The shortest %g text that reads back as exactly v. */
void plan_format_real(double v, char *out, size_t cap);

/* ---- reader.c ---- */

/* Reads the plan's text into ctx->plan: bytes, sections, keys. */
void plan_read(plan_ctx *ctx);

/* ---- cases.c: op variables and declared ops ---- */

/* A key of [case] outside the key table: a variable of the case's op. */
int plan_case_var(plan_ctx *ctx, const char *name, const char *v, int line, const char *ltext, size_t llen);
/* A key of [op NAME]. */
int plan_op_key(plan_ctx *ctx, const char *name, const char *v, int line, const char *ltext, size_t llen);
/* Declared op o: its source found and hashed. */
void plan_check_op(plan_ctx *ctx, int o);

/* ---- pyop.c: the keys of an op declared in Python ---- */

/* 1 when name is a key of a Python op (reference, tensors, vars, ...). */
int plan_pyop_is_key(const char *name);
/* One such key of op od. */
int plan_pyop_key(plan_ctx *ctx, kg_opdecl *od, const char *name, const char *v, int line, const char *lt,
                  size_t ll);
/* The section's checks: vars, tensors, expressions, heldout, the bound. */
void plan_pyop_check(plan_ctx *ctx, int o);
/* A Python op's key given besides reference (for a C op that has one): its
 * index, -1 none; and a key's name. */
int plan_pyop_other_key(const kg_opdecl *od);
const char *plan_pyop_key_name(int k);
/* The section's canonical text. */
struct kg_sb;
void plan_pyop_canonical(struct kg_sb *sb, const kg_opdecl *od);

/* ---- axes.c ---- */

/* The value v of key ki holds '{' or '}': records its axes (a key that
 * takes none is refused).  Returns 0, or -1 with a message in ctx. */
int plan_parse_axes(plan_ctx *ctx, int ki, const char *v, int line, const char *ltext, size_t llen);
/* The axes of a value: key names the axis of a whole-value list; ki is
 * the key's plan_keys index, or AXIS_VAR(i) for the case's i-th op
 * variable. */
int plan_parse_axes_of(plan_ctx *ctx, int ki, const char *key, const char *v, int line, const char *ltext,
                       size_t llen);
/* Every section with axes becomes its variants. */
void plan_expand_axes(plan_ctx *ctx);

/* ---- check.c: the checks after parsing ---- */

void plan_check_nonempty(plan_ctx *ctx);   /* before the axes expand */
void plan_check_sections(plan_ctx *ctx);   /* cases, arms, ops, required keys, each arm */
void plan_check_campaign(plan_ctx *ctx);   /* after the contracts: pack, reference, baselines */
void plan_complete(plan_ctx *ctx);         /* late defaults, notes, controls, requires */

/* ---- contract.c ---- */

/* Arm a takes the kernel contract of its source. */
void plan_apply_contract(plan_ctx *ctx, int a);

/* ---- canonical.c ---- */

/* plan->canonical and plan->hash.  KG_OK or KG_ENOMEM. */
int plan_make_canonical(kg_plan *plan);

#endif

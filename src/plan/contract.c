/* contract.c: kernel contracts, read from the arms' kernel source
 * files. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "plan/plan_impl.h"
#include "plan/expr.h"
#include "base/util.h"

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
    const char *t = plan_line_text(sub, n, len);
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
        plan_perr(sub, line, "expected 'kgate: KEY = VALUE' in a kernel contract", lt, ll,
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
            ki = plan_key_index(SEC_ARM, contract_keys[i]);
        }
    if (!allowed) {
        plan_perr(sub, line, "unknown key in a kernel contract", lt, ll,
             "a contract gives entry, requires, grid, block, shared, args (and their 2 and 3 forms) or ops");
        return;
    }
    if (ki >= 0 && entry[0] != '\0' && strcmp(plan_keys[ki].key, "entry") == 0) {
        plan_perr(sub, line, "'entry' inside an [ENTRY] contract line", lt, ll,
             "an [ENTRY] line gives the keys of that entry; name the default entry on a line of its own");
        return;
    }
    if (vp == ve) {
        plan_perr(sub, line, "empty value in a kernel contract", lt, ll, "give a value, or remove the key");
        return;
    }
    if ((size_t)(ve - vp) > PLAN_VALUE_MAX) {
        plan_perr(sub, line, "value too long in a kernel contract", lt, ll, "at most %d characters", PLAN_VALUE_MAX);
        return;
    }
    for (int i = 0; i < k->n; i++)
        if (k->it[i].ki == ki && strcmp(k->it[i].entry, entry) == 0) {
            plan_perr(sub, line, "key given twice in a kernel contract", lt, ll, "line %d gives it too; keep one",
                 k->it[i].line);
            return;
        }
    if (k->n >= CONTRACT_MAX_LINES) {
        plan_perr(sub, line, "too many keys in a kernel contract", lt, ll, "at most %d", CONTRACT_MAX_LINES);
        return;
    }
    for (const char *s = vp; s < ve; s++)
        if ((unsigned char)*s < 0x20 || (unsigned char)*s >= 0x7f) {
            plan_perr(sub, line, "a kernel contract value holds a byte that is not printable ASCII", lt, ll,
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
        if (plan_set_value(sub, &plan_keys[ki], &scratch, it->value, line) != 0) return;
        if (strcmp(plan_keys[ki].key, "requires") == 0) {
            kg_err e = { 0 };
            if (kg_expr_check_conds("requires", it->value, &e) != KG_OK) {
                plan_perr(sub, line, "bad requires in a kernel contract", lt, ll, "%s", e.msg);
                return;
            }
        }
    } else {
        kg_arm scratch;
        memset(&scratch, 0, sizeof scratch);
        if (plan_set_value(sub, &plan_keys[plan_key_index(SEC_ARM, "cases")], &scratch, it->value, line) != 0) return;
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
                    plan_perr(sub, line, "bad [ENTRY] in a kernel contract", lt, ll,
                         "write 'kgate: [ENTRY] KEY = VALUE', ENTRY a kernel's entry symbol");
                    break;
                }
                memcpy(entry, np, (size_t)(ne - np));
                entry[ne - np] = '\0';
                if (!plan_ident_ok(entry)) {
                    size_t ll;
                    const char *lt = contract_line_text(sub, line, &ll);
                    plan_perr(sub, line, "bad [ENTRY] in a kernel contract", lt, ll, "ENTRY must be a C identifier");
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
void plan_apply_contract(plan_ctx *ctx, int a)
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
        plan_perr_nomem(ctx);
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
    int k_entry = plan_key_index(SEC_ARM, "entry");
    if (!kl->at[k_entry]) {
        const contract_item *it = contract_find(k, k_entry, "");
        if (it != NULL) snprintf(arm->entry, sizeof arm->entry, "%.*s", (int)sizeof arm->entry - 1, it->value);
    }
    const contract_item *ops = contract_find(k, -1, arm->entry);
    if (ops != NULL && !plan_list_has(ops->value, arm->op)) {
        size_t ll;
        const char *lt = contract_line_text(&sub, ops->line, &ll);
        plan_perr(&sub, ops->line, "the kernel contract does not list the arm's op", lt, ll,
             "[arm %s] implements %s: fix its op, or its source", arm->name, arm->op);
        snprintf(ctx->emsg, sizeof ctx->emsg, "%s", sub.emsg);
        ctx->failed = 1;
        ctx->code = KG_EINPUT;
        ctx->eline = arm->line;
        goto done;
    }
    int own_chain = 0;
    for (int i = 0; contract_keys[i]; i++)
        if (chain_key(contract_keys[i]) && kl->at[plan_key_index(SEC_ARM, contract_keys[i])]) own_chain = 1;
    for (int i = 0; contract_keys[i]; i++) {
        int ki = plan_key_index(SEC_ARM, contract_keys[i]);
        if (ki == k_entry || kl->at[ki] || (own_chain && chain_key(contract_keys[i]))) continue;
        const contract_item *it = contract_find(k, ki, arm->entry);
        if (it != NULL) snprintf((char *)plan_field_ptr(arm, &plan_keys[ki]), plan_keys[ki].size, "%s", it->value);
    }
done:
    free(k);
    free(text);
}

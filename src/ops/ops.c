/* ops.c: the op registry and the plan-versus-op check.
 *
 * Each built-in op lives in its own file (gemm_bt.c, gemm_nt.c,
 * gemm_splitk.c, rowsum.c, rowmax.c, softmax.c, layernorm.c, rmsnorm.c,
 * noop.c) and is listed here; the registry uses them, and they use only
 * the helpers below them (shapes.c, gemm.c, bounds.c).  This file does
 * not generate inputs or compare outputs (oracle.c does).
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "ops/ops_internal.h"

static const kg_op *const registry[] = { &kg_op_gemm_bt, &kg_op_rowsum, &kg_op_gemm_nt,
                                         &kg_op_gemm_splitk, &kg_op_rowmax, &kg_op_softmax,
                                         &kg_op_layernorm, &kg_op_rmsnorm, &kg_op_noop };
#define NOPS ((int)(sizeof registry / sizeof registry[0]))

/* the ops a plan declared, loaded in this process (planops.c registers them) */
static const kg_op *declared_ops[KG_PLAN_MAX_OPS * 4];
static int ndeclared;

int kg_ops_register_declared(const kg_op *op)
{
    for (int i = 0; i < ndeclared; i++)
        if (strcmp(declared_ops[i]->name, op->name) == 0) {
            declared_ops[i] = op;
            return 0;
        }
    if (ndeclared >= (int)(sizeof declared_ops / sizeof declared_ops[0])) return -1;
    declared_ops[ndeclared++] = op;
    return 0;
}

const kg_op *kg_ops_find_declared(const char *name)
{
    for (int i = 0; name != NULL && i < ndeclared; i++)
        if (strcmp(declared_ops[i]->name, name) == 0) return declared_ops[i];
    return NULL;
}

const kg_op *kg_op_find(const char *name)
{
    if (name == NULL) return NULL;
    for (int i = 0; i < NOPS; i++)
        if (registry[i]->abi == KG_OP_ABI && strcmp(registry[i]->name, name) == 0) return registry[i];
    return kg_ops_find_declared(name);
}

const kg_op *const *kg_op_all(int *n)
{
    if (n != NULL) *n = NOPS;
    return registry;
}

int kg_op_shape(const kg_op *op, const kg_case *c, int out, int i, int64_t dims[KG_OP_MAX_DIMS], char *why,
                size_t cap)
{
    int64_t in_elems[KG_MAX_IN] = { 0 }, out_elems[KG_MAX_OUT] = { 0 };
    if (op == NULL || c == NULL || i < 0 || i >= (out ? op->nout : op->nin)) {
        snprintf(why, cap, "no tensor %s %d", out ? "output" : "input", i);
        return 0;
    }
    op->sizes(c, in_elems, out_elems);
    int64_t count = out ? out_elems[i] : in_elems[i];
    const char *name = out ? op->out_names[i] : op->in_names[i];
    if (op->shape != NULL) {
        int64_t d[KG_OP_MAX_DIMS] = { 0 };
        int n = op->shape(c, out, i, d);
        if (n < 1 || n > KG_OP_MAX_DIMS) {
            snprintf(why, cap, "op %s: the shape of %s has %d dimensions (1 to %d)", op->name, name, n,
                     KG_OP_MAX_DIMS);
            return 0;
        }
        int64_t prod = 1;
        for (int k = 0; k < n; k++) {
            if (d[k] < 1 || prod > INT64_MAX / d[k]) {
                snprintf(why, cap, "op %s: dimension %d of %s is %lld (each must be positive)", op->name, k,
                         name, (long long)d[k]);
                return 0;
            }
            prod *= d[k];
            dims[k] = d[k];
        }
        if (prod != count) {
            snprintf(why, cap, "op %s: the shape of %s holds %lld elements, its size says %lld", op->name,
                     name, (long long)prod, (long long)count);
            return 0;
        }
        return n;
    }
    int64_t split = 1;
    if (!out && op->in_rows != NULL) {
        int64_t rows[KG_MAX_IN] = { 0 };
        op->in_rows(c, rows);
        if (rows[i] > 1 && count % rows[i] == 0) split = rows[i];
        dims[0] = split;
        dims[1] = count / split;
    } else if (out && op->out_cols != NULL) {
        int64_t cols = op->out_cols(c, i);
        if (cols > 1 && count % cols == 0) split = count / cols;
        dims[0] = split;
        dims[1] = count / split;
    }
    if (split > 1) return 2;
    dims[0] = count;
    return 1;
}

static void known_ops(char *buf, size_t cap)
{
    size_t len = 0;
    buf[0] = '\0';
    for (int i = 0; i < NOPS && len < cap; i++) {
        int w = snprintf(buf + len, cap - len, "%s%s", i ? ", " : "", registry[i]->name);
        if (w < 0) break;
        len += (size_t)w;
    }
}

int kg_plan_check_ops(const kg_plan *plan, kg_err *err)
{
    if (plan == NULL) return kg_errorf(err, KG_EINTERNAL, "kg_plan_check_ops: no plan");
    for (int i = 0; i < plan->ncases; i++) {
        const kg_case *c = &plan->cases[i];
        const kg_op *op = kg_op_find(c->op);
        if (op == NULL) {
            char known[256];
            known_ops(known, sizeof known);
            return kg_errorf(err, KG_EINPUT, "%s:%d: unknown op '%s' (known: %s)",
                             plan->path, c->line, c->op, known);
        }
        /* the op's variables: "NAME" (an integer) or "NAME:int|real|bool" */
        char decl[KG_TEXT_MAX];
        snprintf(decl, sizeof decl, "%s", op->vars != NULL ? op->vars : "");
        for (char *save = NULL, *t = strtok_r(decl, " ", &save); t != NULL; t = strtok_r(NULL, " ", &save)) {
            char *colon = strchr(t, ':');
            const char *want = "int";
            if (colon != NULL) {
                *colon = '\0';
                want = colon + 1;
            }
            kg_var_type ty;
            int64_t iv = 0;
            if (!kg_case_var(c, t, &ty, &iv, NULL))
                return kg_errorf(err, KG_EINPUT, "%s:%d: case '%s': op %s needs %s (add '%s = ...'; it uses %s)",
                                 plan->path, c->line, c->name, op->name, t, t, op->vars);
            int fixed = kg_var_is_shape(t);
            if (fixed && iv < 1)
                return kg_errorf(err, KG_EINPUT, "%s:%d: case '%s': %s = %lld (must be >= 1)", plan->path, c->line,
                                 c->name, t, (long long)iv);
            int ok = strcmp(want, "real") == 0 ? 1 /* an integer reads as a real */
                     : strcmp(want, "bool") == 0 ? ty == KG_VAR_BOOL
                     : ty == KG_VAR_INT;
            if (!ok)
                return kg_errorf(err, KG_EINPUT, "%s:%d: case '%s': op %s's variable %s is %s (write %s)", plan->path,
                                 c->line, c->name, op->name, t, strcmp(want, "bool") == 0 ? "yes or no" : "an integer",
                                 strcmp(want, "bool") == 0 ? "yes or no" : "a whole number");
        }
        /* and nothing else: a variable the op does not read is a typo */
        for (int k = 0; k < c->nvars; k++) {
            const char *vn = c->vars[k].name;
            int declared = 0;
            snprintf(decl, sizeof decl, "%s", op->vars != NULL ? op->vars : "");
            for (char *save = NULL, *t = strtok_r(decl, " ", &save); t != NULL && !declared;
                 t = strtok_r(NULL, " ", &save)) {
                char *colon = strchr(t, ':');
                if (colon != NULL) *colon = '\0';
                declared = strcmp(t, vn) == 0;
            }
            if (!declared)
                return kg_errorf(err, KG_EINPUT, "%s:%d: case '%s': unknown key '%s': op %s has no such variable (its "
                                 "variables: %s; the keys of [case] are in docs/plan-format.md)", plan->path,
                                 c->line, c->name, vn, op->name, op->vars[0] ? op->vars : "none");
        }
        if (c->dtype != KG_DT_F32 && c->dtype != KG_DT_F16 && c->dtype != KG_DT_BF16 &&
            kg_ops_find_declared(op->name) != op)
            return kg_errorf(err, KG_EINPUT, "%s:%d: case '%s': dtype %s is not supported by the built-in op %s "
                             "(use f32, f16 or bf16; the other dtypes are for ops a plan declares, docs/ops.md)",
                             plan->path, c->line, c->name, kg_dtype_name(c->dtype), op->name);
    }
    /* then every name in the arms' launch expressions and preconditions
     * against the variables of the cases they run on */
    int rc = kg_plan_check_arm_names(plan, err);
    if (rc != KG_OK) return rc;
    for (int a = 0; a < plan->narms; a++) {
        const kg_arm *arm = &plan->arms[a];
        if (kg_contract_is_default(&arm->contract)) continue;
        const kg_op *op = kg_op_find(arm->op);
        if (op != NULL && op->bound_ct == NULL)
            return kg_errorf(err, KG_EINPUT, "%s:%d: arm '%s': op %s has no reduced precision "
                             "contract (precision and tolerance apply to gemm_bt, gemm_nt, "
                             "gemm_splitk and rowsum); remove the key", plan->path, arm->line,
                             arm->name, op->name);
    }
    return KG_OK;
}

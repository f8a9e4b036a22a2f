/* opfacts.c: ops.json, written from the ops' code (opfacts.h). */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check/opfacts.h"
#include "kgate/op.h"
#include "base/util.h"

static json_t *tensor(const char *name, kg_dtype dt, int64_t elems, int64_t cols)
{
    json_t *t = json_object();
    json_object_set_new(t, "name", json_string(name));
    json_object_set_new(t, "dtype", json_string(kg_dtype_name(dt)));
    json_object_set_new(t, "elems", json_integer((json_int_t)elems));
    if (cols >= 0) json_object_set_new(t, "cols", json_integer((json_int_t)cols));
    return t;
}

static json_t *case_facts(const kg_case *kc, const kg_op *op)
{
    json_t *o = json_object(), *ins = json_array(), *outs = json_array();
    char why[256];
    int adm = op->admissible(kc, why, sizeof why) == 0;
    json_object_set_new(o, "case", json_string(kc->name));
    json_object_set_new(o, "op", json_string(op->name));
    json_object_set_new(o, "admissible", json_boolean(adm));
    json_object_set_new(o, "scalars", json_string(op->scalars != NULL ? op->scalars : ""));
    char contract[96];
    kg_pyops_contract(op->name, contract, sizeof contract);
    if (contract[0] != '\0') json_object_set_new(o, "contract", json_string(contract));
    json_object_set_new(o, "flops", json_real(op->flops != NULL ? op->flops(kc) : 0.0));
    json_object_set_new(o, "min_bytes", json_real(op->min_bytes != NULL ? op->min_bytes(kc) : 0.0));
    if (adm) {
        int64_t in_el[KG_MAX_IN] = { 0 }, out_el[KG_MAX_OUT] = { 0 };
        op->sizes(kc, in_el, out_el);
        /* an input's cols: the length of its rows as the generator lays them out
         * (kg_op.in_rows), what the bound audit's reduction length is read from */
        int64_t rows[KG_MAX_IN];
        for (int i = 0; i < KG_MAX_IN; i++) rows[i] = 1;
        if (op->in_rows != NULL) op->in_rows(kc, rows);
        for (int i = 0; i < op->nin; i++)
            json_array_append_new(ins, tensor(op->in_names[i], op->in_dtype != NULL ? op->in_dtype(kc, i) : kc->dtype,
                                              in_el[i], in_el[i] / (rows[i] > 0 ? rows[i] : 1)));
        for (int k = 0; k < op->nout; k++)
            json_array_append_new(outs, tensor(op->out_names[k], op->out_dtype(kc, k), out_el[k],
                                               op->out_cols != NULL ? op->out_cols(kc, k) : 0));
    }
    json_object_set_new(o, "inputs", ins);
    json_object_set_new(o, "outputs", outs);
    return o;
}

int kg_opfacts_text(const kg_plan *plan, char **text, kg_err *err)
{
    *text = NULL;
    json_t *root = json_object(), *cases = json_array();
    json_object_set_new(root, "schema", json_integer(1));
    int rc = KG_OK;
    for (int c = 0; c < plan->ncases && rc == KG_OK; c++) {
        const kg_case *kc = &plan->cases[c];
        const kg_op *op = kg_op_find(kc->op);
        if (op == NULL)
            rc = kg_errorf(err, KG_EINPUT, "%s:%d: case %s: no op '%s' is loaded (kgate list shows the ops)",
                           plan->path, kc->line, kc->name, kc->op);
        else
            json_array_append_new(cases, case_facts(kc, op));
    }
    json_object_set_new(root, "cases", cases);
    if (rc == KG_OK) {
        char *s = json_dumps(root, JSON_INDENT(1) | JSON_REAL_PRECISION(17));
        size_t n = s != NULL ? strlen(s) : 0;
        if (s == NULL || (*text = malloc(n + 2)) == NULL) rc = kg_errorf(err, KG_ENOMEM, "out of memory (ops.json)");
        else snprintf(*text, n + 2, "%s\n", s);
        free(s);
    }
    json_decref(root);
    return rc;
}

int kg_opfacts_write(int dirfd, const char *dir, const kg_plan *plan, kg_err *err)
{
    char *text = NULL, path[KG_PATH_MAX + 32];
    int rc = kg_opfacts_text(plan, &text, err);
    snprintf(path, sizeof path, "%s/%s", dir, "ops.json");
    if (rc == KG_OK) rc = kg_write_atomic_at(dirfd, "ops.json", path, text, strlen(text), err);
    free(text);
    return rc;
}

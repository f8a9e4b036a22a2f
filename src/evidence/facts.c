/* facts.c: ops.json read back (kgate/evidence.h, kg_facts_parse).  The
 * producer writes it (src/check/opfacts.c); a reader takes each case's
 * op facts from it and never from op code. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kgate/evidence.h"

static int dtype_of(const char *s, kg_dtype *dt)
{
    for (int d = 0; d < KG_DT_COUNT && s != NULL; d++)
        if (strcmp(kg_dtype_name((kg_dtype)d), s) == 0) {
            *dt = (kg_dtype)d;
            return 0;
        }
    return -1;
}

/* One tensor list (inputs or outputs) of a case. */
static int tensors(const char *name, const char *cname, const char *what, json_t *arr, int max, kg_tensor_fact *t,
                   int *n, kg_err *err)
{
    if (!json_is_array(arr) || json_array_size(arr) > (size_t)max)
        return kg_errorf(err, KG_EINPUT, "%s: case %s: '%s' is not a list of at most %d tensors (restore the file "
                         "from the campaign)", name, cname, what, max);
    *n = (int)json_array_size(arr);
    for (int i = 0; i < *n; i++) {
        json_t *o = json_array_get(arr, (size_t)i);
        const char *nm = json_string_value(json_object_get(o, "name"));
        json_t *el = json_object_get(o, "elems"), *cols = json_object_get(o, "cols");
        if (nm == NULL || strlen(nm) >= KG_FACT_NAME ||
            dtype_of(json_string_value(json_object_get(o, "dtype")), &t[i].dtype) != 0 || !json_is_integer(el) ||
            json_integer_value(el) < 0 || (cols != NULL && (!json_is_integer(cols) || json_integer_value(cols) < 0)))
            return kg_errorf(err, KG_EINPUT, "%s: case %s: %s[%d] needs a name, a dtype kgate knows and elems >= 0 "
                             "(restore the file from the campaign)", name, cname, what, i);
        snprintf(t[i].name, sizeof t[i].name, "%s", nm);
        t[i].elems = (int64_t)json_integer_value(el);
        t[i].cols = cols != NULL ? (int64_t)json_integer_value(cols) : 0;
    }
    return KG_OK;
}

static int one_case(const char *name, const kg_case *kc, json_t *o, kg_case_facts *f, kg_err *err)
{
    const char *cname = json_string_value(json_object_get(o, "case"));
    const char *op = json_string_value(json_object_get(o, "op"));
    const char *sc = json_string_value(json_object_get(o, "scalars"));
    json_t *adm = json_object_get(o, "admissible"), *fl = json_object_get(o, "flops"),
           *mb = json_object_get(o, "min_bytes");
    if (cname == NULL || strcmp(cname, kc->name) != 0 || op == NULL || strcmp(op, kc->op) != 0)
        return kg_errorf(err, KG_EINPUT, "%s: the entry for case %s is missing or names another case or op (the plan "
                         "has case %s of op %s; restore the file from the campaign)", name, kc->name, kc->name, kc->op);
    if (!json_is_boolean(adm) || !json_is_number(fl) || !json_is_number(mb) || (sc != NULL && strlen(sc) >= 128))
        return kg_errorf(err, KG_EINPUT, "%s: case %s needs admissible (true or false), flops and min_bytes "
                         "(restore the file from the campaign)", name, kc->name);
    snprintf(f->op, sizeof f->op, "%s", op);
    snprintf(f->scalars, sizeof f->scalars, "%s", sc != NULL ? sc : "");
    json_t *ct = json_object_get(o, "contract");
    if (ct != NULL && (!json_is_string(ct) || strlen(json_string_value(ct)) >= sizeof f->contract))
        return kg_errorf(err, KG_EINPUT, "%s: case %s: contract is a text of under %d characters (restore the file "
                         "from the campaign)", name, kc->name, (int)sizeof f->contract);
    snprintf(f->contract, sizeof f->contract, "%s", ct != NULL ? json_string_value(ct) : "");
    f->admissible = json_is_true(adm);
    f->flops = json_number_value(fl);
    f->min_bytes = json_number_value(mb);
    int rc = tensors(name, kc->name, "inputs", json_object_get(o, "inputs"), KG_MAX_IN, f->in, &f->nin, err);
    if (rc == KG_OK) rc = tensors(name, kc->name, "outputs", json_object_get(o, "outputs"), KG_MAX_OUT, f->out, &f->nout, err);
    return rc;
}

int kg_facts_parse(const char *name, const char *text, const kg_plan *plan, kg_case_facts **facts, kg_err *err)
{
    *facts = NULL;
    json_error_t je;
    json_t *root = json_loads(text, 0, &je);
    if (root == NULL)
        return kg_errorf(err, KG_EINPUT, "%s:%d: not valid JSON (%s)", name, je.line, je.text);
    json_t *cases = json_object_get(root, "cases");
    int rc = KG_OK;
    if (json_integer_value(json_object_get(root, "schema")) != 1 || !json_is_array(cases) ||
        json_array_size(cases) != (size_t)plan->ncases) {
        rc = kg_errorf(err, KG_EINPUT, "%s: not ops.json of schema 1 with one entry for each of the plan's %d cases "
                       "(restore the file from the campaign)", name, plan->ncases);
        goto done;
    }
    kg_case_facts *f = calloc((size_t)(plan->ncases > 0 ? plan->ncases : 1), sizeof *f);
    if (f == NULL) {
        rc = kg_errorf(err, KG_ENOMEM, "out of memory");
        goto done;
    }
    for (int c = 0; c < plan->ncases && rc == KG_OK; c++)
        rc = one_case(name, &plan->cases[c], json_array_get(cases, (size_t)c), &f[c], err);
    if (rc != KG_OK) free(f);
    else *facts = f;
done:
    json_decref(root);
    return rc;
}

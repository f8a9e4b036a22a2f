/* report_schema.c: schema.json, the folder's CSV files described for
 * programs: for each kind its file, what a row is, and its columns in
 * order with their types and meanings, from the tables that kgate's own
 * writers and readers use (src/evidence/rows.c for the rows of the
 * campaign, report_csv.c for results.csv and the samples table).  The Python
 * package reads its column types from it.  Formats only: the same bytes
 * for every folder of this kgate. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include "kgate/evidence.h"
#include "report/report.h"
#include "base/util.h"

static const struct { kg_col_type type; const char *meaning; } type_meanings[] = {
    { KG_COL_INT, "a decimal integer" },
    { KG_COL_UINT64, "an unsigned 64-bit decimal integer" },
    { KG_COL_REAL, "a decimal number; nan where it was not measured" },
    { KG_COL_HEX, "a bit mask: 0x and hex digits" },
    { KG_COL_FLAG, "0 or 1" },
    { KG_COL_UTC, "a time, ISO 8601 UTC (2026-12-04T13:31:56Z)" },
    { KG_COL_SHA256, "a SHA-256, 64 lowercase hex digits; - where there is no such file" },
    { KG_COL_CASE, "a case of plan.kg, by name (in plan order)" },
    { KG_COL_ARM, "an arm of plan.kg, by name (in plan order)" },
    { KG_COL_ENUM, "one of the column's values (in their order)" },
    { KG_COL_NAME, "a name from an open set" },
    { KG_COL_TEXT, "text, in double quotes (doubled inside) where it may hold a comma" },
    { KG_COL_DIM3, "three integers XxYxZ" },
};

/* The values of an enum column, from its list or its owner's names. */
static json_t *values_json(const kg_col *c)
{
    json_t *v = json_array();
    if (c->values != NULL) {
        for (const char *p = c->values; *p;) {
            size_t k = strcspn(p, ",");
            json_array_append_new(v, json_stringn(p, k));
            p += k + (p[k] == ',');
        }
    } else if (c->value_of != NULL) {
        const char *x;
        for (int i = 0; (x = c->value_of(i)) != NULL; i++) json_array_append_new(v, json_string(x));
    }
    return v;
}

static json_t *kind_json(const kg_rows_def *d, const char *written_by)
{
    json_t *k = json_object(), *cols = json_array();
    json_object_set_new(k, "kind", json_string(d->kind));
    json_object_set_new(k, "file", json_string(d->file));
    json_object_set_new(k, "rows", json_string(d->about));
    json_object_set_new(k, "written_by", json_string(written_by));
    for (int i = 0; i < d->ncols; i++) {
        const kg_col *c = &d->cols[i];
        json_t *o = json_object();
        json_object_set_new(o, "name", json_string(c->name));
        json_object_set_new(o, "type", json_string(kg_col_type_name(c->type)));
        if (c->type == KG_COL_ENUM) json_object_set_new(o, "values", values_json(c));
        json_object_set_new(o, "empty", json_boolean(c->empty));
        json_object_set_new(o, "meaning", json_string(c->meaning));
        json_array_append_new(cols, o);
    }
    json_object_set_new(k, "columns", cols);
    return k;
}

static json_t *schema_json(void)
{
    json_t *j = json_object(), *types = json_object(), *files = json_array();
    json_object_set_new(j, "schema", json_integer(KG_EVIDENCE_SCHEMA));
    json_object_set_new(j, "about", json_string(
        "The CSV files of a kgate evidence folder: for each kind its file (NNN: a process index, three digits or "
        "more), what a row is, and its columns in order, each with its type, whether it may be empty, and its "
        "meaning. The first line of every file is its columns' names. kgate writes this file from the tables its "
        "own writers and strict readers use; docs/evidence.md describes the folder, docs/results.schema.json "
        "results.json."));
    for (size_t i = 0; i < sizeof type_meanings / sizeof type_meanings[0]; i++)
        json_object_set_new(types, kg_col_type_name(type_meanings[i].type), json_string(type_meanings[i].meaning));
    json_object_set_new(j, "types", types);
    for (int k = 0; k < KG_ROWS_NKINDS; k++)
        json_array_append_new(files, kind_json(kg_rows_def_of((kg_rows_kind)k), "the campaign"));
    int n;
    const kg_rows_def *t = kg_report_tables(&n);
    /* a table of no file ("") is made on demand, not kept in the folder */
    for (int i = 0; i < n; i++)
        json_array_append_new(files, kind_json(&t[i], t[i].file[0] ? "the reports"
                                                                   : "kgate report DIR --samples FILE, on demand"));
    json_object_set_new(j, "files", files);
    return j;
}

int kg_report_schema(kg_sb *out, const kg_evidence *ev, const kg_analysis *an, kg_err *err)
{
    (void)ev;
    (void)an;
    json_t *j = schema_json();
    char *text = j != NULL ? json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;
    json_decref(j);
    if (text == NULL) return kg_errorf(err, KG_ENOMEM, "out of memory writing schema.json");
    kg_sb_printf(out, "%s\n", text);
    free(text);
    return KG_OK;
}

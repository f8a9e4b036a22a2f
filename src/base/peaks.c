/* peaks.c: the one reader of peaks.json's fields (kgate/peaks.h). */
#include <stdio.h>
#include <string.h>
#include <jansson.h>
#include "kgate/peaks.h"

const char *kg_peaks_parse(const char *text, kg_peaks *pk, int *line)
{
    json_error_t je;
    json_t *m = json_loads(text != NULL ? text : "", 0, &je);
    memset(pk, 0, sizeof *pk);
    if (line != NULL) *line = m == NULL ? je.line : 0;
    if (m == NULL) return "not valid JSON";
    json_t *st = json_object_get(m, "status"), *me = json_object_get(m, "method"), *cp = json_object_get(m, "cpus"),
           *ff = json_object_get(m, "flops_f32"), *fm = json_object_get(m, "flops_mma16"),
           *fn = json_object_get(m, "flops_note"), *bw = json_object_get(m, "bandwidth");
    const char *bad = !json_is_string(st) ? "status" : !json_is_string(me) ? "method"
                      : !json_is_integer(cp) ? "cpus" : !(json_is_number(ff) || json_is_null(ff)) ? "flops_f32"
                      : !(json_is_number(fm) || json_is_null(fm)) ? "flops_mma16" : !json_is_string(fn) ? "flops_note"
                      : !json_is_array(bw) || json_array_size(bw) > KG_PEAKS_BW_MAX ? "bandwidth" : NULL;
    if (bad == NULL) {
        snprintf(pk->status, sizeof pk->status, "%s", json_string_value(st));
        snprintf(pk->method, sizeof pk->method, "%s", json_string_value(me));
        snprintf(pk->flops_note, sizeof pk->flops_note, "%s", json_string_value(fn));
        pk->ncpu = (int)json_integer_value(cp);
        pk->flops_f32 = json_is_null(ff) ? 0.0 : json_number_value(ff);
        pk->flops_mma16 = json_is_null(fm) ? 0.0 : json_number_value(fm);
        for (size_t i = 0; i < json_array_size(bw) && bad == NULL; i++) {
            json_t *r = json_array_get(bw, i), *w = json_object_get(r, "working_set_bytes"),
                   *v = json_object_get(r, "bytes_per_s");
            if (!json_is_number(w) || !json_is_number(v) || !(json_number_value(v) > 0.0)) bad = "bandwidth";
            else {
                pk->bw_set[pk->nbw] = json_number_value(w);
                pk->bw_rate[pk->nbw++] = json_number_value(v);
            }
        }
        if (!(pk->flops_f32 >= 0.0 && pk->flops_mma16 >= 0.0)) bad = "flops_f32";
        pk->measured = pk->flops_f32 > 0.0 || pk->flops_mma16 > 0.0 || pk->nbw > 0;
    }
    json_decref(m);
    return bad;
}

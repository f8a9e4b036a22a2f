/* cuda_tmap.c: see cuda_tmap.h. */
#include <stdio.h>
#include <string.h>
#include "backend/cuda_tmap.h"

/* CUtensorMapDataType by kgate dtype (1-byte floats move as bytes) */
static int tmap_dtype(int dt)
{
    switch (dt) {
    case KG_DT_F32: return 7;
    case KG_DT_F16: return 6;
    case KG_DT_BF16: return 9;
    case KG_DT_F64: return 8;
    case KG_DT_I32: return 3;
    default: return 0;   /* UINT8: i8, e4m3, e5m2 */
    }
}

CUresult kg_cuda_tmap_encode(const kg_cuda_driver *d, kg_carg *a, CUdeviceptr p, char *why, size_t cap)
{
    const kg_carg_tmap *t = &a->tmap;
    if (d->cuTensorMapEncodeTiled == NULL) {
        snprintf(why, cap, "argument %s:tmap: this driver has no cuTensorMapEncodeTiled (CUDA 12 or later)",
                 a->name);
        return KG_CUDA_ERROR_INVALID_VALUE;
    }
    /* the driver writes a 64-byte aligned map; the argument keeps a copy */
    _Alignas(64) unsigned char map[128];
    memset(map, 0, sizeof map);
    uint64_t dims[2] = { t->cols, t->rows }, strides[1] = { t->cols * t->elem_bytes };
    unsigned box[2] = { t->box[1], t->box[0] }, estr[2] = { 1, 1 };
    int sw = t->swizzle == 128 ? 3 : t->swizzle == 64 ? 2 : t->swizzle == 32 ? 1 : 0;
    CUresult r = d->cuTensorMapEncodeTiled(map, tmap_dtype(t->dtype), 2, (void *)(uintptr_t)p, dims, strides, box,
                                           estr, 0, sw, 3, 0);
    if (r != KG_CUDA_SUCCESS) {
        snprintf(why, cap, "argument %s:tmap:%ux%u%s%.0u: the driver refused the tensor map of a %llu x %llu "
                 "matrix of %u-byte elements (error %d)", a->name, t->box[0], t->box[1], t->swizzle ? ":sw" : "",
                 t->swizzle, (unsigned long long)t->rows, (unsigned long long)t->cols, t->elem_bytes, r);
        return r;
    }
    memcpy(a->value.map, map, sizeof map);
    return KG_CUDA_SUCCESS;
}

/* outenc.c: saved outputs stored as their distance from the reference,
 * compressed (outenc.h). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>
#include "evidence/outenc.h"
#include "kgate/gen.h"

/* zstd's level: the planes of an honest output are mostly zero bytes,
 * which every level takes to nearly nothing; 3 is fast. */
#define KG_OUTENC_LEVEL 3

/* The element width in bytes of output o (2 or 4), or 0 when the output
 * is not of a float dtype kgate knows (then nothing is predicted). */
static int width_of(const kg_outref *r, size_t n)
{
    if (r == NULL || r->ref == NULL) return 0;
    int w = r->dtype == KG_DT_F32 ? 4 : r->dtype == KG_DT_F16 || r->dtype == KG_DT_BF16 ? 2 : 0;
    if (w == 0 || n % (size_t)w != 0 || (int64_t)(n / (size_t)w) != r->elems) return 0;
    return w;
}

/* The reference of element e rounded to the output's dtype: its bits. */
static uint32_t pred_bits(const kg_outref *r, size_t e)
{
    float f = (float)r->ref[e];
    if (r->dtype == KG_DT_F16) return kg_gen_f16(f);
    if (r->dtype == KG_DT_BF16) return kg_gen_bf16(f);
    uint32_t b;
    memcpy(&b, &f, sizeof b);
    return b;
}

/* Bit patterns in the order of the values they encode (w bytes wide):
 * negatives below positives, each side monotonic. */
static uint32_t ordered(uint32_t b, int w)
{
    uint32_t sign = w == 4 ? 0x80000000u : 0x8000u, mask = w == 4 ? 0xffffffffu : 0xffffu;
    return (b & sign) ? (~b & mask) : (b | sign);
}

static uint32_t unordered(uint32_t o, int w)
{
    uint32_t sign = w == 4 ? 0x80000000u : 0x8000u, mask = w == 4 ? 0xffffffffu : 0xffffu;
    return (o & sign) ? (o & ~sign & mask) : (~o & mask);
}

static uint32_t load(const unsigned char *p, int w)
{
    return w == 4 ? (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24
                  : (uint32_t)p[0] | (uint32_t)p[1] << 8;
}

int kg_outenc_encode(const kg_outref *r, const void *bytes, size_t n, void **blob, size_t *blen, kg_err *err)
{
    *blob = NULL;
    *blen = 0;
    const unsigned char *in = bytes;
    unsigned char *planes = malloc(n ? n : 1);
    if (planes == NULL) return kg_errorf(err, KG_ENOMEM, "out of memory encoding a saved output (%zu bytes)", n);
    int w = width_of(r, n);
    if (w == 0) {
        memcpy(planes, in, n);
    } else {
        size_t ne = n / (size_t)w;
        uint32_t mask = w == 4 ? 0xffffffffu : 0xffffu;
        for (size_t e = 0; e < ne; e++) {
            uint32_t diff = (ordered(load(in + e * (size_t)w, w), w) - ordered(pred_bits(r, e), w)) & mask;
            /* zigzag: the sign bit to the bottom */
            uint32_t top = (diff >> (8 * w - 1)) & 1u;
            uint32_t z = ((diff << 1) & mask) ^ (top ? mask : 0u);
            for (int k = 0; k < w; k++) planes[(size_t)k * ne + e] = (unsigned char)(z >> (8 * k));
        }
    }
    size_t cap = ZSTD_compressBound(n);
    void *out = malloc(cap ? cap : 1);
    if (out == NULL) {
        free(planes);
        return kg_errorf(err, KG_ENOMEM, "out of memory compressing a saved output (%zu bytes)", n);
    }
    size_t got = ZSTD_compress(out, cap, planes, n, KG_OUTENC_LEVEL);
    free(planes);
    if (ZSTD_isError(got)) {
        free(out);
        return kg_errorf(err, KG_EINTERNAL, "zstd could not compress a saved output: %s", ZSTD_getErrorName(got));
    }
    *blob = out;
    *blen = got;
    return KG_OK;
}

int kg_outenc_decode(const kg_outref *r, const char *enc, const void *blob, size_t blen, void *out, size_t n,
                     kg_err *err)
{
    if (strcmp(enc, KG_OUTENC_RAW) == 0) {
        if (blen != n)
            return kg_errorf(err, KG_EINPUT, "a raw saved output of %zu bytes where the output has %zu", blen, n);
        memcpy(out, blob, n);
        return KG_OK;
    }
    if (strcmp(enc, KG_OUTENC_ULP) != 0)
        return kg_errorf(err, KG_EINPUT, "unknown encoding '%s' (this kgate reads %s and %s)", enc, KG_OUTENC_ULP,
                         KG_OUTENC_RAW);
    unsigned long long size = ZSTD_getFrameContentSize(blob, blen);
    if (size == ZSTD_CONTENTSIZE_ERROR || size == ZSTD_CONTENTSIZE_UNKNOWN || size != (unsigned long long)n)
        return kg_errorf(err, KG_EINPUT, "the stored output is not one zstd frame of %zu bytes", n);
    unsigned char *planes = malloc(n ? n : 1);
    if (planes == NULL) return kg_errorf(err, KG_ENOMEM, "out of memory decoding a saved output (%zu bytes)", n);
    size_t got = ZSTD_decompress(planes, n, blob, blen);
    if (ZSTD_isError(got) || got != n) {
        free(planes);
        return kg_errorf(err, KG_EINPUT, "the stored output does not decompress to %zu bytes%s%s", n,
                         ZSTD_isError(got) ? ": " : "", ZSTD_isError(got) ? ZSTD_getErrorName(got) : "");
    }
    int w = width_of(r, n);
    unsigned char *dst = out;
    if (w == 0) {
        memcpy(dst, planes, n);
    } else {
        size_t ne = n / (size_t)w;
        uint32_t mask = w == 4 ? 0xffffffffu : 0xffffu;
        for (size_t e = 0; e < ne; e++) {
            uint32_t z = 0;
            for (int k = 0; k < w; k++) z |= (uint32_t)planes[(size_t)k * ne + e] << (8 * k);
            uint32_t diff = ((z >> 1) ^ ((z & 1u) ? mask : 0u)) & mask;
            uint32_t b = unordered((ordered(pred_bits(r, e), w) + diff) & mask, w);
            for (int k = 0; k < w; k++) dst[e * (size_t)w + (size_t)k] = (unsigned char)(b >> (8 * k));
        }
    }
    free(planes);
    return KG_OK;
}

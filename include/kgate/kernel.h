/* kgate/kernel.h: what a kernel sees, for C kernels on the CPU backend and
 * CUDA C kernels on the GPU backend.
 *
 * KGATE_STORE(ptr, value) is how a kernel stores a final output value.
 * Built with KGATE_NEGATIVE=1 it stores zero instead: the "numerical
 * negative" that every admission check must reject.  A check suite that
 * still passes on the negative proves nothing.
 *
 * CPU kernels export one function `void ENTRY(const kg_kargs *a)`; the
 * meaning of in[] and out[] is the op's (see `kgate list`).  CUDA C
 * kernels get their input element type and its conversion from the
 * device section at the end (kg_in_t, kg_in_load). */
#ifndef KGATE_KERNEL_H
#define KGATE_KERNEL_H

#if !defined(__CUDACC_RTC__)
#include <stdint.h>
#include <stddef.h>
#include <string.h>
#else
/* NVRTC has no C library headers: the fixed-width types kernels use. */
typedef signed char int8_t;
typedef unsigned char uint8_t;
typedef short int16_t;
typedef unsigned short uint16_t;
typedef int int32_t;
typedef unsigned int uint32_t;
typedef long long int64_t;
typedef unsigned long long uint64_t;
#endif

#if defined(KGATE_NEGATIVE) && KGATE_NEGATIVE
#define KGATE_STORE(ptr, value) (*(ptr) = 0)
#else
#define KGATE_STORE(ptr, value) (*(ptr) = (value))
#endif

#define KG_KARGS_ABI 2
#define KG_KARGS_MAX_IN 8    /* inputs and outputs an op may have (kgate/op.h KG_MAX_IN, KG_MAX_OUT) */
#define KG_KARGS_MAX_OUT 4
#define KG_KARGS_VARS 16

/* element types (kg_dtype's values): the built-in ops' inputs are f32,
 * f16 or bf16; a declared op's tensors may be any of them (docs/ops.md) */
enum {
    KG_KDT_F32 = 0, KG_KDT_F16 = 1, KG_KDT_BF16 = 2, KG_KDT_F64 = 3,
    KG_KDT_I32 = 4, KG_KDT_I8 = 5, KG_KDT_E4M3 = 6, KG_KDT_E5M2 = 7
};

typedef struct kg_kargs {
    int abi;             /* KG_KARGS_ABI */
    int dtype;           /* the case dtype: KG_KDT_* */
    const void *in[KG_KARGS_MAX_IN];   /* op inputs, in the op's order */
    void *out[KG_KARGS_MAX_OUT];       /* op outputs, in the op's order */
    void *ws;            /* workspace (e.g. split-K partials), may be NULL */
    size_t ws_bytes;
    int64_t M, N, K;     /* shape variables (the op says which are used) */
    int64_t splits;
    double eps;
    /* the case's named variables (docs/ops.md), read with
     * kg_var_i and kg_var_r; M N K splits eps stay in the fields above */
    int nvars;
    char var_name[KG_KARGS_VARS][32];
    int64_t var_i[KG_KARGS_VARS];
    double var_r[KG_KARGS_VARS];
} kg_kargs;

#if !defined(__CUDACC__) && !defined(__CUDACC_RTC__)
/* The case variable name as an integer (yes/no: 1/0), or dflt when the
 * case has none; M, N, K and splits too. */
static inline int64_t kg_var_i(const kg_kargs *a, const char *name, int64_t dflt)
{
    for (int v = 0; v < a->nvars && v < KG_KARGS_VARS; v++)
        if (strcmp(a->var_name[v], name) == 0) return a->var_i[v];
    if (strcmp(name, "M") == 0) return a->M;
    if (strcmp(name, "N") == 0) return a->N;
    if (strcmp(name, "K") == 0) return a->K;
    if (strcmp(name, "splits") == 0) return a->splits;
    return dflt;
}

/* The case variable name as a real, or dflt; eps too. */
static inline double kg_var_r(const kg_kargs *a, const char *name, double dflt)
{
    for (int v = 0; v < a->nvars && v < KG_KARGS_VARS; v++)
        if (strcmp(a->var_name[v], name) == 0) return a->var_r[v];
    if (strcmp(name, "eps") == 0) return a->eps;
    return (double)kg_var_i(a, name, (int64_t)dflt);
}
#endif

#if !defined(__CUDACC__) && !defined(__CUDACC_RTC__)
#include "kgate/gen.h"
/* Host conversions for 16-bit storage types (round to nearest even). */
static inline float kg_bf16_to_f32(uint16_t h)
{
    return kg_gen_bf16_to_f32(h);
}

/* float32 to bfloat16, round to nearest even: kgate's generator's rounding
 * (kgate/gen.h), which the device runs too */
static inline uint16_t kg_f32_to_bf16(float f)
{
    return kg_gen_bf16(f);
}

static inline float kg_f16_to_f32(uint16_t h)
{
    return kg_gen_f16_to_f32(h);
}

/* float32 to binary16, round to nearest even (kgate/gen.h) */
static inline uint16_t kg_f32_to_f16(float f)
{
    return kg_gen_f16(f);
}

/* OCP 8-bit floats (e4m3, e5m2) to float and back (round to nearest
 * even, saturating), as kgate's generator encodes them (kgate/gen.h). */
static inline float kg_e4m3_to_f32(uint8_t h) { return kg_gen_fp8_to_f32(h, KG_KDT_E4M3); }
static inline float kg_e5m2_to_f32(uint8_t h) { return kg_gen_fp8_to_f32(h, KG_KDT_E5M2); }
static inline uint8_t kg_f32_to_e4m3(float f) { return kg_gen_fp8(f, KG_KDT_E4M3); }
static inline uint8_t kg_f32_to_e5m2(float f) { return kg_gen_fp8(f, KG_KDT_E5M2); }

/* Loads element i of a tensor of dtype dt as double (exact for every
 * dtype), and as float (exact but for f64 and large i32 values). */
static inline double kg_load64(const void *p, int dt, int64_t i)
{
    switch (dt) {
    case KG_KDT_F32: return (double)((const float *)p)[i];
    case KG_KDT_F16: return (double)kg_f16_to_f32(((const uint16_t *)p)[i]);
    case KG_KDT_BF16: return (double)kg_bf16_to_f32(((const uint16_t *)p)[i]);
    case KG_KDT_F64: return ((const double *)p)[i];
    case KG_KDT_I32: return (double)((const int32_t *)p)[i];
    case KG_KDT_I8: return (double)((const int8_t *)p)[i];
    default: return (double)kg_gen_fp8_to_f32(((const uint8_t *)p)[i], dt);
    }
}

static inline float kg_load(const void *p, int dt, int64_t i)
{
    if (dt == KG_KDT_F32) return ((const float *)p)[i];
    if (dt == KG_KDT_F16) return kg_f16_to_f32(((const uint16_t *)p)[i]);
    if (dt == KG_KDT_BF16) return kg_bf16_to_f32(((const uint16_t *)p)[i]);
    return (float)kg_load64(p, dt, i);
}
#endif

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
/* Device side: the input element type that KG_DTYPE (set by kgate from the
 * case dtype: KG_KDT_*) selects, and its exact conversion to float.  16-bit
 * inputs travel as raw unsigned short bits, so no toolkit header is needed:
 * f16 converts with one cvt instruction, bf16 is the high half of an f32.
 *   kg_in_t        the element type of every op input
 *   KG_IN_BYTES    sizeof(kg_in_t), usable in #if
 *   kg_in_cvt(x)   one raw element as float
 *   kg_in_load(p, i)  element i of p as float */
#ifndef KG_DTYPE
#define KG_DTYPE 0
#endif
#if KG_DTYPE == 0
typedef float kg_in_t;
#define KG_IN_BYTES 4
__device__ __forceinline__ float kg_in_cvt(float v) { return v; }
#elif KG_DTYPE == 1
typedef unsigned short kg_in_t;
#define KG_IN_BYTES 2
__device__ __forceinline__ float kg_in_cvt(unsigned short h)
{
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
    return f;
}
#elif KG_DTYPE == 2
typedef unsigned short kg_in_t;
#define KG_IN_BYTES 2
__device__ __forceinline__ float kg_in_cvt(unsigned short h)
{
    return __uint_as_float(((unsigned)h) << 16);
}
#elif KG_DTYPE == 3
typedef double kg_in_t;
#define KG_IN_BYTES 8
__device__ __forceinline__ float kg_in_cvt(double v) { return (float)v; }
#elif KG_DTYPE == 4
typedef int kg_in_t;
#define KG_IN_BYTES 4
__device__ __forceinline__ float kg_in_cvt(int v) { return (float)v; }
#elif KG_DTYPE == 5
typedef signed char kg_in_t;
#define KG_IN_BYTES 1
__device__ __forceinline__ float kg_in_cvt(signed char v) { return (float)v; }
#elif KG_DTYPE == 6 || KG_DTYPE == 7
typedef unsigned char kg_in_t;
#define KG_IN_BYTES 1
__device__ __forceinline__ float kg_in_cvt(unsigned char h);
#else
#error "KG_DTYPE must be 0 (f32), 1 (f16), 2 (bf16), 3 (f64), 4 (i32), 5 (i8), 6 (e4m3) or 7 (e5m2)"
#endif

/* OCP 8-bit floats to float, exactly, in integer code (the hardware's
 * cvt.rn.f16x2.e4m3x2 gives the same values): e4m3 (bias 7, 0x7f NaN)
 * and e5m2 (bias 15, IEEE-like) */
__device__ __forceinline__ float kg_fp8_to_f32(unsigned char h, int e5m2)
{
    const int mb = e5m2 ? 2 : 3, bias = e5m2 ? 15 : 7;
    unsigned sign = (unsigned)(h & 0x80u) << 24, ef = ((unsigned)h & 0x7fu) >> mb, man = (unsigned)h & ((1u << mb) - 1u);
    if (!e5m2 && (h & 0x7fu) == 0x7fu) return __uint_as_float(sign | 0x7fc00000u);
    if (e5m2 && ef == 31u) return __uint_as_float(sign | 0x7f800000u | (man ? 0x400000u : 0u));
    if (ef == 0) { /* subnormal: man 2^(1 - bias - mb) */
        float v = (float)man * __uint_as_float((unsigned)(127 + 1 - bias - mb) << 23);
        return sign ? -v : v;
    }
    return __uint_as_float(sign | ((ef - (unsigned)bias + 127u) << 23) | (man << (23 - mb)));
}
__device__ __forceinline__ float kg_e4m3_to_f32(unsigned char h) { return kg_fp8_to_f32(h, 0); }
__device__ __forceinline__ float kg_e5m2_to_f32(unsigned char h) { return kg_fp8_to_f32(h, 1); }
#if KG_DTYPE == 6 || KG_DTYPE == 7
__device__ __forceinline__ float kg_in_cvt(unsigned char h) { return kg_fp8_to_f32(h, KG_DTYPE == 7); }
#endif

__device__ __forceinline__ float kg_in_load(const kg_in_t *p, long long i)
{
    return kg_in_cvt(p[i]);
}

/* For ops whose tensors have dtypes of their own (docs/ops.md): bf16 bits
 * to float, and float to bf16 bits rounded to nearest even (NaN stays a
 * NaN), as kgate's host conversion rounds. */
__device__ __forceinline__ float kg_bf16_bits_to_f32(unsigned short h)
{
    return __uint_as_float(((unsigned)h) << 16);
}
__device__ __forceinline__ unsigned short kg_f32_to_bf16_bits(float f)
{
    unsigned u = __float_as_uint(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (unsigned short)((u >> 16) | 0x40u);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (unsigned short)(u >> 16);
}
#endif

#endif

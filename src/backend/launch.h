/* launch.h: launch specs of an arm, for any GPU backend.
 *
 * A GPU arm declares, per launch of its chain, an argument list
 * ("A, B, C, M, N, K:i64") and grid, block and shared-memory expressions
 * over the case's variables.  This module turns them into values for one
 * case: typed kernel arguments and checked launch geometry.  It knows no
 * device API: the cuda backend uses it, and a HIP backend would too.
 *
 * Everything here is pure and is tested without a GPU
 * (tests/unit/test_cuda_cpu.c). */
#ifndef KGATE_LAUNCH_H
#define KGATE_LAUNCH_H

#include <stdint.h>
#include "kgate/err.h"
#include "kgate/plan.h"

/* How one kernel argument is filled. */
typedef enum {
    KG_CARG_IN = 0,       /* input buffer `index` of the op: device address */
    KG_CARG_OUT,          /* output buffer `index`: device address */
    KG_CARG_WS,           /* workspace pointer (WS, or ws): device address; binding fails
                           * when the worker gave the arm no workspace */
    KG_CARG_I32,          /* case variable as int (32-bit) */
    KG_CARG_I64,          /* case variable with ":i64" */
    KG_CARG_F32,          /* eps as float */
    KG_CARG_F64,          /* eps with ":f64" */
    KG_CARG_NONE,         /* `args = none`: the kernel takes no parameters (alone only) */
    KG_CARG_TMAP          /* a TMA tensor map of input or output `index` (`A:tmap:64x64:sw128`):
                           * the 128-byte CUtensorMap a __grid_constant__ parameter takes, encoded
                           * by the backend where the buffer is mapped, for each input set */
} kg_carg_kind;

#define KG_LAUNCH_MAX_ARGS 16

/* A tensor map argument: the buffer seen as a row-major matrix of rows x
 * cols elements (the op's shape, the last dimension fastest), copied in
 * boxes of box[0] rows x box[1] columns, with the shared-memory swizzle
 * of `swizzle` bytes (0: none); out of range elements read as zeros. */
typedef struct kg_carg_tmap {
    int out;              /* 0: input `index`; 1: output `index` */
    uint32_t box[2];      /* rows, cols */
    uint32_t swizzle;     /* 0, 32, 64 or 128 */
    /* the case's, from kg_launch_tmap_shape */
    uint64_t rows, cols;
    uint32_t elem_bytes;
    int32_t dtype;        /* kg_dtype */
} kg_carg_tmap;

typedef struct kg_carg {
    kg_carg_kind kind;
    int index;            /* buffer index for IN/OUT (and TMAP) */
    char name[32];        /* as written, without the suffix */
    kg_carg_tmap tmap;    /* TMAP only */
    /* map: the encoded CUtensorMap (TMAP), 128 bytes */
    union { uint64_t ptr; int32_t i32; int64_t i64; float f32; double f64; uint64_t map[16]; } value;
} kg_carg;

/* Parses an arm's argument list ("A, B, C, M, N, K:i64"; commas and/or
 * spaces separate) against the op's buffer names; scalars take their
 * values from case c (M N K splits eps); a buffer written NAME:tmap:RxC
 * (optionally :sw32, :sw64 or :sw128) is a TMAP of R x C boxes (each 1 to
 * 256), whose shape the backend sets (kg_launch_tmap_shape).  An unknown name, a variable the
 * case does not set, a 32-bit overflow or a bad suffix is KG_EINPUT
 * naming the arm and the argument. */
int kg_launch_args_parse(const char *arm, const char *text, const char *const *in_names, int nin,
                         const char *const *out_names, int nout, const kg_case *c,
                         kg_carg *args, int *nargs, kg_err *err);

/* A tensor map argument's matrix for a case: the buffer's shape dims[0..n-1]
 * (kg_op_shape) as rows = the product of all but the last dimension and
 * cols = the last, in dtype dt.  What the TMA cannot address is
 * KG_EINADMISSIBLE naming the arm, the case and the rule: a dtype it has no
 * type for, a row pitch that is not a multiple of 16 bytes, a box row that
 * is not a multiple of 16 bytes or is wider than the swizzle span, a
 * dimension over 2^32. */
int kg_launch_tmap_shape(const char *arm, const kg_case *c, kg_carg *a, const int64_t *dims, int ndims, kg_dtype dt,
                         kg_err *err);

/* Launch geometry of an arm on a case: grid, block and dynamic shared
 * bytes from the arm's expressions (grid and block default to 1 per
 * missing dimension; shared to 0), checked for positivity and the CUDA
 * limits that hold on every device (block <= 1024 threads, grid.y/z <=
 * 65535, grid.x < 2^31). */
typedef struct kg_launch_geom {
    unsigned grid[3], block[3];
    unsigned shared_bytes;
} kg_launch_geom;
int kg_launch_geometry(const kg_arm *arm, const kg_case *c, kg_launch_geom *g, kg_err *err);

/* The same for launch `launch` (1, 2 or 3) of an arm's chain: launch 1
 * reads grid/block/shared, launch n > 1 reads extra[n-2]; messages name
 * the key as written in the plan ("grid2"). */
int kg_launch_geometry_at(const kg_arm *arm, int launch, const kg_case *c, kg_launch_geom *g,
                          kg_err *err);

/* Number of launches of an arm's chain: 1 + the extra launches whose
 * entry is set.  A gap (entry3 without entry2) is KG_EINPUT. */
int kg_launch_chain_length(const kg_arm *arm, int *n, kg_err *err);

#endif

/* cuda_tmap.h: TMA tensor maps for kernel arguments written NAME:tmap:RxC
 * (backend/launch.h, KG_CARG_TMAP).  A tensor map holds the buffer's
 * device address, so it is encoded in the process that addresses the
 * buffer: the worker for a trusted arm (cuda.c), the arm's host for an
 * untrusted one (cuda_host.c), for each input set a binding names. */
#ifndef KGATE_CUDA_TMAP_H
#define KGATE_CUDA_TMAP_H

#include <stddef.h>
#include "backend/cuda_api.h"
#include "backend/launch.h"

/* Encodes a's tensor map of the buffer at p into a->value.map: a rank-2
 * tiled map (cols innermost, the row pitch cols x elem_bytes), element
 * strides 1, no interleave, a->tmap.swizzle, L2 promotion of 256 bytes,
 * zeros out of range.  CUDA_SUCCESS, or the driver's error (or
 * KG_CUDA_ERROR_INVALID_VALUE when the driver has no tensor maps) with
 * why (cap bytes) naming the argument, its matrix and its box. */
CUresult kg_cuda_tmap_encode(const kg_cuda_driver *d, kg_carg *a, CUdeviceptr p, char *why, size_t cap);

#endif

/* cuda_fill.c: the cuda backend's fill slot, kgate's input generator
 * (kgate/gen.h) as a kernel.
 *
 * Under inputs = fresh every timed execution of an arm runs on inputs no
 * earlier execution saw.  Generating them on the host and copying them
 * over took 38-45 ms per execution for the 1024^3 gemm cases of
 * examples/cuda-gemm.kg on the H200's host, and tripled the campaign's
 * time; this kernel writes them in the worker's context, into the
 * worker's own allocation (which an arm host maps), in microseconds.
 *
 * Trusted code: the source is kgate/philox.h and kgate/gen.h, embedded
 * at build time (the Makefile's gen rule, build/gen/kg_gen_src.h, with
 * their #include lines removed), compiled with NVRTC once per campaign by
 * the supervisor's build (build/kgate_fill.sm_XY.cubin, loaded by every
 * worker), or by the worker itself when there is no such file.
 * The first fill of each case is compared bit for bit with the host's
 * generator by the worker before any arm reads it (worker.c,
 * fresh_setup); any difference, or a failure to compile here, makes the
 * worker generate on the host instead and say so. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backend/cuda_shared.h"
#include "base/safefs.h"
#include "base/util.h"
#include "kg_gen_src.h"

/* NVRTC has no <stdint.h> of its own: the widths gen.h and philox.h use */
static const char fill_prelude[] =
    "typedef signed char int8_t;\n"
    "typedef unsigned char uint8_t;\n"
    "typedef unsigned short uint16_t;\n"
    "typedef int int32_t;\n"
    "typedef unsigned int uint32_t;\n"
    "typedef long long int64_t;\n"
    "typedef unsigned long long uint64_t;\n";

static const char fill_kernel[] =
    "extern \"C\" __global__ void kg_fill(kg_gen_spec s, void *dst)\n"
    "{\n"
    "    const unsigned long long nq = (unsigned long long)((s.n + 3) / 4);\n"
    "    kg_gen_row p;\n"
    "    p.row = -1;\n"
    "    const unsigned long long step = (unsigned long long)gridDim.x * blockDim.x;\n"
    "    for (unsigned long long q = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; q < nq; q += step)\n"
    "        kg_gen_quad(&s, q, &p, dst);\n"
    "}\n";

/* Where the campaign's build keeps the fill's cubin for this device's
 * architecture. */
static void fill_path(const cuda_ctx *c, const char *build_dir, char *path, size_t cap)
{
    snprintf(path, cap, "%s/kgate_fill.sm_%d%d.cubin", build_dir, c->cc_major, c->cc_minor);
}

/* The fill kernel compiled by NVRTC for this device: *image (the caller's). */
static int fill_nvrtc(cuda_ctx *c, char **image_out, size_t *bytes, kg_err *err)
{
    kg_cuda_nvrtc *nv = &c->nvrtc;
    int rc = KG_OK;
    if (nv->lib == NULL && (rc = kg_cuda_nvrtc_load(nv, c->settings, err)) != KG_OK) return rc;
    size_t len = sizeof fill_prelude + sizeof kg_gen_src + sizeof fill_kernel;
    char *src = malloc(len);
    if (src == NULL) return kg_errorf(err, KG_ENOMEM, "fill: out of memory");
    snprintf(src, len, "%s%s%s", fill_prelude, kg_gen_src, fill_kernel);
    nvrtcProgram prog = NULL;
    if (nv->nvrtcCreateProgram(&prog, src, "kgate_fill.cu", 0, NULL, NULL) != KG_NVRTC_SUCCESS) {
        free(src);
        return kg_errorf(err, KG_EBACKEND, "fill: nvrtcCreateProgram failed");
    }
    char arch[48];
    snprintf(arch, sizeof arch, "--gpu-architecture=sm_%d%d", c->cc_major, c->cc_minor);
    /* no fused multiply-adds: gen.h's values are single roundings of exact
     * products as written, as on the host */
    const char *opts[] = { arch, "--fmad=false" };
    char *image = NULL;
    size_t n = 0;
    if (nv->nvrtcCompileProgram(prog, 2, opts) != KG_NVRTC_SUCCESS) {
        char log[1024] = "";
        size_t ln = 0;
        if (nv->nvrtcGetProgramLogSize(prog, &ln) == KG_NVRTC_SUCCESS && ln < sizeof log) nv->nvrtcGetProgramLog(prog, log);
        rc = kg_errorf(err, KG_EBACKEND, "fill: NVRTC could not compile kgate's generator for %s: %.600s", arch, log);
    } else if (nv->nvrtcGetCUBINSize(prog, &n) != KG_NVRTC_SUCCESS || n == 0 || (image = malloc(n)) == NULL ||
               nv->nvrtcGetCUBIN(prog, image) != KG_NVRTC_SUCCESS) {
        rc = kg_errorf(err, KG_EBACKEND, "fill: no cubin from NVRTC for %s", arch);
    }
    nv->nvrtcDestroyProgram(&prog);
    free(src);
    if (rc != KG_OK) {
        free(image);
        return rc;
    }
    *image_out = image;
    *bytes = n;
    return KG_OK;
}

int kg_cuda_fill_build(cuda_ctx *c, const char *build_dir, kg_err *err)
{
    char *image = NULL;
    size_t n = 0;
    kg_err ce = { 0 };
    c->fill_built = 1;
    if (build_dir == NULL || fill_nvrtc(c, &image, &n, &ce) != KG_OK) return KG_OK;
    char path[4096 + 64];
    fill_path(c, build_dir, path, sizeof path);
    int rc = kg_write_atomic(path, image, n, err);
    free(image);
    return rc;
}

/* The fill's module: the campaign's build of it when the worker's loads
 * named a build folder holding one, else compiled here.  A wrong image is
 * caught by the worker's bit-for-bit self-test of the first fill. */
static int fill_compile(cuda_ctx *c, kg_err *err)
{
    char *image = NULL;
    size_t n = 0;
    int rc = KG_OK;
    if (c->build_dir[0] != '\0') {
        char path[sizeof c->build_dir + 64];
        kg_err re = { 0 };
        fill_path(c, c->build_dir, path, sizeof path);
        if (kg_read_file_cap(path, (size_t)16 << 20, &image, &n, &re) != KG_OK || n == 0) {
            free(image);
            image = NULL;
        }
    }
    if (image == NULL && (rc = fill_nvrtc(c, &image, &n, err)) != KG_OK) return rc;
    rc = CU(c, cuModuleLoadData, (&c->fill_mod, image), err);
    free(image);
    if (rc == KG_OK) rc = CU(c, cuModuleGetFunction, (&c->fill_fn, c->fill_mod, "kg_fill"), err);
    return rc;
}

int kg_cuda_fill(kg_backend *be, const kg_dbuf *buf, const kg_gen_spec *spec, kg_err *err)
{
    cuda_ctx *c = be != NULL ? be->ctx : NULL;
    if (c == NULL || c->ctx == NULL || c->stream == NULL)
        return kg_errorf(err, KG_EBACKEND, "fill: the cuda backend is not open");
    if (c->fill_state < 0) return kg_errorf(err, KG_EUNSUPPORTED, "%s", c->fill_why);
    int rc = CU(c, cuCtxSetCurrent, (c->ctx), err);
    if (rc != KG_OK) return rc;
    if (c->fill_state == 0) {
        kg_err ce = { 0 };
        if (fill_compile(c, &ce) != KG_OK) {
            c->fill_state = -1;
            snprintf(c->fill_why, sizeof c->fill_why, "%.250s", ce.msg);
            return kg_errorf(err, KG_EUNSUPPORTED, "%s", c->fill_why);
        }
        c->fill_state = 1;
    }
    if (spec->n == 0) return KG_OK;
    kg_gen_spec s = *spec;
    CUdeviceptr dst = dptr(buf->ptr);
    void *args[] = { &s, &dst };
    unsigned long long nq = (unsigned long long)((spec->n + 3) / 4);
    unsigned long long blocks = (nq + 255) / 256;
    unsigned grid = blocks > 65535ull ? 65535u : (unsigned)blocks;
    rc = CU(c, cuLaunchKernel, (c->fill_fn, grid, 1, 1, 256, 1, 1, 0, c->stream, args, NULL), err);
    if (rc == KG_OK) rc = CU(c, cuStreamSynchronize, (c->stream), err);
    return rc;
}

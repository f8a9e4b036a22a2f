/* cuda_loader.c: opens libcuda, NVRTC, NVML and cuBLASLt with dlopen and
 * fills one struct of function pointers per library (see cuda_api.h).
 *
 * kgate has no link-time CUDA dependency, so that one binary runs on a
 * laptop (cpu backend) and on a GPU node.  A library that is absent is an
 * ordinary kg_err quoting dlerror(); a symbol that is absent means the
 * installed library is older than kgate needs, except for the symbols
 * marked optional, which are left NULL.
 *
 * This file does not call into the libraries beyond resolving symbols and
 * naming what they return: a driver result (kg_cuda_result_text) and a
 * device UUID (kg_cuda_uuid_text), which the worker's cuda.c and the cuda
 * arm host both print. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backend/cuda_api.h"

/* Opens the first name of a list (or the override, a kg_settings lib_*).
 * Messages quote the dlerror() of the first candidate, which is the one
 * a user recognises ("libcuda.so.1: cannot open shared object file"). */
static int open_first(const char *over, const char *const *names, int n, void **lib,
                      char *path, size_t path_cap, char *why, size_t why_cap)
{
    *lib = NULL;
    why[0] = '\0';
    if (over != NULL && over[0] != '\0') {
        names = &over;
        n = 1;
    }
    for (int i = 0; i < n; i++) {
        /* never unmapped: the CUDA libraries keep static state (and
         * libstdc++ pools) that does not survive being unloaded */
        void *h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
        if (h != NULL) {
            *lib = h;
            snprintf(path, path_cap, "%s", names[i]);
            return KG_OK;
        }
        if (why[0] == '\0') {
            const char *e = dlerror();
            snprintf(why, why_cap, "%s", e != NULL ? e : names[i]);
        }
    }
    return KG_EUNSUPPORTED;
}

/* Resolves the first present name of a '|'-separated list into a
 * function-pointer field (copied bytewise: ISO C has no conversion
 * between object and function pointers, POSIX guarantees it works). */
static int resolve(void *lib, const char *libname, const char *names, void *field,
                   int optional, kg_err *err)
{
    char buf[128];
    snprintf(buf, sizeof buf, "%s", names);
    void *p = NULL;
    for (char *save = NULL, *tok = strtok_r(buf, "|", &save); tok != NULL && p == NULL;
         tok = strtok_r(NULL, "|", &save))
        p = dlsym(lib, tok);
    memcpy(field, &p, sizeof p);
    if (p == NULL && !optional)
        return kg_errorf(err, KG_EUNSUPPORTED,
                         "%s lacks %s: the installed library is too old for kgate", libname,
                         names);
    return KG_OK;
}

#define NEED(L, field, names) \
    do { if (rc == KG_OK) rc = resolve((L)->lib, (L)->path, names, &(L)->field, 0, err); } while (0)
#define WANT(L, field, names) \
    do { if (rc == KG_OK) rc = resolve((L)->lib, (L)->path, names, &(L)->field, 1, err); } while (0)

int kg_cuda_driver_load(kg_cuda_driver *d, const kg_settings *s, kg_err *err)
{
    static const char *const names[] = { "libcuda.so.1" };
    char why[512];
    memset(d, 0, sizeof *d);
    int rc = open_first(s->lib_cuda, names, 1, &d->lib, d->path, sizeof d->path, why,
                        sizeof why);
    if (rc != KG_OK)
        return kg_errorf(err, KG_EUNSUPPORTED, "no CUDA driver found: %s; use backend = cpu", why);
    NEED(d, cuInit, "cuInit");
    NEED(d, cuDriverGetVersion, "cuDriverGetVersion");
    NEED(d, cuGetErrorName, "cuGetErrorName");
    NEED(d, cuGetErrorString, "cuGetErrorString");
    NEED(d, cuDeviceGetCount, "cuDeviceGetCount");
    NEED(d, cuDeviceGet, "cuDeviceGet");
    NEED(d, cuDeviceGetName, "cuDeviceGetName");
    NEED(d, cuDeviceGetAttribute, "cuDeviceGetAttribute");
    NEED(d, cuDeviceGetUuid, "cuDeviceGetUuid_v2|cuDeviceGetUuid");
    NEED(d, cuDeviceTotalMem, "cuDeviceTotalMem_v2");
    NEED(d, cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
    NEED(d, cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2|cuDevicePrimaryCtxRelease");
    NEED(d, cuCtxSetCurrent, "cuCtxSetCurrent");
    NEED(d, cuCtxSynchronize, "cuCtxSynchronize");
    WANT(d, cuCtxResetPersistingL2Cache, "cuCtxResetPersistingL2Cache");
    WANT(d, cuTensorMapEncodeTiled, "cuTensorMapEncodeTiled");
    /* a driver keeps _v2 for older programs; _v4 is the fallback */
    NEED(d, cuIpcGetMemHandle, "cuIpcGetMemHandle");
    NEED(d, cuIpcOpenMemHandle, "cuIpcOpenMemHandle_v2|cuIpcOpenMemHandle");
    NEED(d, cuIpcCloseMemHandle, "cuIpcCloseMemHandle");
    NEED(d, cuMemGetAddressRange, "cuMemGetAddressRange_v2");
    WANT(d, cuStreamWaitValue32, "cuStreamWaitValue32_v2|cuStreamWaitValue32");
    WANT(d, cuStreamWriteValue32, "cuStreamWriteValue32_v2|cuStreamWriteValue32");
    WANT(d, cuStreamQuery, "cuStreamQuery");
    NEED(d, cuMemAlloc, "cuMemAlloc_v2");
    NEED(d, cuMemFree, "cuMemFree_v2");
    NEED(d, cuMemcpyHtoD, "cuMemcpyHtoD_v2");
    NEED(d, cuMemcpyDtoH, "cuMemcpyDtoH_v2");
    NEED(d, cuMemsetD8Async, "cuMemsetD8Async");
    NEED(d, cuMemsetD32Async, "cuMemsetD32Async");
    NEED(d, cuStreamCreate, "cuStreamCreate");
    NEED(d, cuStreamDestroy, "cuStreamDestroy_v2");
    NEED(d, cuStreamSynchronize, "cuStreamSynchronize");
    NEED(d, cuStreamBeginCapture, "cuStreamBeginCapture_v2");
    NEED(d, cuStreamEndCapture, "cuStreamEndCapture");
    NEED(d, cuEventCreate, "cuEventCreate");
    NEED(d, cuEventDestroy, "cuEventDestroy_v2");
    NEED(d, cuEventRecord, "cuEventRecord");
    NEED(d, cuEventSynchronize, "cuEventSynchronize");
    NEED(d, cuEventElapsedTime, "cuEventElapsedTime_v2|cuEventElapsedTime");
    NEED(d, cuModuleLoadData, "cuModuleLoadData");
    NEED(d, cuModuleUnload, "cuModuleUnload");
    NEED(d, cuModuleGetFunction, "cuModuleGetFunction");
    NEED(d, cuFuncGetAttribute, "cuFuncGetAttribute");
    NEED(d, cuFuncSetAttribute, "cuFuncSetAttribute");
    NEED(d, cuLaunchKernel, "cuLaunchKernel");
    NEED(d, cuGraphInstantiate, "cuGraphInstantiateWithFlags");
    NEED(d, cuGraphLaunch, "cuGraphLaunch");
    NEED(d, cuGraphExecDestroy, "cuGraphExecDestroy");
    NEED(d, cuGraphDestroy, "cuGraphDestroy");
    if (rc != KG_OK) kg_cuda_driver_unload(d);
    return rc;
}

void kg_cuda_driver_unload(kg_cuda_driver *d)
{
    if (d == NULL) return;
    if (d->lib != NULL) dlclose(d->lib);
    memset(d, 0, sizeof *d);
}

/* NVRTC is versioned by toolkit; the unversioned name exists only with a
 * developer install, so the toolkit folders are tried too. */
int kg_cuda_nvrtc_load(kg_cuda_nvrtc *n, const kg_settings *s, kg_err *err)
{
    char cands[8][256];
    const char *names[8];
    int nn = 0;
    snprintf(cands[nn++], sizeof cands[0], "libnvrtc.so");
    snprintf(cands[nn++], sizeof cands[0], "libnvrtc.so.13");
    snprintf(cands[nn++], sizeof cands[0], "libnvrtc.so.12");
    const char *home = s->cuda_home;
    if (home != NULL && home[0] != '\0') {
        snprintf(cands[nn++], sizeof cands[0], "%s/lib64/libnvrtc.so", home);
        snprintf(cands[nn++], sizeof cands[0], "%s/lib/libnvrtc.so", home);
    }
    snprintf(cands[nn++], sizeof cands[0], "/usr/local/cuda/lib64/libnvrtc.so");
    for (int i = 0; i < nn; i++) names[i] = cands[i];
    char why[512];
    memset(n, 0, sizeof *n);
    int rc = open_first(s->lib_nvrtc, names, nn, &n->lib, n->path, sizeof n->path, why,
                        sizeof why);
    if (rc != KG_OK)
        return kg_errorf(err, KG_EUNSUPPORTED,
                         "no NVRTC found: %s (install the CUDA toolkit's NVRTC or set CUDA_HOME)",
                         why);
    NEED(n, nvrtcGetErrorString, "nvrtcGetErrorString");
    NEED(n, nvrtcVersion, "nvrtcVersion");
    NEED(n, nvrtcCreateProgram, "nvrtcCreateProgram");
    NEED(n, nvrtcDestroyProgram, "nvrtcDestroyProgram");
    NEED(n, nvrtcCompileProgram, "nvrtcCompileProgram");
    NEED(n, nvrtcGetProgramLogSize, "nvrtcGetProgramLogSize");
    NEED(n, nvrtcGetProgramLog, "nvrtcGetProgramLog");
    NEED(n, nvrtcGetCUBINSize, "nvrtcGetCUBINSize");
    NEED(n, nvrtcGetCUBIN, "nvrtcGetCUBIN");
    WANT(n, nvrtcGetPTXSize, "nvrtcGetPTXSize");
    WANT(n, nvrtcGetPTX, "nvrtcGetPTX");
    if (rc != KG_OK) kg_cuda_nvrtc_unload(n);
    return rc;
}

void kg_cuda_nvrtc_unload(kg_cuda_nvrtc *n)
{
    if (n == NULL) return;
    if (n->lib != NULL) dlclose(n->lib);
    memset(n, 0, sizeof *n);
}

int kg_cuda_nvml_load(kg_cuda_nvml *n, const kg_settings *s, kg_err *err)
{
    static const char *const names[] = { "libnvidia-ml.so.1", "libnvidia-ml.so" };
    char why[512];
    memset(n, 0, sizeof *n);
    int rc = open_first(s->lib_nvml, names, 2, &n->lib, n->path, sizeof n->path, why,
                        sizeof why);
    if (rc != KG_OK) return kg_errorf(err, KG_EUNSUPPORTED, "no NVML found: %s", why);
    NEED(n, nvmlInit, "nvmlInit_v2");
    NEED(n, nvmlShutdown, "nvmlShutdown");
    NEED(n, nvmlErrorString, "nvmlErrorString");
    NEED(n, nvmlDeviceGetHandleByIndex, "nvmlDeviceGetHandleByIndex_v2");
    WANT(n, nvmlDeviceGetHandleByUUID, "nvmlDeviceGetHandleByUUID");
    NEED(n, nvmlDeviceGetClockInfo, "nvmlDeviceGetClockInfo");
    NEED(n, nvmlDeviceGetPowerUsage, "nvmlDeviceGetPowerUsage");
    NEED(n, nvmlDeviceGetTemperature, "nvmlDeviceGetTemperature");
    WANT(n, nvmlDeviceGetCurrentClocksEventReasons,
         "nvmlDeviceGetCurrentClocksEventReasons|nvmlDeviceGetCurrentClocksThrottleReasons");
    NEED(n, nvmlDeviceGetUUID, "nvmlDeviceGetUUID");
    WANT(n, nvmlDeviceGetComputeRunningProcesses,
         "nvmlDeviceGetComputeRunningProcesses_v3|nvmlDeviceGetComputeRunningProcesses_v2");
    if (rc != KG_OK) kg_cuda_nvml_unload(n);
    return rc;
}

void kg_cuda_nvml_unload(kg_cuda_nvml *n)
{
    if (n == NULL) return;
    if (n->lib != NULL) dlclose(n->lib);
    memset(n, 0, sizeof *n);
}

int kg_cuda_cublaslt_load(kg_cuda_cublaslt *c, const kg_settings *s, kg_err *err)
{
    /* like NVRTC, a toolkit install often leaves it off the loader path */
    char cands[8][256];
    const char *names[8];
    int nn = 0;
    snprintf(cands[nn++], sizeof cands[0], "libcublasLt.so");
    snprintf(cands[nn++], sizeof cands[0], "libcublasLt.so.13");
    snprintf(cands[nn++], sizeof cands[0], "libcublasLt.so.12");
    const char *home = s->cuda_home;
    if (home != NULL && home[0] != '\0') {
        snprintf(cands[nn++], sizeof cands[0], "%s/lib64/libcublasLt.so", home);
        snprintf(cands[nn++], sizeof cands[0], "%s/lib/libcublasLt.so", home);
    }
    snprintf(cands[nn++], sizeof cands[0], "/usr/local/cuda/lib64/libcublasLt.so");
    snprintf(cands[nn++], sizeof cands[0], "/usr/local/cuda/lib/libcublasLt.so");
    for (int i = 0; i < nn; i++) names[i] = cands[i];
    char why[512];
    memset(c, 0, sizeof *c);
    int rc = open_first(s->lib_cublaslt, names, nn, &c->lib, c->path, sizeof c->path, why,
                        sizeof why);
    if (rc != KG_OK) return kg_errorf(err, KG_EUNSUPPORTED, "no cuBLASLt found: %s", why);
    NEED(c, cublasLtGetVersion, "cublasLtGetVersion");
    NEED(c, cublasLtCreate, "cublasLtCreate");
    NEED(c, cublasLtDestroy, "cublasLtDestroy");
    NEED(c, cublasLtMatmulDescCreate, "cublasLtMatmulDescCreate");
    NEED(c, cublasLtMatmulDescDestroy, "cublasLtMatmulDescDestroy");
    NEED(c, cublasLtMatmulDescSetAttribute, "cublasLtMatmulDescSetAttribute");
    NEED(c, cublasLtMatrixLayoutCreate, "cublasLtMatrixLayoutCreate");
    NEED(c, cublasLtMatrixLayoutDestroy, "cublasLtMatrixLayoutDestroy");
    NEED(c, cublasLtMatmulPreferenceCreate, "cublasLtMatmulPreferenceCreate");
    NEED(c, cublasLtMatmulPreferenceDestroy, "cublasLtMatmulPreferenceDestroy");
    NEED(c, cublasLtMatmulPreferenceSetAttribute, "cublasLtMatmulPreferenceSetAttribute");
    NEED(c, cublasLtMatmulAlgoGetHeuristic, "cublasLtMatmulAlgoGetHeuristic");
    NEED(c, cublasLtMatmul, "cublasLtMatmul");
    if (rc != KG_OK) kg_cuda_cublaslt_unload(c);
    return rc;
}

void kg_cuda_cublaslt_unload(kg_cuda_cublaslt *c)
{
    if (c == NULL) return;
    if (c->lib != NULL) dlclose(c->lib);
    memset(c, 0, sizeof *c);
}

int kg_cuda_driver_present(const kg_settings *s)
{
    const char *name = s->lib_cuda != NULL && s->lib_cuda[0] != '\0' ? s->lib_cuda : "libcuda.so.1";
    void *h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (h == NULL) return 0;
    dlclose(h);
    return 1;
}

void kg_cuda_result_text(const kg_cuda_driver *d, CUresult rc, char *buf, size_t cap)
{
    const char *name = NULL, *text = NULL;
    if (d != NULL && d->cuGetErrorName != NULL) d->cuGetErrorName(rc, &name);
    if (d != NULL && d->cuGetErrorString != NULL) d->cuGetErrorString(rc, &text);
    if (name == NULL) snprintf(buf, cap, "CUresult %d", rc);
    else if (text == NULL) snprintf(buf, cap, "%s", name);
    else snprintf(buf, cap, "%s (%s)", name, text);
}

void kg_cuda_uuid_text(const CUuuid *u, char *buf, size_t cap)
{
    const unsigned char *b = (const unsigned char *)u->bytes;
    snprintf(buf, cap,
             "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
             b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12],
             b[13], b[14], b[15]);
}

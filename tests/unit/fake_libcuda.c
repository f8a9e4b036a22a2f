/* fake_libcuda.c: a CUDA driver stand-in for testing the cuda backend's
 * per-arm isolation on a machine without a GPU (tests/unit/test_cuda_iso.c
 * loads it as KGATE_LIBCUDA).  It models what isolation rests on, not a
 * GPU:
 *   - contexts with a current-context stack; memory belongs to the
 *     context that allocated it, and a kernel that touches memory of
 *     another context faults (sticky CUDA_ERROR_ILLEGAL_ADDRESS in its
 *     own context only, reported at the next synchronisation);
 *   - streams, events, functions and graphs belong to a context, and using
 *     them from another is an error;
 *   - one kernel is executed on the host: gemm_bt_naive on f32
 *     (A, B, C, M, N, K); every other entry runs as a no-op;
 *   - hooks for the test: fake_cuda_fault_next() makes the next launch
 *     fault, fake_cuda_refuse_threads(n) refuses launches of more than n
 *     threads per block (CUDA_ERROR_INVALID_VALUE), fake_cuda_stats()
 *     counts foreign accesses, launches outside the primary context and
 *     live contexts.
 * Only the symbols kgate's loader resolves are defined; it is no driver. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef unsigned long long CUdeviceptr;

enum { OK = 0, INVALID_VALUE = 1, INVALID_CONTEXT = 201, INVALID_HANDLE = 400,
       ILLEGAL_ADDRESS = 700, MAX_CTX = 256, MAX_ALLOC = 4096, MAX_LAUNCH = 64 };

typedef struct fctx { int id, alive; CUresult sticky; } fctx;
typedef struct falloc { char *p; size_t n; fctx *ctx; } falloc;
typedef struct ffunc { char name[64]; fctx *ctx; void *mod; } ffunc;
typedef struct flaunch { ffunc *f; unsigned threads; CUdeviceptr ptr[3]; int iv[3]; } flaunch;
typedef struct fgraph { flaunch l[MAX_LAUNCH]; int n; fctx *ctx; } fgraph;
typedef struct fstream { fctx *ctx; fgraph *capture; } fstream;
typedef struct fevent { fctx *ctx; } fevent;

static fctx ctxs[MAX_CTX];
static int nctx = 1;
static fctx *stack[64];
static int depth;
static falloc allocs[MAX_ALLOC];
static int fault_next, violations, foreign_launches;
static unsigned refuse_threads = 1u << 30;

void fake_cuda_fault_next(void);
void fake_cuda_refuse_threads(unsigned n);
void fake_cuda_stats(int *foreign, int *nonprimary_launches, int *live_ctx);
void fake_cuda_fault_next(void) { fault_next = 1; }
void fake_cuda_refuse_threads(unsigned n) { refuse_threads = n; }
void fake_cuda_stats(int *foreign, int *nonprimary, int *live)
{
    int l = 0;
    for (int i = 1; i < nctx; i++) l += ctxs[i].alive;
    *foreign = violations;
    *nonprimary = foreign_launches;
    *live = l;
}

static fctx *cur(void) { return depth > 0 ? stack[depth - 1] : NULL; }

static fctx *owner(CUdeviceptr p, size_t n)
{
    for (int i = 0; i < MAX_ALLOC; i++)
        if (allocs[i].p != NULL && (char *)(uintptr_t)p >= allocs[i].p &&
            (char *)(uintptr_t)p + n <= allocs[i].p + allocs[i].n)
            return allocs[i].ctx;
    return NULL;
}

#define CUR_OR_FAIL fctx *c = cur(); if (c == NULL || !c->alive) return INVALID_CONTEXT

CUresult cuInit(unsigned f) { (void)f; ctxs[0].alive = 1; return OK; }
CUresult cuDriverGetVersion(int *v) { *v = 13000; return OK; }
CUresult cuGetErrorName(CUresult r, const char **s)
{
    *s = r == ILLEGAL_ADDRESS ? "CUDA_ERROR_ILLEGAL_ADDRESS" : r == INVALID_VALUE ? "CUDA_ERROR_INVALID_VALUE"
       : r == INVALID_CONTEXT ? "CUDA_ERROR_INVALID_CONTEXT" : "CUDA_ERROR_FAKE";
    return OK;
}
CUresult cuGetErrorString(CUresult r, const char **s) { return cuGetErrorName(r, s); }
CUresult cuDeviceGetCount(int *n) { *n = 1; return OK; }
CUresult cuDeviceGet(int *d, int o) { *d = o; return o == 0 ? OK : INVALID_VALUE; }
CUresult cuDeviceGetName(char *b, int n, int d) { (void)d; strncpy(b, "Fake GPU", (size_t)n); return OK; }
CUresult cuDeviceGetAttribute(int *v, int a, int d)
{
    (void)d;
    *v = a == 75 ? 9 : a == 76 ? 0 : a == 16 ? 4 : a == 38 ? (1 << 20) : a == 97 ? 232448 : 1;
    return OK;
}
CUresult cuDeviceGetUuid_v2(char *u, int d) { (void)d; memset(u, 0xab, 16); return OK; }
CUresult cuDeviceTotalMem_v2(size_t *b, int d) { (void)d; *b = (size_t)1 << 30; return OK; }
CUresult cuDevicePrimaryCtxRetain(fctx **c, int d) { (void)d; *c = &ctxs[0]; return OK; }
CUresult cuDevicePrimaryCtxRelease_v2(int d) { (void)d; return OK; }
CUresult cuCtxSetCurrent(fctx *c)
{
    if (depth == 0) stack[depth++] = c;
    else stack[depth - 1] = c;
    return OK;
}
CUresult cuCtxCreate_v2(fctx **out, unsigned f, int d)
{
    (void)f; (void)d;
    if (nctx == MAX_CTX || depth == 64) return INVALID_VALUE;
    fctx *c = &ctxs[nctx];
    c->id = nctx++;
    c->alive = 1;
    c->sticky = OK;
    stack[depth++] = c;
    *out = c;
    return OK;
}
CUresult cuCtxDestroy_v2(fctx *c)
{
    if (c == NULL || !c->alive || c == &ctxs[0]) return INVALID_CONTEXT;
    c->alive = 0;
    for (int i = 0; i < MAX_ALLOC; i++)
        if (allocs[i].ctx == c && allocs[i].p != NULL) { free(allocs[i].p); allocs[i].p = NULL; }
    for (int i = 0; i < depth; i++)
        if (stack[i] == c) { memmove(&stack[i], &stack[i + 1], (size_t)(depth - i - 1) * sizeof stack[0]); depth--; i--; }
    return OK;
}
CUresult cuCtxPushCurrent_v2(fctx *c)
{
    if (c == NULL || !c->alive || depth == 64) return INVALID_CONTEXT;
    stack[depth++] = c;
    return OK;
}
CUresult cuCtxPopCurrent_v2(fctx **out)
{
    if (depth <= 1) return INVALID_CONTEXT;   /* the primary stays */
    depth--;
    if (out) *out = stack[depth];
    return OK;
}
CUresult cuCtxSynchronize(void) { CUR_OR_FAIL; return c->sticky; }
CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n)
{
    CUR_OR_FAIL;
    if (c->sticky) return c->sticky;
    for (int i = 0; i < MAX_ALLOC; i++)
        if (allocs[i].p == NULL) {
            allocs[i].p = calloc(1, n);
            allocs[i].n = n;
            allocs[i].ctx = c;
            *p = (CUdeviceptr)(uintptr_t)allocs[i].p;
            return allocs[i].p ? OK : INVALID_VALUE;
        }
    return INVALID_VALUE;
}
CUresult cuMemFree_v2(CUdeviceptr p)
{
    CUR_OR_FAIL;
    for (int i = 0; i < MAX_ALLOC; i++)
        if (allocs[i].p == (char *)(uintptr_t)p) {
            if (allocs[i].ctx != c) return INVALID_VALUE;
            free(allocs[i].p);
            allocs[i].p = NULL;
            return OK;
        }
    return INVALID_VALUE;
}
CUresult cuMemcpyHtoD_v2(CUdeviceptr d, const void *s, size_t n)
{
    CUR_OR_FAIL;
    if (c->sticky) return c->sticky;
    if (owner(d, n) != c) return INVALID_VALUE;
    memcpy((void *)(uintptr_t)d, s, n);
    return OK;
}
CUresult cuMemcpyDtoH_v2(void *d, CUdeviceptr s, size_t n)
{
    CUR_OR_FAIL;
    if (c->sticky) return c->sticky;
    if (owner(s, n) != c) return INVALID_VALUE;
    memcpy(d, (void *)(uintptr_t)s, n);
    return OK;
}
CUresult cuMemcpyPeerAsync(CUdeviceptr d, fctx *dc, CUdeviceptr s, fctx *sc, size_t n, fstream *st)
{
    CUR_OR_FAIL;
    if (c->sticky) return c->sticky;
    if (st == NULL || st->ctx != c || owner(d, n) != dc || owner(s, n) != sc || !dc->alive || !sc->alive)
        return INVALID_VALUE;
    memcpy((void *)(uintptr_t)d, (void *)(uintptr_t)s, n);
    return OK;
}
CUresult cuMemsetD8Async(CUdeviceptr d, unsigned char v, size_t n, fstream *st)
{
    CUR_OR_FAIL;
    if (st == NULL || st->ctx != c || owner(d, n) != c) return INVALID_VALUE;
    memset((void *)(uintptr_t)d, v, n);
    return OK;
}
CUresult cuStreamCreate(fstream **s, unsigned f)
{
    (void)f;
    CUR_OR_FAIL;
    *s = calloc(1, sizeof **s);
    (*s)->ctx = c;
    return OK;
}
CUresult cuStreamDestroy_v2(fstream *s) { free(s); return OK; }
CUresult cuStreamSynchronize(fstream *s) { CUR_OR_FAIL; return s->ctx != c ? INVALID_HANDLE : c->sticky; }
CUresult cuStreamBeginCapture_v2(fstream *s, int mode)
{
    (void)mode;
    CUR_OR_FAIL;
    if (s->ctx != c) return INVALID_HANDLE;
    s->capture = calloc(1, sizeof *s->capture);
    s->capture->ctx = c;
    return OK;
}
CUresult cuStreamEndCapture(fstream *s, fgraph **g) { *g = s->capture; s->capture = NULL; return *g ? OK : INVALID_VALUE; }
CUresult cuEventCreate(fevent **e, unsigned f) { (void)f; CUR_OR_FAIL; *e = calloc(1, sizeof **e); (*e)->ctx = c; return OK; }
CUresult cuEventDestroy_v2(fevent *e) { free(e); return OK; }
CUresult cuEventRecord(fevent *e, fstream *s)
{
    CUR_OR_FAIL;
    return e->ctx != c || s->ctx != c ? INVALID_HANDLE : c->sticky;
}
CUresult cuEventSynchronize(fevent *e) { return e->ctx->sticky; }
CUresult cuEventElapsedTime(float *ms, fevent *a, fevent *b)
{
    CUR_OR_FAIL;
    if (a->ctx != c || b->ctx != c) return INVALID_HANDLE;
    *ms = 0.01f;
    return c->sticky;
}
/* a module belongs to the context it was loaded in; its functions are
 * freed with it, and with it only (other modules of the context, such as
 * another instance of the same arm, keep theirs) */
typedef struct fmodule { fctx *ctx; } fmodule;
CUresult cuModuleLoadData(void **m, const void *img)
{
    (void)img;
    CUR_OR_FAIL;
    fmodule *mod = calloc(1, sizeof *mod);
    if (mod == NULL) return INVALID_VALUE;
    mod->ctx = c;
    *m = mod;
    return OK;
}
static ffunc *funcs[256];
CUresult cuModuleUnload(void *m)
{
    if (m == NULL) return INVALID_HANDLE;
    for (size_t i = 0; i < sizeof funcs / sizeof funcs[0]; i++)
        if (funcs[i] != NULL && funcs[i]->mod == m) {
            free(funcs[i]);
            funcs[i] = NULL;
        }
    free(m);
    return OK;
}
CUresult cuModuleGetFunction(ffunc **f, void *m, const char *name)
{
    CUR_OR_FAIL;
    if (m == NULL || ((fmodule *)m)->ctx != c) return INVALID_HANDLE;
    size_t slot = 0;
    while (slot < sizeof funcs / sizeof funcs[0] && funcs[slot] != NULL) slot++;
    if (slot == sizeof funcs / sizeof funcs[0]) return INVALID_VALUE;
    *f = calloc(1, sizeof **f);
    if (*f == NULL) return INVALID_VALUE;
    strncpy((*f)->name, name, sizeof (*f)->name - 1);
    (*f)->ctx = c;
    (*f)->mod = m;
    funcs[slot] = *f;
    return OK;
}
CUresult cuFuncGetAttribute(int *v, int a, ffunc *f)
{
    (void)f;
    *v = a == 0 ? 1024 : 0;
    return OK;
}
CUresult cuFuncSetAttribute(ffunc *f, int a, int v) { (void)f; (void)a; (void)v; return OK; }

/* Runs one launch in context c: a touch of memory outside c faults. */
static void execute(fctx *c, const flaunch *l)
{
    if (c->sticky) return;
    if (c != &ctxs[0]) foreign_launches++;
    if (fault_next) {
        fault_next = 0;
        c->sticky = ILLEGAL_ADDRESS;
        return;
    }
    if (strcmp(l->f->name, "gemm_bt_naive") != 0) return;
    int M = l->iv[0], N = l->iv[1], K = l->iv[2];
    size_t need[3] = { (size_t)M * K * 4, (size_t)N * K * 4, (size_t)M * N * 4 };
    for (int i = 0; i < 3; i++)
        if (owner(l->ptr[i], need[i]) != c) {
            violations++;
            c->sticky = ILLEGAL_ADDRESS;
            return;
        }
    const float *A = (const float *)(uintptr_t)l->ptr[0], *B = (const float *)(uintptr_t)l->ptr[1];
    float *C = (float *)(uintptr_t)l->ptr[2];
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            float acc = 0.0f;
            for (int k = 0; k < K; k++) acc += A[(size_t)i * K + k] * B[(size_t)j * K + k];
            C[(size_t)i * N + j] = acc;
        }
}

CUresult cuLaunchKernel(ffunc *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                        unsigned bz, unsigned shared, fstream *s, void **params, void **extra)
{
    (void)gx; (void)gy; (void)gz; (void)shared; (void)extra;
    CUR_OR_FAIL;
    if (f->ctx != c || s->ctx != c) return INVALID_HANDLE;
    if (c->sticky) return c->sticky;
    flaunch l;
    memset(&l, 0, sizeof l);
    l.f = f;
    l.threads = bx * by * bz;
    if (l.threads > refuse_threads) return INVALID_VALUE;
    if (strcmp(f->name, "gemm_bt_naive") == 0) {
        for (int i = 0; i < 3; i++) l.ptr[i] = *(CUdeviceptr *)params[i];
        for (int i = 0; i < 3; i++) l.iv[i] = *(int *)params[3 + i];
    }
    if (s->capture != NULL) {
        if (s->capture->n == MAX_LAUNCH) return INVALID_VALUE;
        s->capture->l[s->capture->n++] = l;
        return OK;
    }
    execute(c, &l);
    return OK;
}
CUresult cuGraphInstantiateWithFlags(fgraph **e, fgraph *g, unsigned long long f)
{
    (void)f;
    *e = malloc(sizeof **e);
    **e = *g;
    return OK;
}
CUresult cuGraphLaunch(fgraph *e, fstream *s)
{
    CUR_OR_FAIL;
    if (e->ctx != c || s->ctx != c) return INVALID_HANDLE;
    if (c->sticky) return c->sticky;
    for (int i = 0; i < e->n; i++) execute(c, &e->l[i]);
    return OK;
}
CUresult cuGraphExecDestroy(fgraph *e) { free(e); return OK; }
CUresult cuGraphDestroy(fgraph *g) { free(g); return OK; }

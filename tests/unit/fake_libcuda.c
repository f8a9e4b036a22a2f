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
 *   - memory is shared memory (shm_open), so that an IPC handle is its
 *     name and another process (a cuda arm host) can map it: a process
 *     addresses its own allocations and the handles it opened, nothing
 *     else;
 *   - one kernel is executed on the host: gemm_bt_naive on f32
 *     (A, B, C, M, N, K), and as gemm_bt_tma with A and B as TMA tensor
 *     maps (cuTensorMapEncodeTiled checks the driver's rules and writes the
 *     address and dims into the map; a map whose dims are not A's or B's
 *     faults; FAKE_CUDA_DISTINCT_SETS=1 makes a graph whose gemm launches
 *     read the same A fault, as a pack's operations each read a set of
 *     their own); gemm_bt_steal (same arguments) copies into C
 *     any other allocation of the process as large as C holding finite
 *     values (another arm's output, as a kernel that searches its
 *     neighbourhood would); kg_fill, kgate's input generator (cuda_fill.c),
 *     runs kgate/gen.h on the host as the kernel would, and
 *     FAKE_CUDA_FILL_FLIP=1 flips one bit of what it writes (a generator
 *     that disagrees with the host's); every other entry runs as a no-op;
 *   - stream memory operations: a wait on a flag not yet written holds
 *     the graphs launched behind it until another stream writes the
 *     flag; synchronising a stream still held is an error (it would
 *     hang on a GPU), cuStreamQuery says CUDA_ERROR_NOT_READY.  Under
 *     CUDA_DEVICE_MAX_CONNECTIONS=1 (this process's own environment: one
 *     hardware queue for every stream) a write on a stream while another
 *     is held waits behind it: it happens only when a copy from the host
 *     (cuMemcpyHtoD) releases the held stream.  FAKE_CUDA_CONN_LOG=PATH:
 *     cuInit appends "PID VALUE" (CUDA_DEVICE_MAX_CONNECTIONS, "-" when
 *     unset) to PATH;
 *   - FAKE_CUDA_FAULT_FILE=PATH: a launch faults (in whichever process
 *     runs it) while PATH exists (the test removes it);
 *     FAKE_CUDA_REFUSE_FILE=PATH: while PATH exists, launches of more
 *     threads per block than the number it holds are refused, with the
 *     CUresult that follows it (CUDA_ERROR_INVALID_VALUE when none: "128
 *     912" refuses as a cluster the device cannot run).  Each
 *     FAKE_* setting is read from the environment, else from the file
 *     LIB.env beside this library (LIB its path), lines NAME=VALUE: a cuda
 *     arm host's environment is kgate's own, without the test's variables;
 *   - shared memory: FAKE_NSM "SMs", each with the device's opt-in shared
 *     memory per block (232448 bytes), kept for the life of the process as
 *     a GPU keeps it between kernels.  A block runs on SM (block index mod
 *     FAKE_NSM) when its dynamic shared memory leaves room for only one
 *     block per SM, on SM 0 otherwise (a packing scheduler).  kgate's
 *     poison kernel kg_smem_poison(word, words, seen) writes word into the
 *     first words 32-bit words of each of its blocks' SM and marks
 *     seen[smid]; gemm_bt_smem is gemm_bt_naive plus, for each output, the
 *     float its thread reads from its SM's shared memory without writing
 *     it (0 on a fresh device: the kernel is right until something else
 *     ran); fake_cuda_smem_log() returns the poison launches of this
 *     process (grid, dynamic bytes, word);
 *   - memory allocations are anonymous until their IPC handle is asked
 *     for, then shared memory of that name (a host, which never exports,
 *     unlinks nothing);
 *   - an L2 as seen by one process: kgate's warm kernel kg_l2_warm(p,
 *     pieces, reads, sink) (cuda_l2.c) records the range it read (it must
 *     be of the launching context) and a checksum of its bytes; a
 *     gemm_bt_* kernel's input A or B misses unless such a record covers
 *     it and its bytes are unchanged since (written since, by this process
 *     or another, is not warm here).  A timed sample's events read 0.01 ms
 *     when none of the graph's inputs missed since its launch, 0.05 ms
 *     otherwise, so that a test can tell from the samples which regime
 *     the inputs met;
 *   - an entry named exploit_WHAT makes cuModuleGetFunction do what a
 *     driver exploit in the module parser would (tests/unit/cuda_exploit.h:
 *     exec, socket, ptrace, kill, write, key, env), in whichever process
 *     loads it;
 *   - hooks for the test: fake_cuda_fault_next() makes the next launch
 *     fault, fake_cuda_refuse_threads(n) refuses launches of more than n
 *     threads per block (CUDA_ERROR_INVALID_VALUE), fake_cuda_stats()
 *     counts foreign accesses, launches outside the primary context and
 *     live contexts.
 * Only the symbols kgate's loader resolves are defined; it is no driver. */
#include <fcntl.h>
#include <stdint.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <dlfcn.h>
#include "kgate/gen.h"
#include "cuda_exploit.h"

typedef int CUresult;
typedef unsigned long long CUdeviceptr;

enum { OK = 0, INVALID_VALUE = 1, INVALID_CONTEXT = 201, INVALID_HANDLE = 400, NOT_READY = 600,
       ILLEGAL_ADDRESS = 700, INVALID_CLUSTER_SIZE = 912, MAX_CTX = 256, MAX_ALLOC = 4096, MAX_LAUNCH = 64 };

typedef struct fctx { int id, alive; CUresult sticky; } fctx;
typedef struct falloc { char *p; size_t n; fctx *ctx; int imported; char name[72]; } falloc;
typedef struct ffunc { char name[64]; fctx *ctx; void *mod; int max_dynamic; } ffunc;
typedef struct flaunch { ffunc *f; unsigned threads; CUdeviceptr ptr[3]; int iv[3]; unsigned shared; } flaunch;
typedef struct fgraph { flaunch l[MAX_LAUNCH]; int n; fctx *ctx; } fgraph;
typedef struct fstream {
    fctx *ctx;
    fgraph *capture;
    const unsigned *wait_addr;   /* a stream memory wait not yet satisfied */
    unsigned wait_val;
    fgraph *queued[8];           /* graphs launched behind it */
    int nq;
} fstream;
typedef struct fevent { fctx *ctx; } fevent;

static fctx ctxs[MAX_CTX];
static int nctx = 1;
static fctx *stack[64];
static int depth;
static falloc allocs[MAX_ALLOC];
static unsigned serial;
static int fault_next, violations, foreign_launches, launches_here;
static unsigned refuse_threads = 1u << 30;
static int graph_misses;       /* inputs the last graph's launches missed in the L2 (kg_l2_warm) */

void fake_cuda_fault_next(void);
void fake_cuda_refuse_threads(unsigned n);
void fake_cuda_stats(int *foreign, int *nonprimary_launches, int *live_ctx);
int fake_cuda_launches(void);
int fake_cuda_launches(void) { return launches_here; }
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

/* A FAKE_* setting: the environment's, else LIB.env's (read once). */
static const char *knob(const char *name)
{
    const char *v = getenv(name);
    if (v != NULL) return v;
    static char text[4096];
    static int read_once;
    if (!read_once) {
        read_once = 1;
        Dl_info info;
        char path[4096 + 8];
        if (dladdr((void *)knob, &info) != 0 && info.dli_fname != NULL) {
            snprintf(path, sizeof path, "%s.env", info.dli_fname);
            FILE *f = fopen(path, "r");
            if (f != NULL) {
                size_t n = fread(text, 1, sizeof text - 1, f);
                text[n] = '\0';
                fclose(f);
            }
        }
    }
    size_t len = strlen(name);
    for (const char *p = text; *p; p += strcspn(p, "\n") + (p[strcspn(p, "\n")] != '\0')) {
        if (strncmp(p, name, len) != 0 || p[len] != '=') continue;
        static char value[8][1024];
        static int next;
        char *out = value[next++ % 8];
        size_t n = strcspn(p + len + 1, "\n");
        if (n >= sizeof value[0]) n = sizeof value[0] - 1;
        memcpy(out, p + len + 1, n);
        out[n] = '\0';
        return out;
    }
    return NULL;
}

/* ---- shared memory of the "SMs" ---- */
enum { FAKE_NSM = 4, FAKE_SMEM = 232448, FAKE_SMEM_WORDS = FAKE_SMEM / 4, FAKE_LOG = 256 };
static unsigned sm_mem[FAKE_NSM][FAKE_SMEM_WORDS];
typedef struct fake_smem_launch { unsigned grid, shared, word, words; } fake_smem_launch;
static fake_smem_launch smem_log[FAKE_LOG];
static int nsmem_log;
int fake_cuda_smem_log(const fake_smem_launch **out);
int fake_cuda_smem_log(const fake_smem_launch **out) { *out = smem_log; return nsmem_log; }
/* the SM block b of a launch with `shared` dynamic bytes runs on */
static int sm_of(unsigned b, unsigned shared) { return 2u * shared > FAKE_SMEM ? (int)(b % FAKE_NSM) : 0; }

static fctx *cur(void) { return depth > 0 ? stack[depth - 1] : NULL; }
static void drop(falloc *a);
typedef struct fipc { char b[64]; } fipc;

static fctx *owner(CUdeviceptr p, size_t n)
{
    for (int i = 0; i < MAX_ALLOC; i++)
        if (allocs[i].p != NULL && (char *)(uintptr_t)p >= allocs[i].p &&
            (char *)(uintptr_t)p + n <= allocs[i].p + allocs[i].n)
            return allocs[i].ctx;
    return NULL;
}

#define CUR_OR_FAIL fctx *c = cur(); if (c == NULL || !c->alive) return INVALID_CONTEXT

static const char *knob(const char *name);
CUresult cuInit(unsigned f)
{
    (void)f;
    ctxs[0].alive = 1;
    const char *log = knob("FAKE_CUDA_CONN_LOG");
    if (log != NULL) {
        FILE *l = fopen(log, "a");
        const char *v = getenv("CUDA_DEVICE_MAX_CONNECTIONS");
        if (l != NULL) {
            fprintf(l, "%ld %s\n", (long)getpid(), v != NULL ? v : "-");
            fclose(l);
        }
    }
    return OK;
}
CUresult cuDriverGetVersion(int *v) { *v = 13000; return OK; }
CUresult cuGetErrorName(CUresult r, const char **s)
{
    *s = r == ILLEGAL_ADDRESS ? "CUDA_ERROR_ILLEGAL_ADDRESS" : r == INVALID_VALUE ? "CUDA_ERROR_INVALID_VALUE"
       : r == INVALID_CONTEXT ? "CUDA_ERROR_INVALID_CONTEXT" : r == INVALID_CLUSTER_SIZE ? "CUDA_ERROR_INVALID_CLUSTER_SIZE"
       : "CUDA_ERROR_FAKE";
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
        if (allocs[i].ctx == c && allocs[i].p != NULL) drop(&allocs[i]);
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
/* streams held by a stream memory wait not yet satisfied */
static fstream *held[64];
static int nheld;
static void release_held(fctx *c);
/* One hardware queue (CUDA_DEVICE_MAX_CONNECTIONS=1): the writes queued
 * behind a held stream, done when a host copy releases it. */
static struct { unsigned *addr; unsigned v; } behind[16];
static int nbehind;
/* FAKE_CUDA_SYNC_YIELDS=N: the wait gives the CPU away N times, as the
 * driver's wait does when its contexts outnumber the CPUs (a thread that
 * yields to a busy neighbour waits for a CPU meanwhile).
 * FAKE_CUDA_SYNC_SPIN_US=N: the wait spins for N us of the thread's own
 * CPU time, as it does while work outside the timed events finishes (an
 * escape: however the thread is scheduled, N us of it are its own) */
CUresult cuCtxSynchronize(void)
{
    CUR_OR_FAIL;
    const char *y = knob("FAKE_CUDA_SYNC_YIELDS"), *sp = knob("FAKE_CUDA_SYNC_SPIN_US");
    for (int i = y != NULL ? atoi(y) : 0; i > 0; i--) sched_yield();
    if (sp != NULL && atoi(sp) > 0) {
        struct timespec t0, t;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
        do clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
        while ((t.tv_sec - t0.tv_sec) * 1000000L + (t.tv_nsec - t0.tv_nsec) / 1000 < atol(sp));
    }
    return nheld > 0 ? INVALID_VALUE : c->sticky;
}
/* Maps shared memory `name` (created when create) at an address aligned
 * to 2 MiB, as the driver's allocations of whole blocks are. */
static char *shm_map(const char *name, size_t n, int create)
{
    const size_t grain = (size_t)2 << 20;
    int fd = shm_open(name, create ? O_CREAT | O_EXCL | O_RDWR : O_RDWR, 0600);
    if (fd < 0) return NULL;
    if (create && ftruncate(fd, (off_t)n) != 0) {
        close(fd);
        shm_unlink(name);
        return NULL;
    }
    size_t m = (n + 4095) & ~(size_t)4095, span = m + grain;
    char *r = mmap(NULL, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (r == MAP_FAILED) {
        close(fd);
        return NULL;
    }
    char *a = (char *)(((uintptr_t)r + grain - 1) & ~(uintptr_t)(grain - 1));
    void *p = mmap(a, n, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0);
    close(fd);
    if (a > r) munmap(r, (size_t)(a - r));
    if (a + m < r + span) munmap(a + m, (size_t)(r + span - (a + m)));
    return p == MAP_FAILED ? NULL : p;
}

/* a process that ends without freeing leaves no shared memory behind */
__attribute__((destructor)) static void unlink_all(void)
{
    for (int i = 0; i < MAX_ALLOC; i++)
        if (allocs[i].p != NULL && !allocs[i].imported && allocs[i].name[0] != '\0') shm_unlink(allocs[i].name);
}

static void drop(falloc *a)
{
    munmap(a->p, a->n ? a->n : 1);
    if (!a->imported && a->name[0] != '\0') shm_unlink(a->name);
    a->p = NULL;
}

/* 2 MiB-aligned anonymous memory, as the driver's whole blocks are */
static char *anon_map(size_t n)
{
    const size_t grain = (size_t)2 << 20;
    size_t m = (n + 4095) & ~(size_t)4095, span = m + grain;
    char *r = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (r == MAP_FAILED) return NULL;
    char *a = (char *)(((uintptr_t)r + grain - 1) & ~(uintptr_t)(grain - 1));
    if (a > r) munmap(r, (size_t)(a - r));
    if (a + m < r + span) munmap(a + m, (size_t)(r + span - (a + m)));
    return a;
}

CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n)
{
    CUR_OR_FAIL;
    if (c->sticky) return c->sticky;
    for (int i = 0; i < MAX_ALLOC; i++)
        if (allocs[i].p == NULL) {
            allocs[i].p = anon_map(n ? n : 1);
            allocs[i].name[0] = '\0';
            allocs[i].n = n;
            allocs[i].ctx = c;
            allocs[i].imported = 0;
            *p = (CUdeviceptr)(uintptr_t)allocs[i].p;
            return allocs[i].p ? OK : INVALID_VALUE;
        }
    return INVALID_VALUE;
}

/* Gives allocation a a name another process can open: its bytes move to
 * shared memory of that name, mapped at the same address. */
static int export_alloc(falloc *a)
{
    if (a->name[0] != '\0') return 0;
    for (int tries = 0; tries < 64; tries++) {
        /* a name of an earlier process with this pid (killed before it
         * unlinked its segments) is taken: the next serial */
        snprintf(a->name, sizeof a->name, "/kgfc-%ld-%u", (long)getpid(), serial++);
        int fd = shm_open(a->name, O_CREAT | O_EXCL | O_RDWR, 0600);
        if (fd < 0) continue;
        size_t n = a->n ? a->n : 1;
        void *q = MAP_FAILED;
        if (ftruncate(fd, (off_t)n) == 0 && pwrite(fd, a->p, n, 0) == (ssize_t)n)
            q = mmap(a->p, n, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0);
        close(fd);
        if (q != MAP_FAILED) return 0;
        shm_unlink(a->name);
        break;
    }
    a->name[0] = '\0';
    return -1;
}
CUresult cuMemFree_v2(CUdeviceptr p)
{
    CUR_OR_FAIL;
    for (int i = 0; i < MAX_ALLOC; i++)
        if (allocs[i].p == (char *)(uintptr_t)p && !allocs[i].imported) {
            if (allocs[i].ctx != c) return INVALID_VALUE;
            drop(&allocs[i]);
            return OK;
        }
    return INVALID_VALUE;
}
CUresult cuMemGetAddressRange_v2(CUdeviceptr *base, size_t *n, CUdeviceptr p)
{
    for (int i = 0; i < MAX_ALLOC; i++)
        if (allocs[i].p != NULL && (char *)(uintptr_t)p >= allocs[i].p &&
            (char *)(uintptr_t)p < allocs[i].p + allocs[i].n) {
            *base = (CUdeviceptr)(uintptr_t)allocs[i].p;
            *n = allocs[i].n;
            return OK;
        }
    return INVALID_VALUE;
}
CUresult cuIpcGetMemHandle(char *h, CUdeviceptr p)
{
    for (int i = 0; i < MAX_ALLOC; i++)
        if (allocs[i].p == (char *)(uintptr_t)p && !allocs[i].imported) {
            if (export_alloc(&allocs[i]) != 0) return INVALID_VALUE;
            memset(h, 0, 64);
            snprintf(h, 64, "%s", allocs[i].name);
            return OK;
        }
    return INVALID_VALUE;
}
CUresult cuIpcOpenMemHandle_v2(CUdeviceptr *p, fipc h, unsigned flags)
{
    (void)flags;
    CUR_OR_FAIL;
    char name[65];
    memcpy(name, h.b, 64);
    name[64] = '\0';
    int fd = shm_open(name, O_RDWR, 0600);
    if (fd < 0) return INVALID_VALUE;
    struct stat st;
    int bad = fstat(fd, &st) != 0;
    close(fd);
    if (bad) return INVALID_VALUE;
    for (int i = 0; i < MAX_ALLOC; i++)
        if (allocs[i].p == NULL) {
            allocs[i].p = shm_map(name, (size_t)st.st_size, 0);
            allocs[i].n = (size_t)st.st_size;
            allocs[i].ctx = c;
            allocs[i].imported = 1;
            snprintf(allocs[i].name, sizeof allocs[i].name, "%s", name);
            *p = (CUdeviceptr)(uintptr_t)allocs[i].p;
            return allocs[i].p ? OK : INVALID_VALUE;
        }
    return INVALID_VALUE;
}
CUresult cuIpcCloseMemHandle(CUdeviceptr p)
{
    for (int i = 0; i < MAX_ALLOC; i++)
        if (allocs[i].p == (char *)(uintptr_t)p && allocs[i].imported) {
            drop(&allocs[i]);
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
    /* a copy engine's write: releases what waits on it, then the stream
     * writes queued behind the wait happen */
    release_held(c);
    for (int i = 0; i < nbehind; i++) {
        *behind[i].addr = behind[i].v;
        release_held(c);
    }
    nbehind = 0;
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
CUresult cuMemsetD32Async(CUdeviceptr d, unsigned v, size_t n, fstream *st)
{
    CUR_OR_FAIL;
    if (st == NULL || st->ctx != c || owner(d, 4 * n) != c) return INVALID_VALUE;
    unsigned *w = (unsigned *)(uintptr_t)d;
    for (size_t i = 0; i < n; i++) w[i] = v;
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
CUresult cuStreamSynchronize(fstream *s)
{
    CUR_OR_FAIL;
    if (s->ctx != c) return INVALID_HANDLE;
    return s->wait_addr != NULL ? INVALID_VALUE : c->sticky;
}
CUresult cuStreamQuery(fstream *s)
{
    CUR_OR_FAIL;
    if (s->ctx != c) return INVALID_HANDLE;
    return s->wait_addr != NULL ? NOT_READY : c->sticky;
}
static void execute(fctx *c, const flaunch *l);
/* Runs a graph's launches in order.  FAKE_CUDA_DISTINCT_SETS=1: a graph
 * whose gemm launches read one A twice faults instead (each operation of
 * a pack reads an input set of its own). */
static void run_graph(fctx *c, const fgraph *e)
{
    const char *ds = knob("FAKE_CUDA_DISTINCT_SETS");
    if (ds != NULL && strcmp(ds, "1") == 0)
        for (int i = 0; i < e->n; i++)
            for (int j = 0; j < i; j++)
                if (strncmp(e->l[i].f->name, "gemm_bt_", 8) == 0 && strcmp(e->l[i].f->name, e->l[j].f->name) == 0 &&
                    e->l[i].ptr[0] == e->l[j].ptr[0]) {
                    c->sticky = ILLEGAL_ADDRESS;
                    return;
                }
    for (int i = 0; i < e->n; i++) execute(c, &e->l[i]);
}
CUresult cuStreamWaitValue32_v2(fstream *s, CUdeviceptr addr, unsigned v, unsigned flags)
{
    CUR_OR_FAIL;
    if (flags != 0 || s->ctx != c || owner(addr, 4) != c) return INVALID_VALUE;
    if (*(const unsigned *)(uintptr_t)addr >= v) return OK;
    s->wait_addr = (const unsigned *)(uintptr_t)addr;
    s->wait_val = v;
    s->nq = 0;
    if (nheld == 64) return INVALID_VALUE;
    held[nheld++] = s;
    return OK;
}
/* Releases the held streams whose flag now holds what they wait for. */
static void release_held(fctx *c)
{
    for (int i = 0; i < nheld; i++) {
        fstream *h = held[i];
        if (*h->wait_addr < h->wait_val) continue;
        h->wait_addr = NULL;
        for (int q = 0; q < h->nq; q++)
            run_graph(c, h->queued[q]);
        h->nq = 0;
        held[i--] = held[--nheld];
    }
}
static int one_queue(void)
{
    const char *v = getenv("CUDA_DEVICE_MAX_CONNECTIONS");
    return v != NULL && strcmp(v, "1") == 0;
}
CUresult cuStreamWriteValue32_v2(fstream *s, CUdeviceptr addr, unsigned v, unsigned flags)
{
    CUR_OR_FAIL;
    if (flags != 0 || s->ctx != c || owner(addr, 4) != c) return INVALID_VALUE;
    if (one_queue() && nheld > 0) {
        if (nbehind == 16) return INVALID_VALUE;
        behind[nbehind].addr = (unsigned *)(uintptr_t)addr;
        behind[nbehind++].v = v;
        return OK;
    }
    *(unsigned *)(uintptr_t)addr = v;
    release_held(c);
    return OK;
}
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
    *ms = graph_misses > 0 ? 0.05f : 0.01f;
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
    /* a driver exploit in the module's parser runs here, as the loader */
    if (strncmp(name, "exploit_", 8) == 0) exploit_run(name + 8);
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
/* 8: CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES */
CUresult cuFuncSetAttribute(ffunc *f, int a, int v)
{
    if (a == 8) {
        if (v < 0 || v > FAKE_SMEM) return INVALID_VALUE;
        f->max_dynamic = v;
    }
    return OK;
}

/* ---- the L2 of this process (kg_l2_warm) ---- */
enum { FAKE_WARM = 256 };
typedef struct fwarm { CUdeviceptr p; size_t n; uint64_t sum; } fwarm;
static fwarm warmed[FAKE_WARM];
static int nwarmed;
static uint64_t range_sum(CUdeviceptr p, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) h = (h ^ ((const unsigned char *)(uintptr_t)p)[i]) * 1099511628211ull;
    return h;
}
/* kg_l2_warm(const uint4 *p, unsigned long long pieces, unsigned reads, unsigned *sink) */
static CUresult l2_warm(fctx *c, void **params)
{
    CUdeviceptr p = *(CUdeviceptr *)params[0];
    unsigned long long pieces = *(unsigned long long *)params[1];
    size_t n = 0;
    for (int i = 0; i < MAX_ALLOC; i++)
        if (allocs[i].p != NULL && (char *)(uintptr_t)p >= allocs[i].p && (char *)(uintptr_t)p < allocs[i].p + allocs[i].n)
            n = (size_t)(allocs[i].p + allocs[i].n - (char *)(uintptr_t)p);
    if (pieces == 0 || owner(p, 1) != c || (size_t)pieces * 16 > n + 15) {
        violations++;
        c->sticky = ILLEGAL_ADDRESS;
        return OK;
    }
    if ((size_t)pieces * 16 < n) n = (size_t)pieces * 16;
    int slot = 0;
    while (slot < nwarmed && warmed[slot].p != p) slot++;
    if (slot == FAKE_WARM) slot = 0;
    if (slot == nwarmed) nwarmed++;
    warmed[slot] = (fwarm){ p, n, range_sum(p, n) };
    launches_here++;
    return OK;
}
/* 1 when bytes [p, p + n) were warmed here and are unchanged since */
static int l2_hit(CUdeviceptr p, size_t n)
{
    for (int i = 0; i < nwarmed; i++)
        if (warmed[i].p == p && warmed[i].n >= n) return warmed[i].sum == range_sum(p, warmed[i].n);
    return 0;
}

/* Runs one launch in context c: a touch of memory outside c faults. */
static void execute(fctx *c, const flaunch *l)
{
    if (c->sticky) return;
    if (c != &ctxs[0]) foreign_launches++;
    launches_here++;
    const char *ff = knob("FAKE_CUDA_FAULT_FILE");
    if (fault_next || (ff != NULL && access(ff, F_OK) == 0)) {
        fault_next = 0;
        c->sticky = ILLEGAL_ADDRESS;
        return;
    }
    int steal = strcmp(l->f->name, "gemm_bt_steal") == 0, smem = strcmp(l->f->name, "gemm_bt_smem") == 0;
    if (strcmp(l->f->name, "gemm_bt_naive") != 0 && strcmp(l->f->name, "gemm_bt_tma") != 0 && !steal && !smem) return;
    int M = l->iv[0], N = l->iv[1], K = l->iv[2];
    size_t need[3] = { (size_t)M * K * 4, (size_t)N * K * 4, (size_t)M * N * 4 };
    for (int i = 0; i < 3; i++)
        if (owner(l->ptr[i], need[i]) != c) {
            violations++;
            c->sticky = ILLEGAL_ADDRESS;
            return;
        }
    graph_misses += !l2_hit(l->ptr[0], need[0]) + !l2_hit(l->ptr[1], need[1]);
    const float *A = (const float *)(uintptr_t)l->ptr[0], *B = (const float *)(uintptr_t)l->ptr[1];
    float *C = (float *)(uintptr_t)l->ptr[2];
    if (steal) {
        /* another allocation of this process that holds this product (its
         * last element, computed here, matches bit for bit): copied */
        float last = 0.0f;
        for (int k = 0; k < K; k++) last += A[(size_t)(M - 1) * K + k] * B[(size_t)(N - 1) * K + k];
        for (int i = 0; i < MAX_ALLOC; i++) {
            const falloc *o = &allocs[i];
            if (o->p == NULL || o->n < need[2] || (CUdeviceptr)(uintptr_t)o->p == l->ptr[2]) continue;
            const float *src = (const float *)(const void *)o->p;
            if (memcmp(&src[(size_t)M * N - 1], &last, sizeof last) != 0 || last == 0.0f) continue;
            memcpy(C, src, need[2]);
            return;
        }
        return;
    }
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            float acc = 0.0f;
            for (int k = 0; k < K; k++) acc += A[(size_t)i * K + k] * B[(size_t)j * K + k];
            if (smem) {
                /* block (j / 16, i / 16) of 16 x 16 threads reads word
                 * (its thread's index) of its SM's shared memory, unwritten */
                unsigned block = (unsigned)((i / 16) * ((N + 15) / 16) + j / 16);
                float extra;
                memcpy(&extra, &sm_mem[sm_of(block, l->shared)][(i % 16) * 16 + j % 16], sizeof extra);
                acc += extra;
            }
            C[(size_t)i * N + j] = acc;
        }
}

/* kgate's poison kernel: (unsigned word, unsigned words, unsigned *seen),
 * a grid of gx blocks with `shared` dynamic bytes */
static CUresult smem_poison(fctx *c, ffunc *f, unsigned gx, unsigned shared, void **params)
{
    unsigned word = *(unsigned *)params[0], words = *(unsigned *)params[1];
    CUdeviceptr seen = *(CUdeviceptr *)params[2];
    if (shared > 48u * 1024u && shared > (unsigned)f->max_dynamic) return INVALID_VALUE;
    if ((size_t)words * 4 > shared || owner(seen, 4 * FAKE_NSM) != c) {
        c->sticky = ILLEGAL_ADDRESS;
        return OK;
    }
    for (unsigned b = 0; b < gx; b++) {
        int sm = sm_of(b, shared);
        for (unsigned w = 0; w < words; w++) sm_mem[sm][w] = word;
        ((unsigned *)(uintptr_t)seen)[sm] = 1;
    }
    if (nsmem_log < FAKE_LOG) smem_log[nsmem_log++] = (fake_smem_launch){ gx, shared, word, words };
    return OK;
}

/* ---- TMA tensor maps (cuTensorMapEncodeTiled) ----
 * The map's 128 bytes hold, as 64-bit words: a magic, the address, the
 * dims (innermost first), the row stride, the box (innermost first), the
 * data type and the swizzle; the driver's rules are checked as the real
 * one checks them, INVALID_VALUE otherwise. */
#define FAKE_TMAP_MAGIC 0x50414d544b47ull /* "KGTMAP" */
CUresult cuTensorMapEncodeTiled(void *map, int dtype, unsigned rank, void *addr, const uint64_t *dims,
                                const uint64_t *strides, const unsigned *box, const unsigned *estr, int interleave,
                                int swizzle, int l2promo, int oobfill);
CUresult cuTensorMapEncodeTiled(void *map, int dtype, unsigned rank, void *addr, const uint64_t *dims,
                                const uint64_t *strides, const unsigned *box, const unsigned *estr, int interleave,
                                int swizzle, int l2promo, int oobfill)
{
    static const unsigned esz[13] = { 1, 2, 4, 4, 8, 8, 2, 4, 8, 2, 4, 4, 4 };
    (void)l2promo;
    (void)oobfill;
    if (map == NULL || (uintptr_t)map % 64 != 0 || dtype < 0 || dtype > 12 || rank != 2 || addr == NULL ||
        (uintptr_t)addr % 16 != 0 || interleave != 0 || swizzle < 0 || swizzle > 3)
        return INVALID_VALUE;
    unsigned e = esz[dtype], span = swizzle == 0 ? 0 : 16u << swizzle;
    if (dims[0] == 0 || dims[1] == 0 || dims[0] > (1ull << 32) || dims[1] > (1ull << 32) || strides[0] % 16 != 0 ||
        box[0] == 0 || box[1] == 0 || box[0] > 256 || box[1] > 256 || box[0] * e % 16 != 0 ||
        (span != 0 && box[0] * e > span) || estr[0] != 1 || estr[1] != 1)
        return INVALID_VALUE;
    uint64_t w[16] = { FAKE_TMAP_MAGIC, (uint64_t)(uintptr_t)addr, dims[0], dims[1], strides[0], box[0], box[1],
                       (uint64_t)dtype, (uint64_t)swizzle };
    memcpy(map, w, sizeof w);
    return OK;
}
/* A map of a rows x cols matrix of f32, or 0 (the launch faults). */
static CUdeviceptr tmap_addr(const void *param, uint64_t rows, uint64_t cols)
{
    uint64_t w[16];
    memcpy(w, param, sizeof w);
    if (w[0] != FAKE_TMAP_MAGIC || w[2] != cols || w[3] != rows || w[4] != cols * 4 || w[7] != 7) return 0;
    return (CUdeviceptr)w[1];
}

CUresult cuLaunchKernel(ffunc *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                        unsigned bz, unsigned shared, fstream *s, void **params, void **extra)
{
    (void)gy; (void)gz; (void)extra;
    CUR_OR_FAIL;
    if (f->ctx != c || s->ctx != c) return INVALID_HANDLE;
    if (c->sticky) return c->sticky;
    flaunch l;
    memset(&l, 0, sizeof l);
    l.f = f;
    l.threads = bx * by * bz;
    if (l.threads > refuse_threads) return INVALID_VALUE;
    l.shared = shared;
    if (shared > 48u * 1024u && shared > (unsigned)f->max_dynamic) return INVALID_VALUE;
    /* kgate's own kernel: the refusals below are the arms' */
    if (strcmp(f->name, "kg_smem_poison") == 0) {
        if (s->capture != NULL) return INVALID_VALUE;
        return smem_poison(c, f, gx, shared, params);
    }
    if (strcmp(f->name, "kg_l2_warm") == 0) {
        if (s->capture != NULL) return INVALID_VALUE;
        return l2_warm(c, params);
    }
    const char *rf = knob("FAKE_CUDA_REFUSE_FILE");
    FILE *fp = rf != NULL ? fopen(rf, "r") : NULL;
    if (fp != NULL) {
        unsigned lim = 0;
        int code = INVALID_VALUE;
        int got = fscanf(fp, "%u %d", &lim, &code);
        fclose(fp);
        if (got >= 1 && l.threads > lim) return code;
    }
    if (strcmp(f->name, "kg_fill") == 0) {
        /* (kg_gen_spec s, void *dst), never captured */
        const kg_gen_spec *sp = params[0];
        CUdeviceptr dst = *(CUdeviceptr *)params[1];
        if (s->capture != NULL) return INVALID_VALUE;
        if (owner(dst, (size_t)sp->n * (sp->dtype == KG_GEN_F32 ? 4u : 2u)) != c) {
            violations++;
            c->sticky = ILLEGAL_ADDRESS;
            return OK;
        }
        kg_gen_all(sp, (void *)(uintptr_t)dst);
        const char *flip = knob("FAKE_CUDA_FILL_FLIP");
        if (flip != NULL && strcmp(flip, "1") == 0 && sp->n > 0) *(unsigned char *)(uintptr_t)dst ^= 1u;
        launches_here++;
        return OK;
    }
    if (strcmp(f->name, "gemm_bt_naive") == 0 || strcmp(f->name, "gemm_bt_steal") == 0 ||
        strcmp(f->name, "gemm_bt_smem") == 0) {
        for (int i = 0; i < 3; i++) l.ptr[i] = *(CUdeviceptr *)params[i];
        for (int i = 0; i < 3; i++) l.iv[i] = *(int *)params[3 + i];
    }
    /* gemm_bt_tma(map A, map B, C, M, N, K): gemm_bt_naive through maps
     * of A (M x K) and B (N x K); a map of other dims reads elsewhere */
    if (strcmp(f->name, "gemm_bt_tma") == 0) {
        for (int i = 0; i < 3; i++) l.iv[i] = *(int *)params[3 + i];
        l.ptr[0] = tmap_addr(params[0], (uint64_t)l.iv[0], (uint64_t)l.iv[2]);
        l.ptr[1] = tmap_addr(params[1], (uint64_t)l.iv[1], (uint64_t)l.iv[2]);
        l.ptr[2] = *(CUdeviceptr *)params[2];
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
    graph_misses = 0;
    if (s->wait_addr != NULL) {
        if (s->nq == 8) return INVALID_VALUE;
        s->queued[s->nq++] = e;
        return OK;
    }
    run_graph(c, e);
    return OK;
}
CUresult cuGraphExecDestroy(fgraph *e) { free(e); return OK; }
CUresult cuGraphDestroy(fgraph *g) { free(g); return OK; }

/* ---- a stand-in NVML (KGATE_LIBNVML may name this library too) ----
 * One device.  Its SM clock starts at FAKE_NVML_CLOCK_START MHz (default
 * 1980) and rises by FAKE_NVML_CLOCK_STEP MHz (default 0) per reading up
 * to FAKE_NVML_CLOCK_MAX (default 1980): a device that boosts as it
 * works.  FAKE_NVML_REASONS is the clock event reasons mask it reports
 * (hex or decimal; default 0).  Its compute processes: the IDs in the
 * file FAKE_NVML_PIDS_FILE, one per line (none without it; none before
 * the process's FAKE_NVML_PIDS_FROM_CALL-th call). */
typedef struct nvmlDevice_st { int unused; } nvml_dev;
static nvml_dev the_nvml_dev;
static unsigned nvml_env(const char *name, unsigned dflt)
{
    const char *v = getenv(name);
    return v != NULL && v[0] != '\0' ? (unsigned)strtoul(v, NULL, 0) : dflt;
}
int nvmlInit_v2(void) { return 0; }
int nvmlShutdown(void) { return 0; }
const char *nvmlErrorString(int rc) { return rc == 0 ? "success" : "stand-in NVML error"; }
int nvmlDeviceGetHandleByIndex_v2(unsigned idx, nvml_dev **d)
{
    if (idx != 0) return 2;
    *d = &the_nvml_dev;
    return 0;
}
int nvmlDeviceGetClockInfo(nvml_dev *d, int type, unsigned *mhz)
{
    (void)d;
    static unsigned readings;
    if (type == 2) { *mhz = 2619; return 0; }
    unsigned start = nvml_env("FAKE_NVML_CLOCK_START", 1980), step = nvml_env("FAKE_NVML_CLOCK_STEP", 0),
             max = nvml_env("FAKE_NVML_CLOCK_MAX", 1980);
    unsigned v = start + step * readings++;
    *mhz = v > max ? max : v;
    return 0;
}
int nvmlDeviceGetPowerUsage(nvml_dev *d, unsigned *mw) { (void)d; *mw = 250000; return 0; }
int nvmlDeviceGetTemperature(nvml_dev *d, int sensor, unsigned *c) { (void)d; (void)sensor; *c = 40; return 0; }
int nvmlDeviceGetCurrentClocksEventReasons(nvml_dev *d, unsigned long long *r)
{
    (void)d;
    *r = nvml_env("FAKE_NVML_REASONS", 0);
    return 0;
}
int nvmlDeviceGetUUID(nvml_dev *d, char *uuid, unsigned len)
{
    (void)d;
    snprintf(uuid, len, "GPU-abababab-abab-abab-abab-abababababab");
    return 0;
}
typedef struct { unsigned pid; unsigned long long mem; unsigned gi, ci; } nvml_proc;
int nvmlDeviceGetComputeRunningProcesses_v3(nvml_dev *d, unsigned *count, nvml_proc *p)
{
    (void)d;
    unsigned n = 0, cap = *count;
    const char *f = getenv("FAKE_NVML_PIDS_FILE");
    /* FAKE_NVML_PIDS_FROM_CALL=N: the list is empty for this process's first N - 1 calls (a
     * process that comes while a worker times) */
    static unsigned calls;
    if (++calls < nvml_env("FAKE_NVML_PIDS_FROM_CALL", 0)) f = NULL;
    FILE *fp = f != NULL ? fopen(f, "r") : NULL;
    unsigned v;
    while (fp != NULL && fscanf(fp, "%u", &v) == 1) {
        if (n < cap) {
            memset(&p[n], 0, sizeof p[n]);
            p[n].pid = v;
        }
        n++;
    }
    if (fp != NULL) fclose(fp);
    *count = n;
    return n > cap ? 7 : 0;
}

/* cuda_timing.c: one timed sample, in the worker and in a cuda arm host
 * (kg_cuda_gate, cuda_api.h). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "backend/cuda_api.h"

static double mono_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC_RAW, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

/* The thread's time runnable but off a CPU so far (the second field of
 * /proc/thread-self/schedstat), ns; 0 where it cannot be read. */
static double run_delay_ns(int fd)
{
    char buf[96];
    if (fd < 0) return 0.0;
    ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
    if (n <= 0) return 0.0;
    buf[n] = '\0';
    char *end;
    (void)strtoull(buf, &end, 10);
    unsigned long long wait = strtoull(end, NULL, 10);
    return (double)wait;
}

#define TRY(fn, args) do { *call = #fn; CUresult r_ = d->fn args; if (r_ != KG_CUDA_SUCCESS) return r_; } while (0)

CUresult kg_cuda_gate_init(const kg_cuda_driver *d, kg_cuda_gate *g, CUstream stream, const char **call)
{
    memset(g, 0, sizeof *g);
    g->stream = stream;
    g->sched_fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
    TRY(cuEventCreate, (&g->pre, KG_CU_EVENT_DEFAULT));
    TRY(cuEventCreate, (&g->e0, KG_CU_EVENT_DEFAULT));
    TRY(cuEventCreate, (&g->e1, KG_CU_EVENT_DEFAULT));
    if (d->cuStreamWaitValue32 == NULL || d->cuStreamWriteValue32 == NULL) return KG_CUDA_SUCCESS;
    TRY(cuStreamCreate, (&g->side, KG_CU_STREAM_NON_BLOCKING));
    TRY(cuMemAlloc, (&g->flag, 64));
    TRY(cuMemsetD8Async, (g->flag, 0, 64, g->side));
    TRY(cuStreamSynchronize, (g->side));
    /* the flag is written before it is waited on: a driver that refuses
     * either operation cannot leave the stream waiting */
    if (d->cuStreamWriteValue32(g->side, g->flag, 1, KG_CU_STREAM_WRITE_VALUE_DEFAULT) != KG_CUDA_SUCCESS ||
        d->cuStreamSynchronize(g->side) != KG_CUDA_SUCCESS)
        return KG_CUDA_SUCCESS;
    if (d->cuStreamWaitValue32(stream, g->flag, 1, KG_CU_STREAM_WAIT_VALUE_GEQ) != KG_CUDA_SUCCESS ||
        d->cuStreamSynchronize(stream) != KG_CUDA_SUCCESS)
        return KG_CUDA_SUCCESS;
    g->count = 1;
    /* The replay's order, tested: the stream waits for 2, then the side
     * stream writes 2.  On one hardware queue (a context opened with
     * CUDA_DEVICE_MAX_CONNECTIONS=1) the write sits behind the wait, and a
     * gated replay would wait forever: such a gate stays off, the stream
     * released by a write from the host (a copy, not a stream operation). */
    if (d->cuStreamQuery == NULL) return KG_CUDA_SUCCESS;
    if (d->cuStreamWaitValue32(stream, g->flag, 2, KG_CU_STREAM_WAIT_VALUE_GEQ) != KG_CUDA_SUCCESS)
        return KG_CUDA_SUCCESS;
    CUresult w = d->cuStreamWriteValue32(g->side, g->flag, 2, KG_CU_STREAM_WRITE_VALUE_DEFAULT);
    double t0 = mono_ns();
    CUresult q = KG_CUDA_ERROR_NOT_READY;
    while (w == KG_CUDA_SUCCESS && (q = d->cuStreamQuery(stream)) == KG_CUDA_ERROR_NOT_READY &&
           mono_ns() - t0 < KG_CUDA_GATE_TEST_S * 1e9) {
        struct timespec nap = { 0, 20000 };
        nanosleep(&nap, NULL);
    }
    if (q != KG_CUDA_SUCCESS) {
        unsigned two = 2;
        TRY(cuMemcpyHtoD, (g->flag, &two, sizeof two));
        TRY(cuStreamSynchronize, (stream));
        TRY(cuStreamSynchronize, (g->side));
        g->count = 2;
        g->shared_queue = w == KG_CUDA_SUCCESS && q == KG_CUDA_ERROR_NOT_READY;
        return KG_CUDA_SUCCESS;
    }
    TRY(cuStreamSynchronize, (g->side));
    g->count = 2;
    g->gated = 1;
    return KG_CUDA_SUCCESS;
}

void kg_cuda_gate_free(const kg_cuda_driver *d, kg_cuda_gate *g)
{
    if (g->pre != NULL) d->cuEventDestroy(g->pre);
    if (g->e0 != NULL) d->cuEventDestroy(g->e0);
    if (g->e1 != NULL) d->cuEventDestroy(g->e1);
    if (g->side != NULL) d->cuStreamDestroy(g->side);
    if (g->flag != 0) d->cuMemFree(g->flag);
    if (g->sched_fd >= 0) close(g->sched_fd);
    memset(g, 0, sizeof *g);
    g->sched_fd = -1;
}

CUresult kg_cuda_gate_replay(const kg_cuda_driver *d, kg_cuda_gate *g, CUgraphExec exec, double *event_ns,
                             double *host_ns, const char **call)
{
    *event_ns = *host_ns = 0;
    /* the context is resident before the bracket: the other processes on
     * the device are idle meanwhile */
    TRY(cuEventRecord, (g->pre, g->stream));
    TRY(cuStreamSynchronize, (g->stream));
    double q0 = run_delay_ns(g->sched_fd);
    double t0 = mono_ns();
    int gated = g->gated;
    if (gated) TRY(cuStreamWaitValue32, (g->stream, g->flag, g->count + 1, KG_CU_STREAM_WAIT_VALUE_GEQ));
    CUresult r = d->cuEventRecord(g->e0, g->stream);
    *call = "cuEventRecord";
    if (r == KG_CUDA_SUCCESS) {
        r = d->cuGraphLaunch(exec, g->stream);
        *call = "cuGraphLaunch";
    }
    if (r == KG_CUDA_SUCCESS) {
        r = d->cuEventRecord(g->e1, g->stream);
        *call = "cuEventRecord";
    }
    /* the gate opens whatever happened above, or the stream would wait forever */
    if (gated) {
        CUresult w = d->cuStreamWriteValue32(g->side, g->flag, ++g->count, KG_CU_STREAM_WRITE_VALUE_DEFAULT);
        if (w != KG_CUDA_SUCCESS) {
            unsigned v = g->count;
            d->cuMemcpyHtoD(g->flag, &v, sizeof v);
            if (r == KG_CUDA_SUCCESS) {
                r = w;
                *call = "cuStreamWriteValue32";
            }
        }
    }
    if (r != KG_CUDA_SUCCESS) return r;
    /* everything the graph started finishes here: the whole context */
    TRY(cuCtxSynchronize, ());
    double t1 = mono_ns();
    double queued = run_delay_ns(g->sched_fd) - q0;
    float ms = 0.0f;
    TRY(cuEventElapsedTime, (&ms, g->e0, g->e1));
    *event_ns = (double)ms * 1e6;
    *host_ns = t1 - t0 - (queued > 0.0 ? queued : 0.0);
    if (*host_ns < 0.0) *host_ns = 0.0;
    return KG_CUDA_SUCCESS;
}

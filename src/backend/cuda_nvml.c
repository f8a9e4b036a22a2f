/* cuda_nvml.c: NVML for the cuda backend: the telemetry slot (clocks,
 * power, temperature, clock event reasons, compute processes, and the
 * timing-escape counters kept by time()).  NVML is opened at the first
 * reading; without it telemetry is KG_EUNSUPPORTED and nothing else
 * changes.  Also the device's compute processes for the quiet-host
 * checks of the supervisor (the procs slots), from a NVML of their own:
 * the supervisor holds no backend open while its workers run. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "backend/cuda_nvml.h"
#include "base/util.h"

/* The device's compute processes, the whole list: NVML answers
 * "insufficient size" with the count it needs when the list does not fit
 * (a screen of 64 hosted arms is more than 64 of kgate's own processes),
 * so the list grows to that count, with room for processes started
 * meanwhile, up to three times.  *procs is buf, or memory the caller
 * frees when it is not; KG_NVML_SUCCESS or NVML's error. */
static nvmlReturn_t nvml_procs(const kg_cuda_nvml *lib, nvmlDevice_t dev, kg_nvml_process *buf, unsigned nbuf,
                               kg_nvml_process **procs, unsigned *n)
{
    kg_nvml_process *p = buf;
    unsigned cap = nbuf;
    nvmlReturn_t r = KG_NVML_ERROR_INSUFFICIENT_SIZE;
    for (int attempt = 0; attempt < 4; attempt++) {
        unsigned got = cap;
        r = lib->nvmlDeviceGetComputeRunningProcesses(dev, &got, p);
        if (r == KG_NVML_SUCCESS) {
            *procs = p;
            *n = got < cap ? got : cap;
            return r;
        }
        if (r != KG_NVML_ERROR_INSUFFICIENT_SIZE || got > (1u << 20)) break;
        cap = got + 32;
        kg_nvml_process *q = p == buf ? malloc(cap * sizeof *q) : realloc(p, cap * sizeof *q);
        if (q == NULL) break;
        p = q;
    }
    if (p != buf) free(p);
    *procs = NULL;
    *n = 0;
    return r;
}

static int nvml_ready(cuda_ctx *c, kg_err *err)
{
    if (c->nvml_state == 1) return KG_OK;
    if (c->nvml_state == -1) return kg_errorf(err, KG_EUNSUPPORTED, "NVML is not available");
    int rc = kg_cuda_nvml_load(&c->nvml, c->settings, err);
    if (rc != KG_OK) {
        c->nvml_state = -1;
        return rc;
    }
    nvmlReturn_t r = c->nvml.nvmlInit();
    if (r != KG_NVML_SUCCESS) {
        c->nvml_state = -1;
        return kg_errorf(err, KG_EUNSUPPORTED, "nvmlInit failed: %s", c->nvml.nvmlErrorString(r));
    }
    /* by UUID: CUDA ordinals and NVML indices differ under CUDA_VISIBLE_DEVICES */
    r = c->nvml.nvmlDeviceGetHandleByUUID != NULL
            ? c->nvml.nvmlDeviceGetHandleByUUID(c->uuid, &c->nvdev)
            : -1;
    if (r != KG_NVML_SUCCESS) r = c->nvml.nvmlDeviceGetHandleByIndex((unsigned)c->ordinal, &c->nvdev);
    if (r != KG_NVML_SUCCESS) {
        c->nvml.nvmlShutdown();
        c->nvml_state = -1;
        return kg_errorf(err, KG_EUNSUPPORTED, "NVML has no handle for %s", c->uuid);
    }
    c->nvml_state = 1;
    return KG_OK;
}

int kg_cuda_telemetry(kg_backend *be, kg_telemetry *t, kg_err *err)
{
    cuda_ctx *c = be->ctx;
    memset(t, 0, sizeof *t);
    t->sm_clock_mhz = t->mem_clock_mhz = -1;
    t->power_w = NAN;
    t->temp_c = -1;
    t->clock_event_reasons = 0;
    t->foreign_procs = -1;
    t->samples = c->samples;
    t->escapes = c->escapes;
    t->last_event_ns = c->last_event_ns;
    t->last_host_ns = c->last_host_ns;
    t->t_ns = now_ns();
    int rc = nvml_ready(c, err);
    if (rc != KG_OK) return rc;
    unsigned v = 0;
    if (c->nvml.nvmlDeviceGetClockInfo(c->nvdev, KG_NVML_CLOCK_SM, &v) == KG_NVML_SUCCESS)
        t->sm_clock_mhz = (int)v;
    if (c->nvml.nvmlDeviceGetClockInfo(c->nvdev, KG_NVML_CLOCK_MEM, &v) == KG_NVML_SUCCESS)
        t->mem_clock_mhz = (int)v;
    if (c->nvml.nvmlDeviceGetPowerUsage(c->nvdev, &v) == KG_NVML_SUCCESS)
        t->power_w = (double)v / 1000.0;
    if (c->nvml.nvmlDeviceGetTemperature(c->nvdev, KG_NVML_TEMPERATURE_GPU, &v) == KG_NVML_SUCCESS)
        t->temp_c = (int)v;
    unsigned long long reasons = 0;
    if (c->nvml.nvmlDeviceGetCurrentClocksEventReasons != NULL &&
        c->nvml.nvmlDeviceGetCurrentClocksEventReasons(c->nvdev, &reasons) == KG_NVML_SUCCESS)
        t->clock_event_reasons = (uint64_t)reasons;
    if (c->nvml.nvmlDeviceGetComputeRunningProcesses != NULL) {
        kg_nvml_process buf[64], *procs = NULL;
        unsigned n = 0;
        if (nvml_procs(&c->nvml, c->nvdev, buf, 64, &procs, &n) == KG_NVML_SUCCESS) {
            int same = c->tel_valid && n == c->tel_npids;
            for (unsigned i = 0; same && i < n; i++) same = procs[i].pid == c->tel_pids[i];
            if (!same) {
                /* kgate's own: this worker, its arm hosts, its supervisor */
                long self = (long)getpid(), sup = (long)getppid();
                int foreign = 0;
                for (unsigned i = 0; i < n; i++)
                    foreign += (long)procs[i].pid != sup && kg_proc_descends((long)procs[i].pid, self) == 0;
                c->tel_foreign = foreign;
                if (n > c->tel_cap) {
                    unsigned *g = realloc(c->tel_pids, (size_t)n * sizeof *g);
                    if (g != NULL) {
                        c->tel_pids = g;
                        c->tel_cap = n;
                    }
                }
                /* without room for the list, the next reading walks again */
                c->tel_valid = n <= c->tel_cap;
                c->tel_npids = c->tel_valid ? n : 0;
                for (unsigned i = 0; i < c->tel_npids; i++) c->tel_pids[i] = procs[i].pid;
            }
            t->foreign_procs = c->tel_foreign;
            if (procs != buf) free(procs);
        }
    }
    return KG_OK;
}

/* ------------------------------------------------- device's processes */

typedef struct cuda_procs {
    kg_cuda_nvml lib;
    nvmlDevice_t dev;
} cuda_procs;

void *kg_cuda_procs_open(const char *device, const kg_settings *s)
{
    cuda_procs *qn = calloc(1, sizeof *qn);
    kg_err e = { 0 };
    if (qn == NULL) return NULL;
    if (kg_cuda_nvml_load(&qn->lib, s, &e) != KG_OK || qn->lib.nvmlInit() != 0) {
        free(qn);
        return NULL;
    }
    const char *u = device != NULL ? strstr(device, "GPU-") : NULL;
    char uuid[96] = "";
    if (u != NULL) snprintf(uuid, sizeof uuid, "%.*s", (int)strcspn(u, " ,)"), u);
    int ok = uuid[0] && qn->lib.nvmlDeviceGetHandleByUUID != NULL &&
             qn->lib.nvmlDeviceGetHandleByUUID(uuid, &qn->dev) == 0;
    if (!ok && qn->lib.nvmlDeviceGetHandleByIndex(0, &qn->dev) != 0) {
        qn->lib.nvmlShutdown();
        kg_cuda_nvml_unload(&qn->lib);
        free(qn);
        return NULL;
    }
    return qn;
}

int kg_cuda_procs_list(void *watch, unsigned *count, unsigned *pids, int cap)
{
    cuda_procs *qn = watch;
    *count = 0;
    if (qn == NULL || qn->lib.nvmlDeviceGetComputeRunningProcesses == NULL) return KG_EUNSUPPORTED;
    kg_nvml_process buf[64], *procs = NULL;
    unsigned n = 0;
    if (nvml_procs(&qn->lib, qn->dev, buf, 64, &procs, &n) != KG_NVML_SUCCESS) return KG_EUNSUPPORTED;
    *count = n;
    for (unsigned i = 0; i < n && (int)i < cap; i++) pids[i] = procs[i].pid;
    if (procs != buf) free(procs);
    return KG_OK;
}

void kg_cuda_procs_close(void *watch)
{
    cuda_procs *qn = watch;
    if (qn == NULL) return;
    qn->lib.nvmlShutdown();
    kg_cuda_nvml_unload(&qn->lib);
    free(qn);
}

/* cuda_nvml.h: NVML for the cuda backend (cuda_nvml.c): the telemetry
 * slot and the device's compute processes, which cuda.c uses.  Private to
 * src/backend/. */
#ifndef KGATE_CUDA_NVML_H
#define KGATE_CUDA_NVML_H

#include "backend/cuda_shared.h"

/* The telemetry slot: device readings and the escape counters. */
int kg_cuda_telemetry(kg_backend *be, kg_telemetry *t, kg_err *err);

/* The procs slots: NVML opened for the device described (by the UUID in
 * the description, else index 0), NULL when it cannot be; its compute
 * processes (KG_EUNSUPPORTED when NVML cannot list them). */
void *kg_cuda_procs_open(const char *device, const kg_settings *s);
int kg_cuda_procs_list(void *watch, unsigned *count, unsigned *pids, int cap);
void kg_cuda_procs_close(void *watch);

#endif

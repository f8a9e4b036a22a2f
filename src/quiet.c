/* quiet.c: is the host quiet enough to time on?
 *
 * A timing taken while a compiler, a second benchmark or a foreign GPU
 * process runs says little about the kernel.  Before each process the
 * supervisor waits for a quiet window; during it, it polls the same
 * checks every KG_QUIET_POLL_S.  The checks: no process whose name
 * (/proc/PID/comm) is on the forbidden list, the 1-minute load average
 * (/proc/loadavg) under the bound, and no foreign compute process on the
 * device.  The last asks the backend registry for the device's compute
 * processes (the cuda backend reads them from NVML; cpu and fake have
 * none to list) and tells kgate's own by identity: the supervisor and its
 * descendants (workers, their arm hosts); any other is foreign, whether
 * it was there before the window or not.  Where NVML's process IDs are
 * not this PID namespace's (inside a container NVML may report host
 * IDs), it counts instead: the count seen when a quiet window ends is the
 * baseline, and while the process runs more than the baseline plus the
 * worker is foreign work (a foreign process already present before the
 * window then shows only in the telemetry's foreign_procs column).
 *
 * This file only looks: it neither kills nor renices anything, and the
 * supervisor decides what a contaminated process means. */
#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "quiet.h"
#include "kgate/backend.h"
#include "util.h"

static void *quiet_procs_open(const kg_settings *s, const char *backend, const char *device);

void kg_quiet_init(kg_quiet *q, const kg_settings *s, const char *forbid, double max_load, const char *backend,
                   const char *device, double window_s)
{
    memset(q, 0, sizeof *q);
    if (s == NULL) s = kg_settings_defaults();
    if (forbid == NULL) forbid = s->forbid;
    /* the default list comes with a declared quiet window: a plan with
     * quiet = 0 asked for no quiet host, and an explicit list is always
     * honoured */
    if (forbid == NULL)
        forbid = !(kg_backend_caps_of(backend) & KG_CAP_QUIET_HOST) || !(window_s > 0) ? "" : KG_QUIET_DEFAULT_FORBID;
    snprintf(q->forbid, sizeof q->forbid, "%s", forbid);
    q->max_load = max_load;
    q->backend = backend;
    q->device = device;
    if (window_s > 0) q->procs = quiet_procs_open(s, backend, device);
}

/* 1 when name is one of the comma-separated names of list. */
static int listed(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; *p; ) {
        while (*p == ',' || *p == ' ') p++;
        size_t k = strcspn(p, ", ");
        if (k == n && k > 0 && strncmp(p, name, n) == 0) return 1;
        p += k;
    }
    return 0;
}

typedef struct quiet_procs {
    kg_procs_watch *watch;
    int baseline;             /* compute processes when the last quiet window ended */
} quiet_procs;

/* The device's compute processes, where the backend can list them; NULL
 * when it cannot. */
static void *quiet_procs_open(const kg_settings *s, const char *backend, const char *device)
{
    kg_procs_watch *w = kg_backend_procs_open(backend, device, s);
    if (w == NULL) return NULL;
    quiet_procs *qp = calloc(1, sizeof *qp);
    if (qp == NULL) {
        kg_backend_procs_close(w);
        return NULL;
    }
    qp->watch = w;
    return qp;
}

void kg_quiet_free(kg_quiet *q)
{
    if (q == NULL || q->procs == NULL) return;
    quiet_procs *qp = q->procs;
    kg_backend_procs_close(qp->watch);
    free(qp);
    q->procs = NULL;
}

int kg_quiet_device_foreign(const kg_quiet *q, int in_process, int *n, char *why, size_t cap)
{
    *n = 0;
    if (cap > 0) why[0] = '\0';
    quiet_procs *qp = q->procs;
    unsigned pids[32], count = 0;
    if (qp == NULL || kg_backend_procs(qp->watch, &count, pids, 32) != KG_OK) return KG_EUNSUPPORTED;
    /* by identity: every compute process that is not the supervisor or
     * one of its descendants (workers, arm hosts) is foreign, whenever it
     * came */
    long self = (long)getpid();
    int unmatched = 0, foreign = 0;
    size_t len = 0;
    for (unsigned i = 0; i < count && i < 32; i++) {
        int d = kg_proc_descends((long)pids[i], self);
        if (d < 0) unmatched = 1;
        else if (d == 0) {
            if (foreign++ == 0) len += (size_t)snprintf(why, cap, "not kgate's: pid");
            if (len < cap) len += (size_t)snprintf(why + len, cap - len, " %u", pids[i]);
        }
    }
    if (count > 32) unmatched = 1;
    if (!unmatched) {
        *n = foreign;
        return KG_OK;
    }
    /* NVML's process IDs are not this namespace's (a container): count
     * instead; the count when a quiet window ends is the baseline, and
     * more than the baseline plus the worker is foreign work */
    if (cap > 0) why[0] = '\0';
    if (!in_process) {
        qp->baseline = (int)count;
        return KG_OK;
    }
    int expected = 1 + qp->baseline;
    if ((int)count > expected) {
        *n = (int)count - expected;
        len = (size_t)snprintf(why, cap, "%u compute processes, kgate expects %d (NVML's process IDs are not "
                               "this PID namespace's, so they are counted); pids", count, expected);
        for (unsigned i = 0; i < count && i < 32 && len < cap; i++)
            len += (size_t)snprintf(why + len, cap - len, " %u", pids[i]);
    }
    return KG_OK;
}

int kg_quiet_scan(const kg_quiet *q, int ignore, char *why, size_t cap)
{
    char now[32];
    kg_utc_now(now, sizeof now);
    if (q->forbid[0] != '\0') {
        DIR *d = opendir("/proc");
        struct dirent *e;
        long self = (long)getpid();
        while (d != NULL && (e = readdir(d)) != NULL) {
            if (!isdigit((unsigned char)e->d_name[0])) continue;
            long pid = strtol(e->d_name, NULL, 10);
            if (pid == self || pid == ignore) continue;
            char path[300], comm[64] = "";
            snprintf(path, sizeof path, "/proc/%s/comm", e->d_name);
            FILE *fp = fopen(path, "r");
            if (fp == NULL) continue; /* gone meanwhile */
            if (fgets(comm, sizeof comm, fp) == NULL) comm[0] = '\0';
            fclose(fp);
            comm[strcspn(comm, "\n")] = '\0';
            if (comm[0] != '\0' && listed(q->forbid, comm)) {
                snprintf(why, cap, "forbidden process %s (pid %ld) running at %s", comm, pid, now);
                closedir(d);
                return 1;
            }
        }
        if (d != NULL) closedir(d);
    }
    if (q->max_load > 0) {
        FILE *fp = fopen("/proc/loadavg", "r");
        double l1 = 0;
        if (fp != NULL) {
            if (fscanf(fp, "%lf", &l1) != 1) l1 = 0;
            fclose(fp);
        }
        if (l1 > q->max_load) {
            snprintf(why, cap, "load average %.2f above the bound %.2f at %s", l1, q->max_load, now);
            return 1;
        }
    }
    int nf = 0;
    char fwhy[300];
    if (kg_quiet_device_foreign(q, ignore >= 0, &nf, fwhy, sizeof fwhy) == KG_OK && nf > 0) {
        snprintf(why, cap, "%d foreign compute process(es) on the device (%s) at %s", nf, fwhy, now);
        return 1;
    }
    return 0;
}

int kg_quiet_wait(const kg_quiet *q, double window_s, double give_up_s, kg_err *err)
{
    double t0 = kg_mono_s(), quiet_since = t0;
    char why[512], last[512] = "";
    for (;;) {
        double now = kg_mono_s();
        if (kg_stop_requested())
            return kg_errorf(err, KG_EIO, "interrupted while waiting for a quiet host");
        if (kg_quiet_scan(q, -1, why, sizeof why)) {
            quiet_since = -1;
            /* the reason without its time stamp, to say it once */
            char *at = strstr(why, " at ");
            size_t k = at ? (size_t)(at - why) : strlen(why);
            if (strncmp(last, why, k) != 0 || last[k] != '\0') {
                snprintf(last, sizeof last, "%.*s", (int)k, why);
                fprintf(stderr, "kgate: waiting for a quiet host: %s\n", last);
            }
            if (now - t0 > give_up_s)
                return kg_errorf(err, KG_EIO, "the host did not become quiet within %.0f s (%s): stop it or "
                                 "change --forbid / --max-load", give_up_s, why);
        } else {
            if (quiet_since < 0) quiet_since = now;
            if (now - quiet_since >= window_s) return KG_OK;
        }
        struct timespec ts = { 0, (long)(KG_QUIET_POLL_S * 1e9) };
        nanosleep(&ts, NULL);
    }
}

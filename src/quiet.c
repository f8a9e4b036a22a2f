/* quiet.c: is the host quiet enough to time on?
 *
 * A timing taken while a compiler, a second benchmark or a foreign GPU
 * process runs says little about the kernel.  Before each process the
 * supervisor waits for a quiet window; during it, it polls the same
 * checks every KG_QUIET_POLL_S.  The checks: no process whose name
 * (/proc/PID/comm) is on the forbidden list, the 1-minute load average
 * (/proc/loadavg) under the bound, and no foreign compute process on the
 * device.  The last needs NVML and is a hook here: on the cpu and fake
 * backends it answers "not available".
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
#include "campaign.h"
#include "util.h"

void kg_quiet_init(kg_quiet *q, const char *forbid, double max_load, const char *backend, const char *device,
                   double window_s)
{
    memset(q, 0, sizeof *q);
    if (forbid == NULL) forbid = getenv("KGATE_FORBID");
    /* the default list comes with a declared quiet window: a plan with
     * quiet = 0 asked for no quiet host, and an explicit list is always
     * honoured */
    if (forbid == NULL) forbid = strcmp(backend, "fake") == 0 || !(window_s > 0) ? "" : KG_QUIET_DEFAULT_FORBID;
    snprintf(q->forbid, sizeof q->forbid, "%s", forbid);
    q->max_load = max_load;
    q->backend = backend;
    q->device = device;
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

int kg_quiet_device_foreign(const kg_quiet *q, int *n, char *why, size_t cap)
{
    *n = 0;
    if (cap > 0) why[0] = '\0';
    /* NVML's running-process query belongs to the cuda backend's loader;
     * until it exposes one, no backend can answer. */
    (void)q;
    return KG_EUNSUPPORTED;
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
    char fwhy[200];
    if (kg_quiet_device_foreign(q, &nf, fwhy, sizeof fwhy) == KG_OK && nf > 0) {
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

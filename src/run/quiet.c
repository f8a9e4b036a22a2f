/* quiet.c: is the host quiet enough to time on?
 *
 * A timing taken while a compiler, a second benchmark or a foreign GPU
 * process runs says little about the kernel.  The supervisor watches the
 * host for the whole campaign, between processes too: it polls every
 * KG_QUIET_POLL_S, and a process starts once nothing forbidden has been
 * seen for the quiet window, at once when the host has been quiet.  The
 * checks: no process whose name (/proc/PID/comm) is on the forbidden
 * list, the 1-minute load average (/proc/loadavg) under the bound, no
 * foreign compute process on the device, and on CPU hosts (the cpu
 * backend) the host's steal time, the CPU used by processes that are not
 * kgate's, and the fastest core's clock.
 *
 * Device processes: the backend registry lists the device's compute
 * processes (the cuda backend reads them from NVML, the fake one from a
 * test's list) and kgate's own are told by identity: the supervisor and
 * its descendants (workers, their arm hosts); any other is foreign,
 * whether it was there before the window or not.  Where NVML's process
 * IDs are not this PID namespace's (inside a container NVML may report
 * host IDs), it counts instead: kgate's own are its descendants that hold
 * a GPU's device node open (at least the worker), and more compute
 * processes than those, plus the count a scan outside a process last
 * saw (the baseline; the supervisor's scans are all in a process), is
 * foreign work; kg_quiet_match says which, and the evidence records it.
 *
 * CPU hosts: /proc/stat's first line gives the host's busy, idle and
 * steal ticks; the sum of utime, stime, cutime and cstime over the
 * supervisor and its descendants gives kgate's own (a reaped child's
 * ticks move to its parent's cutime, so the sum is continuous).  Over
 * each KG_QUIET_CPU_WINDOW_S, steal above max_steal of the CPU time the
 * host's work used or was owed (busy + steal), or busy ticks not kgate's
 * above max_foreign_cpu cores, is not quiet; the verdict of a window
 * holds until the next full one, so a host is quiet again only after a
 * whole clean window.  The fastest core's clock (cpufreq's scaling_cur_freq, where
 * the host has it) falling more than max_freq_change below its highest
 * value since the process began is not quiet either.
 *
 * This file only looks: it neither kills nor renices anything, and the
 * supervisor decides what a contaminated process means. */
#include <ctype.h>
#include <errno.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "run/quiet.h"
#include "kgate/backend.h"
#include "base/util.h"

/* the device processes told by identity; more (a screen of many hosted
 * arms beside other work) are counted instead */
#define KG_QUIET_MAX_PIDS 512

static void *quiet_procs_open(const kg_settings *s, const char *backend, const char *device);

/* The CPU-host watch's readings at the start of the current window. */
typedef struct cpu_watch {
    int have;                     /* a first reading was taken */
    unsigned long long stat[8];   /* /proc/stat: user nice system idle iowait irq softirq steal */
    double own;                   /* kgate's ticks */
    double t;                     /* kg_mono_s() of the reading */
    double hz;
    double fmax;                  /* the fastest core's highest clock since the process began, kHz; 0: none */
    int nofreq;                   /* the host has no cpufreq */
    int bad;                      /* the last full window's verdict, which holds until the next one */
    char why[512];
} cpu_watch;

void kg_quiet_init(kg_quiet *q, const kg_settings *s, const char *forbid, double max_load, const char *backend,
                   const char *device, double window_s, const kg_quiet_limits *lim)
{
    memset(q, 0, sizeof *q);
    q->watched_from = kg_mono_s();
    q->quiet_since = q->watched_from;
    q->last_bad = -1;
    if (s == NULL) s = kg_settings_defaults();
    if (forbid == NULL) forbid = s->forbid;
    /* the default list comes with a declared quiet window: a plan with
     * quiet = 0 asked for no quiet host, and an explicit list is always
     * honoured */
    unsigned caps = kg_backend_caps_of(backend);
    int by_default = forbid == NULL;
    if (forbid == NULL)
        forbid = !(caps & KG_CAP_QUIET_HOST) || !(window_s > 0) ? "" : KG_QUIET_DEFAULT_FORBID;
    /* on the host's CPUs a compiler is other work like any: the default
     * list is observed and recorded, and the load record counts its CPU;
     * a list the plan, --forbid or KGATE_FORBID names is judged */
    if ((caps & KG_CAP_HOST_CPU) && by_default && forbid[0] != '\0') {
        snprintf(q->observe, sizeof q->observe, "%s", forbid);
        forbid = "";
    }
    snprintf(q->forbid, sizeof q->forbid, "%s", forbid);
    q->max_load = max_load;
    q->backend = backend;
    q->device = device;
    if (window_s > 0) q->procs = quiet_procs_open(s, backend, device);
    /* the CPU-host watch: where the kernel runs on the host's CPUs (cpu);
     * its bounds judge with a declared window, and without one (quiet = 0,
     * --quiet-window 0) the host's other work is still recorded */
    if (kg_backend_caps_of(backend) & KG_CAP_HOST_CPU) {
        if (!(window_s > 0)) q->lim = (kg_quiet_limits){ 0, 0, 0 };
        else if (lim != NULL) q->lim = *lim;
        else q->lim = (kg_quiet_limits){ KG_QUIET_MAX_STEAL, KG_QUIET_MAX_FOREIGN_CPU, KG_QUIET_MAX_FREQ_CHANGE };
        q->cpu = calloc(1, sizeof(cpu_watch));
    }
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
    int counted;              /* NVML's process IDs were once not this namespace's: counted */
    const char *node;         /* the device node kgate's own device processes hold (settings) */
    long prev[KG_QUIET_MAX_PIDS]; /* kgate's own device processes at the last count in a process */
    int nprev;
} quiet_procs;

/* 1 when link, an open file's path, is a GPU's device node: node where
 * the settings name one, else /dev/nvidiaN (N digits; not nvidiactl,
 * nvidia-uvm or nvidia-modeset, which a process may hold without a
 * context on any device). */
static int device_node(const char *link, const char *node)
{
    if (node != NULL) return strcmp(link, node) == 0;
    if (strncmp(link, "/dev/nvidia", 11) != 0 || !isdigit((unsigned char)link[11])) return 0;
    const char *p = link + 11;
    while (isdigit((unsigned char)*p)) p++;
    return *p == '\0';
}

/* The state letter of /proc/PID/stat (R, S, D, Z, ...), or 0. */
static char proc_state(long pid)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    FILE *f = fopen(path, "r");
    if (f == NULL) return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *p = strrchr(buf, ')');   /* the command may hold spaces and parentheses */
    return p != NULL && p[1] == ' ' ? p[2] : 0;
}

/* kgate's own processes on the device, where NVML's process IDs cannot be
 * matched: the supervisor's descendants (workers, arm hosts, library
 * helpers; not the supervisor, whose NVML queries make no context) that
 * hold a GPU's device node open, as every process with a context does.
 * A descendant whose open files cannot be read (a confined arm host is
 * not dumpable, and a container's root may lack the capabilities to read
 * such a process's files) counts too, in *unseen: it is kgate's, and may
 * hold the device.  So does one that is exiting (no open file left, not
 * yet a zombie): the driver tears its context down as its files close,
 * and NVML lists it until then (a worker's arm hosts end together, and
 * the next worker's start beside it).  Their process IDs go to pids (at
 * most cap); the count is returned. */
static int own_device_procs(long self, const char *node, int *unseen, long *pids, int cap)
{
    DIR *d = opendir("/proc");
    struct dirent *e;
    int n = 0;
    *unseen = 0;
    while (d != NULL && (e = readdir(d)) != NULL) {
        if (!isdigit((unsigned char)e->d_name[0])) continue;
        long pid = strtol(e->d_name, NULL, 10);
        if (pid == self || kg_proc_descends(pid, self) != 1) continue;
        char path[64];
        snprintf(path, sizeof path, "/proc/%ld/fd", pid);
        DIR *fd = opendir(path);
        int held = 0;
        if (fd == NULL && (errno == EACCES || errno == EPERM)) {
            held = 1;
            (*unseen)++;
        }
        struct dirent *f;
        int files = 0;
        while (fd != NULL && !held && (f = readdir(fd)) != NULL) {
            if (!isdigit((unsigned char)f->d_name[0])) continue;
            files++;
            char lp[352], target[4096];
            snprintf(lp, sizeof lp, "/proc/%ld/fd/%s", pid, f->d_name);
            ssize_t k = readlink(lp, target, sizeof target - 1);
            if (k <= 0) continue;
            target[k] = '\0';
            held = device_node(target, node);
        }
        if (fd != NULL) closedir(fd);
        if (fd != NULL && files == 0 && !held) held = proc_state(pid) != 'Z';
        if (held) {
            if (n < cap) pids[n] = pid;
            n++;
        }
    }
    if (d != NULL) closedir(d);
    return n;
}

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
    qp->node = s != NULL ? s->device_node : NULL;
    return qp;
}

void kg_quiet_free(kg_quiet *q)
{
    if (q == NULL) return;
    free(q->cpu);
    q->cpu = NULL;
    if (q->procs == NULL) return;
    quiet_procs *qp = q->procs;
    kg_backend_procs_close(qp->watch);
    free(qp);
    q->procs = NULL;
}

const char *kg_quiet_match(const kg_quiet *q)
{
    quiet_procs *qp = q->procs;
    if (qp == NULL) return "not at all (the backend lists no device processes)";
    return qp->counted ? "by count (NVML's process IDs are another PID namespace's: kgate's own are its processes "
                         "that hold the device, or whose open files it cannot read)"
                       : "by process ID";
}

int kg_quiet_device_foreign(const kg_quiet *q, int in_process, int *n, char *why, size_t cap)
{
    *n = 0;
    if (cap > 0) why[0] = '\0';
    quiet_procs *qp = q->procs;
    unsigned pids[KG_QUIET_MAX_PIDS], count = 0;
    if (qp == NULL || kg_backend_procs(qp->watch, &count, pids, KG_QUIET_MAX_PIDS) != KG_OK) return KG_EUNSUPPORTED;
    long self = (long)getpid();
    /* by identity: every compute process that is not the supervisor or
     * one of its descendants (workers, arm hosts) is foreign, whenever it
     * came */
    int unmatched = 0, foreign = 0;
    size_t len = 0;
    for (unsigned i = 0; i < count && i < KG_QUIET_MAX_PIDS; i++) {
        int d = kg_proc_descends((long)pids[i], self);
        if (d < 0) unmatched = 1;
        else if (d == 0) {
            if (foreign++ == 0) len += (size_t)snprintf(why, cap, "not kgate's: pid");
            if (len < cap) len += (size_t)snprintf(why + len, cap - len, " %u", pids[i]);
        }
    }
    if (count > KG_QUIET_MAX_PIDS) unmatched = 1;
    if (!unmatched) {
        *n = foreign;
        return KG_OK;
    }
    /* NVML's process IDs are not this namespace's (a container): count
     * instead; a scan outside a process notes the baseline, and in one
     * more than the baseline plus kgate's own device processes is foreign */
    if (cap > 0) why[0] = '\0';
    qp->counted = 1;
    if (!in_process) {
        qp->baseline = (int)count;
        return KG_OK;
    }
    /* kgate's own: its processes that hold the device (a worker, its arm hosts, library helpers,
     * the next worker started beside it), at least the worker; and those of the last count
     * that are gone since (a host reaped between NVML's list and this scan may still be on
     * the list), counted once */
    int unseen;
    long ids[KG_QUIET_MAX_PIDS];
    int cur = own_device_procs(self, qp->node, &unseen, ids, KG_QUIET_MAX_PIDS), own = cur;
    for (int j = 0; j < qp->nprev && cur <= KG_QUIET_MAX_PIDS; j++) {
        int seen = 0;
        for (int i = 0; i < cur && !seen; i++) seen = ids[i] == qp->prev[j];
        own += !seen;
    }
    qp->nprev = cur <= KG_QUIET_MAX_PIDS ? cur : 0;
    memcpy(qp->prev, ids, (size_t)qp->nprev * sizeof ids[0]);
    int expected = qp->baseline + (own > 1 ? own : 1);
    if ((int)count > expected) {
        *n = (int)count - expected;
        char un[96] = "";
        if (unseen > 0)
            snprintf(un, sizeof un, ", %d of them counted unseen (kgate cannot read their open files)", unseen);
        len = (size_t)snprintf(why, cap, "%u compute processes, kgate expects %d (%d of its own hold the device%s; "
                               "NVML's process IDs are not this PID namespace's, so they are counted); pids",
                               count, expected, own, un);
        for (unsigned i = 0; i < count && i < KG_QUIET_MAX_PIDS && len < cap; i++)
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

/* The first line of /proc/stat: 0, or -1 when it cannot be read. */
static int read_stat(unsigned long long v[8])
{
    FILE *fp = fopen("/proc/stat", "r");
    if (fp == NULL) return -1;
    int n = fscanf(fp, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5],
                   &v[6], &v[7]);
    fclose(fp);
    if (n < 4) return -1;
    for (int i = n; i < 8; i++) v[i] = 0;
    return 0;
}

/* Ticks used by the supervisor and its descendants, living and reaped
 * (utime + stime + cutime + cstime over the tree). */
static double own_ticks(void)
{
    enum { CAP = 4096 };
    static long pid[CAP], ppid[CAP];
    static double ticks[CAP];
    int n = 0;
    DIR *d = opendir("/proc");
    struct dirent *e;
    while (d != NULL && (e = readdir(d)) != NULL && n < CAP) {
        if (!isdigit((unsigned char)e->d_name[0])) continue;
        char path[300], buf[1024];
        snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
        FILE *fp = fopen(path, "r");
        if (fp == NULL) continue;
        size_t k = fread(buf, 1, sizeof buf - 1, fp);
        fclose(fp);
        buf[k] = '\0';
        char *p = strrchr(buf, ')');
        long pp;
        unsigned long long ut, st, cut, cst;
        if (p == NULL || sscanf(p + 2, "%*c %ld %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %llu %llu", &pp, &ut,
                                &st, &cut, &cst) != 5)
            continue;
        pid[n] = strtol(e->d_name, NULL, 10);
        ppid[n] = pp;
        ticks[n] = (double)(ut + st + cut + cst);
        n++;
    }
    if (d != NULL) closedir(d);
    /* the tree below the supervisor: repeated sweeps (a parent may come
     * after its child in /proc's order) */
    static signed char in[CAP];
    long self = (long)getpid();
    for (int i = 0; i < n; i++) in[i] = pid[i] == self;
    for (int changed = 1, sweeps = 0; changed && sweeps < 64; sweeps++) {
        changed = 0;
        for (int i = 0; i < n; i++) {
            if (in[i]) continue;
            for (int j = 0; j < n; j++)
                if (in[j] && pid[j] == ppid[i]) {
                    in[i] = 1;
                    changed = 1;
                    break;
                }
        }
    }
    double sum = 0;
    for (int i = 0; i < n; i++)
        if (in[i]) sum += ticks[i];
    return sum;
}

/* The fastest core's current clock, kHz; 0 when the host has no cpufreq. */
static double fastest_khz(void)
{
    double best = 0;
    for (int c = 0; c < 1024; c++) {
        char path[96];
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/cpufreq/scaling_cur_freq", c);
        FILE *fp = fopen(path, "r");
        if (fp == NULL) {
            if (c > 0 || best > 0) break;
            return 0;
        }
        double f = 0;
        if (fscanf(fp, "%lf", &f) != 1) f = 0;
        fclose(fp);
        if (f > best) best = f;
    }
    return best;
}

int kg_quiet_freq_judge(double *fmax, double f, double bound)
{
    if (f > *fmax) *fmax = f;
    if (!(bound > 0) || !(f < *fmax * (1 - bound))) return 0;
    *fmax = f;   /* one report per fall: the reference starts again from here */
    return 1;
}

double kg_quiet_foreign_cores(const unsigned long long a[8], const unsigned long long b[8], double own_ticks_used,
                              double seconds, double hz)
{
    double d[8];
    for (int i = 0; i < 8; i++) d[i] = b[i] >= a[i] ? (double)(b[i] - a[i]) : 0;
    if (seconds <= 0 || hz <= 0) return 0;
    /* busy: user, nice, system, irq, softirq (guest time is inside user) */
    double busy = d[0] + d[1] + d[2] + d[5] + d[6];
    double f = (busy - own_ticks_used) / hz / seconds;
    return f > 0 ? f : 0;
}

int kg_quiet_cpu_judge(const unsigned long long a[8], const unsigned long long b[8], double own_ticks_used,
                       double seconds, double hz, const kg_quiet_limits *lim, char *why, size_t cap)
{
    double d[8], total = 0;
    for (int i = 0; i < 8; i++) {
        d[i] = b[i] >= a[i] ? (double)(b[i] - a[i]) : 0;
        total += d[i];
    }
    if (total <= 0 || seconds <= 0 || hz <= 0) return 0;
    /* busy: user, nice, system, irq, softirq (guest time is inside user);
     * steal as a share of the CPU time the host's work ran or was owed,
     * so that one stolen core counts the same on 2 cores as on 64 */
    double busy = d[0] + d[1] + d[2] + d[5] + d[6];
    double steal = busy + d[7] > 0 ? d[7] / (busy + d[7]) : 0;
    /* and at least a tenth of a core stolen: an idle host's few ticks are no verdict */
    if (lim->max_steal > 0 && d[7] >= 0.1 * hz * seconds && steal > lim->max_steal) {
        snprintf(why, cap, "steal time %.1f%% of the CPU time the host's work used or was owed over %.1f s, above the "
                 "bound max_steal = %.1f%% (a shared virtual machine: raise max_steal in [campaign], or 0 to accept it)",
                 100 * steal, seconds, 100 * lim->max_steal);
        return 1;
    }
    double foreign = kg_quiet_foreign_cores(a, b, own_ticks_used, seconds, hz);
    if (lim->max_foreign_cpu > 0 && foreign > lim->max_foreign_cpu) {
        snprintf(why, cap, "processes that are not kgate's used %.2f cores over %.1f s, above the bound "
                 "max_foreign_cpu = %.2f", foreign, seconds, lim->max_foreign_cpu);
        return 1;
    }
    return 0;
}

/* The CPU-host watch: one reading; a verdict once a window is full. */
static int cpu_poll(kg_quiet *q, char *why, size_t cap)
{
    cpu_watch *c = q->cpu;
    if (c == NULL) return 0;
    char now_s[32];
    double now = kg_mono_s();
    if (q->lim.max_freq_change > 0 && !c->nofreq) {
        double f = fastest_khz(), from = c->fmax;
        if (f <= 0) c->nofreq = 1;
        else if (kg_quiet_freq_judge(&c->fmax, f, q->lim.max_freq_change)) {
            kg_utc_now(now_s, sizeof now_s);
            snprintf(why, cap, "the fastest core's clock fell from %.0f to %.0f MHz, more than max_freq_change "
                     "= %.0f%%, at %s", from / 1e3, f / 1e3, 100 * q->lim.max_freq_change, now_s);
            return 1;
        }
    }
    if (c->have && now - c->t < KG_QUIET_CPU_WINDOW_S) {
        /* within a window, the last window's verdict holds: a host is
         * quiet again only after a whole clean window */
        if (c->bad) snprintf(why, cap, "%s", c->why);
        return c->bad;
    }
    unsigned long long st[8];
    if (read_stat(st) != 0) return 0;
    double own = own_ticks();
    int bad = 0;
    if (c->have) {
        char w[300];
        double f = kg_quiet_foreign_cores(c->stat, st, own - c->own, now - c->t, c->hz);
        q->load_sum += f;
        if (f > q->load_max) q->load_max = f;
        q->load_n++;
        bad = kg_quiet_cpu_judge(c->stat, st, own - c->own, now - c->t, c->hz, &q->lim, w, sizeof w);
        if (bad) {
            kg_utc_now(now_s, sizeof now_s);
            snprintf(c->why, sizeof c->why, "%s, at %s", w, now_s);
            snprintf(why, cap, "%s", c->why);
        }
        c->bad = bad;
    } else {
        long hz = sysconf(_SC_CLK_TCK);
        c->hz = hz > 0 ? (double)hz : 100;
        c->have = 1;
    }
    memcpy(c->stat, st, sizeof st);
    c->own = own;
    c->t = now;
    return bad;
}

int kg_quiet_take(kg_quiet *q, char *why, size_t cap)
{
    if (q->nnew == 0) return 0;
    snprintf(why, cap, "%s", q->new_why[0]);
    memmove(q->new_why[0], q->new_why[1], (size_t)(q->nnew - 1) * sizeof q->new_why[0]);
    q->nnew--;
    return 1;
}

void kg_quiet_process_begins(kg_quiet *q)
{
    cpu_watch *c = q->cpu;
    if (c != NULL) c->fmax = 0;
    q->load_sum = q->load_max = 0;
    q->load_n = 0;
    q->seen[0] = '\0';
}

int kg_quiet_load(const kg_quiet *q, double *mean, double *max)
{
    *mean = q->load_n > 0 ? q->load_sum / q->load_n : 0;
    *max = q->load_max;
    return q->load_n;
}

/* The observed list: the names running now, added to q->seen (once a
 * second at most). */
static void observe(kg_quiet *q, double now)
{
    if (q->observe[0] == '\0' || now < q->next_observe) return;
    q->next_observe = now + 1.0;
    DIR *d = opendir("/proc");
    struct dirent *e;
    while (d != NULL && (e = readdir(d)) != NULL) {
        if (!isdigit((unsigned char)e->d_name[0])) continue;
        char path[300], comm[64] = "";
        snprintf(path, sizeof path, "/proc/%s/comm", e->d_name);
        FILE *fp = fopen(path, "r");
        if (fp == NULL) continue;
        if (fgets(comm, sizeof comm, fp) == NULL) comm[0] = '\0';
        fclose(fp);
        comm[strcspn(comm, "\n")] = '\0';
        if (comm[0] == '\0' || !listed(q->observe, comm) || listed(q->seen, comm)) continue;
        size_t l = strlen(q->seen);
        if (l + strlen(comm) + 2 < sizeof q->seen) snprintf(q->seen + l, sizeof q->seen - l, "%s%s", l ? "," : "", comm);
    }
    if (d != NULL) closedir(d);
}

const char *kg_quiet_seen(const kg_quiet *q)
{
    return q->seen;
}

int kg_quiet_poll(kg_quiet *q, int ignore, char *why, size_t cap)
{
    observe(q, kg_mono_s());
    int bad = kg_quiet_scan(q, ignore, why, cap);
    if (!bad) bad = cpu_poll(q, why, cap);
    double now = kg_mono_s();
    if (bad) {
        /* a new kind of reason (its text up to the first digit: the same
         * check with other numbers is the same kind) is kept for kg_quiet_take */
        size_t k = strcspn(why, "0123456789"), lk = strcspn(q->last_why, "0123456789");
        if (q->quiet_since >= 0 || k != lk || strncmp(why, q->last_why, k) != 0) {
            if (q->nnew < 8) snprintf(q->new_why[q->nnew++], sizeof q->new_why[0], "%s", why);
            else q->dropped++;
        }
        q->quiet_since = -1;
        snprintf(q->last_why, sizeof q->last_why, "%s", why);
        q->last_bad = now;
    } else if (q->quiet_since < 0) {
        q->quiet_since = now;
    }
    return bad;
}

void kg_quiet_say(const char *why, char *last, size_t cap, int live, double waited_s, double left_s)
{
    const char *at = strstr(why, " at ");
    int n = at ? (int)(at - why) : (int)strlen(why);
    if (live) {
        char left[64] = "";
        if (left_s >= 0) snprintf(left, sizeof left, ", gives up in %.0f s", left_s);
        fprintf(stderr, "\r\033[Kkgate: waiting for a quiet host (%.0f s%s): %.*s", waited_s, left, n > 160 ? 160 : n,
                why);
        fflush(stderr);
        return;
    }
    /* the kind of reason (its text up to the first digit: the same check
     * with other numbers, another time, is the same kind), said once */
    size_t k = strcspn(why, "0123456789");
    if (strlen(last) != k || strncmp(last, why, k) != 0) {
        snprintf(last, cap, "%.*s", (int)k, why);
        fprintf(stderr, "kgate: waiting for a quiet host: %.*s\n", n, why);
    }
}

int kg_quiet_judge(const kg_quiet *q, int bad, double now, double window_s, double waited_s, double give_up_s)
{
    if (bad) return waited_s > give_up_s ? KG_QUIET_GIVE_UP : KG_QUIET_HOLD;
    return q->quiet_since >= 0 && now - q->quiet_since >= window_s ? KG_QUIET_GO : KG_QUIET_HOLD;
}

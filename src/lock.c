/* lock.c: one exclusive lock per device, held for a whole campaign.
 *
 * Two campaigns timing on the same device disturb each other, so each
 * takes flock(LOCK_EX) on a file named after its device in the lock
 * folder (the settings' lock_dir, KGATE_LOCK_DIR; default
 * /tmp/kgate-locks).  The holder writes
 * its pid into the file so that a waiting campaign can say who holds it.
 * The lock is released by the kernel when the last descriptor closes:
 * a killed campaign never leaves a stale lock.  A worker inherits the
 * descriptor; it ends with its supervisor (PR_SET_PDEATHSIG), but one
 * that outlives it (under a wrapper that forks) holds the device until it
 * ends.  The supervisor therefore records its running worker's pid in the
 * file as well, and a waiting campaign whose holder is dead names the
 * orphan ("kill N"), found from that record or through /proc.  It never
 * kills it: a pid read from a file another user can write is no proof.
 *
 * This file does not decide what a device is: kg_lock_name asks the
 * backend registry for the name of a backend's device. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "lock.h"
#include "kgate/backend.h"
#include "util.h"

void kg_lock_name(const char *backend, const char *device, char *buf, size_t cap)
{
    /* the fake backend measures nothing: its own lock ("fake"), so that
     * tests never wait for a real CPU campaign */
    kg_backend_lock_key(backend, device, buf, cap);
}

/* The lock file holds "PID\n" (the campaign that took it) and, while one
 * runs, "worker PID\n" (its worker, which inherits the descriptor). */
static void read_holders(int fd, long *sup, long *worker)
{
    char text[96] = "";
    ssize_t n = pread(fd, text, sizeof text - 1, 0);
    text[n > 0 ? n : 0] = '\0';
    *sup = *worker = 0;
    char *nl = strchr(text, '\n');
    *sup = strtol(text, NULL, 10);
    if (nl != NULL && strncmp(nl + 1, "worker ", 7) == 0) *worker = strtol(nl + 8, NULL, 10);
}

static int alive(long pid)
{
    return pid > 0 && (kill((pid_t)pid, 0) == 0 || errno == EPERM);
}

/* A live process other than this one with the lock file open, found
 * through /proc (where this user may read its descriptors); 0: none. */
static long scan_holder(const char *path)
{
    char want[PATH_MAX];
    if (realpath(path, want) == NULL) return 0;
    DIR *d = opendir("/proc");
    struct dirent *e;
    long found = 0;
    while (found == 0 && d != NULL && (e = readdir(d)) != NULL) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);
        if (*end != '\0' || pid <= 0 || pid == (long)getpid()) continue;
        char fdd[64];
        snprintf(fdd, sizeof fdd, "/proc/%ld/fd", pid);
        DIR *f = opendir(fdd);
        struct dirent *g;
        while (found == 0 && f != NULL && (g = readdir(f)) != NULL) {
            char lnk[160], to[PATH_MAX];
            snprintf(lnk, sizeof lnk, "%s/%.40s", fdd, g->d_name);
            ssize_t k = readlink(lnk, to, sizeof to - 1);
            if (k <= 0) continue;
            to[k] = '\0';
            if (strcmp(to, want) == 0) found = pid;
        }
        if (f != NULL) closedir(f);
    }
    if (d != NULL) closedir(d);
    return found;
}

/* Who holds the lock, in words: the campaign, or when it is dead, the
 * orphaned worker that still holds the descriptor. */
static void holder_of(int fd, const char *path, char *buf, size_t cap)
{
    long sup, worker;
    read_holders(fd, &sup, &worker);
    if (alive(sup) || sup <= 0) {
        if (sup > 0) snprintf(buf, cap, "another campaign (pid %ld)", sup);
        else snprintf(buf, cap, "another campaign (pid unknown)");
        return;
    }
    long orphan = alive(worker) ? worker : scan_holder(path);
    if (orphan > 0)
        snprintf(buf, cap, "an orphaned kgate worker (pid %ld) still holds the device lock: kill %ld (its campaign, "
                 "pid %ld, is gone)", orphan, orphan, sup);
    else
        snprintf(buf, cap, "a process whose campaign (pid %ld) is gone (not found in /proc)", sup);
}

void kg_lock_note_worker(int fd, long pid)
{
    if (fd < 0) return;
    char text[64];
    int n = pid > 0 ? snprintf(text, sizeof text, "%ld\nworker %ld\n", (long)getpid(), pid)
                    : snprintf(text, sizeof text, "%ld\n", (long)getpid());
    /* the pids are a courtesy for whoever waits: failures are ignored */
    if (ftruncate(fd, 0) == 0 && pwrite(fd, text, (size_t)n, 0) != n) { }
}

int kg_lock_acquire(const kg_settings *s, const char *name, double timeout_s, int *fd_out, kg_err *err)
{
    const char *dir = s != NULL ? s->lock_dir : NULL;
    char path[KG_PATH_MAX + 80];
    *fd_out = -1;
    if (dir == NULL || dir[0] == '\0') dir = "/tmp/kgate-locks";
    int rc = kg_mkdir_p(dir, err);
    if (rc != KG_OK) return rc;
    /* several users share the default folder */
    if (strcmp(dir, "/tmp/kgate-locks") == 0) (void)chmod(dir, 01777);
    snprintf(path, sizeof path, "%s/%s.lock", dir, name);
    /* no O_CLOEXEC: workers inherit the lock on purpose */
    int fd = open(path, O_RDWR | O_CREAT, 0666);
    if (fd < 0) return kg_errorf(err, KG_EIO, "%s: cannot open the device lock: %s", path, strerror(errno));
    (void)fchmod(fd, 0666);
    double t0 = kg_mono_s();
    int said = 0;
    for (;;) {
        if (flock(fd, LOCK_EX | LOCK_NB) == 0) break;
        if (errno != EWOULDBLOCK && errno != EINTR) {
            int e = errno;
            close(fd);
            return kg_errorf(err, KG_EIO, "%s: cannot lock: %s", path, strerror(e));
        }
        char holder[300];
        holder_of(fd, path, holder, sizeof holder);
        if (kg_stop_requested()) {
            close(fd);
            return kg_errorf(err, KG_EIO, "interrupted while waiting for device %s (held by %s)", name, holder);
        }
        double waited = kg_mono_s() - t0;
        if (timeout_s >= 0 && waited >= timeout_s) {
            close(fd);
            return kg_errorf(err, KG_EIO, "device %s is in use by %s (lock %s); gave up after --lock-timeout %.0f s: "
                             "wait for it to end or raise the timeout", name, holder, path, timeout_s);
        }
        if (!said) {
            fprintf(stderr, "kgate: device %s is in use by %s (lock %s): waiting%s\n", name, holder, path,
                    timeout_s >= 0 ? " (--lock-timeout)" : "");
            said = 1;
        }
        struct timespec ts = { 0, 100 * 1000 * 1000 };
        nanosleep(&ts, NULL);
    }
    if (said) fprintf(stderr, "kgate: device %s is free: starting\n", name);
    kg_lock_note_worker(fd, 0);
    *fd_out = fd;
    return KG_OK;
}

void kg_lock_release(int fd)
{
    if (fd < 0) return;
    flock(fd, LOCK_UN);
    close(fd);
}

/* lock.c: one exclusive lock per device, held for a whole campaign.
 *
 * Two campaigns timing on the same device disturb each other, so each
 * takes flock(LOCK_EX) on a file named after its device in the lock
 * folder (the settings' lock_dir, KGATE_LOCK_DIR; default
 * /tmp/kgate-locks).  The holder writes
 * its pid into the file so that a waiting campaign can say who holds it.
 * The lock is released by the kernel when the last descriptor closes:
 * a killed campaign never leaves a stale lock, and a worker orphaned by a
 * killed supervisor (it inherits the descriptor) holds the device until
 * it ends.
 *
 * This file does not decide what a device is: kg_lock_name asks the
 * backend registry for the name of a backend's device. */
#include <errno.h>
#include <fcntl.h>
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

static void holder_of(int fd, char *buf, size_t cap)
{
    char text[32] = "";
    ssize_t n = pread(fd, text, sizeof text - 1, 0);
    text[n > 0 ? n : 0] = '\0';
    text[strcspn(text, "\r\n")] = '\0';
    snprintf(buf, cap, "%s", text[0] ? text : "unknown");
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
        char holder[32];
        holder_of(fd, holder, sizeof holder);
        double waited = kg_mono_s() - t0;
        if (timeout_s >= 0 && waited >= timeout_s) {
            close(fd);
            return kg_errorf(err, KG_EIO, "device %s is in use by another campaign (pid %s, lock %s); gave up after "
                             "--lock-timeout %.0f s: wait for it to end or raise the timeout", name, holder, path,
                             timeout_s);
        }
        if (!said) {
            fprintf(stderr, "kgate: device %s is in use by another campaign (pid %s, lock %s): waiting%s\n", name,
                    holder, path, timeout_s >= 0 ? " (--lock-timeout)" : "");
            said = 1;
        }
        struct timespec ts = { 0, 100 * 1000 * 1000 };
        nanosleep(&ts, NULL);
    }
    if (said) fprintf(stderr, "kgate: device %s is free: starting\n", name);
    char pid[32];
    int n = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
    if (ftruncate(fd, 0) == 0 && pwrite(fd, pid, (size_t)n, 0) != n) { /* the pid is a courtesy only */ }
    *fd_out = fd;
    return KG_OK;
}

void kg_lock_release(int fd)
{
    if (fd < 0) return;
    flock(fd, LOCK_UN);
    close(fd);
}

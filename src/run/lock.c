/* lock.c: one exclusive lock per device, held for a whole campaign.
 *
 * Two campaigns timing on the same device disturb each other, so each
 * takes flock(LOCK_EX) on a file named after its device in the lock
 * folder: the settings' lock_dir (KGATE_LOCK_DIR) when set; for a device
 * every user of the host shares (a GPU), /tmp/kgate-locks, shared by the
 * host's users, mode 1777; else the user's own folder
 * ($XDG_RUNTIME_DIR/kgate, or kgate-locks-UID in the temporary folder,
 * mode 0700), so that another user's campaign on the host's CPUs never
 * holds up this user's (the host watch sees its load instead).  A lock file
 * is created with O_EXCL|O_NOFOLLOW, mode 0644, and an existing one is
 * opened with O_NOFOLLOW, read-only when this user may not write it:
 * flock needs no write access, so campaigns of several users exclude each
 * other and a read-only lock folder works.  A link, a special file or a
 * file with several links is refused; a file is never truncated or
 * chmod'ed unless this campaign just created it.  The holder writes
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
#include "run/lock.h"
#include "kgate/backend.h"
#include "base/util.h"
#include "base/safefs.h"

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

/* The pid record is written only into a lock file this user owns, with one
 * link, opened for writing: never into another user's file, and never
 * truncated (a fixed-size record padded with newlines overwrites the
 * last one in place). */
enum { NOTE_LEN = 64 };

static int may_note(int fd)
{
    struct stat st;
    int fl = fcntl(fd, F_GETFL);
    return fl >= 0 && (fl & O_ACCMODE) == O_RDWR && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
           st.st_uid == geteuid() && st.st_nlink == 1;
}

void kg_lock_note_worker(int fd, long pid)
{
    if (fd < 0 || !may_note(fd)) return;
    char text[NOTE_LEN + 1];
    int n = pid > 0 ? snprintf(text, sizeof text, "%ld\nworker %ld\n", (long)getpid(), pid)
                    : snprintf(text, sizeof text, "%ld\n", (long)getpid());
    if (n < 0 || n > NOTE_LEN) return;
    memset(text + n, '\n', (size_t)(NOTE_LEN - n));
    /* the pids are a courtesy for whoever waits: failures are ignored */
    if (pwrite(fd, text, NOTE_LEN, 0) != NOTE_LEN) { }
}

#define DEFAULT_LOCK_DIR "/tmp/kgate-locks"

/* The lock folder: a folder, not a link, and not one that anyone may
 * write without the sticky bit (where anyone could replace a lock file).
 * The shared default is created mode 1777; when it is unusable a
 * campaign falls back to a folder of its user's (so a folder planted by
 * another user denies no one), and says so. */
static int lock_dir_ok(const char *dir, int shared, char *why, size_t cap)
{
    struct stat st;
    if (lstat(dir, &st) != 0) {
        snprintf(why, cap, "%s", strerror(errno));
        return 0;
    }
    if (!S_ISDIR(st.st_mode)) {
        snprintf(why, cap, "%s, not a folder", kg_file_kind(st.st_mode));
        return 0;
    }
    if ((st.st_mode & S_IWOTH) && !(st.st_mode & S_ISVTX)) {
        snprintf(why, cap, "anyone may write it and it has no sticky bit (anyone could replace a lock file)");
        return 0;
    }
    /* the shared default, made by another user: only as a folder of mode 1777 */
    if (shared && st.st_uid != geteuid() && st.st_uid != 0 && (st.st_mode & 01002) != 01002) {
        snprintf(why, cap, "made by uid %ld with mode %04o, not a shared folder of mode 1777", (long)st.st_uid,
                 (unsigned)(st.st_mode & 07777));
        return 0;
    }
    return 1;
}

/* The user's own lock folder: one this user made (mode 0700), never a
 * link, and refused when another user made it or others may write it (a
 * folder planted by another user must not hold this user's locks). */
static int own_dir_prepare(const char *dir, kg_err *err)
{
    if (mkdir(dir, 0700) != 0 && errno != EEXIST)
        return kg_errorf(err, KG_EIO, "%s: cannot create the lock folder: %s (set KGATE_LOCK_DIR to a folder of "
                         "yours)", dir, strerror(errno));
    struct stat st;
    if (lstat(dir, &st) != 0)
        return kg_errorf(err, KG_EIO, "lock folder %s: %s (set KGATE_LOCK_DIR to a folder of yours)", dir,
                         strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return kg_errorf(err, KG_EUSAGE, "lock folder %s is %s, not a folder: remove it, or set KGATE_LOCK_DIR to a "
                         "folder of yours", dir, kg_file_kind(st.st_mode));
    if (st.st_uid != geteuid())
        return kg_errorf(err, KG_EUSAGE, "lock folder %s belongs to uid %ld, not to this user (uid %ld): another user "
                         "made it; remove it, or set KGATE_LOCK_DIR to a folder of yours", dir, (long)st.st_uid,
                         (long)geteuid());
    if (st.st_mode & 022)
        return kg_errorf(err, KG_EUSAGE, "lock folder %s has mode %04o: others may write it (anyone could replace a "
                         "lock file); chmod 700 it, or set KGATE_LOCK_DIR", dir, (unsigned)(st.st_mode & 07777));
    return KG_OK;
}

void kg_lock_dir_of(const kg_settings *s, int shared, char *dir, size_t cap)
{
    if (s == NULL) s = kg_settings_defaults();
    if (s->lock_dir != NULL && s->lock_dir[0] != '\0') snprintf(dir, cap, "%s", s->lock_dir);
    else if (shared) snprintf(dir, cap, "%s", DEFAULT_LOCK_DIR);
    else if (s->runtime_dir != NULL && s->runtime_dir[0] == '/') snprintf(dir, cap, "%s/kgate", s->runtime_dir);
    else snprintf(dir, cap, "%s/kgate-locks-%ld", s->tmp_dir != NULL && s->tmp_dir[0] == '/' ? s->tmp_dir : "/tmp",
                  (long)geteuid());
}

static int lock_dir_prepare(const kg_settings *s, int shared, char *dir, size_t cap, kg_err *err)
{
    const char *want = s != NULL ? s->lock_dir : NULL;
    char why[200];
    kg_lock_dir_of(s, shared, dir, cap);
    if (want != NULL && want[0] != '\0') {
        int rc = kg_mkdir_p(dir, err);
        if (rc != KG_OK) return rc;
        if (!lock_dir_ok(dir, 0, why, sizeof why))
            return kg_errorf(err, KG_EUSAGE, "lock folder %s: %s: choose another with KGATE_LOCK_DIR", dir, why);
        return KG_OK;
    }
    if (!shared) return own_dir_prepare(dir, err);
    /* several users share the default folder: sticky, each lock file its creator's */
    if (mkdir(dir, 0755) == 0) (void)chmod(dir, 01777);
    if (lock_dir_ok(dir, 1, why, sizeof why)) return KG_OK;
    char mine[64];
    snprintf(mine, sizeof mine, "%s-%ld", DEFAULT_LOCK_DIR, (long)geteuid());
    fprintf(stderr, "kgate: the shared lock folder %s is unusable (%s): using %s, which keeps out only this user's "
            "campaigns; ask the administrator to make %s a folder of mode 1777\n", dir, why, mine, dir);
    snprintf(dir, cap, "%s", mine);
    return own_dir_prepare(dir, err);
}

/* Opens the lock file path: created new (O_EXCL, 0644, so that others may
 * open it read-only to lock) or an existing one opened without following a
 * link, read-write when it may be, else read-only (flock needs no write
 * access: a read-only lock folder works).  Returns the descriptor, -1 when
 * the file exists but this user may not open it at all, or a KG_E* code
 * below -1. */
static int open_lock_file(const char *path, kg_err *err)
{
    /* no O_CLOEXEC: workers inherit the lock on purpose */
    int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_NONBLOCK, 0644);
    if (fd >= 0) {
        (void)fchmod(fd, 0644); /* the umask may have taken read access from others */
        return fd;
    }
    if (errno != EEXIST) {
        int e = errno;
        return kg_errorf(err, KG_EIO, "%s: cannot create the device lock: %s%s", path, strerror(e),
                         e == EROFS || e == EACCES ? " (a lock folder that may only be read needs the lock file "
                                                     "to exist already)" : "");
    }
    fd = open(path, O_RDWR | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0 && (errno == EACCES || errno == EROFS || errno == EPERM))
        fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0) {
        int e = errno;
        if (e == ELOOP)
            return kg_errorf(err, KG_EINPUT, "%s: a symbolic link: a device lock is never followed; remove it", path);
        if (e == EACCES) return -1;
        return kg_errorf(err, KG_EIO, "%s: cannot open the device lock: %s", path, strerror(e));
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1) {
        int reg = S_ISREG(st.st_mode);
        close(fd);
        return kg_errorf(err, KG_EINPUT, "%s: %s: a device lock is a regular file with one link; remove it", path,
                         reg ? "a file with more than one (hard) link" : kg_file_kind(st.st_mode));
    }
    return fd;
}

int kg_lock_acquire(const kg_settings *s, const char *name, int shared, double timeout_s, int live, int *fd_out,
                    kg_err *err)
{
    char dir[KG_PATH_MAX], path[KG_PATH_MAX + 200];
    *fd_out = -1;
    int rc = lock_dir_prepare(s, shared, dir, sizeof dir, err);
    if (rc != KG_OK) return rc;
    snprintf(path, sizeof path, "%s/%s.lock", dir, name);
    int fd = open_lock_file(path, err);
    if (fd == -1) {
        /* not a lock file of kgate's (they are readable by all): one this user
         * may not even read must not deny every campaign */
        struct stat st;
        long owner = lstat(path, &st) == 0 ? (long)st.st_uid : -1;
        char alt[KG_PATH_MAX + 120];
        snprintf(alt, sizeof alt, "%s/%s.uid-%ld.lock", dir, name, (long)geteuid());
        fprintf(stderr, "kgate: %s (owner uid %ld) may not be read by this user, so it is not a kgate lock: using %s, "
                "which keeps out only this user's campaigns; ask its owner or the administrator to remove it\n",
                path, owner, alt);
        snprintf(path, sizeof path, "%s", alt);
        fd = open_lock_file(path, err);
        if (fd == -1) return kg_errorf(err, KG_EIO, "%s: cannot open the device lock: %s", path, strerror(EACCES));
    }
    if (fd < 0) return fd;
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0) (void)fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
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
        if (live) {
            /* one line, rewritten in place, with the time waited */
            fprintf(stderr, "\r\033[Kkgate: device %s is in use by %s: waiting %.0f s%s (lock %s)", name, holder, waited,
                    timeout_s >= 0 ? " (--lock-timeout)" : "", path);
            fflush(stderr);
            said = 1;
        } else if (!said) {
            fprintf(stderr, "kgate: device %s is in use by %s (lock %s): waiting%s\n", name, holder, path,
                    timeout_s >= 0 ? " (--lock-timeout)" : "");
            said = 1;
        }
        struct timespec ts = { 0, 100 * 1000 * 1000 };
        nanosleep(&ts, NULL);
    }
    if (said && live) fprintf(stderr, "\r\033[K");
    else if (said) fprintf(stderr, "kgate: device %s is free: starting\n", name);
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

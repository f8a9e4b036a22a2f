/* lock.h: one lock per device for the whole campaign (lock.c). */
#ifndef KGATE_LOCK_H
#define KGATE_LOCK_H

#include "kgate/err.h"
#include "kgate/settings.h"
#include <stddef.h>

/* Lock file name for a backend and its description: "cpu", "fake", or
 * the GPU UUID found in the description ("gpu" when there is none). */
void kg_lock_name(const char *backend, const char *device, char *buf, size_t cap);

/* Takes the exclusive lock LOCK_DIR/NAME.  LOCK_DIR is s->lock_dir
 * (KGATE_LOCK_DIR; s may be NULL) when set; else, for a device every user
 * of the host shares (shared = 1: a GPU), the machine-wide
 * /tmp/kgate-locks; else the user's own folder: $XDG_RUNTIME_DIR/kgate,
 * or without it kgate-locks-UID in the temporary folder ($TMPDIR, else
 * /tmp), made mode 0700 and refused when it is a link, not a folder, not
 * the user's, or writable by others.  While another campaign holds the
 * lock, says so on stderr (live: one line updated in place with the time
 * waited, else once) and waits; with timeout_s >= 0 gives up after that
 * long with an error naming the holder.  *fd receives the open lock
 * file: it is inherited by worker processes, so a worker orphaned by a
 * killed supervisor keeps the device locked until it ends. */
int kg_lock_acquire(const kg_settings *s, const char *name, int shared, double timeout_s, int live, int *fd,
                    kg_err *err);
/* The folder kg_lock_acquire uses for these settings and scope, into dir
 * (nothing is created). */
void kg_lock_dir_of(const kg_settings *s, int shared, char *dir, size_t cap);
void kg_lock_release(int fd); /* -1 is ignored */
/* Records in the lock file (fd from kg_lock_acquire) the pid of the
 * worker that now runs (0: none), so that a campaign waiting for the
 * lock can name an orphaned worker. */
void kg_lock_note_worker(int fd, long pid);

#endif

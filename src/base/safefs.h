/* safefs.h: what kgate reads from a folder, and how (safefs.c).
 *
 * An evidence folder holds regular files and folders only.  Readers
 * refuse a symbolic link (never followed), a FIFO, a socket or a device
 * node with a message naming it; they open a file with O_NONBLOCK and
 * check with fstat that it is a regular file before they read, so nothing
 * blocks, and every whole-file read has a size cap. */
#ifndef KGATE_SAFEFS_H
#define KGATE_SAFEFS_H

#include <stddef.h>
#include <sys/types.h>
#include "kgate/err.h"

/* Size caps of whole-file reads, in bytes: text files (CSV, JSON, plans,
 * logs) and saved outputs (outputs/proc-NNN.bin). */
#define KG_CAP_TEXT ((size_t)256 << 20)
#define KG_CAP_BIN ((size_t)4 << 30)

/* "a symbolic link", "a FIFO", "a socket", "a character device", ... */
const char *kg_file_kind(mode_t mode);

/* Walks the folder dir (itself given by the user, so followed when it is
 * a link) through descriptors, never following a link: KG_OK when every
 * entry below it is a regular file or a folder, else an error naming the
 * first other entry, relative to dir. */
int kg_folder_check(const char *dir, kg_err *err);

/* Opens path for reading, O_NONBLOCK (and O_NOFOLLOW when nofollow is
 * set), and checks with fstat that it is a regular file of at most cap
 * bytes (0: no cap).  Returns the descriptor, or a negative KG_E* code;
 * *size receives its size. */
int kg_open_regular(const char *path, int nofollow, size_t cap, size_t *size, kg_err *err);

/* kg_read_file with a cap: files larger than cap bytes are refused. */
int kg_read_file_cap(const char *path, size_t cap, char **data, size_t *len, kg_err *err);

/* Opens the folder name under dirfd (AT_FDCWD: the working folder) with
 * O_DIRECTORY|O_NOFOLLOW, creating it first when create is set.  Returns
 * the descriptor, or a negative KG_E* code. */
int kg_open_dir(int dirfd, const char *name, int create, kg_err *err);

/* Creates (or truncates) the regular file sub/name under the folder
 * dirfd for writing, the subfolder created when missing: neither is
 * followed when it is a link, and a FIFO or device is refused.  shown:
 * the path for messages.  Returns the descriptor (O_CLOEXEC), or a
 * negative KG_E* code. */
int kg_create_at(int dirfd, const char *sub, const char *name, const char *shown, kg_err *err);

/* Checks the folder -o names before a campaign writes into it: a link or a
 * file that is not a folder is refused; an existing folder must be empty
 * unless resume is set, and then hold regular files and folders only. */
int kg_outdir_check(const char *dir, int resume, kg_err *err);

#endif

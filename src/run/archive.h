/* archive.h: DIR.tar.gz of an evidence folder (archive.c). */
#ifndef KGATE_ARCHIVE_H
#define KGATE_ARCHIVE_H

#include "kgate/err.h"
#include <stddef.h>

/* Writes DIR.tar.gz (next to the folder) with libarchive loaded at run
 * time; a missing libarchive is a clear error. */
int kg_archive_write(const char *dir, char *out_path, size_t cap, kg_err *err);

#endif

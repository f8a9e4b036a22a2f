/* archive.c: DIR.tar.gz of an evidence folder, with libarchive.
 *
 * libarchive is loaded at run time (dlopen "libarchive.so.13") because
 * GPU nodes often lack it: a campaign never depends on it, and a missing
 * library is one clear error.  The archive is written next to the folder
 * (it cannot be listed in the folder's own SHA256SUMS), through a
 * temporary name and a rename.  Entries are sorted, with fixed owner,
 * mode and time, so the same folder gives the same archive.
 *
 * This file does not read archives back: `tar xzf` does. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>
#include "run/archive.h"
#include "kgate/evidence.h"
#include "base/safefs.h"
#include "base/util.h"

/* The few libarchive entry points used, by their documented signatures. */
typedef struct la_api {
    void *(*write_new)(void);
    int (*add_filter_gzip)(void *);
    int (*set_format_pax_restricted)(void *);
    int (*open_filename)(void *, const char *);
    int (*write_header)(void *, void *);
    ssize_t (*write_data)(void *, const void *, size_t);
    int (*write_close)(void *);
    int (*write_free)(void *);
    const char *(*error_string)(void *);
    void *(*entry_new)(void);
    void (*entry_free)(void *);
    void (*entry_set_pathname)(void *, const char *);
    void (*entry_set_size)(void *, int64_t);
    void (*entry_set_filetype)(void *, unsigned int);
    void (*entry_set_perm)(void *, unsigned int);
    void (*entry_set_mtime)(void *, time_t, long);
} la_api;

#define LA_OK 0
#define LA_AE_IFREG 0100000u

static int la_load(void **h, la_api *a, kg_err *err)
{
    *h = dlopen("libarchive.so.13", RTLD_NOW | RTLD_LOCAL);
    if (*h == NULL)
        return kg_errorf(err, KG_EUNSUPPORTED, "--archive needs libarchive (libarchive.so.13, Debian package "
                         "libarchive13) and this host has none: %s; the evidence folder itself is complete", dlerror());
    struct { void **slot; const char *name; } syms[] = {
        { (void **)&a->write_new, "archive_write_new" },
        { (void **)&a->add_filter_gzip, "archive_write_add_filter_gzip" },
        { (void **)&a->set_format_pax_restricted, "archive_write_set_format_pax_restricted" },
        { (void **)&a->open_filename, "archive_write_open_filename" },
        { (void **)&a->write_header, "archive_write_header" },
        { (void **)&a->write_data, "archive_write_data" },
        { (void **)&a->write_close, "archive_write_close" },
        { (void **)&a->write_free, "archive_write_free" },
        { (void **)&a->error_string, "archive_error_string" },
        { (void **)&a->entry_new, "archive_entry_new" },
        { (void **)&a->entry_free, "archive_entry_free" },
        { (void **)&a->entry_set_pathname, "archive_entry_set_pathname" },
        { (void **)&a->entry_set_size, "archive_entry_set_size" },
        { (void **)&a->entry_set_filetype, "archive_entry_set_filetype" },
        { (void **)&a->entry_set_perm, "archive_entry_set_perm" },
        { (void **)&a->entry_set_mtime, "archive_entry_set_mtime" },
    };
    for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++) {
        *syms[i].slot = dlsym(*h, syms[i].name);
        if (*syms[i].slot == NULL)
            return kg_errorf(err, KG_EUNSUPPORTED, "libarchive.so.13 lacks %s: too old for --archive", syms[i].name);
    }
    return KG_OK;
}

int kg_archive_write(const char *dir, char *out_path, size_t cap, kg_err *err)
{
    void *h = NULL, *ar = NULL;
    la_api a = { 0 };
    char **files = NULL, tmp[KG_PATH_MAX + 64], base[KG_PATH_MAX];
    int n = 0, rc;
    char *data = NULL;
    snprintf(base, sizeof base, "%s", dir);
    size_t bl = strlen(base);
    while (bl > 1 && base[bl - 1] == '/') base[--bl] = '\0';
    const char *name = strrchr(base, '/') ? strrchr(base, '/') + 1 : base;
    snprintf(out_path, cap, "%s.tar.gz", base);
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", out_path, (long)getpid());
    if ((rc = la_load(&h, &a, err)) != KG_OK) goto done;
    if ((rc = kg_evidence_list(dir, &files, &n, err)) != KG_OK) goto done;
    ar = a.write_new();
    if (ar == NULL) { rc = kg_errorf(err, KG_ENOMEM, "libarchive: out of memory"); goto done; }
    if (a.add_filter_gzip(ar) != LA_OK || a.set_format_pax_restricted(ar) != LA_OK || a.open_filename(ar, tmp) != LA_OK) {
        rc = kg_errorf(err, KG_EIO, "%s: %s", tmp, a.error_string(ar));
        goto done;
    }
    for (int i = 0; i < n; i++) {
        char path[KG_PATH_MAX * 3], entry_name[KG_PATH_MAX * 3];
        size_t len;
        snprintf(path, sizeof path, "%s/%s", dir, files[i]);
        if ((rc = kg_read_file_cap(path, KG_CAP_BIN, &data, &len, err)) != KG_OK) goto done;
        snprintf(entry_name, sizeof entry_name, "%s/%s", name, files[i]);
        void *e = a.entry_new();
        if (e == NULL) { rc = kg_errorf(err, KG_ENOMEM, "libarchive: out of memory"); goto done; }
        a.entry_set_pathname(e, entry_name);
        a.entry_set_size(e, (int64_t)len);
        a.entry_set_filetype(e, LA_AE_IFREG);
        a.entry_set_perm(e, 0644);
        a.entry_set_mtime(e, 0, 0);
        int hr = a.write_header(ar, e);
        a.entry_free(e);
        if (hr != LA_OK || (len > 0 && a.write_data(ar, data, len) != (ssize_t)len)) {
            rc = kg_errorf(err, KG_EIO, "%s: %s", tmp, a.error_string(ar));
            goto done;
        }
        free(data);
        data = NULL;
    }
    if (a.write_close(ar) != LA_OK) { rc = kg_errorf(err, KG_EIO, "%s: %s", tmp, a.error_string(ar)); goto done; }
    if (rename(tmp, out_path) != 0) rc = kg_errorf(err, KG_EIO, "%s: cannot rename to %s", tmp, out_path);
done:
    if (ar != NULL) a.write_free(ar);
    if (rc != KG_OK) unlink(tmp);
    free(data);
    for (int i = 0; i < n; i++) free(files[i]);
    free(files);
    if (h != NULL) dlclose(h);
    return rc;
}

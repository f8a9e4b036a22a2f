/* safefs.c: see safefs.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "base/safefs.h"

enum { WALK_DEPTH_MAX = 16 };

const char *kg_file_kind(mode_t mode)
{
    if (S_ISLNK(mode)) return "a symbolic link";
    if (S_ISFIFO(mode)) return "a FIFO";
    if (S_ISSOCK(mode)) return "a socket";
    if (S_ISCHR(mode)) return "a character device";
    if (S_ISBLK(mode)) return "a block device";
    if (S_ISDIR(mode)) return "a folder";
    if (S_ISREG(mode)) return "a regular file";
    return "not a regular file";
}

static int refuse(kg_err *err, const char *dir, const char *rel, mode_t mode)
{
    return kg_errorf(err, KG_EINPUT, "%s/%s: %s: kgate reads only regular files and folders in an evidence folder "
                     "(links are never followed): remove it or put back the file it replaced", dir, rel,
                     kg_file_kind(mode));
}

static int walk_fd(int fd, const char *dir, const char *rel, int depth, kg_err *err)
{
    if (depth > WALK_DEPTH_MAX)
        return kg_errorf(err, KG_EINPUT, "%s/%s: folders nested more than %d deep: not an evidence folder", dir, rel,
                         WALK_DEPTH_MAX);
    int lfd = dup(fd);
    DIR *d = lfd >= 0 ? fdopendir(lfd) : NULL;
    if (d == NULL) {
        if (lfd >= 0) close(lfd);
        return kg_errorf(err, KG_EIO, "%s%s%s: cannot list: %s", dir, rel[0] ? "/" : "", rel, strerror(errno));
    }
    int rc = KG_OK;
    struct dirent *e;
    while (rc == KG_OK && (e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        char sub[4096];
        if (snprintf(sub, sizeof sub, "%s%s%s", rel, rel[0] ? "/" : "", e->d_name) >= (int)sizeof sub) {
            rc = kg_errorf(err, KG_EINPUT, "%s/%s...: path too long", dir, rel);
            break;
        }
        struct stat st;
        if (fstatat(fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
            rc = kg_errorf(err, KG_EIO, "%s/%s: %s", dir, sub, strerror(errno));
            break;
        }
        if (S_ISREG(st.st_mode)) continue;
        if (!S_ISDIR(st.st_mode)) {
            rc = refuse(err, dir, sub, st.st_mode);
            break;
        }
        int sfd = openat(fd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (sfd < 0) {
            rc = errno == ELOOP || errno == ENOTDIR ? refuse(err, dir, sub, S_IFLNK)
                                                    : kg_errorf(err, KG_EIO, "%s/%s: %s", dir, sub, strerror(errno));
            break;
        }
        rc = walk_fd(sfd, dir, sub, depth + 1, err);
        close(sfd);
    }
    closedir(d);
    return rc;
}

int kg_folder_check(const char *dir, kg_err *err)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return kg_errorf(err, KG_EIO, "%s: cannot open the folder: %s", dir, strerror(errno));
    int rc = walk_fd(fd, dir, "", 0, err);
    close(fd);
    return rc;
}

int kg_open_regular(const char *path, int nofollow, size_t cap, size_t *size, kg_err *err)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY | (nofollow ? O_NOFOLLOW : 0));
    if (fd < 0) {
        if (nofollow && errno == ELOOP)
            return kg_errorf(err, KG_EINPUT, "%s: a symbolic link: refused (never followed)", path);
        return kg_errorf(err, KG_EIO, "%s: %s", path, strerror(errno));
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return kg_errorf(err, KG_EIO, "%s: %s", path, strerror(e));
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return kg_errorf(err, KG_EINPUT, "%s: %s, not a regular file: refused (nothing read)", path,
                         kg_file_kind(st.st_mode));
    }
    if (cap > 0 && (unsigned long long)st.st_size > (unsigned long long)cap) {
        close(fd);
        return kg_errorf(err, KG_EINPUT, "%s: %lld bytes, more than the %zu MiB kgate reads from a file of this kind: "
                         "refused", path, (long long)st.st_size, cap >> 20);
    }
    /* a regular file never blocks; reads see EOF at its end */
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0) (void)fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    if (size != NULL) *size = (size_t)st.st_size;
    return fd;
}

int kg_read_file_cap(const char *path, size_t cap, char **data, size_t *len, kg_err *err)
{
    *data = NULL;
    if (len != NULL) *len = 0;
    size_t size = 0;
    int fd = kg_open_regular(path, 0, cap, &size, err);
    if (fd < 0) return fd;
    /* the file may grow while read: never past the cap */
    size_t room = size + 1, n = 0;
    char *buf = malloc(room + 1);
    int rc = KG_OK;
    if (buf == NULL) { rc = kg_errorf(err, KG_ENOMEM, "%s: out of memory", path); goto done; }
    for (;;) {
        if (n == room) {
            if (cap > 0 && room > cap) {
                rc = kg_errorf(err, KG_EINPUT, "%s: grew past the %zu MiB kgate reads from a file of this kind: "
                               "refused", path, cap >> 20);
                goto done;
            }
            size_t nroom = room * 2;
            char *p = realloc(buf, nroom + 1);
            if (p == NULL) { rc = kg_errorf(err, KG_ENOMEM, "%s: out of memory", path); goto done; }
            buf = p;
            room = nroom;
        }
        ssize_t got = read(fd, buf + n, room - n);
        if (got < 0) {
            if (errno == EINTR) continue;
            rc = kg_errorf(err, KG_EIO, "%s: read error: %s", path, strerror(errno));
            goto done;
        }
        if (got == 0) break;
        n += (size_t)got;
    }
    buf[n] = '\0';
    *data = buf;
    buf = NULL;
    if (len != NULL) *len = n;
done:
    free(buf);
    close(fd);
    return rc;
}

int kg_outdir_check(const char *dir, int resume, kg_err *err)
{
    struct stat st;
    if (lstat(dir, &st) != 0) {
        if (errno == ENOENT) return KG_OK; /* created by the campaign */
        return kg_errorf(err, KG_EIO, "%s: %s", dir, strerror(errno));
    }
    if (!S_ISDIR(st.st_mode))
        return kg_errorf(err, KG_EUSAGE, "%s is not a folder (it is %s): name a new or empty folder with -o", dir,
                         kg_file_kind(st.st_mode));
    if (resume) return kg_folder_check(dir, err);
    DIR *d = opendir(dir);
    if (d == NULL) return kg_errorf(err, KG_EIO, "%s: cannot list: %s", dir, strerror(errno));
    struct dirent *e;
    char first[256] = "";
    while ((e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) {
            snprintf(first, sizeof first, "%s", e->d_name);
            break;
        }
    closedir(d);
    if (first[0] != '\0')
        return kg_errorf(err, KG_EUSAGE, "%s is not empty (it holds %s): its files would join the evidence; name a "
                         "new or empty folder with -o, or --resume the campaign in it", dir, first);
    return KG_OK;
}

int kg_open_dir(int dirfd, const char *name, int create, kg_err *err)
{
    if (create && mkdirat(dirfd, name, 0755) != 0 && errno != EEXIST)
        return kg_errorf(err, KG_EIO, "%s: cannot create folder: %s", name, strerror(errno));
    int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return kg_errorf(err, KG_EIO, "%s: cannot open the folder (a link or not a folder?): %s", name,
                         strerror(errno));
    return fd;
}

int kg_create_at(int dirfd, const char *sub, const char *name, const char *shown, kg_err *err)
{
    int sfd = kg_open_dir(dirfd, sub, 1, err);
    if (sfd < 0) return sfd;
    int fd = openat(sfd, name, O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY, 0644);
    int e = errno;
    close(sfd);
    if (fd < 0)
        return kg_errorf(err, KG_EIO, "%s: cannot create%s: %s", shown, e == ELOOP ? " (a symbolic link)" : "",
                         strerror(e));
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_nlink > 1) {
        int reg = S_ISREG(st.st_mode);
        close(fd);
        return kg_errorf(err, KG_EIO, "%s: %s: refused (never written through)", shown,
                         reg ? "a file with more than one (hard) link" : kg_file_kind(st.st_mode));
    }
    if (ftruncate(fd, 0) != 0) {
        e = errno;
        close(fd);
        return kg_errorf(err, KG_EIO, "%s: cannot truncate: %s", shown, strerror(e));
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0) (void)fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    return fd;
}

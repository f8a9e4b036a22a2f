/* util.c: see util.h. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <openssl/evp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <zlib.h>
#include <unistd.h>
#include "base/util.h"
#include <signal.h>

/* room for n more bytes and a NUL; 0 when the buffer cannot grow */
static int sb_room(kg_sb *sb, size_t n)
{
    if (sb->oom) return 0;
    size_t need = sb->len + n + 1;
    if (need <= sb->cap) return 1;
    size_t cap = sb->cap ? sb->cap : 256;
    while (cap < need) cap *= 2;
    char *p = realloc(sb->buf, cap);
    if (p == NULL) {
        sb->oom = 1;
        return 0;
    }
    sb->buf = p;
    sb->cap = cap;
    return 1;
}

/* formatted straight into the free space; a second pass only when it did not fit */
void kg_sb_vprintf(kg_sb *sb, const char *fmt, va_list ap)
{
    if (sb->oom) return;
    va_list ap2;
    va_copy(ap2, ap);
    size_t avail = sb->cap - sb->len;
    int n = vsnprintf(sb->buf != NULL ? sb->buf + sb->len : NULL, sb->buf != NULL ? avail : 0, fmt, ap2);
    va_end(ap2);
    if (n < 0) { sb->oom = 1; return; }
    if (sb->buf == NULL || (size_t)n >= avail) {
        if (!sb_room(sb, (size_t)n)) return;
        vsnprintf(sb->buf + sb->len, sb->cap - sb->len, fmt, ap);
    }
    sb->len += (size_t)n;
}

void kg_sb_printf(kg_sb *sb, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    kg_sb_vprintf(sb, fmt, ap);
    va_end(ap);
}

void kg_sb_putn(kg_sb *sb, const char *s, size_t n)
{
    if (!sb_room(sb, n)) return;
    memcpy(sb->buf + sb->len, s, n);
    sb->len += n;
    sb->buf[sb->len] = '\0';
}

void kg_sb_puts(kg_sb *sb, const char *s)
{
    kg_sb_putn(sb, s, strlen(s));
}

void kg_sb_free(kg_sb *sb)
{
    free(sb->buf);
    sb->buf = NULL;
    sb->len = sb->cap = 0;
    sb->oom = 0;
}

size_t kg_fmt_int(char out[KG_FMT_CAP], long long v)
{
    char tmp[24];
    size_t n = 0, k = 0;
    unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
    do {
        tmp[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u != 0);
    if (v < 0) out[k++] = '-';
    while (n > 0) out[k++] = tmp[--n];
    out[k] = '\0';
    return k;
}

/* %.3f: the integer N nearest to |v| x 1000, ties to even, as glibc's
 * exact conversion rounds.  On 1 <= |v| < 2^41 the product's error
 * r = |v| x 1000 - n against n, the nearest integer to the rounded
 * product, is a multiple of 2^(e-49) (e = the exponent of |v|, 1000 =
 * 125 x 8) smaller than 1 in magnitude, so it has at most 50 significant
 * bits and fma gives it exactly; anything else goes to snprintf. */
size_t kg_fmt_f3(char out[KG_FMT_CAP], double v)
{
    double a = fabs(v);
    if (!(a >= 1.0 && a < 2199023255552.0))   /* 2^41; NaN too */
        return (size_t)snprintf(out, KG_FMT_CAP, "%.3f", v);
    double n = nearbyint(a * 1000.0);
    double r = fma(a, 1000.0, -n);
    long long q = (long long)n;
    if (r > 0.5 || (r == 0.5 && (q & 1))) q++;
    else if (r < -0.5 || (r == -0.5 && (q & 1))) q--;
    size_t k = 0;
    if (v < 0) out[k++] = '-';
    k += kg_fmt_int(out + k, q / 1000);
    int f = (int)(q % 1000);
    out[k++] = '.';
    out[k++] = (char)('0' + f / 100);
    out[k++] = (char)('0' + f / 10 % 10);
    out[k++] = (char)('0' + f % 10);
    out[k] = '\0';
    return k;
}

int kg_gzip(const void *data, size_t len, char **out, size_t *outlen, kg_err *err)
{
    *out = NULL;
    *outlen = 0;
    z_stream z;
    memset(&z, 0, sizeof z);
    /* windowBits 15 + 16: a gzip member, its header's time and name left empty */
    if (deflateInit2(&z, Z_BEST_SPEED, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return kg_errorf(err, KG_ENOMEM, "out of memory compressing %zu bytes", len);
    size_t cap = deflateBound(&z, (uLong)len);
    char *buf = malloc(cap > 0 ? cap : 1);
    int rc = KG_OK;
    if (buf == NULL || len > UINT32_MAX || cap > UINT32_MAX) {
        rc = kg_errorf(err, KG_ENOMEM, "out of memory compressing %zu bytes", len);
    } else {
        z.next_in = (Bytef *)(uintptr_t)data;
        z.avail_in = (uInt)len;
        z.next_out = (Bytef *)buf;
        z.avail_out = (uInt)cap;
        if (deflate(&z, Z_FINISH) != Z_STREAM_END) rc = kg_errorf(err, KG_EINTERNAL, "gzip: the output did not fit");
    }
    if (rc == KG_OK) {
        *out = buf;
        *outlen = cap - z.avail_out;
    } else {
        free(buf);
    }
    deflateEnd(&z);
    return rc;
}

int kg_gunzip(const char *name, const void *data, size_t len, size_t cap, char **out, size_t *outlen, kg_err *err)
{
    *out = NULL;
    *outlen = 0;
    z_stream z;
    memset(&z, 0, sizeof z);
    if (len > UINT32_MAX) return kg_errorf(err, KG_EINPUT, "%s: too large to read", name);
    if (inflateInit2(&z, 15 + 16) != Z_OK) return kg_errorf(err, KG_ENOMEM, "out of memory reading %s", name);
    size_t have = 0, size = len < (cap / 8) ? len * 8 + 64 : cap;
    char *buf = NULL;
    int rc = KG_OK, zr = Z_OK;
    z.next_in = (Bytef *)(uintptr_t)data;
    z.avail_in = (uInt)len;
    while (rc == KG_OK && zr != Z_STREAM_END) {
        if (buf == NULL || have == size) {
            if (buf != NULL && size >= cap) {
                rc = kg_errorf(err, KG_EINPUT, "%s: more than %zu bytes once decompressed (the cap on text)", name, cap);
                break;
            }
            size_t next = buf == NULL ? size : (size > cap / 2 ? cap : size * 2);
            char *p = realloc(buf, next + 1);
            if (p == NULL) {
                rc = kg_errorf(err, KG_ENOMEM, "out of memory reading %s", name);
                break;
            }
            buf = p;
            size = next;
        }
        size_t room = size - have < UINT32_MAX ? size - have : UINT32_MAX;
        z.next_out = (Bytef *)buf + have;
        z.avail_out = (uInt)room;
        zr = inflate(&z, Z_NO_FLUSH);
        have += room - z.avail_out;
        if (zr == Z_STREAM_END && z.avail_in != 0)
            rc = kg_errorf(err, KG_EINPUT, "%s: bytes after the end of its gzip member", name);
        else if (zr == Z_BUF_ERROR && z.avail_in == 0)
            rc = kg_errorf(err, KG_EINPUT, "%s: its gzip stream is cut short", name);
        else if (zr != Z_OK && zr != Z_STREAM_END && zr != Z_BUF_ERROR)
            rc = kg_errorf(err, KG_EINPUT, "%s: not a gzip stream kgate wrote (%s)", name,
                           z.msg != NULL ? z.msg : "zlib error");
    }
    inflateEnd(&z);
    if (rc != KG_OK) {
        free(buf);
        return rc;
    }
    buf[have] = '\0';
    *out = buf;
    *outlen = have;
    return KG_OK;
}

int kg_read_file(const char *path, char **data, size_t *len, kg_err *err)
{
    /* a regular file only (O_NONBLOCK, fstat), never larger than the text cap */
    return kg_read_file_cap(path, KG_CAP_TEXT, data, len, err);
}

/* Fault injection for the crash-safety tests (KGATE_FAULT_WRITE_AFTER=N,
 * set by the command line through kg_fault_write_after): after N
 * successful atomic writes in this process the next ones fail as on a
 * full disk, after part of the data reached the temporary file.  A
 * process-wide test hook, the only one. */
static long fault_after = -1;   /* -1: off */
static long fault_writes = 0;

void kg_fault_write_after(long n)
{
    fault_after = n;
    fault_writes = 0;
}

static int fault_write_now(void)
{
    if (fault_after < 0) return 0;
    return fault_writes++ >= fault_after;
}

int kg_write_atomic_at(int dirfd, const char *name, const char *shown, const void *data, size_t len, kg_err *err)
{
    char tmp[PATH_MAX];
    int fault = fault_write_now();
    if (shown == NULL) shown = name;
    if (strchr(name, '/') != NULL)
        return kg_errorf(err, KG_EINTERNAL, "%s: a name inside its folder was expected (no '/')", shown);
    if (snprintf(tmp, sizeof tmp, "%s.tmp.%ld", name, (long)getpid()) >= (int)sizeof tmp)
        return kg_errorf(err, KG_EIO, "%s: path too long", shown);
    /* a leftover of an earlier writer with this pid goes first (a link is
     * removed, never followed); then the temporary is created new */
    (void)unlinkat(dirfd, tmp, 0);
    int fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) return kg_errorf(err, KG_EIO, "%s.tmp.%ld: cannot create: %s", shown, (long)getpid(), strerror(errno));
    const char *p = data;
    size_t left = len;
    while (left > 0) {
        ssize_t w = write(fd, p, fault ? left / 2 : left);
        if (fault && w >= 0) { w = -1; errno = ENOSPC; }
        if (w < 0) {
            if (errno == EINTR) continue;
            int e = errno;
            close(fd);
            unlinkat(dirfd, tmp, 0);
            return kg_errorf(err, KG_EIO, "%s: write failed: %s%s", shown, strerror(e),
                             e == ENOSPC ? " (the disk is full: free space and rerun; earlier files are intact)" : "");
        }
        p += w;
        left -= (size_t)w;
    }
    if (fsync(fd) != 0 || close(fd) != 0) {
        int e = errno;
        unlinkat(dirfd, tmp, 0);
        return kg_errorf(err, KG_EIO, "%s: flush failed: %s%s", shown, strerror(e),
                         e == ENOSPC ? " (the disk is full)" : "");
    }
    if (renameat(dirfd, tmp, dirfd, name) != 0) {
        int e = errno;
        unlinkat(dirfd, tmp, 0);
        return kg_errorf(err, KG_EIO, "%s: rename failed: %s", shown, strerror(e));
    }
    /* the rename itself is durable once the folder is */
    if (fsync(dirfd) != 0 && errno != EINVAL)
        return kg_errorf(err, KG_EIO, "%s: flushing its folder failed: %s", shown, strerror(errno));
    return KG_OK;
}

int kg_write_atomic(const char *path, const void *data, size_t len, kg_err *err)
{
    char parent[PATH_MAX];
    const char *slash = strrchr(path, '/');
    if (slash == NULL) snprintf(parent, sizeof parent, ".");
    else if (slash == path) snprintf(parent, sizeof parent, "/");
    else if ((size_t)(slash - path) >= sizeof parent) return kg_errorf(err, KG_EIO, "%s: path too long", path);
    else snprintf(parent, sizeof parent, "%.*s", (int)(slash - path), path);
    int dfd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0) return kg_errorf(err, KG_EIO, "%s: cannot open its folder: %s", path, strerror(errno));
    int rc = kg_write_atomic_at(dfd, slash != NULL ? slash + 1 : path, path, data, len, err);
    close(dfd);
    return rc;
}

int kg_mkdir_p(const char *path, kg_err *err)
{
    char buf[PATH_MAX];
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf)
        return kg_errorf(err, KG_EIO, "%s: path too long", path);
    for (char *p = buf + 1; ; p++) {
        if (*p == '/' || *p == '\0') {
            char c = *p;
            *p = '\0';
            if (mkdir(buf, 0755) != 0 && errno != EEXIST)
                return kg_errorf(err, KG_EIO, "%s: cannot create folder: %s", buf, strerror(errno));
            *p = c;
            if (c == '\0') break;
        }
    }
    return KG_OK;
}

int kg_path_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

void kg_sha256_hex(const void *data, size_t len, char hex[65])
{
    unsigned char md[32];
    unsigned int mdlen = 0;
    EVP_Digest(data, len, md, &mdlen, EVP_sha256(), NULL);
    for (unsigned i = 0; i < 32; i++) snprintf(hex + 2 * i, 3, "%02x", md[i]);
    hex[64] = '\0';
}

int kg_sha256_file(const char *path, char hex[65], kg_err *err)
{
    int fd = kg_open_regular(path, 0, 0, NULL, err);
    if (fd < 0) return fd;
    int rc = kg_sha256_fd(fd, path, hex, err);
    close(fd);
    return rc;
}

int kg_sha256_fd(int fd, const char *name, char hex[65], kg_err *err)
{
    /* streamed: memory does not grow with the file */
    const char *path = name;
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    int rc = KG_OK;
    if (ctx == NULL || EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) != 1) {
        rc = kg_errorf(err, KG_ENOMEM, "%s: cannot start a SHA-256", path);
        goto done;
    }
    char buf[65536];
    for (;;) {
        ssize_t got = read(fd, buf, sizeof buf);
        if (got < 0) {
            if (errno == EINTR) continue;
            rc = kg_errorf(err, KG_EIO, "%s: read error: %s", path, strerror(errno));
            goto done;
        }
        if (got == 0) break;
        EVP_DigestUpdate(ctx, buf, (size_t)got);
    }
    unsigned char md[32];
    unsigned int mdlen = 0;
    EVP_DigestFinal_ex(ctx, md, &mdlen);
    for (unsigned i = 0; i < 32; i++) snprintf(hex + 2 * i, 3, "%02x", md[i]);
    hex[64] = '\0';
done:
    EVP_MD_CTX_free(ctx);
    return rc;
}

void kg_problem(kg_sb *out, int *nbad, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    kg_sb_vprintf(out, fmt, ap);
    va_end(ap);
    kg_sb_puts(out, "\n");
    (*nbad)++;
}

int kg_self_exe(char *buf, size_t cap, kg_err *err)
{
    ssize_t n = readlink("/proc/self/exe", buf, cap - 1);
    if (n < 0) return kg_errorf(err, KG_EIO, "cannot find the kgate executable (/proc/self/exe): %s", strerror(errno));
    buf[n] = '\0';
    return KG_OK;
}

int kg_exe_sha256(long pid, char hex[65], kg_err *err)
{
    char path[48];
    if (pid > 0) snprintf(path, sizeof path, "/proc/%ld/exe", pid);
    else snprintf(path, sizeof path, "/proc/self/exe");
    /* the magic link is followed on purpose: it names the exec'd image */
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return kg_errorf(err, KG_EIO, "cannot read %s: %s", path, strerror(errno));
    int rc = kg_sha256_fd(fd, path, hex, err);
    close(fd);
    return rc;
}

int kg_env_compiler_path(const char *name)
{
    static const char *const names[] = { "GCC_EXEC_PREFIX", "COMPILER_PATH", "CPATH", "C_INCLUDE_PATH",
                                         "CPLUS_INCLUDE_PATH", "OBJC_INCLUDE_PATH", "LIBRARY_PATH",
                                         "CCC_OVERRIDE_OPTIONS" };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(name, names[i]) == 0) return 1;
    return 0;
}

int kg_find_program(const char *argv0, const char *path_env, char *buf, size_t cap)
{
    if (argv0 == NULL || argv0[0] == '\0') return 0;
    if (strchr(argv0, '/') != NULL) {
        snprintf(buf, cap, "%s", argv0);
        return access(buf, X_OK) == 0;
    }
    for (const char *p = path_env; p != NULL && *p;) {
        const char *c = strchr(p, ':');
        size_t l = c != NULL ? (size_t)(c - p) : strlen(p);
        struct stat st;
        snprintf(buf, cap, "%.*s/%s", (int)l, l > 0 ? p : ".", argv0);
        if (access(buf, X_OK) == 0 && stat(buf, &st) == 0 && S_ISREG(st.st_mode)) return 1;
        p = c != NULL ? c + 1 : NULL;
    }
    buf[0] = '\0';
    return 0;
}

double kg_mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void kg_utc_now(char *buf, size_t cap)
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, cap, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

void kg_file_last_line(const char *path, char *buf, size_t cap)
{
    /* only the file's last 4 KiB are read, however long it grows */
    buf[0] = '\0';
    size_t size = 0;
    int fd = kg_open_regular(path, 0, 0, &size, NULL);
    if (fd < 0) return;
    char data[4097];
    size_t want = size < 4096 ? size : 4096;
    ssize_t got = want > 0 ? pread(fd, data, want, (off_t)(size - want)) : 0;
    close(fd);
    size_t len = got > 0 ? (size_t)got : 0;
    while (len > 0 && (data[len - 1] == '\n' || data[len - 1] == '\r' || data[len - 1] == ' ')) len--;
    data[len] = '\0';
    char *start = strrchr(data, '\n');
    snprintf(buf, cap, "%s", start ? start + 1 : data);
}

/* Splits one CSV line in place into at most max fields; a field may be
 * quoted with "" escaping.  Returns the number of fields. */
const char *kg_csv_name(const char *name, char *buf)
{
    if (strpbrk(name, ",\"") == NULL) return name;
    size_t o = 0;
    buf[o++] = '"';
    for (const char *s = name; *s && o + 3 < KG_CSV_NAME_CAP; s++) {
        if (*s == '"') buf[o++] = '"';
        buf[o++] = *s;
    }
    buf[o++] = '"';
    buf[o] = '\0';
    return buf;
}

int kg_csv_split(char *line, char **f, int max)
{
    int n = 0;
    char *p = line;
    while (n < max) {
        if (*p == '"') {
            char *w = ++p;
            f[n++] = w;
            for (;;) {
                if (*p == '\0') break;
                if (*p == '"' && p[1] == '"') { *w++ = '"'; p += 2; continue; }
                if (*p == '"') { p++; break; }
                *w++ = *p++;
            }
            *w = '\0';
            if (*p == ',') p++;
            else break;
        } else {
            f[n++] = p;
            char *comma = strchr(p, ',');
            if (comma == NULL) break;
            *comma = '\0';
            p = comma + 1;
        }
    }
    return n;
}

char *kg_next_line(char **cursor)
{
    char *s = *cursor;
    if (s == NULL || *s == '\0') return NULL;
    char *nl = strchr(s, '\n');
    if (nl != NULL) { *nl = '\0'; *cursor = nl + 1; }
    else *cursor = s + strlen(s);
    size_t len = strlen(s);
    if (len > 0 && s[len - 1] == '\r') s[len - 1] = '\0';
    return s;
}

int kg_strlist_add(kg_strlist *l, const char *s)
{
    if (l->n == l->cap) {
        int cap = l->cap ? 2 * l->cap : 64;
        char **p = realloc(l->v, (size_t)cap * sizeof *p);
        if (p == NULL) return -1;
        l->v = p;
        l->cap = cap;
    }
    if ((l->v[l->n] = strdup(s)) == NULL) return -1;
    l->n++;
    return 0;
}

void kg_strlist_free(char **v, int n)
{
    for (int i = 0; v != NULL && i < n; i++) free(v[i]);
    free(v);
}

static volatile sig_atomic_t stop_sig = 0;

void kg_stop_request(int sig)
{
    stop_sig = sig;
}

int kg_stop_requested(void)
{
    return (int)stop_sig;
}

void kg_stop_clear(void)
{
    stop_sig = 0;
}

/* The steal column of the /proc/stat line that starts with prefix ("cpu "
 * for the machine, "cpuN " for one CPU), in ns; -1 when there is none. */
static double steal_of(const char *prefix, double *tick_ns)
{
    long hz = sysconf(_SC_CLK_TCK);
    if (tick_ns != NULL) *tick_ns = hz > 0 ? 1e9 / (double)hz : 0;
    FILE *fp = fopen("/proc/stat", "r");
    if (fp == NULL) return -1;
    char line[512];
    size_t pl = strlen(prefix);
    unsigned long long v[8];
    int ok = 0;
    while (fgets(line, sizeof line, fp) != NULL) {
        if (strncmp(line, prefix, pl) != 0) continue;
        ok = sscanf(line + pl, "%llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4],
                    &v[5], &v[6], &v[7]) == 8;
        break;
    }
    fclose(fp);
    return ok && hz > 0 ? (double)v[7] * (1e9 / (double)hz) : -1;
}

double kg_proc_steal_ns(double *tick_ns)
{
    return steal_of("cpu ", tick_ns);
}

double kg_proc_steal_cpu_ns(int cpu, double *tick_ns)
{
    char want[32];
    if (cpu < 0) {
        if (tick_ns != NULL) *tick_ns = 0;
        return -1;
    }
    snprintf(want, sizeof want, "cpu%d ", cpu);
    return steal_of(want, tick_ns);
}

const char *kg_proc_stat_fields(long pid, char *buf, size_t cap)
{
    char path[64];
    if (cap < 2) return NULL;
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    FILE *fp = fopen(path, "r");
    if (fp == NULL) return NULL;
    size_t n = fread(buf, 1, cap - 1, fp);
    fclose(fp);
    buf[n] = '\0';
    /* the name in parentheses may hold anything: the fields follow the last ')' */
    char *p = strrchr(buf, ')');
    return p != NULL && p[1] == ' ' ? p + 2 : NULL;
}

int kg_proc_last_cpu(long pid)
{
    char buf[1024];
    const char *f = kg_proc_stat_fields(pid, buf, sizeof buf);
    if (f == NULL) return -1;
    /* f is field 3 (state); the processor is field 39 */
    for (int field = 3; *f != '\0'; f++) {
        if (*f != ' ') continue;
        if (++field == 39) {
            long cpu = -1;
            return sscanf(f + 1, "%ld", &cpu) == 1 && cpu >= 0 && cpu < 1 << 20 ? (int)cpu : -1;
        }
    }
    return -1;
}

int kg_cpus_allowed(int *cpus, int cap)
{
    cpu_set_t s;
    CPU_ZERO(&s);
    if (sched_getaffinity(0, sizeof s, &s) != 0) return -1;
    int n = 0;
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &s)) {
            if (n < cap) cpus[n] = c;
            n++;
        }
    return n < cap ? n : cap;
}

int kg_proc_cpus_allowed(long pid, char *buf, size_t cap)
{
    char path[64], line[4096];
    snprintf(path, sizeof path, "/proc/%ld/status", pid);
    FILE *fp = fopen(path, "r");
    if (fp == NULL) return -1;
    int rc = -1;
    while (fgets(line, sizeof line, fp) != NULL)
        if (strncmp(line, "Cpus_allowed_list:", 18) == 0) {
            const char *v = line + 18;
            while (*v == ' ' || *v == '\t') v++;
            snprintf(buf, cap, "%.*s", (int)strcspn(v, "\n"), v);
            rc = 0;
            break;
        }
    fclose(fp);
    return rc;
}

int kg_proc_stat(long pid, char *state, long *ppid)
{
    char buf[512];
    const char *f = kg_proc_stat_fields(pid, buf, sizeof buf);
    char st = 0;
    long pp = -1;
    if (f == NULL || sscanf(f, "%c %ld", &st, &pp) != 2) return -1;
    if (state != NULL) *state = st;
    if (ppid != NULL) *ppid = pp;
    return 0;
}

static long proc_parent(long pid)
{
    long pp = -1;
    return kg_proc_stat(pid, NULL, &pp) == 0 ? pp : -1;
}

int kg_proc_descends(long pid, long root)
{
    for (int depth = 0; depth < 64; depth++) {
        if (pid == root) return 1;
        long pp = proc_parent(pid);
        if (pp < 0) return depth == 0 ? -1 : 0;
        if (pp <= 1) return 0;
        pid = pp;
    }
    return 0;
}

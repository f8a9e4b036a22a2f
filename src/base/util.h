/* util.h: small services shared by the library's modules: a growable
 * string buffer, whole-file reads (through safefs.h's checks), atomic
 * writes (temporary name, fsync, rename), folders, SHA-256, /proc
 * readers, a socket message with its descriptors, the path of the kgate
 * executable, CSV fields, string lists and the stop flag.  Nothing here
 * knows about plans or statistics, and nothing here starts a process or
 * loads code (the producer's src/toolchain/ runs kgate's tools). */
#ifndef KGATE_UTIL_H
#define KGATE_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include "kgate/err.h"
#include "base/safefs.h"   /* the folder and file opens util.c reads and writes through */

typedef struct kg_sb {
    char *buf;
    size_t len, cap;
    int oom;          /* sticky: set when an append failed */
} kg_sb;

void kg_sb_printf(kg_sb *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void kg_sb_vprintf(kg_sb *sb, const char *fmt, va_list ap);
void kg_sb_puts(kg_sb *sb, const char *s);
void kg_sb_putn(kg_sb *sb, const char *s, size_t n);   /* n bytes of s */

/* Numbers as printf writes them, without printf (the tables of a million
 * rows): kg_fmt_int is "%lld", kg_fmt_f3 "%.3f", byte for byte (the
 * same rounding of the exact value; tests/unit/test_fmt.c holds them to
 * snprintf).  out holds KG_FMT_CAP bytes; the length is returned. */
#define KG_FMT_CAP 400
size_t kg_fmt_int(char out[KG_FMT_CAP], long long v);
size_t kg_fmt_f3(char out[KG_FMT_CAP], double v);
void kg_sb_free(kg_sb *sb);

/* gzip (RFC 1952, one member, zlib's fastest level; no time or name in
 * its header, so the same bytes give the same file): *out is the
 * caller's.  kg_gunzip undoes it, refusing more than cap bytes of output,
 * a stream cut short or followed by anything; *out is NUL-terminated;
 * name is what messages call the data. */
int kg_gzip(const void *data, size_t len, char **out, size_t *outlen, kg_err *err);
int kg_gunzip(const char *name, const void *data, size_t len, size_t cap, char **out, size_t *outlen, kg_err *err);

/* Reads a whole file; *data is NUL-terminated and owned by the caller. */
int kg_read_file(const char *path, char **data, size_t *len, kg_err *err);

/* Writes data to path through path.tmp.PID, fsync and rename: readers see
 * the old file or the new one, never a part.  A full disk is reported as
 * such and leaves the old file in place. */
int kg_write_atomic(const char *path, const void *data, size_t len, kg_err *err);
/* The same through a folder descriptor: name is a plain name inside the
 * folder dirfd (no '/').  The temporary is created with O_EXCL|O_NOFOLLOW
 * and the folder is fsynced after the rename.  shown: the path named in
 * messages (NULL: name). */
int kg_write_atomic_at(int dirfd, const char *name, const char *shown, const void *data, size_t len, kg_err *err);

/* Test hook for the crash-safety tests (KGATE_FAULT_WRITE_AFTER): from
 * now on n atomic writes of this process succeed, then every one fails as
 * on a full disk.  n < 0 turns it off (the default). */
void kg_fault_write_after(long n);

int kg_mkdir_p(const char *path, kg_err *err);
int kg_path_exists(const char *path);

void kg_sha256_hex(const void *data, size_t len, char hex[65]);
int kg_sha256_file(const char *path, char hex[65], kg_err *err);
/* The same over an open descriptor, read to its end (name for messages). */
int kg_sha256_fd(int fd, const char *name, char hex[65], kg_err *err);
/* One problem line of a checker's report (verify, the chain, the
 * signature): fmt and a newline appended to out, *nbad counted. */
void kg_problem(kg_sb *out, int *nbad, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Absolute path of the running executable. */
int kg_self_exe(char *buf, size_t cap, kg_err *err);
/* What to exec to start this same image again (an arm host, a worker, the
 * op server): its path may name another file by then (a rebuild while a
 * campaign runs) or none ("... (deleted)"), /proc/self/exe never does. */
#define KG_SELF_EXEC "/proc/self/exe"
/* The SHA-256 of the image process pid runs (0: this process), read
 * through /proc/PID/exe: the file the kernel exec'd, also when its path
 * was replaced or removed since.  An error when it cannot be read (another
 * process that is not dumpable, to a caller that is not root). */
int kg_exe_sha256(long pid, char hex[65], kg_err *err);
/* 1 when the variable name (no '=') is one of the C compiler's own
 * search paths (GCC_EXEC_PREFIX, COMPILER_PATH, CPATH, C_INCLUDE_PATH,
 * CPLUS_INCLUDE_PATH, OBJC_INCLUDE_PATH, LIBRARY_PATH,
 * CCC_OVERRIDE_OPTIONS): a header, library or program they name would
 * replace code kgate builds, so kgate's tool runs never pass them on
 * (toolchain.h), and the environment's record says so (evidence/envrec.h). */
int kg_env_compiler_path(const char *name);
/* The program argv0 names, as posix_spawnp finds it: argv0 itself when it
 * holds a '/', else the first executable file of that name in path_env's
 * folders (PATH; NULL or empty: none found).  Returns 1 and the path in
 * buf, or 0 when there is none. */
int kg_find_program(const char *argv0, const char *path_env, char *buf, size_t cap);

/* Seconds on CLOCK_MONOTONIC and wall-clock UTC in ISO 8601. */
double kg_mono_s(void);

/* The scheduler state ('R', 'S', ...) and parent of process pid, from
 * /proc/PID/stat: 0, or -1 when this PID namespace has no such process. */
int kg_proc_stat(long pid, char *state, long *ppid);

/* The machine's steal time in nanoseconds, summed over its CPUs: the
 * time a hypervisor ran something else while a virtual CPU had work
 * (/proc/stat, counted in clock ticks of 1 / sysconf(_SC_CLK_TCK) s,
 * whose length goes to *tick_ns when tick_ns is not NULL); -1 when it
 * cannot be read. */
double kg_proc_steal_ns(double *tick_ns);

/* The steal time of one CPU (the `cpuN` line of /proc/stat), in
 * nanoseconds, as kg_proc_steal_ns; -1 when it cannot be read. */
double kg_proc_steal_cpu_ns(int cpu, double *tick_ns);

/* The fields of /proc/PID/stat after the process's name (from field 3,
 * the state), read into buf (cap bytes); NULL when it cannot be read. */
const char *kg_proc_stat_fields(long pid, char *buf, size_t cap);

/* The CPU process pid ran on last (field 39 of /proc/PID/stat); -1 when
 * it cannot be read. */
int kg_proc_last_cpu(long pid);

/* The CPUs the calling thread may run on (its affinity mask), in
 * increasing order, into cpus (at most cap); their count, or -1 when the
 * mask cannot be read. */
int kg_cpus_allowed(int *cpus, int cap);

/* The CPUs process pid may run on, as /proc/PID/status says
 * (Cpus_allowed_list: "3", "0-1", "0,2-3"), into buf; 0, or -1 when it
 * cannot be read. */
int kg_proc_cpus_allowed(long pid, char *buf, size_t cap);

/* 1 when process pid is root or one of its descendants (its chain of
 * parents in /proc), 0 when it is not, -1 when this PID namespace has no
 * such process. */
int kg_proc_descends(long pid, long root);

/* The most descriptors one message to an arm host carries (kg_hostlink_send,
 * the sandbox's descriptor limit): a cpu BIND's KG_AH_NBUF */ 
#define KG_MAX_PASSED_FDS 200
void kg_utc_now(char *buf, size_t cap);

/* The last non-empty line of a text file (for a worker's last words). */
void kg_file_last_line(const char *path, char *buf, size_t cap);

/* Splits one CSV line in place into at most max fields (a field may be
 * quoted, with "" for a quote); returns the number of fields. */
int kg_csv_split(char *line, char **f, int max);
/* A case or arm name as a CSV field: as it is, or in double quotes when it
 * holds a comma (a variant's expanded name, fma[A=1,B=2]; kg_csv_split
 * reads it back).  buf holds KG_CSV_NAME_CAP bytes. */
#define KG_CSV_NAME_CAP 160
const char *kg_csv_name(const char *name, char *buf);
/* Returns the next line of a NUL-terminated text (modified in place) and
 * advances *cursor; NULL at the end. */
char *kg_next_line(char **cursor);

/* A growable list of owned strings. */
typedef struct kg_strlist {
    char **v;
    int n, cap;
} kg_strlist;
/* Appends a copy of s; -1 when out of memory. */
int kg_strlist_add(kg_strlist *l, const char *s);
/* Frees the n strings of v and v itself (NULL-safe). */
void kg_strlist_free(char **v, int n);

/* A stop asked for by SIGINT or SIGTERM (the supervisor's handler sets
 * it; a signal handler has no context to hand it through, so it is the
 * one process-wide flag).  The waits that can last (the device lock, the
 * quiet window) and the build loop give up when it is set. */
void kg_stop_request(int sig);
int kg_stop_requested(void);   /* the signal, 0 while none */
void kg_stop_clear(void);

/* The version and the git commit of this build (version.c). */
const char *kg_version(void);
const char *kg_git_sha(void);

#endif

/* cpu.c: the embedded default backend.  Arms are C source files compiled
 * by the system compiler (settings cc: KGATE_CC, else cc) into shared objects outside
 * any timing, and called through the kg_kargs ABI of kgate/kernel.h.  A
 * control arm is compiled into its own shared object so that it is a
 * separately loaded copy, as the A/A check needs.  A precompiled arm
 * (image = lib.so) is not compiled: its shared object, checked as data, is
 * copied into the build folder and loaded from there like a compiled one.
 *
 * A trusted arm (trusted = yes) is loaded with dlopen into the worker and
 * a sample is pack calls timed with CLOCK_MONOTONIC_RAW.  Every other arm
 * runs in its own arm host (armhost.h): a fresh `kgate armhost` process in
 * a sandbox (sandbox.h), one per loaded arm.  Its buffers are memfds
 * shared with the worker (inputs passed read-only), a run or a sample is
 * one request on its request page (armpage.h: futex words on a page of
 * the worker's; a frame on its socket only when the reply is slow), and
 * a sample is the worker's own CLOCK_MONOTONIC_RAW around the request:
 * the round trip is part of it (the request floor, docs/cpu-backend.md).  Around each request the
 * worker reads the host's CPU time and threads from outside: CPU time
 * spent between requests, a second thread or a child counts as an escape
 * in the telemetry slot, which fails the arm's timing:escape check.  A
 * host that dies, hangs past its per-request timeout or trips the sandbox
 * makes the call return KG_EARM naming the arm.
 *
 * One CPU per process: the worker pins itself to one CPU before any arm
 * host exists (worker.c, kg_protocol_cpu), and every host inherits it,
 * checks it before its sandbox (armhost.h) and cannot change it (the
 * sandbox denies sched_setaffinity); the worker checks each host's
 * affinity from outside after its HELLO.  After every sample the CPU the
 * arm's code ran on (the host's last CPU from /proc/PID/stat, never its
 * own word; the worker's for an in-worker arm; the helper's for a
 * library arm) goes to the telemetry slot, and so to the sample's raw
 * row: a sample that ran elsewhere is a contaminated sample. */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <math.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "backend/backend_impl.h"
#include "backend/armcache.h"
#include "backend/armhost.h"
#include "backend/armpage.h"
#include "backend/hostlink.h"
#include "backend/launch.h"
#include "backend/libarm.h"
#include "kgate/kernel.h"
#include "sandbox/sandbox.h"
#include "toolchain/toolchain.h"
#include "base/util.h"

typedef void (*cpu_entry)(const kg_kargs *);

#define CPU_ESC_IDLE_NS 200e3           /* host CPU time between requests that is an escape */
#define CPU_SETTLE_NS 50e6              /* how long a host may take to go back to sleep after replying */
#define CPU_ESC_SETTLE_NS 20e6          /* CPU time in that window that makes a still-running host an escape */
#define CPU_QUICK_MIN_S 1e-3            /* the shortest wait for a reply on the request page, then a frame */
#define CPU_QUICK_MAX_S 0.2             /* the longest */

struct kg_kernel {
    void *handle;          /* trusted: dlopen'd here */
    cpu_entry fn;
    kg_kargs args;
    int pack;
    /* trusted: the input pointers of each set (0: in[], j + 1: op_in[j]),
     * and the output pointers (j + 1: op_out[j] where bound, else out[]) */
    const void *set_in[1 + KG_BIND_MAX_OP_SETS][KG_MAX_IN];
    void *set_out[1 + KG_BIND_MAX_OP_SETS][KG_MAX_OUT];
    int nop;
    char arm[KG_NAME_MAX];
    char so[PATH_MAX];
    size_t image_bytes;
    char image_sha256[65];
    /* untrusted: the arm host */
    int hosted;
    kg_hostlink link;      /* its process, socket and output */
    kg_armpage page;       /* its request page (armpage.h): RUN requests and replies */
    uint32_t page_expect;  /* the page's state as the worker left it (or the host's reply made it) */
    uint64_t nonces[32];   /* random request nonces, drawn outside any timing */
    int nnonces;
    unsigned prot;         /* KG_SBX_* in effect */
    clockid_t cpuclk;
    int have_cpuclk;
    double cpu_mark;       /* host CPU ns when it last went idle */
    double cpu_pre;        /* host CPU ns just before the current request */
    int pre_exact;         /* cpu_pre was read with the host asleep */
    double slowest_call_s; /* slowest kernel call seen, for the per-request timeout */
    double timeout_s;      /* the plan's timeout */
    uint64_t samples, escapes;
    uint64_t *total_escapes;   /* the backend's count for the current case */
    uint64_t pending_escapes;  /* found since this arm's last timed sample */
    double steal_credit;       /* ns of its CPU's steal after replies, not yet charged (host_run) */
    int no_steal_credit;       /* KGATE_STEAL_CREDIT=0: nothing is charged to steal */
    double last_cpu_ns, last_host_ns;
    int ran_cpu;               /* the CPU its last run or sample ran on; -1 unknown */
    /* a library arm (builtin = torch or numpy): its helper, the backend's */
    kg_libarm *lib;
    int lib_slot;
    char lib_record[KG_LIBRARY_RECORD_MAX];
};

typedef struct cpu_buf {
    void *ptr;
    size_t len;            /* mapped bytes (pages) */
    int fd, ro_fd;         /* memfd, and a read-only reopening of it */
} cpu_buf;

typedef struct cpu_ctx {
    int memfd;             /* an untrusted arm in the plan: buffers are memfds */
    cpu_buf *bufs;
    int nbufs, capbufs;
    uint64_t mapped;       /* bytes of all buffers, for the hosts' address-space limit */
    const kg_kernel *last; /* the kernel timed last */
    uint64_t last_samples, last_escapes;
    /* escapes seen since the last load: the worker compares the count
     * after each sample with the one after the previous sample of the
     * case, and loads every arm of a case before its first sample, so an
     * escape is charged to the sample of the arm whose request found it */
    uint64_t total_escapes;
    double last_cpu_ns, last_host_ns;
    int last_ran_cpu;      /* the CPU the last sample ran on (kg_telemetry.cpu) */
    int pin_cpu;           /* the one CPU the worker is pinned to (its affinity at open); -1: several */
    kg_libarm **libs;      /* per arm: a library arm's helper, started at its first load */
    int nlibs;
    kg_libarm_builds *lib_builds;   /* the library arms' builds (kg_libarm_build) */
} cpu_ctx;

static int cpu_open(kg_backend *be, const kg_plan *plan, kg_err *err)
{
    cpu_ctx *c = calloc(1, sizeof *c);
    if (c == NULL) return kg_errorf(err, KG_ENOMEM, "out of memory opening the cpu backend");
    for (int a = 0; plan != NULL && a < plan->narms; a++)
        if (!plan->arms[a].trusted) c->memfd = 1;
    if (plan != NULL && plan->narms > 0) {
        c->libs = calloc((size_t)plan->narms, sizeof *c->libs);
        if (c->libs == NULL) {
            free(c);
            return kg_errorf(err, KG_ENOMEM, "out of memory opening the cpu backend");
        }
        c->nlibs = plan->narms;
    }
    int cpus[2];
    c->pin_cpu = kg_cpus_allowed(cpus, 2) == 1 ? cpus[0] : -1;
    c->last_ran_cpu = -1;
    be->ctx = c;
    return KG_OK;
}

static void cpu_close(kg_backend *be)
{
    cpu_ctx *c = be->ctx;
    if (c == NULL) return;
    for (int a = 0; a < c->nlibs; a++) kg_libarm_quit(c->libs[a]);
    for (int a = 0; a < c->nlibs; a++) kg_libarm_stop(c->libs[a]);
    kg_libarm_stop_retired();
    kg_libarm_builds_free(c->lib_builds);
    free(c->libs);
    for (int i = 0; i < c->nbufs; i++) {
        munmap(c->bufs[i].ptr, c->bufs[i].len);
        close(c->bufs[i].fd);
        close(c->bufs[i].ro_fd);
    }
    free(c->bufs);
    free(c);
    be->ctx = NULL;
}

static void so_path(const kg_backend *be, const char *build_dir, const kg_arm *arm, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s/%s%s.so", build_dir, arm->name, kg_backend_negative(be->settings, arm) ? ".negative" : "");
}

/* The compiler build() runs: the settings' cc (KGATE_CC), else cc. */
static const char *cpu_compiler(const kg_settings *s)
{
    return s->cc != NULL && s->cc[0] != '\0' ? s->cc : "cc";
}

static int split_words(char *s, char **out, int max)
{
    int n = 0;
    for (char *tok = strtok(s, " \t"); tok != NULL && n < max; tok = strtok(NULL, " \t")) out[n++] = tok;
    return n;
}

/* The ELF machine of the objects this build of kgate can open; 0: not checked. */
#if defined(__x86_64__)
#define CPU_ELF_MACHINE EM_X86_64
#elif defined(__aarch64__)
#define CPU_ELF_MACHINE EM_AARCH64
#else
#define CPU_ELF_MACHINE 0
#endif

/* Checks that the bytes of a precompiled cpu arm are a shared object this
 * process could open (ELF, 64-bit, little-endian, ET_DYN, this machine):
 * the header is read as data, nothing of the object runs. */
static int check_so_header(const kg_plan *plan, const kg_arm *arm, const char *path, const unsigned char *b, size_t n,
                           kg_err *err)
{
    Elf64_Ehdr h;
    const char *why = NULL;
    if (n < sizeof h || memcmp(b, ELFMAG, SELFMAG) != 0) {
        why = "it is not an ELF file";
    } else {
        memcpy(&h, b, sizeof h);
        if (h.e_ident[EI_CLASS] != ELFCLASS64 || h.e_ident[EI_DATA] != ELFDATA2LSB)
            why = "it is not a 64-bit little-endian ELF";
        else if (h.e_type != ET_DYN)
            why = h.e_type == ET_REL ? "it is an object file (.o), not a shared object" : "it is an executable, not a "
                  "shared object";
        else if (CPU_ELF_MACHINE != 0 && h.e_machine != CPU_ELF_MACHINE)
            why = h.e_machine == 190 ? "it is a CUDA ELF (a cubin), not a host shared object"
                                     : "it was built for another machine architecture";
    }
    if (why == NULL) return KG_OK;
    return kg_errorf(err, KG_EINPUT, "%s:%d: arm '%s': image %s cannot be run on the cpu backend: %s (build it "
                     "with: cc -std=c11 -O2 -shared -fPIC -Iinclude KERNEL.c -o %s.so -lm)", plan->path, arm->line,
                     arm->name, path, why, arm->name);
}

/* A precompiled arm (image = NAME.so): its shared object, checked as
 * data, is copied byte for byte into the build folder as ARM.so, where a
 * compiled arm's object would be; from there it is loaded exactly like
 * one (its arm host, or the worker when trusted).  Nothing of it runs in
 * the supervisor: not even its constructors, which run only where the
 * object is opened. */
static int cpu_build_image(const kg_plan *plan, int a, const char *build_dir, const char *so, kg_err *err)
{
    const kg_arm *arm = &plan->arms[a];
    char src[KG_PATH_MAX], *bytes = NULL;
    size_t n = 0;
    int rc;
    kg_image_kind kind = kg_image_kind_of(arm->image);
    if (kind != KG_IMAGE_SO)
        return kg_errorf(err, KG_EUNSUPPORTED, "%s:%d: arm '%s': image '%s' is a cuda image (.%s); the cpu backend "
                         "runs a shared object (image = NAME.so), or run the plan on the cuda backend "
                         "(backend = cuda, or --backend cuda)", plan->path, arm->line, arm->name, arm->image,
                         kg_image_kind_name(kind));
    if ((rc = kg_plan_source_path(plan, a, src, sizeof src, err)) != KG_OK) return rc;
    if ((rc = kg_read_file(src, &bytes, &n, err)) != KG_OK) return rc;
    rc = check_so_header(plan, arm, src, (const unsigned char *)bytes, n, err);
    if (rc == KG_OK) rc = kg_mkdir_p(build_dir, err);
    /* a temporary renamed in place: a link at so is replaced, never written through */
    if (rc == KG_OK) rc = kg_write_atomic(so, bytes, n, err);
    free(bytes);
    return rc;
}

static int cpu_build(kg_backend *be, const kg_plan *plan, int a, const char *build_dir, kg_err *err)
{
    const kg_arm *arm = &plan->arms[a];
    char src[KG_PATH_MAX], so[PATH_MAX], tmp[PATH_MAX + 16], log[PATH_MAX + 8], inc[PATH_MAX];
    char incflag[PATH_MAX + 4];
    int rc;
    if (kg_libarm_is(arm)) return kg_libarm_build(&((cpu_ctx *)be->ctx)->lib_builds, be->settings, plan, a, NULL, err);
    if (arm->builtin[0] != '\0')
        return kg_errorf(err, KG_EUNSUPPORTED, "%s:%d: arm '%s': builtin '%s' is not available on the cpu backend "
                         "(builtin = torch and builtin = numpy are; or use a source file)",
                         plan->path, arm->line, arm->name, arm->builtin);
    if (arm->specialize)
        return kg_errorf(err, KG_EUNSUPPORTED, "%s:%d: arm '%s': specialize = yes is for CUDA arms (a CPU kernel "
                         "reads the case's variables with kg_var_i and kg_var_r, kgate/kernel.h); remove the key",
                         plan->path, arm->line, arm->name);
    if (kg_arm_is_image(arm)) {
        so_path(be, build_dir, arm, so, sizeof so);
        return cpu_build_image(plan, a, build_dir, so, err);
    }
    if ((rc = kg_plan_source_path(plan, a, src, sizeof src, err)) != KG_OK) return rc;
    if ((rc = kg_include_dir(be->settings->include_dir, inc, sizeof inc, err)) != KG_OK) return rc;
    if ((rc = kg_mkdir_p(build_dir, err)) != KG_OK) return rc;
    so_path(be, build_dir, arm, so, sizeof so);
    snprintf(tmp, sizeof tmp, "%s.tmp", so);
    snprintf(log, sizeof log, "%s.log", so);
    snprintf(incflag, sizeof incflag, "-I%s", inc);
    remove(log);

    const char *cc = cpu_compiler(be->settings);
    char defs[KG_TEXT_MAX], flags[KG_TEXT_MAX];
    snprintf(defs, sizeof defs, "%s", arm->defines);
    snprintf(flags, sizeof flags, "%s", arm->cflags);
    /* the parser bounds defines and cflags to KG_ARM_MAX_FLAGS words */
    char *words[KG_ARM_MAX_FLAGS], *fwords[KG_ARM_MAX_FLAGS];
    int nd = split_words(defs, words, KG_ARM_MAX_FLAGS);
    int nf = split_words(flags, fwords, KG_ARM_MAX_FLAGS);
    char dbuf[KG_ARM_MAX_FLAGS][KG_TEXT_MAX + 3];
    char *argv[2 * KG_ARM_MAX_FLAGS + 16];
    int n = 0;
    argv[n++] = (char *)cc;
    argv[n++] = (char *)"-std=c11";
    argv[n++] = (char *)"-O2";
    argv[n++] = (char *)"-shared";
    argv[n++] = (char *)"-fPIC";
    argv[n++] = incflag;
    for (int i = 0; i < nd; i++) {
        snprintf(dbuf[i], sizeof dbuf[i], "-D%s", words[i]);
        argv[n++] = dbuf[i];
    }
    if (kg_backend_negative(be->settings, arm)) argv[n++] = (char *)"-DKGATE_NEGATIVE=1";
    for (int i = 0; i < nf; i++) argv[n++] = fwords[i];
    argv[n++] = src;
    argv[n++] = (char *)"-o";
    argv[n++] = tmp;
    argv[n++] = (char *)"-lm";
    argv[n] = NULL;
    /* the compile cache (armcache.h): a verified entry stands in for the compile */
    kg_armcache cache;
    char work[PATH_MAX + 16], side[PATH_MAX + 16];
    snprintf(work, sizeof work, "%s.pp", so);
    snprintf(side, sizeof side, "%s.cache", so);
    remove(side);
    kg_armcache_key(be->settings, argv, n - 2, work, log, &cache);
    if (kg_armcache_fetch(&cache, so)) {
        fprintf(stderr, "kgate: arm %s: from the compile cache (%.16s...), not compiled\n", arm->name, cache.key);
        return KG_OK;
    }
    int status;
    if ((rc = kg_run_capture(argv, log, &status, err)) != KG_OK) return rc;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        char head[3 * PATH_MAX];
        snprintf(head, sizeof head, "%s:%d: arm '%s': %s failed to compile %s", plan->path, arm->line, arm->name,
                 cc, src);
        return kg_tool_failed(err, KG_EBACKEND, log, head);
    }
    if (rename(tmp, so) != 0)
        return kg_errorf(err, KG_EIO, "%s: cannot rename the compiled arm into place", so);
    kg_armcache_store(&cache, so);
    return KG_OK;
}

static int cpu_alloc(kg_backend *be, size_t bytes, kg_dbuf *out, kg_err *err)
{
    cpu_ctx *c = be->ctx;
    if (!c->memfd) {
        /* 64-byte alignment, as a vectorising kernel would expect on a device. */
        size_t rounded = (bytes + 63) / 64 * 64;
        void *p = aligned_alloc(64, rounded ? rounded : 64);
        if (p == NULL) return kg_errorf(err, KG_ENOMEM, "cpu backend: cannot allocate %zu bytes", bytes);
        memset(p, 0, rounded ? rounded : 64);
        out->ptr = p;
        out->bytes = bytes;
        return KG_OK;
    }
    /* shared with arm hosts: a memfd, sealed against shrinking (a host
     * that truncated it would fault the worker) */
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t len = (bytes + page - 1) / page * page;
    if (len == 0) len = page;
    if (c->nbufs == c->capbufs) {
        int cap = c->capbufs ? 2 * c->capbufs : 32;
        cpu_buf *v = realloc(c->bufs, (size_t)cap * sizeof *v);
        if (v == NULL) return kg_errorf(err, KG_ENOMEM, "cpu backend: out of memory");
        c->bufs = v;
        c->capbufs = cap;
    }
    int fd = memfd_create("kgate-buffer", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0) return kg_errorf(err, KG_ENOMEM, "cpu backend: memfd_create: %s", strerror(errno));
    if (ftruncate(fd, (off_t)len) != 0 || fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) {
        int rc = kg_errorf(err, KG_ENOMEM, "cpu backend: cannot size a %zu-byte buffer: %s", bytes, strerror(errno));
        close(fd);
        return rc;
    }
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    int ro = open(path, O_RDONLY | O_CLOEXEC);
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (ro < 0 || p == MAP_FAILED) {
        int rc = kg_errorf(err, KG_ENOMEM, "cpu backend: cannot map a %zu-byte buffer: %s", bytes, strerror(errno));
        if (ro >= 0) close(ro);
        if (p != MAP_FAILED) munmap(p, len);
        close(fd);
        return rc;
    }
    c->bufs[c->nbufs++] = (cpu_buf){ .ptr = p, .len = len, .fd = fd, .ro_fd = ro };
    c->mapped += len;
    out->ptr = p;
    out->bytes = bytes;
    return KG_OK;
}

static cpu_buf *find_buf(cpu_ctx *c, const void *p)
{
    for (int i = 0; i < c->nbufs; i++)
        if (c->bufs[i].ptr == p) return &c->bufs[i];
    return NULL;
}

static void cpu_free(kg_backend *be, kg_dbuf *buf)
{
    cpu_ctx *c = be->ctx;
    if (buf->ptr == NULL) return;
    if (!c->memfd) {
        free(buf->ptr);
        buf->ptr = NULL;
        return;
    }
    cpu_buf *b = find_buf(c, buf->ptr);
    if (b != NULL) {
        munmap(b->ptr, b->len);
        close(b->fd);
        close(b->ro_fd);
        c->mapped -= b->len;
        *b = c->bufs[--c->nbufs];
    }
    buf->ptr = NULL;
}

static int cpu_upload(kg_backend *be, const kg_dbuf *dst, size_t off, const void *src, size_t n, kg_err *err)
{
    (void)be; (void)err;
    memcpy((char *)dst->ptr + off, src, n);
    return KG_OK;
}

static int cpu_download(kg_backend *be, void *dst, const kg_dbuf *src, size_t off, size_t n, kg_err *err)
{
    (void)be; (void)err;
    memcpy(dst, (const char *)src->ptr + off, n);
    return KG_OK;
}

/* Fresh inputs straight into the arm's pages (shared with its host, which
 * maps them read-only): the host generator, no copy. */
static int cpu_fill(kg_backend *be, const kg_dbuf *buf, const kg_gen_spec *spec, kg_err *err)
{
    (void)be; (void)err;
    kg_gen_all(spec, buf->ptr);
    return KG_OK;
}

/* ---- the arm host, from the worker's side ---- */

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC_RAW, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

/* The host's CPU time (user + system), ns; -1 when it cannot be read. */
static double host_cpu(const kg_kernel *k)
{
    struct timespec t;
    if (k->have_cpuclk && clock_gettime(k->cpuclk, &t) == 0) return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
    char buf[1024];
    const char *f = kg_proc_stat_fields((long)k->link.pid, buf, sizeof buf);
    unsigned long long ut = 0, st = 0;
    if (f == NULL || sscanf(f, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
        return -1;
    return (double)(ut + st) * 1e9 / (double)sysconf(_SC_CLK_TCK);
}

static char host_state(const kg_kernel *k);

/* Waits (up to CPU_SETTLE_NS) for the host to leave the CPU; its CPU time
 * then, exact once it sleeps.  *state: its last state ('R' still running). */
static double idle_cpu(kg_kernel *k, char *state)
{
    double s0 = now_ns();
    char st = host_state(k);
    while (st == 'R' && now_ns() - s0 < CPU_SETTLE_NS) {
        sched_yield();
        st = host_state(k);
    }
    if (state != NULL) *state = st;
    return host_cpu(k);
}

/* The idle mark after a request other than a run: the host's CPU time
 * once it sleeps, or -1 (no exact mark) when it is still runnable after
 * the settle window, on a loaded machine: the next request is then not
 * judged by it (a stale mark would count the host's own reply as work
 * between requests). */
static double settled_mark(kg_kernel *k)
{
    char st;
    double c = idle_cpu(k, &st);
    return st == 'R' ? -1 : c;
}

/* An escape is charged to the arm's next timed sample (time() adds the
 * pending ones to the backend's count), never to another arm's. */
static void escape(kg_kernel *k)
{
    k->escapes++;
    k->pending_escapes++;
}

/* The host's scheduler state ('R', 'S', ...) from /proc/PID/stat; 0 when
 * it cannot be read. */
static char host_state(const kg_kernel *k)
{
    char st = 0;
    return kg_proc_stat((long)k->link.pid, &st, NULL) == 0 ? st : 0;
}

/* Threads of the host beyond its first, plus its children. */
static int host_extra(const kg_kernel *k)
{
    char path[96], line[256];
    int extra = 0;
    snprintf(path, sizeof path, "/proc/%ld/status", (long)k->link.pid);
    FILE *fp = fopen(path, "r");
    if (fp != NULL) {
        while (fgets(line, sizeof line, fp) != NULL)
            if (strncmp(line, "Threads:", 8) == 0) {
                int t = atoi(line + 8);
                if (t > 1) extra += t - 1;
            }
        fclose(fp);
    }
    snprintf(path, sizeof path, "/proc/%ld/task/%ld/children", (long)k->link.pid, (long)k->link.pid);
    fp = fopen(path, "r");
    if (fp != NULL) {
        int ch = fgetc(fp);
        if (ch != EOF && ch != '\n') extra++;
        fclose(fp);
    }
    return extra;
}

static int host_fault(kg_kernel *k, int timed_out, double limit_s, kg_err *err)
{
    return kg_hostlink_fault(&k->link, -1, timed_out, limit_s, err);
}

static int send_req(kg_kernel *k, uint32_t kind, const void *payload, size_t len, const int *fds, int nfd)
{
    return kg_hostlink_send(&k->link, kind, payload, len, fds, nfd);
}

/* The reply of kind to the last request (armhost.h: a kg_ah_reply). */
static int wait_reply(kg_kernel *k, uint32_t kind, double limit_s, kg_ah_reply *rep, kg_err *err)
{
    int rc = kg_hostlink_reply(&k->link, kind, limit_s, rep, sizeof *rep, err);
    if (rc == KG_OK) rep->msg[sizeof rep->msg - 1] = '\0';
    return rc;
}

/* The request page's state is not what the protocol allows: the host
 * (its arm's code) wrote it.  Killed, KG_EARM. */
static int page_broken(kg_kernel *k, uint32_t seen, const char *when, kg_err *err)
{
    char why[300];
    snprintf(why, sizeof why, "broke the protocol (its request page says %s of request %u %s, where %s of request "
             "%u was due)", kg_armpage_phase_name(seen), (unsigned)KG_AP_SEQ(seen), when,
             kg_armpage_phase_name(k->page_expect), (unsigned)KG_AP_SEQ(k->page_expect));
    return kg_hostlink_broken(&k->link, why, err);
}

/* Before a request: nothing unasked may be waiting, the request page must
 * be as the last request left it, and the host must not have used CPU
 * time since it last went idle.  Its output is drained here too (outside
 * any timing): on the page the worker does not watch the output pipe. */
static int before_request(kg_kernel *k, kg_err *err)
{
    if (k->link.dead) return kg_errorf(err, KG_EARM, "%s", k->link.dead_why);
    kg_hostlink_drain(&k->link);
    if (k->page.pg != NULL) {
        uint32_t s = kg_armpage_state(k->page.pg);
        if (s != k->page_expect) return page_broken(k, s, "between requests", err);
    }
    double c = host_cpu(k);
    k->cpu_pre = c;   /* exact when the last settle saw the host asleep */
    k->pre_exact = k->cpu_mark >= 0;
    if (c >= 0 && k->cpu_mark >= 0 && c - k->cpu_mark > CPU_ESC_IDLE_NS) {
        escape(k);
        fprintf(stderr, "arm %s: escape: its host used %.0f us of CPU time between requests\n", k->arm,
                (c - k->cpu_mark) / 1e3);
    }
    return kg_hostlink_quiet(&k->link, err);
}

/* The per-request timeout: the plan's, or ten times the slowest call
 * seen so far (at least 1 s) when that is shorter. */
static double request_limit(const kg_kernel *k, int calls)
{
    double lim = k->timeout_s;
    if (k->slowest_call_s > 0) {
        double adaptive = 10.0 * k->slowest_call_s * calls;
        if (adaptive < 1.0) adaptive = 1.0;
        if (adaptive < lim) lim = adaptive;
    }
    return lim;
}

/* A framed request (BIND, QUIT) is announced on the request page, where
 * the host waits once it has one. */
static void announce_frame(kg_kernel *k)
{
    if (k->page.pg == NULL) return;
    uint32_t s = KG_AP_STATE(k->link.seq + 1, KG_AP_SOCK);
    kg_armpage_post(k->page.pg, s);
    k->page_expect = s;
}

/* A request's nonce: random, from a batch drawn ahead (outside timing),
 * so that no reply can be made before its request is posted. */
static uint64_t next_nonce(kg_kernel *k)
{
    if (k->nnonces <= 0) {
        ssize_t got = getrandom(k->nonces, sizeof k->nonces, 0);
        if (got != (ssize_t)sizeof k->nonces) {
            /* no entropy call: a mix of the clock (still unknown to the host in advance) */
            uint64_t x = (uint64_t)now_ns();
            for (int i = 0; i < 32; i++) {
                x += 0x9e3779b97f4a7c15ull;
                uint64_t z = x;
                z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
                z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
                k->nonces[i] = z ^ (z >> 31);
            }
        }
        k->nnonces = 32;
    }
    return k->nonces[--k->nnonces];
}

/* How long the worker sleeps on the request page for a RUN's reply before
 * it asks for the reply as a frame and waits on the socket, where a
 * host's death, its output and its violations are seen: four times the
 * request's expected time (its calls at the slowest seen), at least
 * 1 ms, at most 200 ms and the request's limit.  An honest reply comes
 * within it; a host that died is seen within it. */
static double quick_bound(const kg_kernel *k, int n, double lim)
{
    double b = 4.0 * k->slowest_call_s * n;
    if (b < CPU_QUICK_MIN_S) b = CPU_QUICK_MIN_S;
    if (b > CPU_QUICK_MAX_S) b = CPU_QUICK_MAX_S;
    return b < lim ? b : lim;
}

/* The reply to RUN seq, posted at t0 (the worker's clock, ns): on the
 * page within quick_s (DONE, each field read once), else as a frame on
 * the socket within the request's limit, once the worker's swap of the
 * state to SLOW took (armpage.h).  *t1: the worker's clock when it saw
 * the reply. */
static int page_reply(kg_kernel *k, uint32_t seq, double t0, double quick_s, double lim, kg_ah_reply *rep,
                      double *t1, kg_err *err)
{
    kg_ah_page *pg = k->page.pg;
    uint32_t run = KG_AP_STATE(seq, KG_AP_RUN), done = KG_AP_STATE(seq, KG_AP_DONE);
    for (;;) {
        uint32_t s = kg_armpage_state(pg);
        if (s == done) {
            *t1 = now_ns();
            memset(rep, 0, sizeof *rep);
            rep->nonce = pg->echo;
            rep->status = pg->status;
            rep->cpu = pg->cpu;
            for (size_t i = 0; i + 1 < sizeof rep->msg && i < sizeof pg->msg; i++) rep->msg[i] = pg->msg[i];
            k->page_expect = done;
            return KG_OK;
        }
        if (s != run) return page_broken(k, s, "during the request", err);
        double left = quick_s - (now_ns() - t0) / 1e9;
        if (left > 0) {
            kg_armpage_sleep(pg, run, left);
            continue;
        }
        uint32_t slow = KG_AP_STATE(seq, KG_AP_SLOW);
        if (!kg_armpage_swap(pg, run, slow, NULL)) continue;   /* the reply came meanwhile, or a broken state */
        k->page_expect = slow;
        double rest = lim - (now_ns() - t0) / 1e9;
        int rc = wait_reply(k, KG_AH_RUN, rest > 1e-3 ? rest : 1e-3, rep, err);
        *t1 = now_ns();
        return rc;
    }
}

/* The CPU a host's request ran on: its last CPU, read from outside
 * (/proc/PID/stat).  The host's own word (the reply's cpu, sched_getcpu()
 * in the host, which its code can make say anything: the C library reads
 * it from the thread's rseq area, in the host's memory) decides nothing
 * when the worker is pinned to CPU pin: the host's affinity is that CPU
 * alone and it cannot change it, and a word that marked a sample as run
 * elsewhere would drop that sample from the analysis, at the candidate's
 * choice (its slow ones).  Unpinned, no sample is judged by its CPU, and
 * the word stands in for an unreadable outside reading. */
static int ran_cpu(const kg_kernel *k, int pin, int said)
{
    int seen = kg_proc_last_cpu((long)k->link.pid);
    if (pin < 0) return seen >= 0 ? seen : said;
    return seen;
}

/* One RUN of n calls, posted on the request page; *wall_ns the worker's
 * clock around it (from just before the post to the moment it saw the
 * reply); pin the worker's one CPU (-1: not pinned). */
static int host_run(kg_kernel *k, int n, int settle, int pin, double *wall_ns, kg_err *err)
{
    int rc;
    if ((rc = before_request(k, err)) != KG_OK) return rc;
    kg_ah_page *pg = k->page.pg;
    if (pg == NULL) return kg_errorf(err, KG_EINTERNAL, "arm '%s': a run before its host has a request page", k->arm);
    kg_ah_reply rep;
    double lim = request_limit(k, n);
    double quick = quick_bound(k, n, lim);
    uint64_t nonce = next_nonce(k);
    uint32_t seq = (k->link.seq + 1) & KG_AP_SEQ_MASK;
    k->link.seq = seq;
    k->page_expect = KG_AP_STATE(seq, KG_AP_RUN);
    double c0 = host_cpu(k);
    double t0 = now_ns();
    pg->n = n;
    pg->nonce = nonce;
    kg_armpage_post(pg, KG_AP_STATE(seq, KG_AP_RUN));
    double t1 = 0;
    if ((rc = page_reply(k, seq, t0, quick, lim, &rep, &t1, err)) != KG_OK) return rc;
    /* the steal of the CPU the host replied from (see Steal below) */
    int gcpu = k->no_steal_credit ? -1 : kg_proc_last_cpu((long)k->link.pid);
    double g0 = kg_proc_steal_cpu_ns(gcpu, NULL);
    if (rep.nonce != nonce)
        return kg_hostlink_broken(&k->link, "broke the protocol (a reply that does not echo its request's nonce: "
                                  "not made after the request)", err);
    /* a frame sent during the request (the page carried the reply) */
    if ((rc = kg_hostlink_quiet(&k->link, err)) != KG_OK) return rc;
    if (rep.status != KG_AH_OK) {
        return kg_hostlink_refused(&k->link, "refused a run", rep.msg, err);
    }
    double c1 = host_cpu(k);   /* may lag while the host still runs */
    k->ran_cpu = ran_cpu(k, pin, rep.cpu);
    double per_call = (t1 - t0) / 1e9 / n;
    if (per_call > k->slowest_call_s) k->slowest_call_s = per_call;
    *wall_ns = t1 - t0;
    k->last_host_ns = t1 - t0;
    k->last_cpu_ns = c0 >= 0 && c1 >= 0 ? c1 - c0 : -1;
    /* Back to sleep: an honest host blocks in its next receive within
     * microseconds of replying.  Another process's CPU clock is exact
     * only once it has left the CPU (a running one is read as of its
     * last tick), so the idle mark is taken once the host sleeps.  A host
     * still running CPU_SETTLE_NS after its reply, and on CPU for most of
     * that time, kept working after the worker's clock stopped (a reply
     * forged by the kernel): an escape.  One merely waiting for a CPU
     * (a loaded machine) is not. */
    double cs = c1;
    char st;
    double c2 = idle_cpu(k, &st);
    /* Steal.  A hypervisor that runs another machine while this one's
     * virtual CPU has the host on it, in the few instructions between its
     * reply and its next receive, makes the guest charge that time to the
     * host as if it had run after replying (seen on a shared VM: 1-5 ms
     * more CPU than wall time, with steal in the window each time).  The
     * steal of the CPU the host replied from, from the reply until the
     * host sleeps, is a credit of the arm's: CPU time beyond the request
     * is charged to it while it lasts (plus one tick of the steal
     * counter's granularity), and an escape only beyond it.  Steal comes
     * from outside the machine; a host that keeps working after its
     * replies earns a credit of only its CPU's steal rate times its extra
     * time, so most of its escapes are still counted.  The other CPUs'
     * steal is not the host's: on a machine of many virtual CPUs their
     * sum would excuse any escape.  KGATE_STEAL_CREDIT=0 (a dedicated
     * host) charges nothing to steal. */
    double tick = 0, g1 = kg_proc_steal_cpu_ns(gcpu, &tick);
    if (g0 >= 0 && g1 > g0) k->steal_credit += g1 - g0;
    double over = st == 'R' ? c2 - cs - CPU_ESC_SETTLE_NS : c2 - k->cpu_pre - (t1 - t0) - CPU_ESC_IDLE_NS;
    if (gcpu < 0) k->steal_credit = 0;
    int judged = c2 >= 0 && (st == 'R' ? cs >= 0 : k->pre_exact && k->cpu_pre >= 0);
    int charged = judged && over > 0 && k->steal_credit > 0 && over <= k->steal_credit + tick;
    if (charged) {
        fprintf(stderr, "arm %s: %.0f us of CPU beyond the request, within its CPU's steal after its replies "
                "(%.0f us): charged to the hypervisor, not an escape\n", k->arm, over / 1e3, k->steal_credit / 1e3);
        k->steal_credit -= over;
    } else if (st == 'R' && c2 >= 0 && cs >= 0 && c2 - cs > CPU_ESC_SETTLE_NS) {
        escape(k);
        fprintf(stderr, "arm %s: escape: its host kept running after replying (%.0f us of CPU in %.0f ms)\n",
                k->arm, (c2 - cs) / 1e3, CPU_SETTLE_NS / 1e6);
    } else if (st != 'R' && k->pre_exact && c2 >= 0 && k->cpu_pre >= 0 && c2 - k->cpu_pre > (t1 - t0) + CPU_ESC_IDLE_NS) {
        /* asleep, so exact: one thread cannot spend more CPU time than
         * the request's wall time unless it ran after the reply */
        escape(k);
        fprintf(stderr, "arm %s: escape: its host used %.0f us of CPU for a request of %.0f us: it ran after "
                "replying\n", k->arm, (c2 - k->cpu_pre) / 1e3, (t1 - t0) / 1e3);
    }
    /* a host still runnable after the settle window (a loaded machine)
     * gives no exact idle mark: the next request is not judged by it */
    k->cpu_mark = st == 'R' ? -1 : c2;
    if (settle) {
        int extra = host_extra(k);
        if (extra > 0) {
            escape(k);
            fprintf(stderr, "arm %s: escape: its host has %d extra threads or children\n", k->arm, extra);
        }
    }
    return KG_OK;
}

static void cpu_unload(kg_backend *be, kg_kernel *k);

/* A started host's affinity, read from outside: the worker's one CPU pin
 * alone (nothing to check when pin < 0). */
static int check_pinned(kg_kernel *k, int pin, kg_err *err)
{
    if (pin < 0) return KG_OK;
    char got[256] = "", want[16];
    snprintf(want, sizeof want, "%d", pin);
    if (kg_proc_cpus_allowed((long)k->link.pid, got, sizeof got) == 0 && strcmp(got, want) == 0) return KG_OK;
    kg_hostlink_kill(&k->link);
    host_fault(k, 0, 1.0, NULL);
    return kg_errorf(err, KG_EBACKEND, "arm '%s': its host may run on CPUs '%s', not on the worker's CPU %d alone "
                     "(/proc/%ld/status): the arms of a process must share one CPU", k->arm,
                     got[0] ? got : "(unreadable)", pin, (long)k->link.pid);
}

/* Hands the host its request page (PAGE, the page's descriptor). */
static int link_page(kg_kernel *k, double lim, kg_err *err)
{
    int rc = kg_armpage_create(&k->page, k->arm, err);
    if (rc != KG_OK) return rc;
    kg_ah_reply rep;
    int sent = send_req(k, KG_AH_PAGE, NULL, 0, &k->page.fd, 1);
    close(k->page.fd);
    k->page.fd = -1;
    if (sent != 0) return host_fault(k, 0, lim, err);
    if ((rc = wait_reply(k, KG_AH_PAGE, lim, &rep, err)) != KG_OK) return rc;
    if (rep.status != KG_AH_OK) return kg_hostlink_refused(&k->link, "refused its request page", rep.msg, err);
    k->page_expect = kg_armpage_state(k->page.pg);
    return KG_OK;
}

static int spawn_host(kg_backend *be, const kg_plan *plan, const kg_arm *arm, kg_kernel *k, kg_err *err)
{
    cpu_ctx *c = be->ctx;
    char exe[PATH_MAX];
    int rc;
    k->hosted = 1;
    if (be->settings->armhost_exe != NULL && be->settings->armhost_exe[0] != '\0')
        snprintf(exe, sizeof exe, "%s", be->settings->armhost_exe);
    else if ((rc = kg_self_exe(exe, sizeof exe, err)) != KG_OK)
        return rc;
    if ((rc = kg_hostlink_mkdir(&k->link, err)) != KG_OK) return rc;
    char envstore[3 * PATH_MAX], *envp[8];
    if (kg_sandbox_env(k->link.dir, envstore, sizeof envstore, envp, 8) < 0)
        return kg_errorf(err, KG_EINTERNAL, "arm '%s': environment does not fit", arm->name);
    char ppid[32], mem[32], cpus[32], pin[16];
    snprintf(pin, sizeof pin, "%d", c->pin_cpu);
    snprintf(ppid, sizeof ppid, "%ld", (long)getpid());
    /* address space: 4 GiB, or twice what the worker maps plus 1 GiB */
    double mib = 4096.0, need = (2.0 * (double)c->mapped) / 1048576.0 + 1024.0;
    if (need > mib) mib = need;
    snprintf(mem, sizeof mem, "%.0f", mib);
    snprintf(cpus, sizeof cpus, "%.0f", ceil(plan->campaign.timeout_s) + 1);
    /* the signing keys' folders, which the arm's code must not read */
    char hide[2 * PATH_MAX + 2] = "";
    const kg_settings *set = be->settings;
    snprintf(hide, sizeof hide, "%s%s%s", set->key_dir != NULL ? set->key_dir : "",
             set->key_dir != NULL && set->hide_dir != NULL ? ":" : "", set->hide_dir != NULL ? set->hide_dir : "");
    char *argv[] = { exe, (char *)"armhost", (char *)"--so", k->so, (char *)"--entry", (char *)arm->entry,
                     (char *)"--dir", k->link.dir, (char *)"--parent", ppid, (char *)"--mem-mib", mem,
                     (char *)"--cpu-s", cpus, (char *)"--hide", hide, (char *)"--cpu", pin, NULL };
    /* kgate's own host: this image, whatever its path names now */
    const char *prog = be->settings->armhost_exe != NULL && be->settings->armhost_exe[0] != '\0' ? exe : KG_SELF_EXEC;
    if ((rc = kg_hostlink_spawn(&k->link, prog, argv, envp, KG_SANDBOX_SOCK_FD, err)) != KG_OK) return rc;
    k->hosted = 1;
    k->have_cpuclk = clock_getcpuclockid(k->link.pid, &k->cpuclk) == 0;
    k->timeout_s = plan->campaign.timeout_s > 0 ? plan->campaign.timeout_s : 600;
    k->cpu_mark = -1;
    k->no_steal_credit = set->no_steal_credit;
    kg_ah_reply hello;
    double lim = k->timeout_s < 60 ? k->timeout_s : 60;
    if ((rc = wait_reply(k, KG_AH_HELLO, lim, &hello, err)) != KG_OK) return rc;
    if (hello.status != KG_AH_OK) {
        int st = hello.status;
        kg_hostlink_kill(&k->link);
        host_fault(k, 0, lim, NULL);
        if (st == KG_AH_NOENTRY)
            return kg_errorf(err, KG_EBACKEND, "%s:%d: arm '%s': no function '%s' in its %s (set entry = NAME)",
                             plan->path, arm->line, arm->name, arm->entry, kg_arm_is_image(arm) ? "image" : "source");
        if (st == KG_AH_NOLOAD)
            return kg_errorf(err, KG_EBACKEND, "%s:%d: arm '%s': cannot load %s: %s", plan->path, arm->line,
                             arm->name, k->so, hello.msg);
        return kg_errorf(err, KG_EBACKEND, "arm '%s': its host could not set up its sandbox: %s", arm->name,
                         hello.msg);
    }
    k->prot = hello.prot;
    if ((rc = check_pinned(k, c->pin_cpu, err)) != KG_OK) return rc;
    if ((rc = link_page(k, lim, err)) != KG_OK) return rc;
    k->cpu_mark = settled_mark(k);
    return KG_OK;
}

/* A library arm's load: its helper (started at the arm's first load in
 * this worker, again after a fault) takes the case. */
static int lib_load(kg_backend *be, const kg_plan *plan, int a, int kase, const char *build_dir, kg_kernel **out,
                    kg_err *err)
{
    cpu_ctx *c = be->ctx;
    const kg_arm *arm = &plan->arms[a];
    if (a >= c->nlibs) return kg_errorf(err, KG_EINTERNAL, "arm %d of a plan the backend was not opened for", a);
    double t = plan->campaign.timeout_s > 0 ? plan->campaign.timeout_s : 600;
    int rc = kg_libarm_acquire(&c->libs[a], be->settings, plan, a, NULL, t, err);
    if (rc != KG_OK) return rc;
    int slot = -1;
    char record[KG_LIBRARY_RECORD_MAX];
    if ((rc = kg_libarm_load(c->libs[a], &plan->cases[kase], build_dir, &slot, record, err)) != KG_OK) return rc;
    kg_kernel *k = calloc(1, sizeof *k);
    if (k == NULL) return kg_errorf(err, KG_ENOMEM, "out of memory loading arm %s", arm->name);
    snprintf(k->arm, sizeof k->arm, "%s", arm->name);
    k->lib = c->libs[a];
    k->lib_slot = slot;
    snprintf(k->lib_record, sizeof k->lib_record, "%s", record);
    size_t len = 0;
    kg_libarm_source(&len);
    k->image_bytes = len;
    kg_libarm_source_sha256(k->image_sha256);
    c->total_escapes = 0;
    k->total_escapes = &c->total_escapes;
    *out = k;
    return KG_OK;
}

static int cpu_load(kg_backend *be, const kg_plan *plan, int a, int kase, const char *build_dir,
                    kg_kernel **out, kg_err *err)
{
    const kg_arm *arm = &plan->arms[a];
    if (kg_libarm_is(arm)) return lib_load(be, plan, a, kase, build_dir, out, err);
    char so[PATH_MAX];
    so_path(be, build_dir, arm, so, sizeof so);
    if (!kg_path_exists(so)) {
        int rc = cpu_build(be, plan, a, build_dir, err);
        if (rc != KG_OK) return rc;
    }
    kg_kernel *k = calloc(1, sizeof *k);
    if (k == NULL) return kg_errorf(err, KG_ENOMEM, "out of memory loading arm %s", arm->name);
    snprintf(k->arm, sizeof k->arm, "%s", arm->name);
    cpu_ctx *c = be->ctx;
    c->total_escapes = 0;
    k->total_escapes = &c->total_escapes;
    if (realpath(so, k->so) == NULL) snprintf(k->so, sizeof k->so, "%s", so);
    struct stat st;
    if (stat(k->so, &st) == 0) k->image_bytes = (size_t)st.st_size;
    if (kg_sha256_file(k->so, k->image_sha256, NULL) != KG_OK) k->image_sha256[0] = '\0';
    if (!arm->trusted) {
        int rc = kg_hostlink_init(&k->link, arm->name, KG_AH_VIOLATION, sizeof(kg_ah_reply), err);
        if (rc == KG_OK) rc = spawn_host(be, plan, arm, k, err);
        if (rc != KG_OK) {
            cpu_unload(be, k);
            return rc;
        }
        *out = k;
        return KG_OK;
    }
    k->handle = dlopen(so, RTLD_NOW | RTLD_LOCAL);
    if (k->handle == NULL) {
        int rc = kg_errorf(err, KG_EBACKEND, "%s:%d: arm '%s': cannot load %s: %s", plan->path, arm->line,
                           arm->name, so, dlerror());
        free(k);
        return rc;
    }
    void *sym = dlsym(k->handle, arm->entry);
    if (sym == NULL) {
        int rc = kg_errorf(err, KG_EBACKEND, "%s:%d: arm '%s': no function '%s' in its %s (set entry = NAME)",
                           plan->path, arm->line, arm->name, arm->entry, kg_arm_is_image(arm) ? "image" : "source");
        dlclose(k->handle);
        free(k);
        return rc;
    }
    memcpy(&k->fn, &sym, sizeof k->fn);
    *out = k;
    return KG_OK;
}

static void cpu_unload(kg_backend *be, kg_kernel *k)
{
    cpu_ctx *c = be->ctx;
    if (k == NULL) return;
    if (c != NULL && c->last == k) c->last = NULL;
    if (k->hosted) {
        if (k->link.pid > 0 && !k->link.dead) announce_frame(k);
        kg_hostlink_close(&k->link, KG_AH_QUIT, NULL);
        kg_armpage_destroy(&k->page);
    }
    else if (k->lib == NULL) {
        free(k->link.out);
        free(k->link.rx);
    }
    /* a library arm's helper stays for the arm's next case; this slot goes */
    if (k->lib != NULL && c != NULL && (size_t)k->lib_slot < (size_t)1 << 30) kg_libarm_unload(k->lib, k->lib_slot);
    if (k->handle != NULL) dlclose(k->handle);
    free(k);
}

static int host_bind(kg_backend *be, kg_kernel *k, const kg_binding *b, kg_err *err)
{
    cpu_ctx *c = be->ctx;
    kg_ah_bind m;
    kg_ah_reply rep;
    int fds[KG_AH_NBUF], nfd = 0, rc;
    if ((rc = before_request(k, err)) != KG_OK) return rc;
    memset(&m, 0, sizeof m);
    m.nin = b->nin < KG_MAX_IN ? b->nin : KG_MAX_IN;
    m.nout = b->nout < KG_MAX_OUT ? b->nout : KG_MAX_OUT;
    m.has_ws = b->ws.ptr != NULL;
    m.nop = b->nop;
    m.op_outs = b->op_outs && b->nop > 0 && m.nout > 0;
    int base = m.nin + m.nout + m.has_ws, sets = base + m.nop * m.nin;
    for (int i = 0; i < sets + (m.op_outs ? m.nop * m.nout : 0); i++) {
        const kg_dbuf *d = i < m.nin ? &b->in[i] : i < m.nin + m.nout ? &b->out[i - m.nin] : i < base ? &b->ws
                           : i < sets ? &b->op_in[(i - base) / m.nin][(i - base) % m.nin]
                           : &b->op_out[(i - sets) / m.nout][(i - sets) % m.nout];
        cpu_buf *cb = find_buf(c, d->ptr);
        if (cb == NULL)
            return kg_errorf(err, KG_EINTERNAL, "arm '%s': a buffer bound that the cpu backend did not allocate", k->arm);
        fds[nfd++] = i < m.nin || (i >= base && i < sets) ? cb->ro_fd : cb->fd;
        m.bytes[i] = cb->len;
    }
    m.ws_bytes = b->ws.bytes;
    m.dtype = (int)b->kase->dtype;
    m.M = b->kase->M;
    m.N = b->kase->N;
    m.K = b->kase->K;
    m.splits = b->kase->splits;
    m.eps = b->kase->eps;
    m.nvars = b->kase->nvars < KG_KARGS_VARS ? b->kase->nvars : KG_KARGS_VARS;
    for (int v = 0; v < m.nvars; v++) {
        snprintf(m.var_name[v], sizeof m.var_name[v], "%s", b->kase->vars[v].name);
        m.var_i[v] = b->kase->vars[v].i;
        m.var_r[v] = b->kase->vars[v].r;
    }
    double lim = request_limit(k, 1);
    announce_frame(k);
    if (send_req(k, KG_AH_BIND, &m, sizeof m, fds, nfd) != 0) return host_fault(k, 0, lim, err);
    if ((rc = wait_reply(k, KG_AH_BIND, lim, &rep, err)) != KG_OK) return rc;
    k->cpu_mark = settled_mark(k);
    if (rep.status != KG_AH_OK) {
        return kg_hostlink_refused(&k->link, "refused its buffers", rep.msg, err);
    }
    return KG_OK;
}

/* A library arm's buffers: the memfds themselves (inputs read-only). */
static int lib_bind(kg_backend *be, kg_kernel *k, const kg_binding *b, kg_err *err)
{
    cpu_ctx *c = be->ctx;
    kg_libarm_buf bufs[KG_MAX_IN * (1 + KG_BIND_MAX_OP_SETS) + KG_MAX_OUT];
    int n = 0;
    for (int j = 0; j <= b->nop; j++)
        for (int i = 0; i < b->nin; i++) {
            const kg_dbuf *d = j == 0 ? &b->in[i] : &b->op_in[j - 1][i];
            cpu_buf *cb = find_buf(c, d->ptr);
            if (cb == NULL) return kg_errorf(err, KG_EINTERNAL, "arm '%s': a buffer bound that the cpu backend did not allocate", k->arm);
            bufs[n++] = (kg_libarm_buf){ .role = KG_CARG_IN, .index = i, .set = j, .bytes = cb->len, .fd = cb->ro_fd };
        }
    for (int o = 0; o < b->nout; o++) {
        cpu_buf *cb = find_buf(c, b->out[o].ptr);
        if (cb == NULL) return kg_errorf(err, KG_EINTERNAL, "arm '%s': a buffer bound that the cpu backend did not allocate", k->arm);
        bufs[n++] = (kg_libarm_buf){ .role = KG_CARG_OUT, .index = o, .bytes = cb->len, .fd = cb->fd };
    }
    return kg_libarm_bind(k->lib, k->lib_slot, bufs, n, b->pack, b->nop, k->lib_record, err);
}

static int cpu_bind(kg_backend *be, kg_kernel *k, const kg_binding *b, kg_err *err)
{
    if (b->nop < 0 || b->nop > KG_BIND_MAX_OP_SETS || b->nop > b->pack - 1)
        return kg_errorf(err, KG_EINTERNAL, "arm '%s': %d input sets for pack %d", k->arm, b->nop, b->pack);
    k->pack = b->pack;
    k->nop = b->nop;
    for (int j = 0; j <= b->nop; j++) {
        for (int i = 0; i < b->nin && i < KG_MAX_IN; i++) k->set_in[j][i] = j == 0 ? b->in[i].ptr : b->op_in[j - 1][i].ptr;
        for (int o = 0; o < KG_MAX_OUT; o++)
            k->set_out[j][o] = o >= b->nout ? NULL : j > 0 && b->op_outs ? b->op_out[j - 1][o].ptr : b->out[o].ptr;
    }
    if (k->hosted) return host_bind(be, k, b, err);
    if (k->lib != NULL) return lib_bind(be, k, b, err);
    memset(&k->args, 0, sizeof k->args);
    k->args.abi = KG_KARGS_ABI;
    k->args.dtype = (int)b->kase->dtype;
    for (int i = 0; i < b->nin && i < KG_MAX_IN; i++) k->args.in[i] = b->in[i].ptr;
    for (int i = 0; i < b->nout && i < KG_MAX_OUT; i++) k->args.out[i] = b->out[i].ptr;
    k->args.ws = b->ws.ptr;
    k->args.ws_bytes = b->ws.bytes;
    k->args.M = b->kase->M;
    k->args.N = b->kase->N;
    k->args.K = b->kase->K;
    k->args.splits = b->kase->splits;
    k->args.eps = b->kase->eps;
    k->args.nvars = b->kase->nvars < KG_KARGS_VARS ? b->kase->nvars : KG_KARGS_VARS;
    for (int v = 0; v < k->args.nvars; v++) {
        snprintf(k->args.var_name[v], sizeof k->args.var_name[v], "%s", b->kase->vars[v].name);
        k->args.var_i[v] = b->kase->vars[v].i;
        k->args.var_r[v] = b->kase->vars[v].r;
    }
    return KG_OK;
}

static int cpu_run(kg_backend *be, kg_kernel *k, kg_err *err)
{
    if (k->hosted) {
        double wall;
        return host_run(k, 1, 0, ((cpu_ctx *)be->ctx)->pin_cpu, &wall, err);
    }
    if (k->lib != NULL) return kg_libarm_run(k->lib, k->lib_slot, err);
    k->fn(&k->args);
    return KG_OK;
}

static int cpu_time(kg_backend *be, kg_kernel *k, const kg_sample_ctx *ctx, double *ns, kg_err *err)
{
    (void)ctx;
    int pack = k->pack > 0 ? k->pack : 1;
    if (k->hosted) {
        cpu_ctx *c = be->ctx;
        double wall = 0;
        int rc = host_run(k, pack, 1, c->pin_cpu, &wall, err);
        *k->total_escapes += k->pending_escapes;
        k->pending_escapes = 0;
        if (rc != KG_OK) return rc;
        k->samples++;
        c->last = k;
        c->last_samples = k->samples;
        c->last_escapes = k->escapes;
        c->last_cpu_ns = k->last_cpu_ns;
        c->last_host_ns = k->last_host_ns;
        c->last_ran_cpu = k->ran_cpu;
        *ns = wall / pack;
        return KG_OK;
    }
    if (k->lib != NULL) {
        /* the helper's own clock around pack calls: kgate's code, trusted */
        double total = 0, host = 0;
        int rc = kg_libarm_time(k->lib, k->lib_slot, pack, &total, &host, err);
        if (rc != KG_OK) return rc;
        cpu_ctx *c = be->ctx;
        c->last = k;
        c->last_samples = ++k->samples;
        c->last_escapes = 0;
        c->last_cpu_ns = (double)NAN;
        c->last_host_ns = host;
        c->last_ran_cpu = kg_proc_last_cpu(kg_libarm_pid(k->lib));
        *ns = total / pack;
        return KG_OK;
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC_RAW, &t0);
    if (k->nop == 0) {
        for (int i = 0; i < pack; i++) k->fn(&k->args);
    } else {
        for (int i = 0; i < pack; i++) {
            int set = kg_binding_op_set(k->nop, i, pack);
            memcpy(k->args.in, k->set_in[set], sizeof k->args.in);
            memcpy(k->args.out, k->set_out[set], sizeof k->args.out);
            k->fn(&k->args);
        }
    }
    clock_gettime(CLOCK_MONOTONIC_RAW, &t1);
    int ran = sched_getcpu();
    double total = (double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec);
    *ns = total / pack;
    /* a trusted arm's telemetry: no host to watch, no escapes */
    cpu_ctx *c = be->ctx;
    c->last = k;
    c->last_samples = ++k->samples;
    c->last_escapes = 0;
    c->last_cpu_ns = (double)NAN;
    c->last_host_ns = total;
    c->last_ran_cpu = ran;
    return KG_OK;
}

/* The timing-integrity counters of the hosted arm timed last (an arm's
 * escapes are its own); device readings the CPU has none of are -1. */
static int cpu_telemetry(kg_backend *be, kg_telemetry *out, kg_err *err)
{
    (void)err;
    cpu_ctx *c = be->ctx;
    memset(out, 0, sizeof *out);
    out->t_ns = now_ns();
    out->sm_clock_mhz = out->mem_clock_mhz = -1;
    out->power_w = (double)NAN;
    out->temp_c = -1;
    out->clock_event_reasons = 0;
    out->foreign_procs = -1;
    out->samples = c->last != NULL ? c->last->samples : c->last_samples;
    out->escapes = c->total_escapes;
    out->last_event_ns = c->last != NULL ? c->last_cpu_ns : (double)NAN;
    out->last_host_ns = c->last != NULL ? c->last_host_ns : (double)NAN;
    out->cpu = c->last != NULL ? c->last_ran_cpu : -1;
    return KG_OK;
}

static int cpu_resources(kg_backend *be, kg_kernel *k, kg_resources *out, kg_err *err)
{
    (void)be; (void)err;
    memset(out, 0, sizeof *out);
    out->regs = out->static_shared_bytes = out->dynamic_shared_bytes = -1;
    out->local_bytes = out->const_bytes = out->max_threads_per_block = -1;
    out->ptx_version = out->binary_version = -1;
    for (int i = 0; i < 3; i++) out->grid[i] = out->block[i] = -1;
    out->launches = 1;
    snprintf(out->arch, sizeof out->arch, "cpu");
    out->image_bytes = k->image_bytes;
    snprintf(out->image_sha256, sizeof out->image_sha256, "%s", k->image_sha256);
    if (k->hosted) kg_sandbox_text(k->prot, out->sandbox, sizeof out->sandbox);
    else if (k->lib != NULL) snprintf(out->sandbox, sizeof out->sandbox, "library helper (kgate's code, not sandboxed)");
    else snprintf(out->sandbox, sizeof out->sandbox, "trusted (in the worker)");
    if (k->lib != NULL) snprintf(out->library, sizeof out->library, "%s", k->lib_record);
    return KG_OK;
}

static void cpu_describe(kg_backend *be, char *buf, size_t cap)
{
    (void)be;
    char model[256] = "unknown CPU";
    FILE *fp = fopen("/proc/cpuinfo", "r");
    if (fp != NULL) {
        char line[512];
        while (fgets(line, sizeof line, fp) != NULL) {
            if (strncmp(line, "model name", 10) == 0) {
                char *colon = strchr(line, ':');
                if (colon != NULL) {
                    snprintf(model, sizeof model, "%s", colon + 2);
                    model[strcspn(model, "\n")] = '\0';
                }
                break;
            }
        }
        fclose(fp);
    }
    snprintf(buf, cap, "%s, %ld online cores", model, sysconf(_SC_NPROCESSORS_ONLN));
}

/* The prestart slot: the library arms' helpers, begun together and every
 * hello read before the first case (here they share the worker's CPU, so
 * this moves their start, it does not shorten it; C arms' hosts start in
 * milliseconds at their load) */
static void cpu_prestart(kg_backend *be, const unsigned char *skip)
{
    cpu_ctx *c = be->ctx;
    if (c == NULL || be->plan == NULL || c->libs == NULL) return;
    double t = be->plan->campaign.timeout_s > 0 ? be->plan->campaign.timeout_s : 600;
    kg_libarm_prestart(be->settings, be->plan, c->libs, c->nlibs, skip, NULL, t);
}

/* C arms, trusted and hosted, write an output per operation when bound;
 * a library arm's helper writes out[] for every operation */
static int cpu_op_outputs(const kg_backend *be, const kg_kernel *k)
{
    (void)be;
    return k->lib == NULL;
}

const kg_backend_ops kg_backend_cpu = {
    .abi = KG_BACKEND_ABI,
    .name = "cpu",
    .open = cpu_open,
    .close = cpu_close,
    .build = cpu_build,
    .alloc = cpu_alloc,
    .free = cpu_free,
    .upload = cpu_upload,
    .download = cpu_download,
    .load = cpu_load,
    .unload = cpu_unload,
    .bind = cpu_bind,
    .run = cpu_run,
    .time = cpu_time,
    .flush = NULL,
    .describe = cpu_describe,
    .telemetry = cpu_telemetry,
    .resources = cpu_resources,
    .caps = KG_CAP_EXECUTES | KG_CAP_QUIET_HOST | KG_CAP_HOST_CPU,
    .summary = "C kernels compiled with the system cc; timed with CLOCK_MONOTONIC_RAW (the default without a GPU)",
    .peaks = kg_cpu_peaks,
    .fill = cpu_fill,
    .compiler = cpu_compiler,
    .op_outputs = cpu_op_outputs,
    .prestart = cpu_prestart,
};

/* sandbox.c: the arm host's confinement (sandbox.h).
 *
 * The seccomp filter allows what dlopen of an already compiled shared
 * object and a numeric kernel need, and nothing that makes a process, a
 * connection, a file or a signal for another process:
 *   memory      brk mmap mprotect (never writable and executable at once)
 *               munmap mremap madvise
 *   descriptors read write readv writev pread64 lseek close fstat
 *               newfstatat statx, and open/openat read-only (until
 *               kg_sandbox_lock); sendmsg sendto recvmsg recvfrom on the
 *               descriptors it has (socket creation is denied)
 *   time        clock_gettime clock_getres gettimeofday time nanosleep
 *               clock_nanosleep
 *   threads     futex sched_yield sched_getaffinity getcpu (no clone: no
 *               thread; no sched_setaffinity: the host stays on the one
 *               CPU the worker pinned itself and its hosts to)
 *   signals     rt_sigreturn rt_sigprocmask sigaltstack, rt_sigaction of
 *               any signal but SIGSYS, kill and tgkill of itself only
 *   prctl       PR_SET_VMA only (the C library names its mappings)
 *   identity    getpid gettid getppid getuid geteuid getgid getegid
 *               getrandom getrlimit, prlimit64 reading only
 *   exit        exit exit_group
 *   seccomp     SECCOMP_SET_MODE_FILTER only, to stack the second filter
 *               (kg_sandbox_lock), which denies it, open and openat
 * Everything else traps: clone, clone3, fork, vfork, execve, execveat,
 * ptrace, process_vm_readv/writev, sched_setaffinity, socket, connect, bind, open for
 * writing or creating, unlink, rename, mkdir, chdir, setsid, any other prctl (PR_SET_PDEATHSIG, PR_SET_SECCOMP, ...),
 * ioctl, setitimer, timer_create, mount, unshare, seccomp... */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/seccomp.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "sandbox/sandbox.h"
#include "base/util.h"

extern char **environ;

#ifndef __O_TMPFILE
#define __O_TMPFILE 020000000
#endif

#if defined(__SANITIZE_ADDRESS__)
#define KG_SANDBOX_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define KG_SANDBOX_ASAN 1
#endif
#endif
#ifndef KG_SANDBOX_ASAN
#define KG_SANDBOX_ASAN 0
#endif

static void (*violation_cb)(int nr);

static void on_sigsys(int sig, siginfo_t *si, void *uc)
{
    (void)sig; (void)uc;
    if (violation_cb != NULL && si != NULL) violation_cb(si->si_syscall);
    /* SA_RESETHAND made SIGSYS fatal again; it is delivered to this
     * thread when the handler returns and the mask is restored, before
     * the denied call's (unexecuted) return is seen.  Thread-directed: in
     * a process of several threads (a CUDA driver's, OpenBLAS's) a
     * process-wide signal could be taken by another thread while this
     * one went on */
    syscall(SYS_tgkill, getpid(), syscall(SYS_gettid), SIGSYS);
}

/* SIGSYS to on_sigsys, which calls cb; unblocked */
static void trap_sigsys(void (*cb)(int nr))
{
    violation_cb = cb;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_sigsys;
    sa.sa_flags = SA_SIGINFO | SA_RESETHAND;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSYS, &sa, NULL);
    sigset_t unblock;
    sigemptyset(&unblock);
    sigaddset(&unblock, SIGSYS);
    sigprocmask(SIG_UNBLOCK, &unblock, NULL);
}

static const char *const names[] = { "seccomp", "nnp", "pdeathsig", "rlimits", "userns", "pidns",
                                     "netns", "mountns", "privdir", "env", "fds", "noopen", "hide", "rofs" };

void kg_sandbox_text(unsigned mask, char *buf, size_t cap)
{
    size_t len = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (mask & (1u << i)) {
            int n = snprintf(buf + len, cap - len, "%s%s", len ? "," : "", names[i]);
            if (n < 0 || (size_t)n >= cap - len) break;
            len += (size_t)n;
        }
    if (len == 0) snprintf(buf, cap, "none");
}

void kg_sandbox_syscall_name(int nr, char *buf, size_t cap)
{
    char *name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, nr);
    if (name != NULL) snprintf(buf, cap, "%s", name);
    else snprintf(buf, cap, "syscall %d", nr);
    free(name);
}

/* OPENBLAS_NUM_THREADS=1: kgate links OpenBLAS, whose constructor would
 * otherwise start worker threads in the host before main */
static const char *const env_names[] = { "PATH=/usr/bin:/bin", "LANG=C", "OPENBLAS_NUM_THREADS=1",
#if KG_SANDBOX_ASAN
                                         /* a sanitizer build's host: its runtime's fault and exit
                                          * handlers would make calls the filter denies */
                                         "ASAN_OPTIONS=handle_segv=0:handle_sigbus=0:detect_leaks=0",
#endif
                                         "HOME=", "TMPDIR=" };

int kg_sandbox_env(const char *dir, char *store, size_t cap, char *envp[], int max)
{
    size_t used = 0;
    int n = 0;
    for (size_t i = 0; i < sizeof env_names / sizeof env_names[0] && n < max - 1; i++) {
        const char *v = env_names[i];
        int w = snprintf(store + used, cap - used, "%s%s", v, v[strlen(v) - 1] == '=' ? dir : "");
        if (w < 0 || (size_t)w >= cap - used) return -1;
        envp[n++] = store + used;
        used += (size_t)w + 1;
    }
    envp[n] = NULL;
    return n;
}

/* 1 when every variable of the environment is one of names' (NULL: the
 * arm host's whitelist). */
static int env_is_whitelist(const char *const *allowed)
{
    for (char **e = environ; e != NULL && *e != NULL; e++) {
        int ok = 0;
        if (allowed == NULL) {
            for (size_t i = 0; i < sizeof env_names / sizeof env_names[0]; i++) {
                size_t klen = strcspn(env_names[i], "=") + 1;
                if (strncmp(*e, env_names[i], klen) == 0) ok = 1;
            }
        } else {
            for (size_t i = 0; allowed[i] != NULL; i++)
                if (strncmp(*e, allowed[i], strcspn(allowed[i], "=") + 1) == 0) ok = 1;
        }
        if (!ok) return 0;
    }
    return 1;
}

static int close_others(void)
{
    /* 0, 1, 2 and the socket stay */
    if (syscall(SYS_close_range, KG_SANDBOX_SOCK_FD + 1, ~0u, 0) != 0) {
        for (int fd = KG_SANDBOX_SOCK_FD + 1; fd < 4096; fd++) close(fd);
    }
    return 0;
}

static unsigned try_namespaces(void)
{
    unsigned got = 0;
    int all = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWPID;
    if (unshare(all) == 0) return KG_SBX_USERNS | KG_SBX_MOUNTNS | KG_SBX_NETNS | KG_SBX_PIDNS;
    /* one by one, where some are refused */
    if (unshare(CLONE_NEWUSER) == 0) got |= KG_SBX_USERNS;
    if (unshare(CLONE_NEWNS) == 0) got |= KG_SBX_MOUNTNS;
    if (unshare(CLONE_NEWNET) == 0) got |= KG_SBX_NETNS;
    if (unshare(CLONE_NEWPID) == 0) got |= KG_SBX_PIDNS;
    return got;
}

/* Covers every existing folder of the colon-separated list with an
 * empty read-only tmpfs, in this process's own mount namespace (mounts
 * made private first, so that nothing reaches the host's): 0 when every
 * one is covered (or the list is empty), -1 otherwise. */
static int hide_folders(const char *list)
{
    if (list == NULL || list[0] == '\0') return 0;
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) return -1;
    int bad = 0;
    char one[4096];
    for (const char *p = list; *p; ) {
        size_t k = strcspn(p, ":");
        if (k > 0 && k < sizeof one) {
            memcpy(one, p, k);
            one[k] = '\0';
            struct stat st;
            if (stat(one, &st) == 0 && S_ISDIR(st.st_mode) &&
                mount("kgate-hidden", one, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=4k,mode=000") != 0)
                bad = 1;
        }
        p += k + (p[k] == ':');
    }
    return bad ? -1 : 0;
}

static int set_limit(int what, rlim_t soft, rlim_t hard)
{
    struct rlimit r = { soft, hard };
    return setrlimit(what, &r);
}

static int set_limits(const kg_sandbox_opts *o)
{
    int bad = 0;
    /* an AddressSanitizer build reserves terabytes of shadow: no RLIMIT_AS */
    if (o->mem_bytes > 0 && !KG_SANDBOX_ASAN) bad |= set_limit(RLIMIT_AS, o->mem_bytes, o->mem_bytes);
    if (o->pyhelper <= 0) bad |= set_limit(RLIMIT_FSIZE, 0, 0);
    bad |= set_limit(RLIMIT_CORE, 0, 0);
    bad |= set_limit(RLIMIT_NPROC, 1, 1);
    /* a BIND brings up to KG_AH_NBUF descriptors at once (inputs = fresh
     * with pack > 1: an input set per operation), mapped and closed */
    bad |= set_limit(RLIMIT_NOFILE, KG_MAX_PASSED_FDS + 16, KG_MAX_PASSED_FDS + 16);
    if (o->cpu_s > 0) bad |= set_limit(RLIMIT_CPU, (rlim_t)o->cpu_s, (rlim_t)o->cpu_s + 1);
    return bad ? -1 : 0;
}

#define ALLOW(ctx, call) seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(call), 0)

/* kg_sandbox_opts.blas and .pyhelper of the sandbox being entered */
static int filter_blas;
static pid_t filter_pyhelper;

static int build_filter(scmp_filter_ctx ctx, pid_t self)
{
    static const int plain[] = {
        SCMP_SYS(read), SCMP_SYS(write), SCMP_SYS(readv), SCMP_SYS(writev), SCMP_SYS(pread64),
        SCMP_SYS(lseek), SCMP_SYS(close), SCMP_SYS(fstat), SCMP_SYS(newfstatat), SCMP_SYS(statx),
        SCMP_SYS(brk), SCMP_SYS(munmap), SCMP_SYS(mremap), SCMP_SYS(madvise),
        SCMP_SYS(sendmsg), SCMP_SYS(sendto), SCMP_SYS(recvmsg), SCMP_SYS(recvfrom),
        SCMP_SYS(clock_gettime), SCMP_SYS(clock_getres), SCMP_SYS(gettimeofday), SCMP_SYS(time),
        SCMP_SYS(nanosleep), SCMP_SYS(clock_nanosleep),
        SCMP_SYS(futex), SCMP_SYS(sched_yield), SCMP_SYS(sched_getaffinity), SCMP_SYS(getcpu),
        SCMP_SYS(rt_sigreturn), SCMP_SYS(rt_sigprocmask), SCMP_SYS(sigaltstack),
        SCMP_SYS(getpid), SCMP_SYS(gettid), SCMP_SYS(getppid), SCMP_SYS(getuid), SCMP_SYS(geteuid),
        SCMP_SYS(getgid), SCMP_SYS(getegid), SCMP_SYS(getrandom), SCMP_SYS(getrlimit),
        SCMP_SYS(exit), SCMP_SYS(exit_group),
    };
    int rc = 0;
    for (size_t i = 0; i < sizeof plain / sizeof plain[0]; i++)
        rc |= seccomp_rule_add(ctx, SCMP_ACT_ALLOW, plain[i], 0);
    /* never writable and executable at once */
    const scmp_datum_t W = PROT_WRITE, X = PROT_EXEC;
    rc |= seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(mmap), 1, SCMP_A2(SCMP_CMP_MASKED_EQ, W, 0));
    rc |= seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(mmap), 1, SCMP_A2(SCMP_CMP_MASKED_EQ, X, 0));
    rc |= seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(mprotect), 1, SCMP_A2(SCMP_CMP_MASKED_EQ, W, 0));
    rc |= seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(mprotect), 1, SCMP_A2(SCMP_CMP_MASKED_EQ, X, 0));
    /* open read-only: no write access, no create, truncate, append or tmpfile */
    const scmp_datum_t wmask = O_ACCMODE | O_CREAT | O_TRUNC | O_APPEND | __O_TMPFILE;
    rc |= seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(openat), 1, SCMP_A2(SCMP_CMP_MASKED_EQ, wmask, O_RDONLY));
    rc |= seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(open), 1, SCMP_A1(SCMP_CMP_MASKED_EQ, wmask, O_RDONLY));
    /* signals: its own handlers but SIGSYS's, and only to itself */
    rc |= seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(rt_sigaction), 1, SCMP_A0(SCMP_CMP_NE, SIGSYS));
    rc |= seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(kill), 1, SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)self));
    rc |= seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(tgkill), 1, SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)self));
    /* prctl only to name a mapping (the C library names its allocations) */
#ifndef PR_SET_VMA
#define PR_SET_VMA 0x53564d41
#endif
    rc |= seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(prctl), 1, SCMP_A0(SCMP_CMP_EQ, PR_SET_VMA));
    /* seccomp itself: only to stack a filter (kg_sandbox_lock's, which
     * then denies it); a filter can only make the host stricter */
    rc |= seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(seccomp), 1, SCMP_A0(SCMP_CMP_EQ, SECCOMP_SET_MODE_FILTER));
    /* limits: read, never set */
    rc |= seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(prlimit64), 1, SCMP_A2(SCMP_CMP_EQ, 0));
    /* OpenBLAS's allocator: its own memory's NUMA policy and the machine's size */
    if (filter_pyhelper > 0) {
        rc |= ALLOW(ctx, memfd_create);
        rc |= ALLOW(ctx, pwrite64);
        rc |= ALLOW(ctx, ftruncate);
        rc |= ALLOW(ctx, poll);
        rc |= ALLOW(ctx, ppoll);
        const scmp_datum_t lo = 0xffffffffu, pid = (uint32_t)filter_pyhelper, grp = (uint32_t)-filter_pyhelper;
        rc |= seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(wait4), 1, SCMP_A0(SCMP_CMP_MASKED_EQ, lo, pid));
        rc |= seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(kill), 1, SCMP_A0(SCMP_CMP_MASKED_EQ, lo, pid));
        rc |= seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(kill), 1, SCMP_A0(SCMP_CMP_MASKED_EQ, lo, grp));
    }
    if (filter_blas) {
        rc |= ALLOW(ctx, mbind);
        rc |= ALLOW(ctx, get_mempolicy);
        rc |= ALLOW(ctx, set_mempolicy);
        rc |= ALLOW(ctx, sysinfo);
    }
    return rc;
}

static int lock_rules(scmp_filter_ctx ctx, pid_t self);

/* A filter of default action dflt and the rules of add, loaded (no new
 * privileges must be set already); what names it in why. */
static int load_filter(uint32_t dflt, int (*add)(scmp_filter_ctx, pid_t), const char *what, char *why, size_t cap)
{
    scmp_filter_ctx ctx = seccomp_init(dflt);
    if (ctx == NULL) {
        snprintf(why, cap, "seccomp_init failed");
        return -1;
    }
    int rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0);
    rc |= add(ctx, getpid());
    if (rc == 0) rc = seccomp_load(ctx);
    seccomp_release(ctx);
    if (rc != 0) {
        snprintf(why, cap, "cannot load %s: %s", what, strerror(rc < 0 ? -rc : rc));
        return -1;
    }
    return 0;
}

/* The first steps of every confinement: no new privileges, death with
 * the parent, and the parent (the worker) still there. */
static int enter_first(const kg_sandbox_opts *o, unsigned *active, char *why, size_t cap)
{
    *active = 0;
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
        snprintf(why, cap, "PR_SET_NO_NEW_PRIVS: %s", strerror(errno));
        return -1;
    }
    *active |= KG_SBX_NNP;
    if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) == 0) *active |= KG_SBX_PDEATHSIG;
    if (o->parent > 0 && getppid() != o->parent) {
        snprintf(why, cap, "the worker (pid %ld) is gone", (long)o->parent);
        return -1;
    }
    return 0;
}

int kg_sandbox_enter(const kg_sandbox_opts *o, unsigned *active, char *why, size_t cap)
{
    if (enter_first(o, active, why, cap) != 0) return -1;
    close_others();
    *active |= KG_SBX_FDS;
    if (env_is_whitelist(o->env_names)) *active |= KG_SBX_ENV;
    if (o->dir == NULL || chdir(o->dir) != 0) {
        snprintf(why, cap, "cannot enter the private folder %s: %s", o->dir ? o->dir : "(none)", strerror(errno));
        return -1;
    }
    struct stat st;
    if (stat(".", &st) == 0 && (st.st_mode & 077) == 0) *active |= KG_SBX_PRIVDIR;
    *active |= try_namespaces();
    /* the signing key's folder: only where this process has a mount
     * namespace of its own; without one the bit stays off and the
     * resources' sandbox column says so */
    if (o->hide != NULL && o->hide[0] != '\0' && (*active & KG_SBX_MOUNTNS) && hide_folders(o->hide) == 0)
        *active |= KG_SBX_HIDE;
    if (set_limits(o) == 0) *active |= KG_SBX_RLIMITS;

    trap_sigsys(o->on_violation);
    filter_blas = o->blas;
    filter_pyhelper = o->pyhelper;

    if (load_filter(SCMP_ACT_TRAP, build_filter, "the seccomp filter", why, cap) != 0) return -1;
    *active |= KG_SBX_SECCOMP;
    return 0;
}

/* the second filter: no open, and no further filter */
static int lock_rules(scmp_filter_ctx ctx, pid_t self)
{
    (void)self;
    int rc = seccomp_rule_add(ctx, SCMP_ACT_TRAP, SCMP_SYS(openat), 0);
    rc |= seccomp_rule_add(ctx, SCMP_ACT_TRAP, SCMP_SYS(seccomp), 0);
    rc |= seccomp_rule_add(ctx, SCMP_ACT_TRAP, SCMP_SYS(open), 0);
    rc |= seccomp_rule_add(ctx, SCMP_ACT_TRAP, SCMP_SYS(openat2), 0);
    return rc;
}

int kg_sandbox_lock(unsigned *active, char *why, size_t cap)
{
    /* no new privileges is already set, and prctl is denied now */
    if (load_filter(SCMP_ACT_ALLOW, lock_rules, "the second seccomp filter", why, cap) != 0) return -1;
    *active |= KG_SBX_NOOPEN;
    return 0;
}

/* ---- the cuda arm host (kg_sandbox_cuda_enter, kg_sandbox_cuda_lock) ----
 *
 * The driver's allow-list.  The CUDA driver needs, after it opened the
 * device: ioctls on its descriptors (/dev/nvidiactl, /dev/nvidia0,
 * /dev/nvidia-uvm), mappings of them, threads (clone with CLONE_THREAD),
 * futexes, polls and event descriptors, read-only and read-write opens
 * of existing files (its device nodes, /proc and /sys), the clocks, and
 * its own signals.  Allowed besides the arm host's list (build_filter):
 *   ioctl (any: the driver's requests are its own; no terminal is left to
 *     it: a session of its own, and stdin is /dev/null)
 *   clone with CLONE_THREAD (threads; clone3 answers ENOSYS, so that the C
 *     library falls back to clone), set_robust_list, rseq, membarrier
 *   openat / open without O_CREAT, O_TRUNC, O_APPEND or O_TMPFILE, read-only
 *     or read-write (a device node), never write-only; RLIMIT_FSIZE 0 makes
 *     every write to a regular file fail, and no file can be made
 *   poll ppoll select pselect6 epoll_* eventfd2 pipe2 timerfd_* memfd_create,
 *     pwrite64 preadv pwritev, set_tid_address rt_sigsuspend getcpu getpgrp
 *     getsid umask sched_get_priority_min/max, fcntl
 *     dup dup2 dup3 flock, readlink(at) getdents64 getcwd access faccessat(2)
 *     stat lstat statfs fstatfs, mlock munlock mincore, sched_setaffinity
 *     and sched_getparam / sched_getscheduler of itself, get_mempolicy mbind
 *     set_mempolicy, uname sysinfo getrusage getresuid getresgid,
 *     rt_sigtimedwait, tgkill of its own threads, prctl to name a thread
 * Denied (SIGSYS, reported and named): execve, execveat, fork, vfork,
 * clone without CLONE_THREAD, socket, socketpair, connect, bind, ptrace,
 * process_vm_*, kill or tgkill of another process, write-only opens and
 * creation, unlink, rename, mkdir, chmod, truncate, mount, unshare,
 * setns, seccomp, bpf, io_uring, keyctl, every other prctl... */

#ifndef CLONE_THREAD
#define CLONE_THREAD 0x00010000
#endif

static int build_cuda_filter(scmp_filter_ctx ctx, pid_t self)
{
    int rc = build_filter(ctx, self);
    static const int plain[] = {
        SCMP_SYS(ioctl), SCMP_SYS(set_robust_list), SCMP_SYS(rseq), SCMP_SYS(membarrier),
        SCMP_SYS(poll), SCMP_SYS(ppoll), SCMP_SYS(select), SCMP_SYS(pselect6), SCMP_SYS(epoll_create1),
        SCMP_SYS(epoll_ctl), SCMP_SYS(epoll_wait), SCMP_SYS(epoll_pwait), SCMP_SYS(eventfd2), SCMP_SYS(pipe2),
        SCMP_SYS(timerfd_create), SCMP_SYS(timerfd_settime), SCMP_SYS(timerfd_gettime),
        SCMP_SYS(fcntl), SCMP_SYS(dup), SCMP_SYS(dup2), SCMP_SYS(dup3), SCMP_SYS(flock),
        SCMP_SYS(readlink), SCMP_SYS(readlinkat), SCMP_SYS(getdents64), SCMP_SYS(getcwd), SCMP_SYS(access),
        SCMP_SYS(faccessat), SCMP_SYS(faccessat2), SCMP_SYS(stat), SCMP_SYS(lstat), SCMP_SYS(statfs),
        SCMP_SYS(fstatfs), SCMP_SYS(mlock), SCMP_SYS(munlock), SCMP_SYS(mincore),
        SCMP_SYS(get_mempolicy), SCMP_SYS(mbind), SCMP_SYS(set_mempolicy), SCMP_SYS(uname), SCMP_SYS(sysinfo),
        SCMP_SYS(getrusage), SCMP_SYS(getresuid), SCMP_SYS(getresgid), SCMP_SYS(rt_sigtimedwait),
        SCMP_SYS(restart_syscall), SCMP_SYS(close_range), SCMP_SYS(memfd_create), SCMP_SYS(pwrite64),
        SCMP_SYS(preadv), SCMP_SYS(pwritev), SCMP_SYS(set_tid_address), SCMP_SYS(rt_sigsuspend), SCMP_SYS(getcpu),
        SCMP_SYS(sched_get_priority_max), SCMP_SYS(sched_get_priority_min), SCMP_SYS(getpgrp), SCMP_SYS(getsid),
        SCMP_SYS(umask),
    };
    for (size_t i = 0; i < sizeof plain / sizeof plain[0]; i++)
        rc |= seccomp_rule_add(ctx, SCMP_ACT_ALLOW, plain[i], 0);
    /* threads only */
    rc |= seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(clone), 1,
                           SCMP_A0(SCMP_CMP_MASKED_EQ, (scmp_datum_t)CLONE_THREAD, (scmp_datum_t)CLONE_THREAD));
    rc |= seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
    /* read-write opens of existing files (the device's nodes) */
    const scmp_datum_t wmask = O_ACCMODE | O_CREAT | O_TRUNC | O_APPEND | __O_TMPFILE;
    rc |= seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(openat), 1, SCMP_A2(SCMP_CMP_MASKED_EQ, wmask, O_RDWR));
    rc |= seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(open), 1, SCMP_A1(SCMP_CMP_MASKED_EQ, wmask, O_RDWR));
    /* its own threads' signals and scheduling */
    rc |= seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(tgkill), 1, SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)self));
    rc |= seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(sched_setaffinity), 1, SCMP_A0(SCMP_CMP_EQ, 0));
    rc |= seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(sched_getparam), 1, SCMP_A0(SCMP_CMP_EQ, 0));
    rc |= seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(sched_getscheduler), 1, SCMP_A0(SCMP_CMP_EQ, 0));
    rc |= seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(prctl), 1, SCMP_A0(SCMP_CMP_EQ, PR_SET_NAME));
    rc |= seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(prctl), 1, SCMP_A0(SCMP_CMP_EQ, PR_GET_NAME));
    return rc;
}

int kg_sandbox_cuda_enter(const kg_sandbox_opts *o, unsigned *active, char *why, size_t cap)
{
    if (enter_first(o, active, why, cap) != 0) return -1;
    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
    /* no terminal: the worker started it in a session of its own
     * (hostlink.h, own_session), which is also the process group the
     * worker kills */
    close_others();
    *active |= KG_SBX_FDS;
    if (env_is_whitelist(o->env_names)) *active |= KG_SBX_ENV;
    if (o->dir == NULL || chdir(o->dir) != 0) {
        snprintf(why, cap, "cannot enter the private folder %s: %s", o->dir ? o->dir : "(none)", strerror(errno));
        return -1;
    }
    struct stat st;
    if (stat(".", &st) == 0 && (st.st_mode & 077) == 0) *active |= KG_SBX_PRIVDIR;
    /* no pid namespace: the driver's IPC names the exporting process */
    if (unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWNET) == 0) {
        *active |= KG_SBX_USERNS | KG_SBX_MOUNTNS | KG_SBX_NETNS;
    } else {
        if (unshare(CLONE_NEWUSER) == 0) *active |= KG_SBX_USERNS;
        if (unshare(CLONE_NEWNS) == 0) *active |= KG_SBX_MOUNTNS;
        if (unshare(CLONE_NEWNET) == 0) *active |= KG_SBX_NETNS;
    }
    if (o->hide != NULL && o->hide[0] != '\0' && (*active & KG_SBX_MOUNTNS) && hide_folders(o->hide) == 0)
        *active |= KG_SBX_HIDE;
    return 0;
}

/* One mount point of /proc/self/mountinfo's line (field 5, octal escapes
 * undone) into mp: 0, or -1 when the line has none. */
static int mount_point(const char *line, char *mp, size_t cap)
{
    const char *p = line;
    for (int f = 0; f < 4; f++) {
        p = strchr(p, ' ');
        if (p == NULL) return -1;
        p++;
    }
    size_t n = 0;
    while (*p != '\0' && *p != ' ' && n + 1 < cap) {
        if (p[0] == '\\' && p[1] >= '0' && p[1] <= '3' && p[2] >= '0' && p[2] <= '7' && p[3] >= '0' && p[3] <= '7') {
            mp[n++] = (char)((p[1] - '0') * 64 + (p[2] - '0') * 8 + (p[3] - '0'));
            p += 4;
        } else {
            mp[n++] = *p++;
        }
    }
    mp[n] = '\0';
    return n > 0 ? 0 : -1;
}

/* Every mount of this mount namespace read-only but /dev and those below
 * it (the driver's device nodes, its shared memory): each remounted with
 * its own flags (the locked ones must stay) plus MS_RDONLY.  0 when every
 * one is. */
static int remount_readonly(void)
{
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) return -1;
    FILE *f = fopen("/proc/self/mountinfo", "r");
    if (f == NULL) return -1;
    char line[8192], mp[4096];
    int bad = 0;
    while (fgets(line, sizeof line, f) != NULL) {
        if (mount_point(line, mp, sizeof mp) != 0) continue;
        if (strncmp(mp, "/dev", 4) == 0 && (mp[4] == '\0' || mp[4] == '/')) continue;
        struct statvfs sv;
        if (statvfs(mp, &sv) != 0) continue;   /* covered by a later mount, or gone */
        unsigned long fl = MS_REMOUNT | MS_BIND | MS_RDONLY;
        if (sv.f_flag & ST_NOSUID) fl |= MS_NOSUID;
        if (sv.f_flag & ST_NODEV) fl |= MS_NODEV;
        if (sv.f_flag & ST_NOEXEC) fl |= MS_NOEXEC;
        if (sv.f_flag & ST_NOATIME) fl |= MS_NOATIME;
        if (sv.f_flag & ST_NODIRATIME) fl |= MS_NODIRATIME;
        if (sv.f_flag & ST_RELATIME) fl |= MS_RELATIME;
        if (mount(NULL, mp, NULL, fl, NULL) != 0) bad = 1;
    }
    fclose(f);
    return bad ? -1 : 0;
}

int kg_sandbox_cuda_lock(const kg_sandbox_opts *o, unsigned *active, char *why, size_t cap)
{
    if ((*active & KG_SBX_MOUNTNS) && remount_readonly() == 0) *active |= KG_SBX_ROFS;
    int bad = set_limit(RLIMIT_FSIZE, 0, 0);
    bad |= set_limit(RLIMIT_CORE, 0, 0);
    if (!bad) *active |= KG_SBX_RLIMITS;
    trap_sigsys(o->on_violation);
    if (load_filter(SCMP_ACT_TRAP, build_cuda_filter, "the cuda arm host's seccomp filter", why, cap) != 0) return -1;
    *active |= KG_SBX_SECCOMP;
    return 0;
}

/* ---- the Python ops' helper for verify's op server (kg_sandbox_python_child) ---- */

/* Everything but exec and the helper's own needs: a deny-list of what
 * could reach outside the process (a default-allow filter, since a
 * Python interpreter's start-up calls are many; the helper's own filter
 * then removes exec and fork). */
static int python_rules(scmp_filter_ctx ctx, pid_t self)
{
    (void)self;
    static const int deny[] = {
        SCMP_SYS(socket), SCMP_SYS(socketpair), SCMP_SYS(connect), SCMP_SYS(bind), SCMP_SYS(listen),
        SCMP_SYS(accept), SCMP_SYS(accept4), SCMP_SYS(ptrace), SCMP_SYS(mount), SCMP_SYS(umount2),
        SCMP_SYS(pivot_root), SCMP_SYS(chroot), SCMP_SYS(init_module), SCMP_SYS(finit_module),
        SCMP_SYS(delete_module), SCMP_SYS(kexec_load), SCMP_SYS(kexec_file_load), SCMP_SYS(process_vm_readv),
        SCMP_SYS(process_vm_writev), SCMP_SYS(setns), SCMP_SYS(unshare), SCMP_SYS(bpf), SCMP_SYS(perf_event_open),
        SCMP_SYS(keyctl), SCMP_SYS(add_key), SCMP_SYS(request_key), SCMP_SYS(creat), SCMP_SYS(openat2),
        SCMP_SYS(link), SCMP_SYS(linkat), SCMP_SYS(symlink), SCMP_SYS(symlinkat), SCMP_SYS(unlink),
        SCMP_SYS(unlinkat), SCMP_SYS(rename), SCMP_SYS(renameat), SCMP_SYS(renameat2), SCMP_SYS(mkdir),
        SCMP_SYS(mkdirat), SCMP_SYS(rmdir), SCMP_SYS(chmod), SCMP_SYS(fchmod), SCMP_SYS(fchmodat),
        SCMP_SYS(chown), SCMP_SYS(fchown), SCMP_SYS(lchown), SCMP_SYS(fchownat), SCMP_SYS(truncate),
        SCMP_SYS(mknod), SCMP_SYS(mknodat), SCMP_SYS(io_uring_setup), SCMP_SYS(userfaultfd),
        SCMP_SYS(name_to_handle_at), SCMP_SYS(open_by_handle_at), SCMP_SYS(setxattr), SCMP_SYS(lsetxattr),
        SCMP_SYS(fsetxattr), SCMP_SYS(removexattr), SCMP_SYS(lremovexattr), SCMP_SYS(fremovexattr),
        SCMP_SYS(sethostname), SCMP_SYS(setdomainname), SCMP_SYS(clock_settime), SCMP_SYS(settimeofday),
        SCMP_SYS(acct), SCMP_SYS(swapon), SCMP_SYS(swapoff), SCMP_SYS(reboot), SCMP_SYS(mq_open),
        SCMP_SYS(msgget), SCMP_SYS(shmget), SCMP_SYS(semget), SCMP_SYS(fsopen), SCMP_SYS(fsmount),
        SCMP_SYS(move_mount), SCMP_SYS(open_tree), SCMP_SYS(fanotify_init), SCMP_SYS(inotify_init),
        SCMP_SYS(inotify_init1), SCMP_SYS(pidfd_getfd), SCMP_SYS(kcmp),
    };
    int rc = 0;
    for (size_t i = 0; i < sizeof deny / sizeof deny[0]; i++)
        rc |= seccomp_rule_add(ctx, SCMP_ACT_KILL_PROCESS, deny[i], 0);
    /* the calls newer than the library's table, by number (x86_64) */
    rc |= seccomp_rule_add(ctx, SCMP_ACT_KILL_PROCESS, 452, 0);   /* fchmodat2 */
    rc |= seccomp_rule_add(ctx, SCMP_ACT_KILL_PROCESS, 463, 0);   /* setxattrat */
    /* opens for reading only */
    const scmp_datum_t wmask = O_ACCMODE | O_CREAT | O_TRUNC | O_APPEND | __O_TMPFILE;
    rc |= seccomp_rule_add(ctx, SCMP_ACT_KILL_PROCESS, SCMP_SYS(openat), 1,
                           SCMP_A2(SCMP_CMP_MASKED_EQ, O_ACCMODE, O_WRONLY));
    rc |= seccomp_rule_add(ctx, SCMP_ACT_KILL_PROCESS, SCMP_SYS(openat), 1,
                           SCMP_A2(SCMP_CMP_MASKED_EQ, O_ACCMODE, O_RDWR));
    rc |= seccomp_rule_add(ctx, SCMP_ACT_KILL_PROCESS, SCMP_SYS(open), 1,
                           SCMP_A1(SCMP_CMP_MASKED_EQ, O_ACCMODE, O_WRONLY));
    rc |= seccomp_rule_add(ctx, SCMP_ACT_KILL_PROCESS, SCMP_SYS(open), 1,
                           SCMP_A1(SCMP_CMP_MASKED_EQ, O_ACCMODE, O_RDWR));
    static const scmp_datum_t bits[] = { O_CREAT, O_TRUNC, O_APPEND, __O_TMPFILE };
    for (size_t i = 0; i < sizeof bits / sizeof bits[0]; i++) {
        rc |= seccomp_rule_add(ctx, SCMP_ACT_KILL_PROCESS, SCMP_SYS(openat), 1,
                               SCMP_A2(SCMP_CMP_MASKED_EQ, bits[i], bits[i]));
        rc |= seccomp_rule_add(ctx, SCMP_ACT_KILL_PROCESS, SCMP_SYS(open), 1,
                               SCMP_A1(SCMP_CMP_MASKED_EQ, bits[i], bits[i]));
    }
    (void)wmask;
    return rc;
}

int kg_sandbox_python_child(const kg_sandbox_opts *o, char *why, size_t cap)
{
    unsigned active = 0;
    if (enter_first(o, &active, why, cap) != 0) return -1;
    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
    int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (null < 0 || dup2(null, 1) < 0 || dup2(null, 2) < 0) {
        snprintf(why, cap, "/dev/null: %s", strerror(errno));
        return -1;
    }
    close(null);
    if (o->dir == NULL || chdir(o->dir) != 0) {
        snprintf(why, cap, "cannot enter the private folder %s", o->dir ? o->dir : "(none)");
        return -1;
    }
    unsigned ns = try_namespaces();
    if (o->hide != NULL && o->hide[0] != '\0' && (ns & KG_SBX_MOUNTNS) && hide_folders(o->hide) != 0) {
        snprintf(why, cap, "cannot hide %s", o->hide);
        return -1;
    }
    int bad = 0;
    if (o->mem_bytes > 0 && !KG_SANDBOX_ASAN) bad |= set_limit(RLIMIT_AS, o->mem_bytes, o->mem_bytes);
    bad |= set_limit(RLIMIT_CORE, 0, 0);
    bad |= set_limit(RLIMIT_NOFILE, 64, 64);
    if (o->cpu_s > 0) bad |= set_limit(RLIMIT_CPU, (rlim_t)o->cpu_s, (rlim_t)o->cpu_s + 1);
    if (bad) {
        snprintf(why, cap, "cannot set the limits");
        return -1;
    }
    return load_filter(SCMP_ACT_ALLOW, python_rules, "the Python helper's filter", why, cap);
}

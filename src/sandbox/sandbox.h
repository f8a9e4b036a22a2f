/* sandbox.h: the confinement an arm host (armhost.c) puts itself under
 * before it opens a candidate's shared object, so that the object's
 * constructors already run inside it; verify's op server
 * (check/opserver.c) puts itself under the same before it loads an
 * evidence folder's op modules.
 *
 * kg_sandbox_enter applies, in order: no new privileges, parent-death
 * SIGKILL (and a check that the parent is still the worker), every
 * descriptor but 0, 1, 2 and the request socket closed, the environment
 * checked against the whitelist the worker gave, a chdir into the
 * private folder, user, mount, network and pid namespaces where the
 * kernel allows them (silently skipped otherwise), resource limits, and
 * the seccomp filter of sandbox.c (a system call outside its list is
 * reported on the request socket by a SIGSYS handler, then the process
 * dies of SIGSYS).  kg_sandbox_lock stacks a second filter once the
 * object is loaded: no file is opened after that.  Each step that took
 * effect sets its KG_SBX_* bit. */
#ifndef KGATE_SANDBOX_H
#define KGATE_SANDBOX_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum {
    KG_SBX_SECCOMP = 1u << 0,   /* the system-call filter */
    KG_SBX_NNP = 1u << 1,       /* PR_SET_NO_NEW_PRIVS */
    KG_SBX_PDEATHSIG = 1u << 2, /* SIGKILL when the worker dies */
    KG_SBX_RLIMITS = 1u << 3,   /* address space, file size, processes, core, CPU, files */
    KG_SBX_USERNS = 1u << 4,
    KG_SBX_PIDNS = 1u << 5,
    KG_SBX_NETNS = 1u << 6,
    KG_SBX_MOUNTNS = 1u << 7,
    KG_SBX_PRIVDIR = 1u << 8,   /* working folder: private, empty, fresh */
    KG_SBX_ENV = 1u << 9,       /* the environment is the whitelist */
    KG_SBX_FDS = 1u << 10,      /* every other descriptor closed */
    KG_SBX_NOOPEN = 1u << 11,   /* the second filter: no open after loading */
    KG_SBX_HIDE = 1u << 12,     /* the folders to hide (the signing key's) are covered by an empty
                                 * read-only tmpfs in the mount namespace, before the object loads */
    KG_SBX_ROFS = 1u << 13      /* a cuda arm host: every mount of its namespace but /dev's is
                                 * read-only once the driver has started */
};

/* The descriptor the request socket has in an arm host. */
#define KG_SANDBOX_SOCK_FD 3

typedef struct kg_sandbox_opts {
    pid_t parent;           /* the worker: PR_SET_PDEATHSIG is checked against it */
    const char *dir;        /* the private folder to chdir into */
    uint64_t mem_bytes;     /* RLIMIT_AS; 0: none */
    long cpu_s;             /* RLIMIT_CPU (soft); 0: none */
    /* called from the SIGSYS handler with the denied call's number (only
     * async-signal-safe work); the process then dies of SIGSYS */
    void (*on_violation)(int nr);
    /* colon-separated folders its code must not read (the
     * signing key's): each existing one is covered by an empty read-only
     * tmpfs in the arm host's mount namespace before the object loads,
     * so that not even its constructors see them; NULL or "": none */
    const char *hide;
    /* 1: also the calls OpenBLAS's allocator makes (mbind, get_mempolicy,
     * set_mempolicy: the process's own memory; sysinfo): the op server,
     * whose references call it; 0: an arm host */
    int blas;
    /* the variables the environment may hold (NAME=, NULL-terminated) for
     * KG_SBX_ENV: NULL, the arm host's whitelist (kg_sandbox_env) */
    const char *const *env_names;
    /* > 0: the process talks to kgate's Python ops helper, this child
     * (verify's op server): also memfd_create, ftruncate, poll, ppoll,
     * wait4 and kill of that process (its group) only, and files may grow
     * (RLIMIT_FSIZE is not set: the memfds it hands the helper; no file
     * can be opened for writing) */
    pid_t pyhelper;
} kg_sandbox_opts;

/* Applies the sandbox; *active gets the KG_SBX_* bits that took effect.
 * Returns 0, or -1 with why filled when a step that must not fail failed
 * (no new privileges, the parent check, the private folder, the filter). */
int kg_sandbox_enter(const kg_sandbox_opts *o, unsigned *active, char *why, size_t cap);

/* Stacks the stricter filter (no open, openat) after the object is
 * loaded; KG_SBX_NOOPEN on success. */
int kg_sandbox_lock(unsigned *active, char *why, size_t cap);

/* The cuda arm host's confinement (backend/cuda_host.h), in two steps
 * around the driver's start, which needs threads, the device's files and
 * its ioctls.  kg_sandbox_cuda_enter, before the driver starts (the
 * process is single-threaded, as unshare needs): no new privileges,
 * parent-death SIGKILL and the parent check, not dumpable, no core (it
 * was started in a session of its own, hostlink.h: no controlling
 * terminal), every other descriptor closed, the environment checked against o->env_names, the private
 * folder, user, mount and network namespaces where the kernel allows them
 * and o->hide covered there.  kg_sandbox_cuda_lock, once the driver has
 * opened the device and before any arm's image reaches it: every mount
 * of its mount namespace but /dev and those below it read-only (where it
 * has one), no file may grow (RLIMIT_FSIZE 0) and the driver's allow-list
 * (sandbox.c, build_cuda_filter), whose violation o->on_violation
 * reports. */
int kg_sandbox_cuda_enter(const kg_sandbox_opts *o, unsigned *active, char *why, size_t cap);
int kg_sandbox_cuda_lock(const kg_sandbox_opts *o, unsigned *active, char *why, size_t cap);

/* The confinement of kgate's Python ops helper for verify's op server
 * (ops/pyops.c, check/opserver.c), in the helper's child before its exec
 * (the exec itself stays allowed; the helper then stacks a filter of its
 * own that removes exec, fork and clone of processes before any
 * reference runs): no new privileges, parent-death SIGKILL and the parent
 * check (o->parent), not dumpable, stdout and stderr to /dev/null, a chdir
 * into o->dir, user, mount and network namespaces where allowed with
 * o->hide covered there, limits (o->mem_bytes, o->cpu_s, no core, 64
 * descriptors), and a filter that kills the process on a socket, a
 * connect, an open for writing (or creating, truncating, appending), a
 * change to any file's name, links, mode or owner, ptrace, mounts,
 * namespaces, modules, keys, IPC objects and the machine's clock or name.
 * 0, or -1 with why (the caller _exits). */
int kg_sandbox_python_child(const kg_sandbox_opts *o, char *why, size_t cap);

/* "seccomp,nnp,pdeathsig,..." for the bits of mask ("none" when 0). */
void kg_sandbox_text(unsigned mask, char *buf, size_t cap);

/* The name of system call nr on this architecture ("syscall 56" when
 * unknown). */
void kg_sandbox_syscall_name(int nr, char *buf, size_t cap);

/* The environment an arm host starts with (NULL-terminated): PATH, LANG,
 * OPENBLAS_NUM_THREADS=1, HOME and TMPDIR (both dir).  Strings live in store (cap bytes). */
int kg_sandbox_env(const char *dir, char *store, size_t cap, char *envp[], int max);

#endif

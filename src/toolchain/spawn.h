/* spawn.h: a helper process on a socket: exec'd fresh (never a bare fork
 * of the caller, whose memory would be copied into it), in a process
 * group (or a session) of its own, with one end of a SOCK_SEQPACKET
 * socket pair on a descriptor the caller names, its stdout and stderr on
 * a pipe the caller drains, and nothing else open.  The arm hosts, the
 * library arms' helper and the Python ops' helper are started here; and
 * the Python those helpers run (kg_python_pick). */
#ifndef KGATE_SPAWN_H
#define KGATE_SPAWN_H

#include <stddef.h>
#include <sys/types.h>

typedef struct kg_spawned {
    pid_t pid;      /* also its process group */
    int sock;       /* the caller's end of the socket pair */
    int outfd;      /* the child's stdout and stderr, non-blocking */
} kg_spawned;

/* Forks and execs exe with argv and envp: descriptor 0 /dev/null, 1 and
 * 2 the output pipe, sock_fd the child's end of the socket pair, nothing
 * else open.  own_session: the child starts a session of its own (no
 * controlling terminal); else a process group of its own.  hook (may be
 * NULL) runs in the child just before the exec, after the descriptors
 * are arranged (async-signal-safe work: a confinement); when it returns
 * nonzero the child ends with status 126.  Returns 0, or -1 with why. */
int kg_spawn_linked(const char *exe, char *const argv[], char *const envp[], int sock_fd, int own_session,
                    int (*hook)(void *arg), void *arg, kg_spawned *out, char *why, size_t cap);

/* The Python a helper runs: python (the settings' KGATE_PYTHON, or python3
 * found on PATH) when set, else /usr/bin/python3. */
const char *kg_python_pick(const char *python);

/* The flags every helper's Python runs with: isolated (-I: no PYTHON*
 * variable, no user site-packages, not the script's folder on sys.path)
 * and writing no bytecode (-B). */
#define KG_PY_FLAG_ISOLATED "-I"
#define KG_PY_FLAG_NOBYTECODE "-B"

#endif

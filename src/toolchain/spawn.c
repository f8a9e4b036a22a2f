/* spawn.c: see spawn.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "toolchain/spawn.h"

int kg_spawn_linked(const char *exe, char *const argv[], char *const envp[], int sock_fd, int own_session,
                    int (*hook)(void *arg), void *arg, kg_spawned *out, char *why, size_t cap)
{
    int sv[2], po[2];
    out->pid = 0;
    out->sock = out->outfd = -1;
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
        snprintf(why, cap, "socketpair: %s", strerror(errno));
        return -1;
    }
    if (pipe2(po, O_CLOEXEC) != 0) {
        snprintf(why, cap, "pipe: %s", strerror(errno));
        close(sv[0]);
        close(sv[1]);
        return -1;
    }
    int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        /* the child only rearranges descriptors (and confines itself, by
         * the hook) and execs: nothing of the caller's memory survives */
        if (!own_session || setsid() < 0) setpgid(0, 0);
        int s2 = fcntl(sv[1], F_DUPFD, sock_fd + 1), p2 = fcntl(po[1], F_DUPFD, sock_fd + 1);
        if (s2 < 0 || p2 < 0) _exit(127);
        if (devnull >= 0) dup2(devnull, 0);
        dup2(p2, 1);
        dup2(p2, 2);
        dup2(s2, sock_fd);
        syscall(SYS_close_range, (unsigned)sock_fd + 1, ~0u, 0);
        if (hook != NULL && hook(arg) != 0) _exit(126);
        execve(exe, argv, envp);
        _exit(127);
    }
    int fork_errno = errno;
    if (devnull >= 0) close(devnull);
    close(sv[1]);
    close(po[1]);
    if (pid < 0) {
        close(sv[0]);
        close(po[0]);
        snprintf(why, cap, "fork: %s", strerror(fork_errno));
        return -1;
    }
    setpgid(pid, pid);
    out->pid = pid;
    out->sock = sv[0];
    out->outfd = po[0];
    fcntl(out->outfd, F_SETFL, fcntl(out->outfd, F_GETFL) | O_NONBLOCK);
    return 0;
}

const char *kg_python_pick(const char *python)
{
    return python != NULL && python[0] != '\0' ? python : "/usr/bin/python3";
}

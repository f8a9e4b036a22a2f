/* ipc_probe.c: the bare round trip between two processes, without kgate,
 * the lower bound of the cpu backend's request floor (docs/cpu-backend.md,
 * "The request floor").  A parent and a forked child answer each other N
 * times, one of three ways:
 *   socket     a 20-byte request and a 224-byte reply on a SOCK_SEQPACKET
 *              socketpair, the parent waiting in poll() then recv (as the
 *              arm host's socket protocol did)
 *   futex      a sequence number on a shared page: the parent stores it and
 *              wakes the child (FUTEX_WAKE), the child stores its reply and
 *              wakes the parent, each waits with FUTEX_WAIT
 *   futexflag  as futex, but the child wakes the parent only when the
 *              parent said it sleeps (the request page's protocol, armpage.h)
 * Prints the median, p10 and p90 of the parent's clock around each trip.
 *
 *   cc -std=c11 -D_GNU_SOURCE -O2 -o build/ipc_probe tools/bench/ipc_probe.c
 *   taskset -c 0 build/ipc_probe socket|futex|futexflag [N]   (one CPU: the worker's and its hosts' case) */
#include <linux/futex.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef struct page {
    _Atomic uint32_t req;
    uint32_t pad0[15];
    _Atomic uint32_t rep;
    _Atomic uint32_t sleeping;
} page;

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC_RAW, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static void futex(_Atomic uint32_t *w, int op, uint32_t v)
{
    syscall(SYS_futex, w, op, v, NULL, NULL, 0);
}

static void wait_change(_Atomic uint32_t *w, uint32_t old)
{
    while (atomic_load(w) == old) futex(w, FUTEX_WAIT, old);
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void child(int mode, page *p, int sock)
{
    char buf[256];
    memset(buf, 0, sizeof buf);
    uint32_t seen = 0;
    for (;;) {
        if (mode == 0) {
            if (recv(sock, buf, sizeof buf, 0) <= 0) _exit(0);
            send(sock, buf, 224, 0);
            continue;
        }
        wait_change(&p->req, seen);
        seen = atomic_load(&p->req);
        if (seen == UINT32_MAX) _exit(0);
        atomic_store(&p->rep, seen);
        if (mode == 1 || atomic_load(&p->sleeping)) futex(&p->rep, FUTEX_WAKE, 1);
    }
}

int main(int argc, char **argv)
{
    const char *modes[] = { "socket", "futex", "futexflag" };
    int mode = -1;
    for (int i = 0; argc > 1 && i < 3; i++)
        if (strcmp(argv[1], modes[i]) == 0) mode = i;
    if (mode < 0) {
        fprintf(stderr, "usage: ipc_probe socket|futex|futexflag [N]\n");
        return 2;
    }
    int n = argc > 2 ? atoi(argv[2]) : 20000;
    if (n < 10) n = 10;
    page *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    int sv[2];
    double *v = malloc((size_t)n * sizeof *v);
    if (p == MAP_FAILED || v == NULL || socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv) != 0) return 1;
    pid_t pid = fork();
    if (pid < 0) return 1;
    if (pid == 0) {
        close(sv[0]);
        child(mode, p, sv[1]);
    }
    close(sv[1]);
    char buf[256];
    memset(buf, 0, sizeof buf);
    for (int i = 0; i < n; i++) {
        uint32_t s = (uint32_t)i + 1;
        double t0 = now_ns();
        if (mode == 0) {
            send(sv[0], buf, 20, 0);
            struct pollfd pf = { sv[0], POLLIN, 0 };
            poll(&pf, 1, -1);
            recv(sv[0], buf, sizeof buf, 0);
        } else {
            atomic_store(&p->req, s);
            futex(&p->req, FUTEX_WAKE, 1);
            while (atomic_load(&p->rep) != s) {
                atomic_store(&p->sleeping, 1);
                if (atomic_load(&p->rep) != s) futex(&p->rep, FUTEX_WAIT, s - 1);
                atomic_store(&p->sleeping, 0);
            }
        }
        v[i] = now_ns() - t0;
    }
    if (mode == 0) close(sv[0]);
    else {
        atomic_store(&p->req, UINT32_MAX);
        futex(&p->req, FUTEX_WAKE, 1);
    }
    waitpid(pid, NULL, 0);
    qsort(v, (size_t)n, sizeof *v, cmp);
    printf("%-9s trips %d median_us %.2f p10_us %.2f p90_us %.2f\n", modes[mode], n, v[n / 2] / 1e3, v[n / 10] / 1e3,
           v[n * 9 / 10] / 1e3);
    free(v);
    return 0;
}

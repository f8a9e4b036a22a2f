/* armpage.c: the request page of a CPU arm host (armpage.h). */
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "backend/armpage.h"

_Static_assert(sizeof(kg_ah_page) <= 4096, "the request page fits one page");

int kg_armpage_create(kg_armpage *p, const char *arm, kg_err *err)
{
    memset(p, 0, sizeof *p);
    p->fd = -1;
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    p->len = page > sizeof(kg_ah_page) ? page : 4096;
    int fd = memfd_create("kgate-request-page", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0) return kg_errorf(err, KG_ENOMEM, "arm '%s': memfd_create for its request page: %s", arm, strerror(errno));
    /* sealed: a host that shrank it would fault the worker */
    if (ftruncate(fd, (off_t)p->len) != 0 || fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) {
        int rc = kg_errorf(err, KG_ENOMEM, "arm '%s': cannot size its request page: %s", arm, strerror(errno));
        close(fd);
        return rc;
    }
    void *m = mmap(NULL, p->len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (m == MAP_FAILED) {
        int rc = kg_errorf(err, KG_ENOMEM, "arm '%s': cannot map its request page: %s", arm, strerror(errno));
        close(fd);
        return rc;
    }
    p->pg = m;
    p->fd = fd;
    return KG_OK;
}

void kg_armpage_destroy(kg_armpage *p)
{
    if (p->pg == NULL) return;   /* never created (a zeroed struct) */
    munmap(p->pg, p->len);
    if (p->fd >= 0) close(p->fd);
    p->pg = NULL;
    p->fd = -1;
}

static void wake(kg_ah_page *pg)
{
    syscall(SYS_futex, &pg->state, FUTEX_WAKE, 1, NULL, NULL, 0);
}

uint32_t kg_armpage_state(kg_ah_page *pg)
{
    return atomic_load_explicit(&pg->state, memory_order_acquire);
}

void kg_armpage_post(kg_ah_page *pg, uint32_t state)
{
    atomic_store_explicit(&pg->state, state, memory_order_release);
    wake(pg);
}

int kg_armpage_swap(kg_ah_page *pg, uint32_t expect, uint32_t want, uint32_t *seen)
{
    uint32_t e = expect;
    if (atomic_compare_exchange_strong_explicit(&pg->state, &e, want, memory_order_acq_rel, memory_order_acquire)) {
        wake(pg);
        return 1;
    }
    if (seen != NULL) *seen = e;
    return 0;
}

void kg_armpage_wait(kg_ah_page *pg, uint32_t from, double limit_s)
{
    struct timespec ts, *tp = NULL;
    if (limit_s >= 0) {
        if (limit_s > 1e6) limit_s = 1e6;
        ts.tv_sec = (time_t)limit_s;
        ts.tv_nsec = (long)((limit_s - (double)ts.tv_sec) * 1e9);
        if (ts.tv_nsec >= 1000000000L) ts.tv_nsec = 999999999L;
        tp = &ts;
    }
    /* FUTEX_WAIT returns at once when the word is no longer `from` */
    syscall(SYS_futex, &pg->state, FUTEX_WAIT, from, tp, NULL, 0);
}

void kg_armpage_sleep(kg_ah_page *pg, uint32_t from, double limit_s)
{
    atomic_store_explicit(&pg->sleeping, 1, memory_order_seq_cst);
    if (atomic_load_explicit(&pg->state, memory_order_seq_cst) == from) kg_armpage_wait(pg, from, limit_s);
    atomic_store_explicit(&pg->sleeping, 0, memory_order_relaxed);
}

int kg_armpage_answer(kg_ah_page *pg, uint32_t expect, uint32_t want, uint32_t *seen)
{
    uint32_t e = expect;
    if (!atomic_compare_exchange_strong_explicit(&pg->state, &e, want, memory_order_seq_cst, memory_order_seq_cst)) {
        if (seen != NULL) *seen = e;
        return 0;
    }
    if (atomic_load_explicit(&pg->sleeping, memory_order_seq_cst)) wake(pg);
    return 1;
}

const char *kg_armpage_phase_name(uint32_t state)
{
    static const char *const names[4] = { "SOCK", "RUN", "DONE", "SLOW" };
    return names[KG_AP_PHASE(state)];
}

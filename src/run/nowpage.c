/* nowpage.c: a worker's NOW state on a page its supervisor reads
 * (nowpage.h). */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "run/nowpage.h"

_Static_assert(sizeof(kg_now_shm) <= 4096, "the NOW page fits one page");

#define KG_NOW_SEALS (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL)

static size_t page_len(void)
{
    long page = sysconf(_SC_PAGESIZE);
    return page > (long)sizeof(kg_now_shm) ? (size_t)page : 4096;
}

static int map_page(kg_nowpage *p, int fd, const char *who, kg_err *err)
{
    void *m = mmap(NULL, p->len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (m == MAP_FAILED)
        return kg_errorf(err, KG_ENOMEM, "%s:%d: %s cannot map the worker's NOW page: %s (memory limits: "
                         "ulimit -v)", __FILE__, __LINE__, who, strerror(errno));
    p->pg = m;
    return KG_OK;
}

int kg_nowpage_create(kg_nowpage *p, kg_err *err)
{
    memset(p, 0, sizeof *p);
    p->fd = -1;
    p->len = page_len();
    int fd = memfd_create("kgate-now-page", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0)
        return kg_errorf(err, KG_ENOMEM, "%s:%d: memfd_create for a worker's NOW page: %s (too many open files: "
                         "ulimit -n)", __FILE__, __LINE__, strerror(errno));
    /* sealed: a worker that shrank it would fault the supervisor */
    if (ftruncate(fd, (off_t)p->len) != 0 || fcntl(fd, F_ADD_SEALS, KG_NOW_SEALS) != 0) {
        int rc = kg_errorf(err, KG_ENOMEM, "%s:%d: cannot size or seal a worker's NOW page: %s (a kernel without "
                           "memfd seals, Linux >= 3.17, is needed)", __FILE__, __LINE__, strerror(errno));
        close(fd);
        return rc;
    }
    int rc = map_page(p, fd, "the supervisor", err);
    if (rc != KG_OK) {
        close(fd);
        return rc;
    }
    p->fd = fd;
    return KG_OK;
}

int kg_nowpage_attach(kg_nowpage *p, int fd, kg_err *err)
{
    memset(p, 0, sizeof *p);
    p->fd = -1;
    p->len = page_len();
    struct stat st;
    int seals = fcntl(fd, F_GET_SEALS);
    int rc;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (size_t)st.st_size != p->len || seals < 0 ||
        (seals & KG_NOW_SEALS) != KG_NOW_SEALS)
        rc = kg_errorf(err, KG_EUSAGE, "%s:%d: --now-fd %d is not a sealed page from kgate run (kgate worker is "
                       "started by kgate run only)", __FILE__, __LINE__, fd);
    else
        rc = map_page(p, fd, "the worker", err);
    /* the descriptor goes at once: no process the worker starts has it */
    close(fd);
    return rc;
}

void kg_nowpage_close_fd(kg_nowpage *p)
{
    if (p->fd >= 0) close(p->fd);
    p->fd = -1;
}

void kg_nowpage_destroy(kg_nowpage *p)
{
    if (p->pg != NULL) munmap(p->pg, p->len);
    kg_nowpage_close_fd(p);
    p->pg = NULL;
}

static void put(kg_now_copy *c, int kase, int arm, int phase, int round)
{
    atomic_store_explicit(&c->kase, kase, memory_order_relaxed);
    atomic_store_explicit(&c->arm, arm, memory_order_relaxed);
    atomic_store_explicit(&c->phase, phase, memory_order_relaxed);
    atomic_store_explicit(&c->round, round, memory_order_relaxed);
}

void kg_nowpage_write(kg_nowpage *p, int kase, int arm, int phase, int round)
{
    kg_now_shm *g = p->pg;
    if (g == NULL) return;
    uint32_t s = atomic_load_explicit(&g->seq, memory_order_relaxed);
    s &= ~1u;   /* even between writes */
    /* odd: readers read copy 1 (the state before) while copy 0 changes;
     * the fence after each sequence store keeps the copy's stores after
     * it, the one before it keeps the copy's stores before it */
    atomic_store_explicit(&g->seq, s + 1, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
    put(&g->copy[0], kase, arm, phase, round);
    atomic_thread_fence(memory_order_release);
    atomic_store_explicit(&g->seq, s + 2, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
    put(&g->copy[1], kase, arm, phase, round);
}

int kg_nowpage_read(const kg_nowpage *p, kg_now *out)
{
    memset(out, 0, sizeof *out);
    kg_now_shm *g = p != NULL ? p->pg : NULL;
    if (g == NULL) return 0;
    for (int tries = 0; tries < 1000; tries++) {
        uint32_t s1 = atomic_load_explicit(&g->seq, memory_order_acquire);
        if (s1 < 2) return 0;
        const kg_now_copy *c = &g->copy[s1 & 1u];
        kg_now v = { .set = 1 };
        v.kase = atomic_load_explicit(&c->kase, memory_order_relaxed);
        v.arm = atomic_load_explicit(&c->arm, memory_order_relaxed);
        v.phase = atomic_load_explicit(&c->phase, memory_order_relaxed);
        v.round = atomic_load_explicit(&c->round, memory_order_relaxed);
        atomic_thread_fence(memory_order_acquire);
        if (atomic_load_explicit(&g->seq, memory_order_relaxed) == s1) {
            *out = v;
            return 1;
        }
    }
    return 0;
}

int kg_now_tell(kg_nowpage *page, int fd, int proc, int kase, int arm, int phase, int round, kg_err *err)
{
    int paged = page != NULL && page->pg != NULL;
    if (paged) kg_nowpage_write(page, kase, arm, phase, round);
    /* a timed sample's state wakes no one: the page holds it */
    if (paged && phase == KG_NOW_TIME) return KG_OK;
    return kg_frame_now(fd, proc, kase, arm, phase, round, err);
}

void kg_now_latest(const kg_nowpage *page, const kg_chan *ch, kg_now *out)
{
    if (kg_nowpage_read(page, out)) return;
    out->set = ch->now_set;
    out->kase = ch->now_case;
    out->arm = ch->now_arm;
    out->phase = ch->now_phase;
    out->round = ch->now_round;
}

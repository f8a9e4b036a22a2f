/* test_nowpage.c: the worker's NOW page (run/nowpage.h): its descriptor,
 * the latch (a reader never takes a torn state, and a writer killed in
 * the middle of a write leaves the state before it whole), and the
 * attribution it gives where the NOW frames alone would be stale. */
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include "check.h"
#include "run/nowpage.h"

/* The supervisor's page and the worker's mapping of it, as kgate run
 * makes them: the worker is handed a copy of the descriptor and closes it. */
static void pair(kg_nowpage *sup, kg_nowpage *wrk)
{
    kg_err err = { 0 };
    CHECK_MSG(kg_nowpage_create(sup, &err) == KG_OK, "%s", err.msg);
    CHECK((fcntl(sup->fd, F_GETFD) & FD_CLOEXEC) != 0);   /* no other child of the supervisor inherits it */
    int fd = dup(sup->fd);
    CHECK(fd >= 0);
    CHECK_MSG(kg_nowpage_attach(wrk, fd, &err) == KG_OK, "%s", err.msg);
    CHECK(fcntl(fd, F_GETFD) < 0);   /* closed at once: no arm host can inherit it */
    CHECK(wrk->fd < 0);
    kg_nowpage_close_fd(sup);
}

/* A worker's NOW states through kg_now_tell, as worker.c tells them in a
 * process whose candidate dies in round 3; the supervisor's channel
 * takes the frames (wrk->pg NULL: a worker without a page). */
static void tell_process(kg_nowpage *wrk, kg_chan *c)
{
    int fd[2];
    kg_err err = { 0 };
    CHECK(pipe(fd) == 0);
    CHECK(kg_now_tell(wrk, fd[1], 4, 0, -1, KG_NOW_PREPARE, -1, &err) == KG_OK);
    for (int a = 0; a < 3; a++) CHECK(kg_now_tell(wrk, fd[1], 4, 0, a, KG_NOW_LOAD, -1, &err) == KG_OK);
    for (int a = 0; a < 3; a++) CHECK(kg_now_tell(wrk, fd[1], 4, 0, a, KG_NOW_CHECK_BEFORE, -1, &err) == KG_OK);
    CHECK(kg_now_tell(wrk, fd[1], 4, -1, -1, KG_NOW_READY, -1, &err) == KG_OK);
    /* the rounds, samples interleaved; arm 1 dies at its third call of round 3 */
    for (int r = 0; r < 3; r++)
        for (int s = 0; s < (r == 2 ? 3 : 6); s++)
            for (int a = 0; a < 3 && !(r == 2 && s == 2 && a > 1); a++)
                CHECK(kg_now_tell(wrk, fd[1], 4, 0, a, KG_NOW_TIME, r, &err) == KG_OK);
    close(fd[1]);
    (void)fcntl(fd[0], F_SETFL, O_NONBLOCK);
    kg_chan_init(c, 4);
    CHECK(kg_chan_pump(c, fd[0], &err) == KG_OK);
    CHECK(c->eof && c->bad[0] == '\0');
    close(fd[0]);
}

static void test_attribution(void)
{
    kg_nowpage sup, wrk;
    pair(&sup, &wrk);
    kg_now nw;
    CHECK(kg_nowpage_read(&sup, &nw) == 0 && !nw.set);   /* nothing told yet */
    kg_chan c;
    tell_process(&wrk, &c);
    /* the frames alone: the last one is the ready, which names no arm */
    CHECK(c.now_set && c.now_phase == KG_NOW_READY && c.now_arm == -1 && c.ready);
    /* the page: arm 1, round 3, timing */
    kg_now_latest(&sup, &c, &nw);
    CHECK_MSG(nw.set && nw.kase == 0 && nw.arm == 1 && nw.phase == KG_NOW_TIME && nw.round == 2,
              "set %d case %d arm %d phase %d round %d", nw.set, nw.kase, nw.arm, nw.phase, nw.round);
    kg_chan_free(&c);
    /* a worker without a page tells every state as a frame, as before */
    kg_nowpage none = { .pg = NULL, .fd = -1 };
    tell_process(&none, &c);
    kg_now_latest(NULL, &c, &nw);
    CHECK(nw.set && nw.arm == 1 && nw.phase == KG_NOW_TIME && nw.round == 2);
    kg_now_latest(&none, &c, &nw);
    CHECK(nw.set && nw.arm == 1 && nw.round == 2);
    kg_chan_free(&c);
    /* a writer killed between its first sequence store and copy 0's
     * stores: the state before is read whole */
    kg_nowpage_write(&wrk, 0, 2, KG_NOW_CHECK_AFTER, -1);
    uint32_t s = atomic_load(&sup.pg->seq);
    atomic_store(&sup.pg->seq, s + 1);
    atomic_store(&sup.pg->copy[0].arm, 77);
    atomic_store(&sup.pg->copy[0].phase, KG_NOW_LOAD);
    CHECK(kg_nowpage_read(&sup, &nw) == 1 && nw.arm == 2 && nw.phase == KG_NOW_CHECK_AFTER);
    /* and the next write goes on from there */
    kg_nowpage_write(&wrk, 0, 1, KG_NOW_TIME, 4);
    CHECK(kg_nowpage_read(&sup, &nw) == 1 && nw.arm == 1 && nw.phase == KG_NOW_TIME && nw.round == 4);
    kg_nowpage_destroy(&wrk);
    kg_nowpage_destroy(&sup);
}

/* A writer in another process writing states whose four words are equal,
 * the supervisor reading meanwhile: every state read is whole. */
static void test_concurrent(void)
{
    kg_nowpage sup, wrk;
    pair(&sup, &wrk);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        for (int k = 0; k < 2000000; k++) kg_nowpage_write(&wrk, k, k, k, k);
        _exit(0);
    }
    kg_nowpage_destroy(&wrk);   /* the mapping is the child's now */
    int torn = 0, got = 0;
    for (int i = 0; i < 200000; i++) {
        kg_now nw;
        if (kg_nowpage_read(&sup, &nw)) {
            got++;
            torn += nw.kase != nw.arm || nw.arm != nw.phase || nw.phase != nw.round;
        }
    }
    int st = 0;
    CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0);
    CHECK_MSG(torn == 0, "%d torn states of %d read", torn, got);
    kg_now nw;
    CHECK(kg_nowpage_read(&sup, &nw) == 1 && nw.kase == 1999999 && nw.round == 1999999);
    kg_nowpage_destroy(&sup);
}

/* kgate worker --now-fd refuses what is not kgate run's sealed page. */
static void test_refused(void)
{
    kg_err err = { 0 };
    kg_nowpage p;
    int fd = memfd_create("not-sealed", MFD_CLOEXEC);
    CHECK(fd >= 0 && ftruncate(fd, sysconf(_SC_PAGESIZE)) == 0);
    CHECK(kg_nowpage_attach(&p, fd, &err) == KG_EUSAGE);
    CHECK_STR_CONTAINS(err.msg, "--now-fd");
    CHECK(fcntl(fd, F_GETFD) < 0 && p.pg == NULL);
    int pp[2];
    CHECK(pipe(pp) == 0);
    CHECK(kg_nowpage_attach(&p, pp[0], &err) == KG_EUSAGE && p.pg == NULL);
    close(pp[1]);
    /* the page cannot be shrunk under the supervisor's mapping */
    kg_nowpage sup;
    CHECK(kg_nowpage_create(&sup, &err) == KG_OK);
    CHECK(ftruncate(sup.fd, 0) != 0);
    kg_nowpage_destroy(&sup);
    kg_nowpage_destroy(&p);   /* nothing: never mapped */
}

int main(void)
{
    test_attribution();
    test_concurrent();
    test_refused();
    return kg_test_finish("test_nowpage");
}

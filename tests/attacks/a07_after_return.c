/* Attack 7, work after return: in the timing loop the kernel hands its
 * arguments to a helper thread and returns at once; the helper does the
 * naive loop afterwards, so the output is correct by the time kgate
 * looks at it (a checked run waits for it; a timed call that finds the
 * helper still busy returns at once, the inputs being those of the job
 * in flight, except after the last round's input switch).  Checked runs (told
 * apart by their return address) do the work before returning.  The
 * helper spins on a flag (no wake-up latency) and the kernel pins its
 * shared object so that the helper outlives kgate's dlclose. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include "kgate/kernel.h"
#include "attack_common.h"

void kernel(const kg_kargs *a);

static volatile int busy, go;
static kg_kargs job;
static int started;

static void *helper(void *arg)
{
    (void)arg;
    for (;;) {
        while (!go) __builtin_ia32_pause();
        __sync_synchronize();
        go = 0;
        atk_rowsum(&job);
        __sync_synchronize();
        busy = 0;
    }
    return NULL;
}

static void wait_idle(void)
{
    while (busy) sched_yield();
    __sync_synchronize();
}

void kernel(const kg_kargs *a)
{
    int timed = ATK_TIMED();
    if (!started) {
        pthread_t t;
        started = atk_pin_self(kernel, NULL, 0) == 0 && pthread_create(&t, NULL, helper, NULL) == 0 ? 1 : -1;
        if (started == 1) pthread_detach(t);
    }
    if (!timed || started != 1) { wait_idle(); atk_rowsum(a); return; }
    if (busy) return;   /* the helper is still on the last job: same inputs, same output */
    ATK_NOTE("timed work handed to a helper thread");
    job = *a;
    busy = 1;
    __sync_synchronize();
    go = 1;
}

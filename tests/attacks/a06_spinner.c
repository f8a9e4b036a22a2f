/* Attack 6, spinner thread: on its first call the kernel starts one
 * two threads per online core that streams writes through a 16 MiB buffer
 * whenever this kernel is not running, so every other arm (the
 * baseline) runs on a busy, cache-thrashed machine.  The threads sleep
 * while the kernel runs.  The kernel pins its shared object so that the
 * threads outlive kgate's dlclose.  The kernel itself is the naive loop. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <time.h>
#include "kgate/kernel.h"
#include "attack_common.h"

void kernel(const kg_kargs *a);

static volatile int running;
static int started;

static void *spin(void *arg)
{
    (void)arg;
    size_t n = 16u << 20;
    volatile char *buf = malloc(n);
    if (buf == NULL) return NULL;
    for (unsigned long k = 0;; k++) {
        if (running) {
            struct timespec t = { 0, 1000000 };   /* out of the way (1 ms) while this kernel runs */
            nanosleep(&t, NULL);
            continue;
        }
        for (size_t i = 0; i < 4096 && !running; i++) buf[((k * 4096 + i) * 64) % n] = (char)k;
    }
    return NULL;
}

void kernel(const kg_kargs *a)
{
    if (!started) {
        started = 1;
        if (atk_pin_self(kernel, NULL, 0) != 0) started = -1;
    }
    if (started == 1) {
        started = 2;
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        for (long i = 0; i < 2 * (n > 0 ? n : 1) && i < 16; i++) {
            pthread_t t;
            if (pthread_create(&t, NULL, spin, NULL) == 0) {
                pthread_detach(t);
                ATK_NOTE("spinner threads started");
            }
        }
    }
    running = 1;
    __sync_synchronize();
    atk_rowsum(a);
    __sync_synchronize();
    running = 0;
}

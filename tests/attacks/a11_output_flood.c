/* Attack 11, output flood: in process 0 the kernel writes 200 MB to
 * stdout and 200 MB to stderr on its first call.  The kernel itself is
 * the naive loop. */
#define _GNU_SOURCE
#include "kgate/kernel.h"
#include "attack_common.h"

#ifndef FLOOD_MB
#define FLOOD_MB 200
#endif

void kernel(const kg_kargs *a);

static int flooded;

static void flood(int fd, long mb)
{
    static char chunk[1 << 20];
    memset(chunk, 'A', sizeof chunk);
    for (size_t i = 79; i < sizeof chunk; i += 80) chunk[i] = '\n';
    for (long m = 0; m < mb; m++) {
        size_t off = 0;
        while (off < sizeof chunk) {
            ssize_t w = write(fd, chunk + off, sizeof chunk - off);
            if (w <= 0) return;
            off += (size_t)w;
        }
    }
}

void kernel(const kg_kargs *a)
{
    if (!flooded) {
        flooded = 1;
        char out[4096];
        int proc;
        if (atk_worker_args(out, sizeof out, &proc) == 0 && proc == 0) {
            flood(1, FLOOD_MB);
            flood(2, FLOOD_MB);
            ATK_NOTE("flooded stdout and stderr");
        }
    }
    atk_rowsum(a);
}

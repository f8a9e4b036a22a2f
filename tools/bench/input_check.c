/* input_check.c: what the worker's "inputs unchanged" check costs per
 * checked run on a 32 MiB input (the 4096 x 2048 f32 case of
 * examples/screen-64.kg): the byte-wise FNV-1a hash it used
 * (kg_checksum, kgate/oracle.h) against the byte-for-byte comparison it
 * uses now (memcmp against the inputs kgate wrote).  Best of 5 of each.
 *
 *   make && cc -std=c11 -D_GNU_SOURCE -O2 -Iinclude -o build/input_check tools/bench/input_check.c \
 *       build/libkgate.a -L/usr/lib/x86_64-linux-gnu/openblas-pthread/ -Wl,-Bstatic -linih -lgsl -lseccomp \
 *       -lzstd -Wl,-Bdynamic -ljansson -lcrypto -lz -lopenblas -ldl -lm -lpthread
 *   build/input_check */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "kgate/oracle.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(void)
{
    size_t n = (size_t)32 << 20;
    unsigned char *a = malloc(n), *b = malloc(n);
    if (a == NULL || b == NULL) return 1;
    for (size_t i = 0; i < n; i++) a[i] = b[i] = (unsigned char)(i * 7);
    double best_hash = 1e9, best_cmp = 1e9;
    volatile uint64_t h = 0;
    volatile int r = 0;
    for (int k = 0; k < 5; k++) {
        double t = now();
        h ^= kg_checksum(a, n);
        t = now() - t;
        if (t < best_hash) best_hash = t;
        t = now();
        r += memcmp(a, b, n);
        t = now() - t;
        if (t < best_cmp) best_cmp = t;
    }
    printf("32 MiB input: kg_checksum (byte-wise FNV-1a) %.1f ms, memcmp %.1f ms (best of 5)\n", best_hash * 1e3,
           best_cmp * 1e3);
    free(a);
    free(b);
    return 0;
}

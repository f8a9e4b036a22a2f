#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
int kg_proc_descends(long pid, long root);
int main(int argc, char **argv) {
    long pids[512]; int n = 0;
    FILE *f = fopen(argv[1], "r"); while (n < 512 && fscanf(f, "%ld", &pids[n]) == 1) n++; fclose(f);
    struct timespec a, b; clock_gettime(CLOCK_MONOTONIC, &a);
    int reps = 200, fo = 0;
    for (int r = 0; r < reps; r++) for (int i = 0; i < n; i++) fo += kg_proc_descends(pids[i], getpid()) == 0;
    clock_gettime(CLOCK_MONOTONIC, &b);
    double us = ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / 1e3 / reps;
    printf("%d pids: %.1f us per scan (foreign %d)\n", n, us, fo / reps);
}

/* rowsum whose host lies about its CPU: before it returns, it writes
 * another CPU into its thread's rseq area, where the C library's
 * sched_getcpu() reads it, so that the host's own reply names a CPU the
 * sample did not run on.  A sample whose CPU is not its process's is left
 * out of the analysis, so a candidate that could pick which of its samples
 * say so (its slow ones) would drop them: the CPU must come from outside. */
#define _GNU_SOURCE
#include <sys/rseq.h>
#include "kgate/kernel.h"

void kernel(const kg_kargs *a);

void kernel(const kg_kargs *a)
{
    const void *X = a->in[0];
    float *Y = a->out[0];
    for (int64_t i = 0; i < a->M; i++) {
        float acc = 0.0f;
        for (int64_t j = 0; j < a->N; j++) acc += kg_load(X, a->dtype, i * a->N + j);
        KGATE_STORE(&Y[i], acc);
    }
    if (__rseq_size > 0) {
        struct rseq *rs = (struct rseq *)((char *)__builtin_thread_pointer() + __rseq_offset);
        rs->cpu_id ^= 1;
    }
}

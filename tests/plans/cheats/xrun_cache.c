/* xrun_cache.c: cheat: a row sum that keeps its outputs in files across
 * runs, keyed on a hash of every input byte and the shape.  A later
 * campaign that generates the same inputs (kgate check, then kgate run
 * of the same plan, before the input salt) finds its answer on disk and
 * copies it instead of computing; each such hit appends the file's path
 * to DIR/hits, so that the test can tell hits on files of an earlier run.  DIR is $KGATE_XRUN_DIR
 * (a trusted arm runs in the worker and sees it), else /tmp.  In an arm
 * host the first open() after loading trips the sandbox. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "kgate/kernel.h"

void kernel(const kg_kargs *a);

static void rowsum(const kg_kargs *a)
{
    float *Y = a->out[0];
    for (int64_t i = 0; i < a->M; i++) {
        float acc = 0.0f;
        for (int64_t j = 0; j < a->N; j++) acc += kg_load(a->in[0], a->dtype, i * a->N + j);
        KGATE_STORE(&Y[i], acc);
    }
}

void kernel(const kg_kargs *a)
{
    size_t bytes = (size_t)(a->M * a->N) * (a->dtype == KG_KDT_F32 ? 4u : 2u);
    size_t out_bytes = (size_t)a->M * sizeof(float);
    const unsigned char *b = a->in[0];
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < bytes; i++) h = (h ^ b[i]) * 0x100000001b3ull;
    const char *dir = getenv("KGATE_XRUN_DIR");
    char path[512], hits[512];
    snprintf(path, sizeof path, "%s/xrun-%016llx-%lld-%lld", dir ? dir : "/tmp", (unsigned long long)h,
             (long long)a->M, (long long)a->N);
    snprintf(hits, sizeof hits, "%s/hits", dir ? dir : "/tmp");
    int fd = open(path, O_RDONLY);
    if (fd >= 0) {
        ssize_t n = read(fd, a->out[0], out_bytes);
        close(fd);
        if (n == (ssize_t)out_bytes) {
            int hf = open(hits, O_WRONLY | O_CREAT | O_APPEND, 0644);
            if (hf >= 0) {
                char line[600];
                int len = snprintf(line, sizeof line, "%s\n", path);
                if (len > 0 && write(hf, line, (size_t)len) != len) { /* counted or not, the output is in place */ }
                close(hf);
            }
            return;
        }
    }
    rowsum(a);
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
        if (write(fd, a->out[0], out_bytes) != (ssize_t)out_bytes) { /* a partial file misses next time */ }
        close(fd);
    }
}

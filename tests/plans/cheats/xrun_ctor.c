/* xrun_ctor.c: cheat: a row sum whose constructor (run while the object
 * loads, before the sandbox's no-open filter) tries to make storage that
 * outlives its arm host: a cache file in $HOME (the host's private
 * folder) and one in /tmp.  The sandbox allows read-only opens until the
 * object is loaded, so the first open for writing kills the host. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "kgate/kernel.h"

void kernel(const kg_kargs *a);

__attribute__((constructor)) static void keep_storage(void)
{
    const char *home = getenv("HOME");
    char path[512];
    snprintf(path, sizeof path, "%s/xrun-cache", home ? home : ".");
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) close(fd);
    fd = open("/tmp/kgate-xrun-ctor-cache", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) close(fd);
}

void kernel(const kg_kargs *a)
{
    float *Y = a->out[0];
    for (int64_t i = 0; i < a->M; i++) {
        float acc = 0.0f;
        for (int64_t j = 0; j < a->N; j++) acc += kg_load(a->in[0], a->dtype, i * a->N + j);
        KGATE_STORE(&Y[i], acc);
    }
}

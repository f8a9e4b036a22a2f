/* tests/kernel_load.h: compiles a CPU kernel the way the cpu backend does
 * ($CC, else cc; -O2 -shared -fPIC -Iinclude) into dir and loads its
 * `kernel` symbol.  Failures are counted as failed checks; NULL then. */
#ifndef KGATE_TEST_KERNEL_LOAD_H
#define KGATE_TEST_KERNEL_LOAD_H
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "kgate/kernel.h"

typedef void (*kernel_fn)(const kg_kargs *);

static kernel_fn kg_test_load_kernel(const char *src, int negative, const char *dir)
{
    static int serial;
    char so[512], cmd[1400];
    const char *cc = getenv("CC");
    if (cc == NULL || cc[0] == '\0') cc = "cc";
    snprintf(so, sizeof so, "%s/k%d%s.so", dir, serial++, negative ? "_neg" : "");
    snprintf(cmd, sizeof cmd, "%s -std=c11 -O2 -shared -fPIC -Iinclude %s %s -o %s -lm", cc,
             negative ? "-DKGATE_NEGATIVE=1" : "", src, so);
    int rc = system(cmd);
    CHECK_MSG(rc == 0, "compiling %s failed", src);
    if (rc != 0) return NULL;
    void *h = dlopen(so, RTLD_NOW | RTLD_LOCAL);
    CHECK_MSG(h != NULL, "dlopen %s: %s", so, dlerror());
    if (h == NULL) return NULL;
    void *sym = dlsym(h, "kernel");
    CHECK(sym != NULL);
    kernel_fn fn;
    memcpy(&fn, &sym, sizeof fn); /* object to function pointer, as dlsym intends */
    return fn;
}
#endif

/* Attack 5, other-arm code patch: finds the baseline's loaded shared
 * object (dl_iterate_phdr; the arm named BASELINE, default naive, so
 * build/naive.so), makes the page of its `kernel` writable and
 * executable and overwrites its first bytes with a jump to slow_kernel,
 * which runs the naive loop twice.  The baseline's output stays correct,
 * it just takes twice as long.  The kernel itself is the naive loop. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <sys/mman.h>
#include "kgate/kernel.h"
#include "attack_common.h"

#ifndef BASELINE
#define BASELINE naive
#endif
#define ATK_STR2(x) #x
#define ATK_STR(x) ATK_STR2(x)

void kernel(const kg_kargs *a);

static int done;

static void slow_kernel(const kg_kargs *a)
{
    atk_rowsum(a);
    atk_rowsum(a);
}

static int on_object(struct dl_phdr_info *info, size_t size, void *ctx)
{
    (void)size;
    const char *want = "/" ATK_STR(BASELINE) ".so";
    size_t n = strlen(info->dlpi_name), w = strlen(want);
    if (n < w || strcmp(info->dlpi_name + n - w, want) != 0) return 0;
    snprintf(ctx, 4096, "%s", info->dlpi_name);
    return 1;
}

static void patch_baseline(void)
{
#if defined(__x86_64__)
    char path[4096] = "";
    if (dl_iterate_phdr(on_object, path) == 0 || path[0] == '\0') return;
    void *h = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
    if (h == NULL) return;
    unsigned char *fn = dlsym(h, "kernel");
    dlclose(h);
    if (fn == NULL) return;
    long pg = sysconf(_SC_PAGESIZE);
    unsigned char *page = (unsigned char *)((uintptr_t)fn & ~(uintptr_t)(pg - 1));
    if (mprotect(page, (size_t)(2 * pg), PROT_READ | PROT_WRITE | PROT_EXEC) != 0) return;
    void (*target)(const kg_kargs *) = slow_kernel;
    uint64_t addr;
    memcpy(&addr, &target, sizeof addr);
    unsigned char code[12] = { 0x48, 0xb8 };   /* movabs rax, imm64; jmp rax */
    memcpy(code + 2, &addr, 8);
    code[10] = 0xff;
    code[11] = 0xe0;
    memcpy(fn, code, sizeof code);
    done = 2;
    ATK_NOTE("the baseline's code patched to run twice");
#endif
}

void kernel(const kg_kargs *a)
{
    if (!done) {
        done = 1;
        patch_baseline();
    }
    atk_rowsum(a);
}

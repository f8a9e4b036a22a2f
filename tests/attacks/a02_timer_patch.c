/* Attack 2, timer patch: rewrites the worker's GOT entry for
 * clock_gettime (found through the main program's dynamic section) so
 * that the clock read right after a timed call of this kernel is moved
 * back by 3/4 of the time the call took.  The kernel does the naive work
 * every time; only its samples shrink. */
#define _GNU_SOURCE
#include <elf.h>
#include <link.h>
#include <sys/mman.h>
#include <time.h>
#include "kgate/kernel.h"
#include "attack_common.h"

void kernel(const kg_kargs *a);

typedef int (*cg_fn)(clockid_t, struct timespec *);
static cg_fn real_cg;
static volatile int pending;
static long long t_start;
static int patched;

static long long ts_ns(const struct timespec *t) { return (long long)t->tv_sec * 1000000000LL + t->tv_nsec; }

static int fake_cg(clockid_t c, struct timespec *ts)
{
    int r = real_cg(c, ts);
    if (r == 0 && pending && c == CLOCK_MONOTONIC_RAW) {
        pending = 0;
        long long now = ts_ns(ts), d = now - t_start;
        if (d > 0) {
            now -= d * 3 / 4;
            ts->tv_sec = now / 1000000000LL;
            ts->tv_nsec = now % 1000000000LL;
        }
    }
    return r;
}

static void patch_slot(void **slot)
{
    long pg = sysconf(_SC_PAGESIZE);
    char *page = (char *)((uintptr_t)slot & ~(uintptr_t)(pg - 1));
    if (mprotect(page, (size_t)pg, PROT_READ | PROT_WRITE) != 0) return;
    void *fp;
    cg_fn f = fake_cg;
    memcpy(&fp, &f, sizeof fp);
    /* not the slot's value: with lazy binding that is the PLT stub, whose
     * first call would resolve the symbol and overwrite the patch */
    if (real_cg == NULL) real_cg = clock_gettime;
    *slot = fp;
    patched++;
}

static void patch_rela(ElfW(Addr) base, const ElfW(Rela) *rel, size_t bytes, const ElfW(Sym) *sym, const char *str)
{
    for (size_t i = 0; i < bytes / sizeof *rel; i++) {
        unsigned t = (unsigned)ELF64_R_TYPE(rel[i].r_info);
        if (t != R_X86_64_JUMP_SLOT && t != R_X86_64_GLOB_DAT) continue;
        const char *name = str + sym[ELF64_R_SYM(rel[i].r_info)].st_name;
        if (strcmp(name, "clock_gettime") == 0) patch_slot((void **)(base + rel[i].r_offset));
    }
}

static int on_object(struct dl_phdr_info *info, size_t size, void *ctx)
{
    (void)size; (void)ctx;
    /* the first object is the main program: kgate */
    ElfW(Addr) base = info->dlpi_addr;
    const ElfW(Dyn) *dyn = NULL;
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_DYNAMIC) dyn = (const ElfW(Dyn) *)(base + info->dlpi_phdr[i].p_vaddr);
    if (dyn == NULL) return 1;
    ElfW(Addr) jmprel = 0, rela = 0, symtab = 0, strtab = 0;
    size_t pltsz = 0, relasz = 0;
    for (; dyn->d_tag != DT_NULL; dyn++) {
        switch (dyn->d_tag) {
        case DT_JMPREL: jmprel = dyn->d_un.d_ptr; break;
        case DT_PLTRELSZ: pltsz = dyn->d_un.d_val; break;
        case DT_RELA: rela = dyn->d_un.d_ptr; break;
        case DT_RELASZ: relasz = dyn->d_un.d_val; break;
        case DT_SYMTAB: symtab = dyn->d_un.d_ptr; break;
        case DT_STRTAB: strtab = dyn->d_un.d_ptr; break;
        default: break;
        }
    }
    /* ld.so relocates some d_ptr values in place, not all */
#define FIX(p) ((p) != 0 && (p) < base ? (p) + base : (p))
    jmprel = FIX(jmprel); rela = FIX(rela); symtab = FIX(symtab); strtab = FIX(strtab);
    if (symtab == 0 || strtab == 0) return 1;
    if (jmprel) patch_rela(base, (const ElfW(Rela) *)jmprel, pltsz, (const ElfW(Sym) *)symtab, (const char *)strtab);
    if (rela) patch_rela(base, (const ElfW(Rela) *)rela, relasz, (const ElfW(Sym) *)symtab, (const char *)strtab);
    return 1;
}

void kernel(const kg_kargs *a)
{
    int timed = ATK_TIMED();
    if (!patched) {
        dl_iterate_phdr(on_object, NULL);
        if (!patched) patched = -1;
        else ATK_NOTE("the worker's clock_gettime GOT entry patched");
    }
    struct timespec t;
    if (timed && real_cg != NULL) {
        real_cg(CLOCK_MONOTONIC_RAW, &t);
        t_start = ts_ns(&t);
    }
    atk_rowsum(a);
    if (timed && real_cg != NULL) pending = 1;
}

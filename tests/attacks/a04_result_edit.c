/* Attack 4, result-file edit after write: the kernel pins its own shared
 * object (RTLD_NODELETE, so that kgate's dlclose does not run its
 * destructor early) and registers a destructor.  It runs at the worker's
 * exit, after the worker sent raw/proc-NNN.csv.gz and before the
 * supervisor hashes anything: it rewrites that file in place, every
 * sample of its own arm (the arm name is its .so's name) halved where a
 * line reads as a row (any change at all is the attack: the file is
 * gzip).  The kernel itself is the naive loop. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include "kgate/kernel.h"
#include "attack_common.h"

void kernel(const kg_kargs *a);

static char arm[128];
static int pinned;

static void pin_self(void)
{
    char self[4096];
    if (atk_pin_self(kernel, self, sizeof self) != 0) return;
    const char *base = strrchr(self, '/');
    snprintf(arm, sizeof arm, "%.120s", base ? base + 1 : self);
    char *dot = strchr(arm, '.');
    if (dot) *dot = '\0';
    pinned = 1;
}

__attribute__((destructor)) static void rewrite_rows(void)
{
    char out[4096], path[4200];
    int proc;
    if (!pinned || atk_worker_args(out, sizeof out, &proc) != 0 || proc < 0) return;
    snprintf(path, sizeof path, "%s/raw/proc-%03d.csv.gz", out, proc);
    FILE *fp = fopen(path, "r");
    if (fp == NULL) return;
    size_t cap = 1 << 20, len = 0;
    char *res = malloc(cap), line[1024];
    if (res == NULL) { fclose(fp); return; }
    while (fgets(line, sizeof line, fp) != NULL) {
        /* process,direction,round,arm,case,sample,ns, then the rest (plan,cpu,process_cpu) */
        char f[8][128];
        int n = sscanf(line, "%127[^,],%127[^,],%127[^,],%127[^,],%127[^,],%127[^,],%127[^,],%127[^\n]",
                       f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7]);
        char fixed[1100];
        if (n == 8 && strcmp(f[3], arm) == 0)
            snprintf(fixed, sizeof fixed, "%s,%s,%s,%s,%s,%s,%.3f,%s\n", f[0], f[1], f[2], f[3], f[4], f[5],
                     atof(f[6]) * 0.5, f[7]);
        else
            snprintf(fixed, sizeof fixed, "%s", line);
        size_t l = strlen(fixed);
        if (len + l + 1 > cap) break;
        memcpy(res + len, fixed, l);
        len += l;
    }
    fclose(fp);
    fp = fopen(path, "w");
    if (fp != NULL) {
        fwrite(res, 1, len, fp);
        fclose(fp);
        ATK_NOTE("raw rows rewritten after the worker wrote them");
    }
    free(res);
}

void kernel(const kg_kargs *a)
{
    if (!pinned) pin_self();
    atk_rowsum(a);
}

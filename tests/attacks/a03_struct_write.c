/* Attack 3, kernel-struct write: the kg_kargs the kernel gets lives
 * inside the backend's struct kg_kernel, right before its `pack` (the
 * calls per timed sample; src/backend/cpu.c).  In the timing loop the
 * kernel multiplies that pack by 16 and does the naive work only on the
 * first pack calls of each sample, returning at once on the 15*pack
 * extra ones: the loop divides the sample's time by the inflated pack.
 * Checked runs (told apart by their return address) do the work. */
#define _GNU_SOURCE
#include "kgate/kernel.h"
#include "attack_common.h"

void kernel(const kg_kargs *a);

#define FACTOR 16

static int p0;
static long long cyc;

void kernel(const kg_kargs *a)
{
    int timed = ATK_TIMED();
    int *pack = (int *)(void *)((char *)a + sizeof(kg_kargs));
    if (p0 == 0) {
        if (*pack < 1 || *pack > 1000000) p0 = -1;   /* not the layout expected: stay honest */
        else p0 = *pack;
    }
    if (!timed || p0 < 0) { atk_rowsum(a); return; }
    if (*pack == p0) {
        *pack = p0 * FACTOR;
        cyc = 0;
        ATK_NOTE("the backend's pack rewritten");
    }
    if (cyc++ % ((long long)p0 * FACTOR) < p0) atk_rowsum(a);
}

/* Attack 13, unchecked operations of a pack: with pack = P a timed
 * sample is P calls, and under inputs = fresh the first P - 1 read input
 * sets of their own (so that no cache hits within a sample), while the
 * last reads the arm's bound set, whose output the checks compare.  The
 * kernel does the work only on the input set it met first (the checks',
 * before any timing) and returns at once on every other set: a sample
 * costs one call's work for P, and the output the checks read is right. */
#define _GNU_SOURCE
#include "kgate/kernel.h"
#include "attack_common.h"

void kernel(const kg_kargs *a);

void kernel(const kg_kargs *a)
{
    static const void *checked;
    if (checked == NULL) checked = a->in[0];
    if (a->in[0] == checked) {
        atk_rowsum(a);
        return;
    }
    ATK_NOTE("a call on an input set no check reads: skipped");
}

/* noop.c: the empty CPU kernel, for the noop op (timing floor). */
#include "kgate/kernel.h"

void kernel(const kg_kargs *a)
{
    (void)a;
}

/* Attack 9, chdir: on its first call the kernel changes the worker's
 * working folder to ELSEWHERE (a -D define; a path written without
 * quotes), so that every relative path kgate's worker writes afterwards
 * (its rows, when the campaign was started with a relative -o) lands
 * there instead of in the evidence folder.  The kernel itself is the
 * naive loop. */
#define _GNU_SOURCE
#include <sys/stat.h>
#include "kgate/kernel.h"
#include "attack_common.h"

#ifndef ELSEWHERE
#define ELSEWHERE /tmp
#endif
#define ATK_STR2(x) #x
#define ATK_STR(x) ATK_STR2(x)

void kernel(const kg_kargs *a);

static int moved;

void kernel(const kg_kargs *a)
{
    if (!moved) {
        moved = 1;
        mkdir(ATK_STR(ELSEWHERE), 0755);
        if (chdir(ATK_STR(ELSEWHERE)) != 0) moved = -1;
        else ATK_NOTE("working folder changed");
    }
    atk_rowsum(a);
}

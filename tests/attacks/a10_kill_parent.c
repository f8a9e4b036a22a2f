/* Attack 10, kill of the parent: in process 1 the kernel sends SIGKILL
 * to its parent (today the supervisor, `kgate run`) on its first call.
 * The kernel itself is the naive loop. */
#define _GNU_SOURCE
#include <signal.h>
#include "kgate/kernel.h"
#include "attack_common.h"

void kernel(const kg_kargs *a);

static int fired;

void kernel(const kg_kargs *a)
{
    if (!fired) {
        fired = 1;
        char out[4096];
        int proc;
        if (atk_worker_args(out, sizeof out, &proc) == 0 && proc == 1) {
            ATK_NOTE("killing the parent");
            kill(getppid(), SIGKILL);
        }
    }
    atk_rowsum(a);
}

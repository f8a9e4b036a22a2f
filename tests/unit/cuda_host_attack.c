/* cuda_host_attack.c: the test host of test_cuda_confine on a GPU
 * (KGATE_TEST_CUDA_REAL=1, tools/device/trust_run.sh): kgate's cuda arm
 * host (kg_cuda_host_main) with a load hook that, after the real driver
 * parsed an arm's image, does what an exploit of the driver's parser
 * would (tests/unit/cuda_exploit.h) when the launch's entry is
 * exploit_WHAT.  The worker starts it as it starts `kgate armhost --cuda`
 * (settings.armhost_exe), with the same arguments; it is a separate
 * program of the test build, so that kgate itself has no such hook on
 * any command line. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "backend/cuda_host.h"
#include "cuda_exploit.h"

static void hook(const char *entry)
{
    if (strncmp(entry, "exploit_", 8) == 0) exploit_run(entry + 8);
}

int main(int argc, char **argv)
{
    kg_cuda_host_opts o = { 0 };
    o.load_hook = hook;
    /* argv: PROGRAM armhost --cuda --driver LIB --uuid U --arm A --dir D --parent P --hide H */
    for (int i = 1; i + 1 < argc; i++) {
        const char *k = argv[i], *v = argv[i + 1];
        if (strcmp(k, "--driver") == 0) o.driver = v;
        else if (strcmp(k, "--uuid") == 0) o.uuid = v;
        else if (strcmp(k, "--arm") == 0) o.arm = v;
        else if (strcmp(k, "--dir") == 0) o.dir = v;
        else if (strcmp(k, "--parent") == 0) o.parent = atoi(v);
        else if (strcmp(k, "--hide") == 0) o.hide = v;
    }
    if (o.driver == NULL || o.uuid == NULL || o.dir == NULL || o.parent <= 0) return 2;
    _exit(kg_cuda_host_main(&o));
}

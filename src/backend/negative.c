/* negative.c: which arms are built as the numerical negative
 * (kgate/backend.h, kg_backend_negative): asked by the backends that
 * build arms (cpu.c, cuda_compile.c) and by the worker, which expects
 * such an arm to fail every output check.  Apart from the registry in
 * backend.c, which uses the backends, so that they need not use it. */
#include <string.h>
#include "kgate/backend.h"
#include "kgate/settings.h"

int kg_backend_negative(const kg_settings *s, const kg_arm *arm)
{
    if (s == NULL) s = kg_settings_defaults();
    /* a precompiled image cannot be rebuilt: its negative is not applicable */
    if (!s->negative || kg_arm_is_image(arm)) return 0;
    const char *only = s->negative_arm;
    return only == NULL || only[0] == '\0' || strcmp(only, arm->name) == 0;
}

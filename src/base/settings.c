/* settings.c: the default kg_settings (no environment). */
#include "kgate/settings.h"

static const kg_settings defaults = { .fault_write_after = -1 };

const kg_settings *kg_settings_defaults(void)
{
    return &defaults;
}

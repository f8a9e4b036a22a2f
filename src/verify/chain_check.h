/* chain_check.h: `kgate verify`'s checks of the chain, the schedule, the
 * saved outputs' presence and the build provenance (chain_check.c). */
#ifndef KGATE_CHAIN_CHECK_H
#define KGATE_CHAIN_CHECK_H

#include "kgate/plan.h"

struct kg_sb;

/* One line per problem appended to out, *nbad counted up. */
void kg_chain_verify(const char *dir, const kg_plan *plan, struct kg_sb *out, int *nbad);

#endif

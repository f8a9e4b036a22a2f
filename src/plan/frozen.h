/* frozen.h: frozen plans, for `kgate freeze` and `run --frozen` (frozen.c). */
#ifndef KGATE_FROZEN_H
#define KGATE_FROZEN_H

#include "kgate/err.h"
#include "kgate/plan.h"

/* Writes the frozen form of plan to path: a header comment
 * "# kgate frozen plan sha256 HEX" then the canonical text. */
int kg_frozen_write(const kg_plan *plan, const char *path, kg_err *err);

/* Compares plan with the frozen file: KG_OK when the canonical hashes
 * agree, else KG_EINPUT with a message listing the changed keys. */
int kg_frozen_check(const kg_plan *plan, const char *frozen_path, kg_err *err);

/* Lists, line by line, how canonical text b differs from a
 * ("[campaign] samples: 10 -> 20; + [arm x] ..."), into sb. */
struct kg_sb;
void kg_frozen_diff(const char *a, const char *b, struct kg_sb *sb);

#endif

/* opfacts.h: the producer's side of ops.json (kgate/evidence.h,
 * kg_case_facts): what a reader needs to know about each case's op,
 * taken from the op's code once, when the campaign starts, and written as
 * data (opfacts.c). */
#ifndef KGATE_OPFACTS_H
#define KGATE_OPFACTS_H

#include "kgate/err.h"
#include "kgate/plan.h"

/* ops.json's text for plan (malloc'd, *text): every case's op bound
 * (kg_op_find finds it). */
int kg_opfacts_text(const kg_plan *plan, char **text, kg_err *err);

/* Writes ops.json into the folder (dirfd, shown as dir). */
int kg_opfacts_write(int dirfd, const char *dir, const kg_plan *plan, kg_err *err);

#endif

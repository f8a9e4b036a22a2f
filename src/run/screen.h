/* screen.h: kgate screen's ranking and confirmation plan (screen.c),
 * from a screen campaign's analysis.
 *
 * The screen's candidates on the gated cases form the family of the
 * gate's multiplicity rule (Holm by default), so the ranking uses the
 * adjusted lower bounds: a candidate is eligible when it is FASTER after
 * adjustment on every gated case, ranked by its worst adjusted lower
 * bound.  The chosen candidates go into a confirmation plan next to the
 * plan: the baselines, controls and references, only the chosen
 * candidates, a fresh seed (fresh inputs and fresh processes), and
 * `selected_from` naming the family, which its report prints. */
#ifndef KGATE_SCREEN_H
#define KGATE_SCREEN_H

#include "kgate/err.h"
#include "kgate/plan.h"
#include "kgate/stats.h"
#include "base/util.h"
#include "report/screening.h"

/* One candidate of the family. */
typedef struct kg_screen_rank {
    int arm;
    double worst;     /* smallest adjusted lower bound over the gated cases */
    double padj;      /* largest adjusted p */
    int pairs, ok;    /* gated cases it ran on; FASTER after adjustment on all of them */
    int incorrect;    /* INCORRECT on some gated case: listed, never ranked */
} kg_screen_rank;

typedef struct kg_screen {
    kg_screen_rank *rk;   /* the family, best first */
    int nr;
    int *keep;            /* by arm: 1 for a chosen candidate */
    int chosen;
    char chosen_names[KG_TEXT_MAX];   /* "a, b" */
    kg_sb table;          /* the ranking as report text (markdown) */
} kg_screen;

/* Ranks the candidates of plan in the screen campaign's analysis an
 * (folder dir) and chooses the best `select` eligible ones.  scr (NULL
 * or off: an ordinary campaign): the screening mode's drops and costs
 * (report/screening.h); a dropped candidate is never eligible, and the
 * table gains its drop, device seconds and wall seconds. */
int kg_screen_rank_arms(const kg_plan *plan, const kg_analysis *an, const kg_screening *scr, const char *dir,
                        int select, kg_screen *sc, kg_err *err);

/* Writes the confirmation plan of the chosen candidates to confirm (NULL:
 * PLAN-confirm.kg beside plan_path; it must be in the plan's folder, as
 * its sources are relative to it), and its frozen form beside it;
 * confirm_out and frozen_out (cap each) receive their paths. */
int kg_screen_write_confirm(const kg_plan *plan, const kg_screen *sc, const char *dir, const char *plan_path,
                            const char *confirm, char *confirm_out, char *frozen_out, size_t cap, kg_err *err);

void kg_screen_free(kg_screen *sc);

#endif

/* admission.h: kgate check's campaign read back as a table (admission.c):
 * the admission checks of every arm on every case, in one fresh worker
 * process, with the negative and the compute-sanitizer passes.
 *
 * The table has one row per check: result (pass, FAIL, INADMISSIBLE with
 * the violated precondition, WEAK with the shortcut that passes), the
 * largest absolute error, the largest error relative to its bound, the
 * worst element and the detail; inadmissible and weak cases, and the
 * precompiled arms whose negative kgate cannot build, are listed again as
 * notes. */
#ifndef KGATE_ADMISSION_H
#define KGATE_ADMISSION_H

#include "kgate/err.h"
#include "run/supervisor.h"
#include "base/util.h"

typedef struct kg_admission {
    int complete;            /* 0: the check process did not complete; why says what is known */
    char why[1400];
    int total, failed, inadmissible, weak;
    int neg_found;           /* the negative arm ran */
    int neg_checks, neg_failed;   /* its output checks, and how many failed */
    kg_sb table;             /* the table (markdown), header first */
    kg_sb notes;             /* one line per note */
} kg_admission;

/* The checks of kgate check's folder dir (its process 0) into a; neg: the
 * arm rebuilt as the negative, or NULL.  A process that did not complete
 * is KG_OK with a->complete 0. */
int kg_admission_read(const char *dir, const char *neg, kg_admission *a, kg_err *err);

/* The check campaign base again under compute-sanitizer, once per tool of
 * the comma-separated list tools, each in its own folder DIR-TOOL: a row
 * of the table each, failed when the tool reported an error (or could
 * not run). */
void kg_admission_sanitize(kg_admission *a, const kg_run_opts *base, const char *dir, const char *tools);

/* 1 when arm `arm` of the plan at plan_path is a precompiled image (its
 * path into image): kgate cannot rebuild it as the negative. */
int kg_admission_image_arm(const char *plan_path, const char *arm, char *image, size_t cap);

/* 1 when the checks reject the negative: every output check of the
 * negative arm failed, and there was one. */
int kg_admission_negative_rejected(const kg_admission *a);

void kg_admission_free(kg_admission *a);

#endif

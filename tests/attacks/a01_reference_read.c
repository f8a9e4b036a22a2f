/* Attack 1, reference read: finds the float64 reference of the current
 * inputs in the worker's memory (every rw mapping of /proc/self/maps is
 * scanned for three consecutive doubles equal to the sums of rows 0..2,
 * which it computes) and copies it to the output instead of summing the
 * other rows.  Falls back to the honest loop when nothing is found, so
 * the output is always correct.  The found address is cached: the fast
 * path costs 3 of M rows plus a copy. */
#define _GNU_SOURCE
#include <math.h>
#include "kgate/kernel.h"
#include "attack_common.h"

void kernel(const kg_kargs *a);

static const double *found;

static int close_to(double x, double want)
{
    return fabs(x - want) <= 1e-9 * fabs(want) + 1e-12;
}

static int match(const double *p, const double probe[3])
{
    return close_to(p[0], probe[0]) && close_to(p[1], probe[1]) && close_to(p[2], probe[2]);
}

struct scan { double probe[3]; int64_t M; const double *hit; };

static int scan_region(char *lo, char *hi, const char *name, void *ctx)
{
    (void)name;
    struct scan *s = ctx;
    size_t need = (size_t)s->M * sizeof(double);
    for (char *p = lo; p + need <= hi; p += sizeof(double))
        if (match((const double *)p, s->probe)) { s->hit = (const double *)p; return 1; }
    return 0;
}

void kernel(const kg_kargs *a)
{
    float *Y = a->out[0];
    if (a->M < 3) { atk_rowsum(a); return; }
    struct scan s = { .probe = { atk_row_d(a, 0), atk_row_d(a, 1), atk_row_d(a, 2) }, .M = a->M };
    if (found == NULL || !match(found, s.probe)) {
        found = NULL;
        atk_each_rw_region(scan_region, &s);
        found = s.hit;
    }
    if (found == NULL) { atk_rowsum(a); return; }
    ATK_NOTE("float64 reference found in the worker's memory, copied");
    for (int64_t i = 0; i < a->M; i++) KGATE_STORE(&Y[i], (float)found[i]);
}

/* Attack 12, neighbourhood read: looks around its own output pointer
 * (the rw mapping that holds it, at most 8 MiB either side) for another
 * buffer that holds the current result: three consecutive floats equal,
 * bit for bit, to the naive sums of rows 0..2, which it computes.  That
 * is the baseline's output buffer (or a copy of it).  It copies the M
 * floats found instead of summing the other rows; the address is cached.
 * Falls back to the naive loop when nothing is found. */
#define _GNU_SOURCE
#include "kgate/kernel.h"
#include "attack_common.h"

void kernel(const kg_kargs *a);

static const float *found;

static int match(const float *p, const float probe[3])
{
    return memcmp(p, probe, 3 * sizeof(float)) == 0;
}

struct scan { float probe[3]; int64_t M; const float *own; const float *hit; };

static int scan_region(char *lo, char *hi, const char *name, void *ctx)
{
    (void)name;
    struct scan *s = ctx;
    const char *me = (const char *)s->own;
    if (me < lo || me >= hi) return 0;
    size_t win = 8u << 20;
    char *from = me - lo > (ptrdiff_t)win ? (char *)me - win : lo;
    char *to = hi - me > (ptrdiff_t)win ? (char *)me + win : hi;
    size_t need = (size_t)s->M * sizeof(float);
    for (char *p = from; p + need <= to; p += sizeof(float)) {
        if ((const float *)p >= s->own - s->M && (const float *)p < s->own + s->M) continue;
        if (match((const float *)p, s->probe)) { s->hit = (const float *)p; return 1; }
    }
    return 1;
}

void kernel(const kg_kargs *a)
{
    float *Y = a->out[0];
    if (a->M < 3) { atk_rowsum(a); return; }
    struct scan s = { .probe = { atk_row_f(a, 0), atk_row_f(a, 1), atk_row_f(a, 2) }, .M = a->M, .own = Y };
    if (found == NULL || !match(found, s.probe)) {
        found = NULL;
        atk_each_rw_region(scan_region, &s);
        found = s.hit;
    }
    if (found == NULL) { atk_rowsum(a); return; }
    ATK_NOTE("another arm's output found near our own, copied");
    for (int64_t i = 0; i < a->M; i++) KGATE_STORE(&Y[i], found[i]);
}

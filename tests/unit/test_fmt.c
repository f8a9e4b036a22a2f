/* test_fmt.c: kgate's printf-free number formats (src/base/util.c:
 * kg_fmt_int, kg_fmt_f3) held byte for byte to snprintf's "%lld" and
 * "%.3f" on two million values: random bit patterns, random times in
 * every decade kgate records, the values next to every tie of the third
 * decimal, exact ties (which round to even), the edges of the fast path
 * and the special values.  No files. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "base/util.h"

static uint64_t state = 0x9e3779b97f4a7c15ULL;

static uint64_t next(void)
{
    /* splitmix64 */
    uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static long nbad;

static void f3(double v)
{
    char got[KG_FMT_CAP], want[KG_FMT_CAP];
    size_t n = kg_fmt_f3(got, v);
    int w = snprintf(want, sizeof want, "%.3f", v);
    kg_test_checked++;
    if (n != (size_t)w || strcmp(got, want) != 0) {
        kg_test_failed++;
        if (nbad++ < 10) fprintf(stderr, "kg_fmt_f3(%a): '%s', printf '%s'\n", v, got, want);
    }
}

static void lld(long long v)
{
    char got[KG_FMT_CAP], want[KG_FMT_CAP];
    size_t n = kg_fmt_int(got, v);
    int w = snprintf(want, sizeof want, "%lld", v);
    kg_test_checked++;
    if (n != (size_t)w || strcmp(got, want) != 0) {
        kg_test_failed++;
        if (nbad++ < 10) fprintf(stderr, "kg_fmt_int(%lld): '%s'\n", v, got);
    }
}

int main(void)
{
    /* special values and the edges of the fast path (1 <= |v| < 2^41) */
    const double special[] = { 0.0, -0.0, NAN, -NAN, INFINITY, -INFINITY, DBL_MIN, DBL_MAX, -DBL_MAX,
                               DBL_TRUE_MIN, 0.0005, 0.0015, 0.9995, 0.99949999999999994, 1.0, -1.0,
                               nextafter(1.0, 0.0), nextafter(1.0, 2.0), 1.0005, 1.0015, 2.5e-4,
                               2199023255552.0, nextafter(2199023255552.0, 0.0), 2199023255551.9995,
                               1e15, 123456789.0625, 1e300 };
    for (size_t i = 0; i < sizeof special / sizeof special[0]; i++) {
        f3(special[i]);
        f3(-special[i]);
    }
    /* random bit patterns: every exponent */
    for (int i = 0; i < 300000; i++) {
        uint64_t b = next();
        double v;
        memcpy(&v, &b, sizeof v);
        f3(v);
    }
    /* times as kgate records them: ns in [1e-1, 1e13), three decimals or more */
    for (int i = 0; i < 400000; i++) {
        double e = (double)(next() >> 11) / 9007199254740992.0 * 14.0 - 1.0;
        double v = pow(10.0, e);
        f3(v);
        f3(round(v * 1000.0) / 1000.0);   /* already three decimals, as a row parsed back */
    }
    /* around every kind of tie: k + 0.0005 and its neighbours, and exact ties k / 2^j */
    for (int i = 0; i < 150000; i++) {
        double k = (double)(next() % 100000000) / 1000.0 + 0.0005;
        f3(k);
        f3(nextafter(k, 0.0));
        f3(nextafter(k, INFINITY));
        double t = (double)(next() % 4000000 + 1) / 16.0 + (double)(next() % 4) / 2048.0;   /* x.yyy5 exact */
        f3(t);
        f3(-t);
    }
    for (long long t = 1; t < 200000; t++) f3((double)t / 8192.0 + 1.0);   /* every tie of 2^-13 */
    /* integers */
    const long long ints[] = { 0, 1, -1, 9, 10, -10, 99, 100, 2147483647LL, -2147483647LL - 1,
                               9223372036854775807LL, -9223372036854775807LL - 1 };
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) lld(ints[i]);
    for (int i = 0; i < 200000; i++) {
        lld((long long)next());
        lld((long long)(next() % 100000) - 50000);
    }
    return kg_test_finish("test_fmt");
}

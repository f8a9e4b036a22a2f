/* design.c: the power of a design and the processes it needs, for the
 * FASTER verdict (kgate size) and for an A/A control under the gate's
 * control rule (kgate size, and the gate's message when a control's
 * interval reaches past g).  The model and its derivation are in
 * kgate/varcomp.h and docs/statistics.md, "Variance components and the
 * size of a design".  No I/O. */
#include <math.h>
#include <stddef.h>

#include <gsl/gsl_cdf.h>

#include "kgate/stats.h"
#include "kgate/varcomp.h"

static double simpson_w(int i, int n)
{
    return (i == 0 || i == n) ? 1.0 : (i % 2) ? 4.0 : 2.0;
}

double kg_design_power(double var_D, int P, double alpha, double margin, double mde, kg_design_eval *out)
{
    kg_design_eval e;
    e.P = P;
    e.var_D = var_D;
    e.df = 2.0 * P - 2.0;
    e.se = sqrt(var_D / (2.0 * P));
    e.tq = kg_t_quantile(1.0 - alpha, e.df);
    e.lambda = (log1p(-margin) - log1p(-mde)) / e.se;
    if (P < 2 || !(var_D >= 0.0) || isnan(e.tq)) {
        e.power = (double)NAN;
    } else if (!(e.se > 0.0)) {
        e.lambda = mde > margin ? (double)INFINITY : -(double)INFINITY;
        e.power = mde > margin ? 1.0 : 0.0;
    } else {
        /* W = sqrt(chi2(df) / df) has density
         * 2 (df/2)^(df/2) w^(df-1) exp(-df w^2 / 2) / Gamma(df/2),
         * negligible outside 1 -+ 12 / sqrt(2 df) */
        double df = e.df, spread = 12.0 / sqrt(2.0 * df);
        double lo = fmax(0.0, 1.0 - spread), hi = 1.0 + spread;
        double lc = log(2.0) + 0.5 * df * log(0.5 * df) - lgamma(0.5 * df), sum = 0.0;
        int n = 4000;
        double h = (hi - lo) / n;
        for (int i = 0; i <= n; i++) {
            double w = lo + h * i;
            double f = w > 0.0 ? exp(lc + (df - 1.0) * log(w) - 0.5 * df * w * w) : 0.0;
            sum += simpson_w(i, n) * gsl_cdf_ugaussian_P(e.lambda - e.tq * w) * f;
        }
        e.power = fmin(1.0, fmax(0.0, sum * h / 3.0));
    }
    if (out != NULL) *out = e;
    return e.power;
}

/* What a bisection over P evaluates: the FASTER power, or the control's. */
typedef struct design_goal {
    double var_D, alpha, margin, mde;   /* mde NAN: the control's (margin = g) */
} design_goal;

static double goal_power(const design_goal *g, int P, kg_design_eval *out)
{
    return isnan(g->mde) ? kg_design_control_power(g->var_D, P, g->alpha, g->margin, out)
                         : kg_design_power(g->var_D, P, g->alpha, g->margin, g->mde, out);
}

/* The smallest P >= 2 at most pmax whose power reaches `power` (power
 * grows with P: SE falls, df grows); -1 when pmax falls short. */
static int goal_min_P(const design_goal *g, double power, int pmax, kg_design_eval *out)
{
    kg_design_eval e;
    if (pmax < 2) pmax = 2;
    if (goal_power(g, pmax, &e) < power || isnan(e.power)) {
        if (out != NULL) *out = e;
        return -1;
    }
    int lo = 1, hi = pmax;   /* power(lo) < target (or lo < 2), power(hi) >= target */
    while (hi - lo > 1) {
        int mid = lo + (hi - lo) / 2;
        if (goal_power(g, mid, NULL) >= power) hi = mid;
        else lo = mid;
    }
    goal_power(g, hi, out);
    return hi;
}

int kg_design_min_P(double var_D, double alpha, double margin, double mde, double power, int pmax,
                    kg_design_eval *out)
{
    design_goal g = { var_D, alpha, margin, mde };
    return goal_min_P(&g, power, pmax, out);
}

double kg_design_control_power(double var_D, int P, double alpha, double g, kg_design_eval *out)
{
    kg_design_eval lo, hi;
    kg_design_power(var_D, P, alpha, -g, 0.0, &lo);              /* rho_lo >= -g */
    kg_design_power(var_D, P, alpha, -g / (1.0 - g), 0.0, &hi);  /* rho_hi <= g: log(1 - g) mirrored */
    double p = lo.power + hi.power - 1.0;
    lo.power = isnan(p) ? p : fmin(1.0, fmax(0.0, p));
    if (out != NULL) *out = lo;
    return lo.power;
}

int kg_design_control_P(double var_D, double alpha, double g, double power, int pmax, kg_design_eval *out)
{
    design_goal d = { var_D, alpha, g, (double)NAN };
    return goal_min_P(&d, power, pmax, out);
}

/* precision.c: precision contracts (kgate/plan.h): an arm's declared
 * numerics (a named precision or a tolerance), their text, and which of
 * two is weaker. */
#include <stdio.h>
#include "plan/plan_impl.h"

int kg_contract_is_default(const kg_contract *ct)
{
    return ct == NULL || (ct->precision == KG_PREC_DTYPE && !(ct->tolerance > 0.0));
}

void kg_contract_text(const kg_contract *ct, kg_dtype dt, char *buf, size_t cap)
{
    if (cap == 0) return;
    if (ct != NULL && ct->tolerance > 0.0) {
        char num[40];
        plan_format_real(ct->tolerance, num, sizeof num);
        snprintf(buf, cap, "tol %s", num);
        return;
    }
    kg_precision p = ct != NULL ? ct->precision : KG_PREC_DTYPE;
    snprintf(buf, cap, "%s", p == KG_PREC_TF32 ? "tf32" : p == KG_PREC_F16ACC ? "f16acc"
                             : p == KG_PREC_BF16ACC ? "bf16acc" : kg_dtype_name(dt));
}

/* log2 of the unit roundoff of the inputs and of the accumulation a
 * named contract allows on a case of dtype dt (-inf: inputs exact; tf32:
 * 2^-10, the 13 low bits dropped, which the contract admits beside
 * rounding's 2^-11) */
static void contract_units(kg_precision p, kg_dtype dt, double *in, double *acc)
{
    *in = p == KG_PREC_TF32 && dt == KG_DT_F32 ? -10.0 : -1e9;
    *acc = p == KG_PREC_F16ACC ? -11.0 : p == KG_PREC_BF16ACC ? -8.0 : -24.0;
}

int kg_contract_weaker(const kg_contract *cand, const kg_contract *base, kg_dtype dt, char *why,
                       size_t cap)
{
    kg_contract d = { KG_PREC_DTYPE, 0.0 };
    if (cand == NULL) cand = &d;
    if (base == NULL) base = &d;
    int weaker;
    if (cand->tolerance > 0.0)
        weaker = !(base->tolerance > 0.0 && cand->tolerance <= base->tolerance);
    else if (base->tolerance > 0.0)
        weaker = 0;
    else {
        double ci, ca, bi, ba;
        contract_units(cand->precision, dt, &ci, &ca);
        contract_units(base->precision, dt, &bi, &ba);
        weaker = ci > bi || ca > ba;
    }
    if (weaker && why != NULL && cap > 0) {
        char a[48], b[48];
        kg_contract_text(cand, dt, a, sizeof a);
        kg_contract_text(base, dt, b, sizeof b);
        snprintf(why, cap, "contract %s is weaker than %s", a, b);
    }
    return weaker;
}

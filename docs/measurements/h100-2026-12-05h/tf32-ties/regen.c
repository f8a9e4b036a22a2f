/* regen.c: regenerate the held-out inputs of case f32_256x512x2048_s2,
 * process 0, of evidence folder tf32c, and dump A, B (f32), ref and
 * the tf32-contract bound (float64) to /tmp/tf32x/data/. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kgate/plan.h"
#include "kgate/oracle.h"
#include "kgate/op.h"
#include "check/heldout.h"
#include "plan/protocol.h"

static void dump(const char *name, const void *p, size_t n)
{
    char path[256];
    snprintf(path, sizeof path, "/tmp/tf32x/data/%s", name);
    FILE *f = fopen(path, "wb");
    fwrite(p, 1, n, f);
    fclose(f);
}

int main(int argc, char **argv)
{
    const char *casename = argc > 1 ? argv[1] : "f32_256x512x2048_s2";
    int wantM = argc > 2 ? atoi(argv[2]) : 101, wantN = argc > 3 ? atoi(argv[3]) : 471, wantK = argc > 4 ? atoi(argv[4]) : 233;
    uint64_t salt = argc > 5 ? strtoull(argv[5], NULL, 0) : 0x2963bb9971b2b5c7ull;
    int seq = argc > 6 ? atoi(argv[6]) : 0;
    kg_err err = { 0 };
    kg_plan *plan = NULL;
    if (kg_plan_load("tests/gpu/tf32_wgmma.kg", &plan, &err) != KG_OK) { fprintf(stderr, "%s\n", err.msg); return 1; }
    printf("plan hash %.64s\n", plan->hash);
    int c = kg_plan_find_case(plan, casename);
    int arm = kg_plan_find_arm(plan, "cublas_tf32");
    const kg_case *kc = &plan->cases[c];
    const kg_op *op = kg_op_find(kc->op);
    uint64_t base = kg_protocol_input_base(plan->campaign.seed, salt);
    kg_case shapes[KG_HELDOUT_MAX];
    int ns = kg_heldout_shapes(kc, op, kg_protocol_heldout_seed(base, seq, c, 0), shapes, KG_HELDOUT_MAX);
    int hit = -1;
    for (int k = 0; k < ns; k++) {
        char name[128];
        kg_heldout_name(&shapes[k], op, name, sizeof name);
        printf("shape %d: %s\n", k, name);
        if (shapes[k].M == wantM && shapes[k].N == wantN && shapes[k].K == wantK) hit = k;
    }
    if (hit < 0) { fprintf(stderr, "shape not found\n"); return 1; }
    kg_case hc = shapes[hit];
    uint64_t seed = kg_protocol_heldout_seed(base, seq, c, 1 + hit);
    kg_case_data d;
    if (kg_oracle_prepare(&hc, seed, &d, &err) != KG_OK) { fprintf(stderr, "%s\n", err.msg); return 1; }
    printf("case %d arm %d shape %d seed %#llx M=%lld N=%lld K=%lld\n", c, arm, hit, (unsigned long long)seed,
           (long long)hc.M, (long long)hc.N, (long long)hc.K);
    const double *bound = NULL;
    int weak = 0;
    if (kg_oracle_bounds_ct(&d, &plan->arms[arm].contract, 0, &bound, &weak, &err) != KG_OK) { fprintf(stderr, "%s\n", err.msg); return 1; }
    dump("A.f32", d.in[0], d.in_bytes[0]);
    dump("B.f32", d.in[1], d.in_bytes[1]);
    dump("ref.f64", d.ref[0], (size_t)d.out_elems[0] * 8);
    dump("bound_tf32.f64", bound, (size_t)d.out_elems[0] * 8);
    dump("bound_f32.f64", d.bound[0], (size_t)d.out_elems[0] * 8);
    FILE *f = fopen("/tmp/tf32x/data/rowclass.txt", "w");
    for (int s = 0; s < 2; s++)
        for (int64_t r = 0; r < (s == 0 ? hc.M : hc.N); r++) {
            int cl = kg_oracle_row_class(&d, s, r);
            fprintf(f, "%c %lld %s\n", s == 0 ? 'A' : 'B', (long long)r, kg_oracle_row_class_name(cl));
        }
    fclose(f);
    f = fopen("/tmp/tf32x/data/shape.txt", "w");
    fprintf(f, "%lld %lld %lld\n", (long long)hc.M, (long long)hc.N, (long long)hc.K);
    fclose(f);
    int64_t e = argc > 7 ? atoll(argv[7]) : 11819;
    printf("element %lld: ref %.9f bound %.6g (f32 bound %.6g) weak %d\n", (long long)e, d.ref[0][e], bound[e], d.bound[0][e], weak);
    for (int st = 0; st < 2; st++) {
        kg_gen_spec s;
        kg_oracle_gen_spec(&d, st, seed, &s);
        printf("SPEC{%lluull,%lld,%lld,%lld,%lld,%lld,%lluull,%lluull,%lluull,%u,%d,%.9gf,%d,{", (unsigned long long)s.seed, (long long)s.n,
               (long long)s.rows, (long long)s.per_row, (long long)s.R, (long long)s.nclass, (unsigned long long)s.a,
               (unsigned long long)s.b, (unsigned long long)s.rot, s.stream, s.dtype, (double)s.scale, s.C);
        for (int i = 0; i < KG_GEN_NCLASSES; i++) printf("%d%s", s.list[i], i + 1 < KG_GEN_NCLASSES ? "," : "}}\n");
    }
    kg_oracle_release(&d);
    return 0;
}

/* values.h: an output's elements against their float64 reference and
 * per-element bounds (values.c).  Pure arithmetic on host arrays: the
 * worker's checks (through the oracle) and verify's replay compare with
 * this one function, so a replay can only agree with the worker or name
 * where it differs. */
#ifndef KGATE_VALUES_H
#define KGATE_VALUES_H

#include <stddef.h>
#include <stdint.h>
#include "kgate/plan.h"

/* Element e of a buffer in dtype dt as a double, and its raw bits. */
double kg_value_at(const void *p, kg_dtype dt, int64_t e, uint64_t *bits);

/* 1 when bits (an element of dtype dt) still hold one of kgate's two
 * poison patterns (kg_poison_word). */
int kg_value_is_poison(uint64_t bits, kg_dtype dt);

/* The two 32-bit poison words: NaN as float32, each 16-bit half a NaN as
 * f16 and as bf16 (the oracle fills unwritten outputs with them). */
uint32_t kg_poison_word(int pattern);

typedef struct kg_values_cmp {
    int pass;
    double max_abs;          /* largest |out - ref| over finite elements */
    double max_rel;          /* largest |out - ref| / bound */
    int64_t worst;           /* element of max_rel, -1 if none */
    int64_t nbad;            /* over their bound, or not matching a non-finite reference */
    int64_t nnan;            /* NaN or Inf where the reference is finite */
    int64_t worst_bad;       /* the worst element over its bound, -1 if none */
    int64_t first_nf;        /* the first non-finite element where the reference is finite, -1 if none */
    double first_nf_val;
    int first_nf_poison;     /* that element still holds a poison pattern */
} kg_values_cmp;

/* Compares n elements of out (dtype dt) with ref within bound: a finite
 * reference is matched within its bound by a finite value, a non-finite
 * one exactly (NaN by NaN). */
void kg_values_compare(kg_dtype dt, int64_t n, const double *ref, const double *bound, const void *out,
                       kg_values_cmp *r);

#endif

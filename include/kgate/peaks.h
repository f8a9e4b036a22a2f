/* kgate/peaks.h: the device's measured peaks, the physics limit of a
 * campaign (docs/admission.md, "Physics limits").
 *
 * Before the first process the supervisor asks the backend to measure, in
 * trusted code, how fast this device can move bytes and execute flops
 * (kg_backend_peaks); the record goes to the evidence folder as
 * peaks.json and is read back from there by the analysis, so `kgate
 * report` and `kgate verify` never measure again.  An arm whose timing
 * implies more than KG_PHYSICS_MARGIN times a peak, for its op's minimal
 * bytes or flops, is INVALID on that case (kgate/stats.h).
 *
 * Plain data, and the one reader of peaks.json's fields (src/base/peaks.c,
 * with jansson): the evidence reads a folder's record with it, the cpu
 * backend a file of peaks given instead of a measurement (KGATE_PEAKS). */
#ifndef KGATE_PEAKS_H
#define KGATE_PEAKS_H

#define KG_PEAKS_BW_MAX 8      /* rungs of the bandwidth ladder */
#define KG_PEAKS_TEXT 256

/* An arm is impossible when its op's minimal bytes or flops per second
 * exceed this many times the measured peak.  Chosen from measurements
 * of honest arms (docs/admission.md, "Physics limits"): OpenBLAS sgemm
 * with two threads on the two-core CI host reached 0.70 of the FMA peak
 * measured on a quiet host and 1.07 of one measured while another
 * process competed for the core, so 1 would be too tight; 3 keeps it at
 * a third of the limit and covers a peak read up to twice too low, while
 * a replayed output (21.9x the peak on the 384^3 gemm_bt of
 * tests/contracts/physics.kg) stays far above. */
#define KG_PHYSICS_MARGIN 3.0

typedef struct kg_peaks {
    int measured;                 /* 1: at least one peak below is valid */
    char status[KG_PEAKS_TEXT];   /* "measured", or why nothing was */
    char method[KG_PEAKS_TEXT];   /* how the peaks were measured */
    int ncpu;                     /* CPUs the campaign may use (CPU backend); 0: n/a */
    /* float32 fused multiply-add rate of the whole device (flop/s, an FMA
     * counting 2); 0: not measured (flops_note says why) */
    double flops_f32;
    /* matrix-unit rate for 16-bit inputs (flop/s); 0: not measured */
    double flops_mma16;
    char flops_note[KG_PEAKS_TEXT];
    /* bandwidth ladder: for a working set of at least bw_set[i] bytes, at
     * most bw_rate[i] bytes/s (the larger of a read and a copy); rungs in
     * increasing working set */
    int nbw;
    double bw_set[KG_PEAKS_BW_MAX];
    double bw_rate[KG_PEAKS_BW_MAX];
} kg_peaks;

/* The peak byte rate for a working set of `bytes` (the rung of the
 * largest set not above it; the smallest rung below that), 0 when no
 * bandwidth was measured. */
static inline double kg_peaks_bw(const kg_peaks *p, double bytes)
{
    if (p == NULL || p->nbw <= 0) return 0.0;
    double r = p->bw_rate[0];
    for (int i = 0; i < p->nbw; i++)
        if (p->bw_set[i] <= bytes) r = p->bw_rate[i];
    return r;
}

/* Reads peaks.json's fields from its text into pk: status, method, cpus,
 * flops_f32 and flops_mma16 (numbers >= 0, or null: 0), flops_note and
 * bandwidth (at most KG_PEAKS_BW_MAX rungs {working_set_bytes,
 * bytes_per_s > 0}), all required; pk->measured is 1 when a peak is there.
 * Returns NULL, or what is wrong: "not valid JSON" (*line, when line is not
 * NULL, the line of the error) or the name of the first field missing or
 * malformed. */
const char *kg_peaks_parse(const char *text, kg_peaks *pk, int *line);

#endif

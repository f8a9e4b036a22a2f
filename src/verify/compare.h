/* compare.h: `kgate compare A B [C ...]` (compare.c), read only:
 * campaigns of several evidence folders compared case by case and arm by
 * arm (docs/compare.md).
 *
 * Each folder is checked against its SHA256SUMS first (the files the
 * comparison reads; verify.h), loaded and analysed as `kgate report`
 * would (report.h).  Cases are matched by op, dtype and variables, arms
 * by name.  Per (case, arm) and pair of campaigns the change is the
 * difference of the arm's levels (kg_arm_result.level: the stratified
 * mean of per-process mean log times), unpaired, with a Welch interval
 * (kg_change_compute) and kgate's verdict against a margin
 * (kg_change_verdict). */
#ifndef KGATE_COMPARE_H
#define KGATE_COMPARE_H

#include "kgate/err.h"

struct kg_sb;

#define KG_COMPARE_MAX_DIRS 64

typedef struct kg_compare_opts {
    double alpha;       /* two-sided level of the interval; 0.05 */
    double margin;      /* FASTER / SLOWER beyond it, EQUIVALENT within it; 0.02 */
    int allow_device;   /* compare folders whose backend or device model differ */
    int allow_version;  /* compare folders that kgates of different versions wrote */
    int same_device;    /* require the same device: the whole description (a GPU's UUID) and host */
    int full_verify;    /* run all of kgate verify on each folder first (replays the outputs) */
    int json;           /* JSON instead of markdown */
} kg_compare_opts;

/* What the main table (the last folder against the first) found. */
typedef struct kg_compare_summary {
    int rows, faster, slower, equivalent, inconclusive, other;
} kg_compare_summary;

/* Compares the folders dirs[0 .. n) (2 <= n <= KG_COMPARE_MAX_DIRS) and
 * appends the markdown (or JSON) to out.  Returns KG_OK; KG_EUSAGE for
 * bad options or too few folders; KG_EINPUT for a folder that is not an
 * evidence folder, fails its integrity check (the message names the
 * file), is check-only, or differs from the first in device or kgate
 * version without the override (the message names both values and the
 * flag), and for folders with no case or arm in common. */
int kg_compare_dirs(const char *const *dirs, int n, const kg_compare_opts *o, struct kg_sb *out,
                    kg_compare_summary *sum, kg_err *err);

/* The identity of a campaign as its meta.json records it. */
typedef struct kg_compare_ident {
    const char *label;    /* "A", "B", ... */
    const char *dir;
    const char *backend, *device, *host, *version, *git_sha;
} kg_compare_ident;

/* The device model of a description: the text before its first " (" or
 * ", " ("NVIDIA H200 (sm_90, ..., UUID GPU-...)" -> "NVIDIA H200"; "AMD
 * EPYC, 2 online cores" -> "AMD EPYC"). */
void kg_compare_device_model(const char *device, char *buf, size_t cap);

/* Whether campaign b may be compared with a: KG_OK, with a line per
 * difference that does not refuse (a host, a driver, a git revision, an
 * allowed difference) appended to notes; KG_EINPUT when the backend or
 * device model differ (unless allow_device), the whole device or host
 * differ under same_device, or the kgate versions differ (unless
 * allow_version), with a message naming both values and the flag. */
int kg_compare_identity(const kg_compare_ident *a, const kg_compare_ident *b, const kg_compare_opts *o,
                        struct kg_sb *notes, kg_err *err);

#endif

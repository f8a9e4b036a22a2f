/* fake.c: a scripted backend for testing the protocol, the statistics,
 * the gate, the reports and the supervisor exactly, on any machine, and
 * for modelling the timing noise of real hardware (docs/aa-study.md).
 *
 * Timings come from the arm's fake_* keys, deterministic from the
 * campaign seed and the sample's place in the protocol:
 *   log t = log fake_ns + u_p + v_pa + fake_drift * round
 *           + fake_first * [arm listed first in the process's arm order]
 *           + fake_noise * z
 *           + fake_offset + w_ra + g_pa
 *           + fake_slot * [load slot 0] + fake_slot_linear * load slot
 *           + [outlier] * e
 * with
 *   u_p ~ N(0, 0.02)            a process effect shared by every arm (it
 *                               cancels in the paired contrast);
 *   v_pa ~ N(0, fake_proc_sd)   an arm-by-process-by-case effect (what makes
 *                               process means vary); without fake_proc_sd
 *                               its SD is fake_noise / 4;
 *   z                           per sample: N(0, 1), or with fake_tails = t3
 *                               a t variate with 3 degrees of freedom scaled
 *                               to unit variance (t3 / sqrt(3));
 *   w_ra ~ N(0, fake_round_sd)  an arm-by-round effect, per process and case;
 *   g_pa ~ N(0, fake_place)     a placement offset per (arm, process), fixed
 *                               by the sample context's place_seed (from the
 *                               campaign seed and the process when it is 0);
 *   load slot                   the arm's index in the order its instances
 *                               were loaded in the process (kg_sample_ctx);
 *   outlier                     with probability fake_outliers per sample,
 *                               e ~ Exp with mean fake_outlier_scale.
 * Every variate is counter-based (Philox, a stream of its own per term)
 * from the campaign seed, so a campaign is reproducible sample for sample;
 * a term whose key holds its default draws nothing, so plans without the
 * newer keys time exactly as before they existed.
 * Outputs are the op's float64 reference rounded to the output dtype, so
 * the admission checks pass; fake_wrong = yes perturbs one element.
 * fake_crash = P makes the worker of process P crash at its first timed
 * sample (SIGSEGV), fake_hang = P makes it hang there (at the arm's Nth
 * timed call instead with the settings' fake_crash_at, KGATE_FAKE_CRASH_AT,
 * for tests of a worker that dies in the middle of its rounds), and fake_fault = P
 * makes the arm's first timed call in process P fail as the arm's own
 * fault (KG_EARM, what the cpu backend returns when an arm's sandboxed
 * host dies): the worker goes on with the other arms.  fake_refuse = C
 * makes loading the arm on case index C fail as a launch the device
 * refuses (KG_EINADMISSIBLE, what the cuda backend returns for too much
 * shared memory or a block too large).
 *
 * Its device is "scripted timings (no hardware)", or with the settings'
 * fake_device (KGATE_FAKE_DEVICE) "MODEL (scripted timings, no
 * hardware)": campaigns of two device models for kgate compare's tests.
 *
 * It never sleeps (a fake campaign takes milliseconds) unless the
 * settings' fake_sleep_ms (KGATE_FAKE_SLEEP_MS) is at least 1: each timed
 * call then sleeps that many whole milliseconds, for tests that need a
 * campaign to last. */
#include <math.h>
#include <stdio.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "backend/backend_impl.h"
#include "kgate/kernel.h"
#include "kgate/op.h"
#include "kgate/philox.h"

struct kg_kernel {
    const kg_arm *arm;
    const kg_op *op;
    kg_binding b;
    long long ntimed;       /* its timed calls so far (KGATE_FAKE_CRASH_AT) */
};

static int fake_open(kg_backend *be, const kg_plan *plan, kg_err *err)
{
    (void)be; (void)plan; (void)err;
    return KG_OK;
}

/* A sample was timed in this process: it is a worker. */
static int fake_timed;

static void fake_close(kg_backend *be)
{
    /* KGATE_FAKE_CRASH_CLOSE: a worker that dies after its records were
     * sent (the supervisor's tests); the cuda backend's close is where a
     * driver could do the same */
    if (fake_timed && be->settings != NULL && be->settings->fake_crash_close) raise(SIGSEGV);
}

static int fake_alloc(kg_backend *be, size_t bytes, kg_dbuf *out, kg_err *err)
{
    (void)be;
    out->ptr = calloc(1, bytes ? bytes : 1);
    if (out->ptr == NULL) return kg_errorf(err, KG_ENOMEM, "fake backend: cannot allocate %zu bytes", bytes);
    out->bytes = bytes;
    return KG_OK;
}

static void fake_free(kg_backend *be, kg_dbuf *buf)
{
    (void)be;
    free(buf->ptr);
}

static int fake_upload(kg_backend *be, const kg_dbuf *dst, size_t off, const void *src, size_t n, kg_err *err)
{
    (void)be; (void)err;
    memcpy((char *)dst->ptr + off, src, n);
    return KG_OK;
}

static int fake_download(kg_backend *be, void *dst, const kg_dbuf *src, size_t off, size_t n, kg_err *err)
{
    (void)be; (void)err;
    memcpy(dst, (const char *)src->ptr + off, n);
    return KG_OK;
}

static int fake_load(kg_backend *be, const kg_plan *plan, int a, int kase, const char *build_dir,
                     kg_kernel **out, kg_err *err)
{
    (void)be; (void)build_dir;
    if (plan->arms[a].fake_refuse == kase)
        return kg_errorf(err, KG_EINADMISSIBLE, "the device refuses arm %s's launch on case %s (scripted: "
                         "fake_refuse = %d)", plan->arms[a].name, plan->cases[kase].name, kase);
    double psd = plan->arms[a].fake_proc_sd;
    if (psd < 0 && psd != -1)
        return kg_errorf(err, KG_EINPUT, "arm %s: fake_proc_sd = %g: an SD is >= 0 (or -1 for fake_noise / 4)",
                         plan->arms[a].name, psd);
    kg_kernel *k = calloc(1, sizeof *k);
    if (k == NULL) return kg_errorf(err, KG_ENOMEM, "out of memory");
    k->arm = &plan->arms[a];
    k->op = kg_op_find(plan->cases[kase].op);
    if (k->op == NULL) {
        free(k);
        return kg_errorf(err, KG_EINPUT, "fake backend: unknown op '%s'", plan->cases[kase].op);
    }
    *out = k;
    return KG_OK;
}

static void fake_unload(kg_backend *be, kg_kernel *k)
{
    (void)be;
    free(k);
}

static int fake_bind(kg_backend *be, kg_kernel *k, const kg_binding *b, kg_err *err)
{
    (void)be; (void)err;
    k->b = *b;
    return KG_OK;
}

/* v stored in output dtype dt, as a kernel would store it: f64 as it
 * is, i32 rounded to nearest and saturated, the others from float
 * (kgate/gen.h's roundings) */
static void store_out(void *out, kg_dtype dt, int64_t i, double v)
{
    if (dt == KG_DT_F64) {
        ((double *)out)[i] = v;
    } else if (dt == KG_DT_I32) {
        double r = isnan(v) ? 0.0 : fmin(fmax(nearbyint(v), -2147483647.0), 2147483647.0);
        ((int32_t *)out)[i] = (int32_t)r;
    } else {
        kg_gen_store((int32_t)dt, out, i, (float)v);
    }
}

static int fake_run(kg_backend *be, kg_kernel *k, kg_err *err)
{
    (void)be;
    const kg_case *c = k->b.kase;
    int64_t in_elems[KG_MAX_IN] = { 0 }, out_elems[KG_MAX_OUT] = { 0 };
    k->op->sizes(c, in_elems, out_elems);
    double *in[KG_MAX_IN] = { 0 }, *out[KG_MAX_OUT] = { 0 };
    int rc = KG_OK;
    for (int i = 0; i < k->op->nin; i++) {
        in[i] = malloc((size_t)in_elems[i] * sizeof(double));
        if (in[i] == NULL) { rc = kg_errorf(err, KG_ENOMEM, "out of memory"); goto done; }
        int dt = k->op->in_dtype != NULL ? (int)k->op->in_dtype(c, i) : (int)c->dtype;
        for (int64_t e = 0; e < in_elems[i]; e++) in[i][e] = kg_load64(k->b.in[i].ptr, dt, e);
    }
    for (int o = 0; o < k->op->nout; o++) {
        out[o] = malloc((size_t)out_elems[o] * sizeof(double));
        if (out[o] == NULL) { rc = kg_errorf(err, KG_ENOMEM, "out of memory"); goto done; }
    }
    if ((rc = k->op->reference(c, (const double *const *)in, out, err)) != KG_OK) goto done;
    for (int o = 0; o < k->op->nout; o++) {
        kg_dtype dt = k->op->out_dtype(c, o);
        for (int64_t e = 0; e < out_elems[o]; e++) store_out(k->b.out[o].ptr, dt, e, out[o][e]);
        if (k->arm->fake_wrong && out_elems[o] > 0) store_out(k->b.out[o].ptr, dt, out_elems[o] - 1, out[o][out_elems[o] - 1] + 1.0);
    }
done:
    for (int i = 0; i < KG_MAX_IN; i++) free(in[i]);
    for (int o = 0; o < KG_MAX_OUT; o++) free(out[o]);
    return rc;
}

/* A standard normal variate from counter-based bits (Box-Muller). */
static double fake_normal(uint64_t seed, uint32_t stream, uint64_t index)
{
    double u1 = ((double)kg_philox_uniform(seed, stream, 2 * index) + 1.0) * 0.5;
    double u2 = ((double)kg_philox_uniform(seed, stream, 2 * index + 1) + 1.0) * 0.5;
    if (u1 < 1e-12) u1 = 1e-12;
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

/* A uniform variate in (0, 1] from counter-based bits. */
static double fake_uniform(uint64_t seed, uint32_t stream, uint64_t index)
{
    return 1.0 - ((double)kg_philox_uniform(seed, stream, index) + 1.0) * 0.5;
}

/* The Philox streams of the terms of the model.  101-103 are the original
 * three (their indices are kept as they were); the newer terms index
 * through fake_key, a bijective mix of the term's coordinates. */
enum {
    FS_PROC = 101, FS_ARM_PROC = 102, FS_SAMPLE = 103,
    FS_ROUND = 104,                         /* w_ra */
    FS_T3_A = 105, FS_T3_B = 106, FS_T3_C = 107,  /* the chi-square(3) of t3 */
    FS_OUT_P = 108, FS_OUT_E = 109,         /* outlier: whether, and its size */
    FS_PLACE = 110                          /* g_pa */
};

/* splitmix64's finaliser: bijective, so distinct coordinates never share
 * a counter. */
static uint64_t fake_mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* A counter index from up to five coordinates (-1 for unused ones), kept
 * below 2^62 so that fake_normal's 2 * index + 1 does not wrap. */
static uint64_t fake_key(int64_t a, int64_t b, int64_t c, int64_t d, int64_t e)
{
    uint64_t h = fake_mix((uint64_t)a);
    h = fake_mix(h ^ (uint64_t)b);
    h = fake_mix(h ^ (uint64_t)c);
    h = fake_mix(h ^ (uint64_t)d);
    h = fake_mix(h ^ (uint64_t)e);
    return h >> 2;
}

static int fake_time(kg_backend *be, kg_kernel *k, const kg_sample_ctx *x, double *ns, kg_err *err)
{
    const kg_arm *arm = k->arm;
    fake_timed = 1;
    /* KGATE_FAKE_CRASH_AT: a crash or hang in the middle of the rounds */
    int at = be->settings != NULL && be->settings->fake_crash_at > 0 ? be->settings->fake_crash_at : 1;
    int strikes = ++k->ntimed >= at;
    if (arm->fake_crash == x->proc && strikes) raise(SIGSEGV);
    if (arm->fake_hang == x->proc && strikes) for (;;) pause();
    if (arm->fake_fault == x->proc)
        return kg_errorf(err, KG_EARM, "arm %s: its host process died (scripted: fake_fault = %d)", arm->name,
                         x->proc);
    /* KGATE_FAKE_SLEEP_MS: a slow campaign for the supervisor's tests
     * (lock contention, quiet-host poller, kill and resume) */
    double sleep_ms = be->settings->fake_sleep_ms;
    if (sleep_ms >= 1 && sleep_ms < 4e6) usleep((useconds_t)sleep_ms * 1000u);
    uint64_t pidx = (uint64_t)x->proc;
    uint64_t paidx = (pidx << 16) ^ ((uint64_t)x->arm << 8) ^ (uint64_t)x->kase;
    uint64_t sidx = (((((pidx << 8) ^ (uint64_t)x->arm) << 8 ^ (uint64_t)x->kase) << 16 ^ (uint64_t)x->round) << 16)
                    ^ (uint64_t)x->sample;
    double u = 0.02 * fake_normal(x->seed, FS_PROC, pidx);
    double v = (arm->fake_proc_sd < 0 ? arm->fake_noise / 4.0 : arm->fake_proc_sd)
               * fake_normal(x->seed, FS_ARM_PROC, paidx);
    double zs = fake_normal(x->seed, FS_SAMPLE, sidx);
    if (arm->fake_tails == 1) {
        /* t3 / sqrt(3) = Z / sqrt(chi-square(3)): unit variance */
        double c1 = fake_normal(x->seed, FS_T3_A, sidx), c2 = fake_normal(x->seed, FS_T3_B, sidx);
        double c3 = fake_normal(x->seed, FS_T3_C, sidx);
        double chi = c1 * c1 + c2 * c2 + c3 * c3;
        zs = chi > 1e-300 ? zs / sqrt(chi) : 0.0;
    }
    double z = arm->fake_noise * zs;
    double lt = log(arm->fake_ns) + u + v + arm->fake_drift * x->round + z;
    if (x->arm == x->first_arm) lt += arm->fake_first;
    /* the newer terms, each drawn only when its key is set */
    if (arm->fake_offset != 0) lt += arm->fake_offset;
    if (arm->fake_round_sd > 0)
        lt += arm->fake_round_sd * fake_normal(x->seed, FS_ROUND, fake_key(x->proc, x->arm, x->kase, x->round, -1));
    if (arm->fake_place > 0) {
        uint64_t key = x->place_seed != 0 ? x->place_seed : x->seed;
        uint64_t idx = x->place_seed != 0 ? fake_key(x->arm, -1, -1, -1, -1) : fake_key(x->proc, x->arm, -1, -1, -1);
        lt += arm->fake_place * fake_normal(key, FS_PLACE, idx);
    }
    if (x->load_slot == 0) lt += arm->fake_slot;
    if (x->load_slot > 0) lt += arm->fake_slot_linear * x->load_slot;
    if (arm->fake_outliers > 0 && arm->fake_outlier_scale > 0) {
        uint64_t oidx = fake_key(x->proc, x->arm, x->kase, x->round, x->sample);
        if (fake_uniform(x->seed, FS_OUT_P, oidx) <= arm->fake_outliers)
            lt += -arm->fake_outlier_scale * log(fake_uniform(x->seed, FS_OUT_E, oidx));
    }
    *ns = exp(lt);
    return KG_OK;
}

/* The device: the model KGATE_FAKE_DEVICE names first (as a real
 * device's description starts with its model: kgate compare), a model
 * when KGATE_FAKE_MODEL names one (kgate merge's check), an index only
 * past device 0 (the plan's `device`, or kgate run --device), so that a
 * plain campaign's description stays what it was. */
static void fake_describe(kg_backend *be, char *buf, size_t cap)
{
    int dev = be != NULL && be->plan != NULL ? be->plan->campaign.device : 0;
    const char *named = be != NULL && be->settings != NULL ? be->settings->fake_device : NULL;
    const char *model = be != NULL && be->settings != NULL ? be->settings->fake_model : NULL;
    char m[160] = "", d[48] = "";
    if (model != NULL && model[0] != '\0') snprintf(m, sizeof m, ", model %.120s", model);
    if (dev > 0) snprintf(d, sizeof d, ", fake device %d", dev);
    if (named != NULL) snprintf(buf, cap, "%.120s (scripted timings, no hardware)%s%s", named, m, d);
    else snprintf(buf, cap, "scripted timings (no hardware)%s%s", m, d);
}

/* One lock per fake device: "fake" for device 0, "fake-D" past it. */
static void fake_lock_key(const char *device, char *buf, size_t cap)
{
    const char *d = device != NULL ? strstr(device, ", fake device ") : NULL;
    int n = d != NULL ? atoi(d + 14) : 0;
    if (n > 0) snprintf(buf, cap, "fake-%d", n);
    else snprintf(buf, cap, "fake");
}

/* The device's compute processes: the process IDs in the settings'
 * fake_device_pids file, read at every look, so that a test can make a
 * foreign process appear and leave (the quiet-host watch's tests). */
typedef struct fake_procs {
    char path[4096];
} fake_procs;

static void *fake_procs_open(const char *device, const kg_settings *s)
{
    (void)device;
    if (s == NULL || s->fake_device_pids == NULL) return NULL;
    fake_procs *p = calloc(1, sizeof *p);
    if (p != NULL) snprintf(p->path, sizeof p->path, "%s", s->fake_device_pids);
    return p;
}

static int fake_procs_list(void *watch, unsigned *count, unsigned *pids, int cap)
{
    fake_procs *p = watch;
    *count = 0;
    FILE *fp = fopen(p->path, "r");
    if (fp == NULL) return KG_OK;   /* no file: no process */
    unsigned v;
    while (fscanf(fp, "%u", &v) == 1) {
        if ((int)*count < cap) pids[*count] = v;
        (*count)++;
    }
    fclose(fp);
    return KG_OK;
}

static void fake_procs_close(void *watch)
{
    free(watch);
}

const kg_backend_ops kg_backend_fake = {
    .abi = KG_BACKEND_ABI,
    .name = "fake",
    .open = fake_open,
    .close = fake_close,
    .build = NULL,
    .alloc = fake_alloc,
    .free = fake_free,
    .upload = fake_upload,
    .download = fake_download,
    .load = fake_load,
    .unload = fake_unload,
    .bind = fake_bind,
    .run = fake_run,
    .time = fake_time,
    .flush = NULL,
    .describe = fake_describe,
    .lock_key = fake_lock_key,
    .procs_open = fake_procs_open,
    .procs_list = fake_procs_list,
    .procs_close = fake_procs_close,
    .caps = 0,             /* executes nothing when timed; needs no quiet host */
    .summary = "scripted timings for tests; deterministic from the seed",
};

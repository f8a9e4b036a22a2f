/* backend.c: the only code that calls through a backend's ops table.
 *
 * Owns the registry of backends (the only place that knows their names),
 * the choice of backend ("auto" picks cuda when a GPU is usable, else
 * cpu, and says why), the policy for optional slots, and argument
 * assertions.  It does not know any device. */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backend/backend_impl.h"

static const kg_backend_ops *const registry[] = { &kg_backend_cpu, &kg_backend_fake, &kg_backend_cuda };

static const kg_backend_ops *backend_by_name(const char *name)
{
    for (size_t i = 0; name != NULL && i < sizeof registry / sizeof registry[0]; i++)
        if (strcmp(name, registry[i]->name) == 0) return registry[i];
    return NULL;
}

static int backend_try(const kg_backend_ops *ops, const kg_plan *plan, const kg_settings *s,
                       kg_backend **out, kg_err *err)
{
    kg_backend *be = calloc(1, sizeof *be);
    if (be == NULL) return kg_errorf(err, KG_ENOMEM, "out of memory opening backend %s", ops->name);
    be->ops = ops;
    be->plan = plan;
    be->settings = s != NULL ? s : kg_settings_defaults();
    int rc = ops->open(be, plan, err);
    if (rc != KG_OK) {
        ops->close(be);
        free(be);
        return rc;
    }
    *out = be;
    return KG_OK;
}

int kg_backend_open(const char *name, const kg_plan *plan, const kg_settings *s, kg_backend **out,
                    char *notice, size_t notice_cap, kg_err *err)
{
    *out = NULL;
    if (notice != NULL && notice_cap > 0) notice[0] = '\0';
    if (strcmp(name, "auto") == 0) {
        kg_err cerr = { 0 };
        if (backend_try(&kg_backend_cuda, plan, s, out, &cerr) == KG_OK) {
            if (notice != NULL) snprintf(notice, notice_cap, "backend auto: using cuda");
            return KG_OK;
        }
        if (notice != NULL) snprintf(notice, notice_cap, "backend auto: falling back to cpu (%s)", cerr.msg);
        return backend_try(&kg_backend_cpu, plan, s, out, err);
    }
    const kg_backend_ops *ops = backend_by_name(name);
    if (ops == NULL)
        return kg_errorf(err, KG_EUNSUPPORTED,
                         "unknown or unavailable backend '%s' (use auto, cpu, fake or cuda)", name);
    return backend_try(ops, plan, s, out, err);
}

void kg_backend_prestart(kg_backend *be, const unsigned char *skip)
{
    if (be != NULL && be->ops->prestart != NULL) be->ops->prestart(be, skip);
}

void kg_backend_close(kg_backend *be)
{
    if (be == NULL) return;
    be->ops->close(be);
    free(be);
}

const char *kg_backend_name(const kg_backend *be)
{
    return be->ops->name;
}

int kg_backend_build(kg_backend *be, const kg_plan *plan, int arm, const char *build_dir, kg_err *err)
{
    assert(be != NULL && plan != NULL && arm >= 0 && arm < plan->narms);
    if (be->ops->build == NULL) return KG_OK;
    return be->ops->build(be, plan, arm, build_dir, err);
}

int kg_backend_alloc(kg_backend *be, size_t bytes, kg_dbuf *out, kg_err *err)
{
    assert(be != NULL && out != NULL);
    return be->ops->alloc(be, bytes, out, err);
}

void kg_backend_free(kg_backend *be, kg_dbuf *buf)
{
    if (be == NULL || buf == NULL || buf->ptr == NULL) return;
    be->ops->free(be, buf);
    buf->ptr = NULL;
    buf->bytes = 0;
}

int kg_backend_upload(kg_backend *be, const kg_dbuf *dst, size_t off, const void *src, size_t n, kg_err *err)
{
    assert(be != NULL && dst != NULL && off + n <= dst->bytes);
    return be->ops->upload(be, dst, off, src, n, err);
}

int kg_backend_download(kg_backend *be, void *dst, const kg_dbuf *src, size_t off, size_t n, kg_err *err)
{
    assert(be != NULL && src != NULL && off + n <= src->bytes);
    return be->ops->download(be, dst, src, off, n, err);
}

int kg_backend_load(kg_backend *be, const kg_plan *plan, int arm, int kase, const char *build_dir,
                    kg_kernel **out, kg_err *err)
{
    assert(be != NULL && out != NULL);
    *out = NULL;
    return be->ops->load(be, plan, arm, kase, build_dir, out, err);
}

void kg_backend_unload(kg_backend *be, kg_kernel *k)
{
    if (be == NULL || k == NULL) return;
    be->ops->unload(be, k);
}

int kg_backend_bind(kg_backend *be, kg_kernel *k, const kg_binding *b, kg_err *err)
{
    assert(be != NULL && k != NULL && b != NULL && b->pack >= 1);
    return be->ops->bind(be, k, b, err);
}

int kg_backend_run(kg_backend *be, kg_kernel *k, kg_err *err)
{
    assert(be != NULL && k != NULL);
    return be->ops->run(be, k, err);
}

int kg_backend_time(kg_backend *be, kg_kernel *k, const kg_sample_ctx *ctx, double *ns, kg_err *err)
{
    assert(be != NULL && k != NULL && ctx != NULL && ns != NULL);
    return be->ops->time(be, k, ctx, ns, err);
}

int kg_backend_flush(kg_backend *be, kg_err *err)
{
    if (be->ops->flush == NULL) return KG_OK;
    return be->ops->flush(be, err);
}

void kg_backend_cache_note(kg_backend *be, kg_kernel *k, char *buf, size_t cap)
{
    if (cap == 0) return;
    buf[0] = '\0';
    if (be->ops->cache_note != NULL) be->ops->cache_note(be, k, buf, cap);
    if (buf[0] != '\0') return;
    if (be->plan != NULL && be->plan->campaign.l2 == KG_L2_COLD)
        snprintf(buf, cap, "l2 cold: the %s backend has no flush: nothing was flushed before a timed sample, so "
                 "its inputs are where their last write left them (l2 = cold is not honoured on this backend)",
                 be->ops->name);
    else
        snprintf(buf, cap, "l2 warm: the %s backend reads nothing into a cache before a timed sample: its inputs "
                 "are where their last write left them (the worker's generator or upload, or the arm's previous "
                 "execution)", be->ops->name);
}

uint64_t kg_backend_warm_budget(kg_backend *be, char *why, size_t cap)
{
    if (cap > 0) why[0] = '\0';
    return be->ops->warm_budget != NULL ? be->ops->warm_budget(be, why, cap) : 0;
}

void kg_backend_describe(kg_backend *be, char *buf, size_t cap)
{
    if (cap == 0) return;
    buf[0] = '\0';
    if (be->ops->describe != NULL) be->ops->describe(be, buf, cap);
    if (buf[0] == '\0') snprintf(buf, cap, "%s", be->ops->name);
}

int kg_backend_has_telemetry(const kg_backend *be)
{
    return be->ops->telemetry != NULL;
}

int kg_backend_has_resources(const kg_backend *be)
{
    return be->ops->resources != NULL;
}

int kg_backend_peaks(kg_backend *be, kg_peaks *out, kg_err *err)
{
    if (out == NULL) return kg_errorf(err, KG_EINTERNAL, "kg_backend_peaks: no output");
    memset(out, 0, sizeof *out);
    if (be == NULL || be->ops->peaks == NULL) {
        snprintf(out->status, sizeof out->status, "not measured: backend %s has no peak measurement%s",
                 be != NULL ? be->ops->name : "(none)",
                 be != NULL && strcmp(be->ops->name, "fake") == 0 ? " (its timings are synthetic)" : "");
        return KG_OK;
    }
    kg_err local = { 0 };
    if (be->ops->peaks(be, out, &local) != KG_OK) {
        memset(out, 0, sizeof *out);
        snprintf(out->status, sizeof out->status, "measurement failed: %.200s", local.msg);
    }
    return KG_OK;
}

int kg_backend_has_fill(const kg_backend *be)
{
    return be != NULL && be->ops->fill != NULL;
}

int kg_backend_op_outputs(const kg_backend *be, const kg_kernel *k)
{
    return be != NULL && k != NULL && be->ops->op_outputs != NULL && be->ops->op_outputs(be, k);
}

int kg_backend_fill(kg_backend *be, const kg_dbuf *buf, const kg_gen_spec *spec, kg_err *err)
{
    assert(be != NULL && buf != NULL && spec != NULL);
    if (be->ops->fill == NULL)
        return kg_errorf(err, KG_EUNSUPPORTED, "backend %s has no input generator", be->ops->name);
    size_t need = (size_t)spec->n * (size_t)kg_gen_dtype_bytes(spec->dtype);
    if (spec->n < 0 || buf->bytes < need)
        return kg_errorf(err, KG_EINTERNAL, "kg_backend_fill: a buffer of %zu bytes for %lld elements", buf->bytes,
                         (long long)spec->n);
    return be->ops->fill(be, buf, spec, err);
}

int kg_backend_telemetry(kg_backend *be, kg_telemetry *out, kg_err *err)
{
    assert(be != NULL && out != NULL);
    if (be->ops->telemetry == NULL)
        return kg_errorf(err, KG_EUNSUPPORTED, "backend %s reads no telemetry", be->ops->name);
    int rc = be->ops->telemetry(be, out, err);
    if (!(be->ops->caps & KG_CAP_HOST_CPU)) out->cpu = -1;
    return rc;
}

int kg_backend_resources(kg_backend *be, kg_kernel *k, int i, kg_resources *out, kg_err *err)
{
    assert(be != NULL && k != NULL && out != NULL && i >= 0);
    if (i == 0 && be->ops->resources != NULL) return be->ops->resources(be, k, out, err);
    if (i > 0 && be->ops->resources_launch != NULL) return be->ops->resources_launch(be, k, i, out, err);
    return kg_errorf(err, KG_EUNSUPPORTED, "backend %s reports no resources%s", be->ops->name,
                     i > 0 ? " past the first launch" : "");
}

unsigned kg_backend_caps(const kg_backend *be)
{
    return be->ops->caps;
}

/* ---- the registry, by name ---- */

int kg_backend_known(const char *name)
{
    return backend_by_name(name) != NULL;
}

unsigned kg_backend_caps_of(const char *name)
{
    const kg_backend_ops *ops = backend_by_name(name);
    return ops != NULL ? ops->caps : 0;
}

void kg_backend_lock_key(const char *name, const char *device, char *buf, size_t cap)
{
    const kg_backend_ops *ops = backend_by_name(name);
    if (cap == 0) return;
    if (ops != NULL && ops->lock_key != NULL) ops->lock_key(device, buf, cap);
    else snprintf(buf, cap, "%s", ops != NULL ? ops->name : "cpu");
}

void kg_backend_device_model(const char *device, char *buf, size_t cap)
{
    static const char *const cuts[] = { ", driver ", ", UUID ", ", fake device " };
    if (cap == 0) return;
    size_t n = device != NULL ? strlen(device) : 0;
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0] && n > 0; i++) {
        const char *c = strstr(device, cuts[i]);
        if (c != NULL && (size_t)(c - device) < n) n = (size_t)(c - device);
    }
    if (n >= cap) n = cap - 1;
    if (n > 0) memcpy(buf, device, n);
    buf[n] = '\0';
}

const char *kg_backend_compiler(const char *name, const kg_settings *s)
{
    const kg_backend_ops *ops = backend_by_name(name);
    if (ops == NULL || ops->compiler == NULL) return NULL;
    return ops->compiler(s != NULL ? s : kg_settings_defaults());
}

int kg_backend_available(const char *name, const kg_settings *s)
{
    const kg_backend_ops *ops = backend_by_name(name);
    if (ops == NULL) return 0;
    return ops->probe == NULL || ops->probe(s != NULL ? s : kg_settings_defaults());
}

const char *kg_backend_about(int i, const kg_settings *s, char *buf, size_t cap)
{
    if (i < 0 || (size_t)i >= sizeof registry / sizeof registry[0]) return NULL;
    const kg_backend_ops *ops = registry[i];
    const char *summary = ops->summary != NULL ? ops->summary : "";
    if (ops->probe == NULL) snprintf(buf, cap, "%s", summary);
    else
        snprintf(buf, cap, "%s (%s)", summary,
                 kg_backend_available(ops->name, s) ? ops->probe_found : ops->probe_missing);
    return ops->name;
}

struct kg_procs_watch {
    const kg_backend_ops *ops;
    void *watch;
};

kg_procs_watch *kg_backend_procs_open(const char *name, const char *device, const kg_settings *s)
{
    const kg_backend_ops *ops = backend_by_name(name);
    if (ops == NULL || ops->procs_open == NULL || ops->procs_list == NULL || ops->procs_close == NULL)
        return NULL;
    kg_procs_watch *w = calloc(1, sizeof *w);
    if (w == NULL) return NULL;
    w->ops = ops;
    w->watch = ops->procs_open(device, s != NULL ? s : kg_settings_defaults());
    if (w->watch == NULL) {
        free(w);
        return NULL;
    }
    return w;
}

int kg_backend_procs(kg_procs_watch *w, unsigned *count, unsigned *pids, int cap)
{
    *count = 0;
    if (w == NULL) return KG_EUNSUPPORTED;
    return w->ops->procs_list(w->watch, count, pids, cap);
}

void kg_backend_procs_close(kg_procs_watch *w)
{
    if (w == NULL) return;
    w->ops->procs_close(w->watch);
    free(w);
}

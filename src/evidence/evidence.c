/* evidence.c: the evidence folder as a whole (kgate/evidence.h): reading
 * it back into a kg_evidence, and writing meta.json, environment.json,
 * processes.csv, SHA256SUMS and the saved outputs.
 *
 * Every row goes through rows.c.  The reader uses only what the folder
 * holds, so the analysis and every report are reproducible from the
 * folder alone; it writes nothing.  The writers replace a file whole,
 * through kg_write_atomic (a temporary name, fsync, rename). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>
#include "kgate/evidence.h"
#include "evidence/envrec.h"
#include "evidence/salt.h"
#include "base/safefs.h"
#include "base/util.h"
#include "evidence/chain.h"
#include "plan/shard.h"

/* ---- reading a folder ---- */

static int load_peaks(const char *path, kg_peaks *pk, kg_err *err);

static int load_procs(const char *dir, kg_evidence *ev, kg_err *err)
{
    char path[KG_PATH_MAX + 64];
    int legacy = 0;
    snprintf(path, sizeof path, "%s/processes.csv", dir);
    int rc = kg_rows_read_procs(path, &ev->procs, &ev->nproc, &legacy, err);
    if (rc != KG_OK) return rc;
    ev->accepted = calloc((size_t)(ev->nproc > 0 ? ev->nproc : 1), sizeof *ev->accepted);
    if (ev->accepted == NULL) return kg_errorf(err, KG_ENOMEM, "out of memory");
    for (int p = 0; p < ev->nproc; p++) ev->accepted[p] = ev->procs[p].accepted;
    return KG_OK;
}

/* Folds one check record into the arm states: every check of an
 * accepted process, and the "fault" checks of any process (an arm that
 * crashed, hung or failed its own code in any process is INCORRECT,
 * whether or not the process is accepted).  Returns 1 when it counts. */
static int fold_one(const kg_plan *plan, kg_arm_state *state, const kg_check_rec *k, int accepted)
{
    int na = plan->narms;
    if (!accepted) {
        if (!k->pass && k->arm >= 0 && strcmp(k->check, KG_CHECK_FAULT) == 0) {
            kg_arm_state *s = &state[k->kase * na + k->arm];
            if (*s == KG_ARM_OK || *s == KG_ARM_WEAK) *s = KG_ARM_INCORRECT;
        }
        return 0;
    }
    if (k->pass || k->arm < 0) return 1;
    kg_arm_state *s = &state[k->kase * na + k->arm];
    if (strcmp(k->check, KG_CHECK_ADMISSIBLE) == 0) *s = KG_ARM_INADMISSIBLE;
    else if ((strcmp(k->check, KG_CHECK_WEAK) == 0 || kg_check_is_bound(k->check)) && *s == KG_ARM_OK)
        *s = KG_ARM_WEAK;
    else if (strcmp(k->check, KG_CHECK_FAULT) == 0 && *s == KG_ARM_WEAK) *s = KG_ARM_INCORRECT;
    else if (*s == KG_ARM_OK) *s = KG_ARM_INCORRECT;
    return 1;
}

/* Folds the check records of a process into the arm states (fold_one). */
static void fold_checks(kg_evidence *ev, size_t from, int accepted)
{
    for (size_t i = from; i < ev->nchecks_all; i++) {
        const kg_check_rec *k = &ev->checks[i];
        if (!fold_one(ev->plan, ev->state, k, accepted)) continue;
        ev->nchecks++;
        ev->nchecks_failed += !k->pass;
    }
}

void kg_evidence_state_upto(const kg_evidence *ev, int upto, kg_arm_state *state)
{
    int nc = ev->plan->ncases, na = ev->plan->narms;
    for (int c = 0; c < nc; c++)
        for (int a = 0; a < na; a++)
            state[c * na + a] = kg_plan_arm_applies(ev->plan, a, c) && (ev->case_on == NULL || ev->case_on[c])
                                    ? KG_ARM_OK : KG_ARM_ABSENT;
    for (size_t i = 0; i < ev->nchecks_all; i++) {
        const kg_check_rec *k = &ev->checks[i];
        if (k->proc > upto || k->proc < 0 || k->proc >= ev->nproc) continue;
        fold_one(ev->plan, state, k, ev->accepted[k->proc]);
    }
}

/* The folder's files and bytes, every sub-folder walked without
 * following a link (kg_folder_check refused them before), less the files
 * written from the rest: the reports, SHA256SUMS, the signature and
 * temporary files.  The same for the supervisor's report and a later
 * kgate report or verify of the folder. */
static int written_from(const char *name)
{
    if (strcmp(name, "SHA256SUMS") == 0 || strcmp(name, "attestation.dsse.json") == 0 ||
        strstr(name, ".tmp.") != NULL)
        return 1;
    /* the report files (render.c's printer table; evidence.c reads no report code),
     * and raw/samples.csv, a report of schemas 6 to 8 */
    static const char *const reports[] = { "report.md", "results.csv", "results.json", "report.html",
                                           "raw/samples.csv", "schema.json" };
    for (size_t i = 0; i < sizeof reports / sizeof reports[0]; i++)
        if (strcmp(name, reports[i]) == 0) return 1;
    return 0;
}

/* rel: the folder's path inside the evidence folder ("" at the top) */
static void folder_size(int dirfd, const char *rel, int *files, long long *bytes)
{
    int fd = dup(dirfd);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (d == NULL) {
        if (fd >= 0) close(fd);
        return;
    }
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        char name[KG_PATH_MAX];
        snprintf(name, sizeof name, "%s%s%s", rel, rel[0] ? "/" : "", e->d_name);
        if (written_from(name)) continue;
        struct stat st;
        if (fstatat(dirfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
        if (S_ISDIR(st.st_mode)) {
            int sub = openat(dirfd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (sub >= 0) {
                folder_size(sub, name, files, bytes);
                close(sub);
            }
        } else if (S_ISREG(st.st_mode)) {
            (*files)++;
            *bytes += (long long)st.st_size;
        }
    }
    closedir(d);
}

static void outputs_size(const char *dir, kg_evidence *ev)
{
    char path[KG_PATH_MAX + 64], bin[KG_PATH_MAX + 64];
    for (int p = 0; p < ev->nproc; p++) {
        snprintf(path, sizeof path, "%s/outputs/proc-%03d.csv", dir, p);
        snprintf(bin, sizeof bin, "%s/outputs/proc-%03d.bin", dir, p);
        kg_out_rec *v = NULL;
        size_t n = 0;
        kg_err e = { 0 };
        if (!kg_path_exists(path) || kg_rows_read_out(path, ev->plan, p, &v, &n, &e) != KG_OK) {
            free(v);
            continue;
        }
        for (size_t i = 0; i < n; i++) {
            int shared = 0;
            for (size_t j = 0; j < i && !shared; j++) shared = v[j].offset == v[i].offset && v[i].stored > 0;
            ev->out_rows++;
            ev->out_shared += shared;
            ev->out_logical += (long long)v[i].bytes;
        }
        struct stat st;
        if (stat(bin, &st) == 0) ev->out_stored += (long long)st.st_size;
        free(v);
    }
}

static int load_merged(const char *dir, kg_evidence *ev, kg_err *err);

/* ops.json, where the folder has one (older folders have none) */
static int load_facts(const char *dir, kg_evidence *ev, kg_err *err)
{
    char path[KG_PATH_MAX + 32], *text = NULL;
    snprintf(path, sizeof path, "%s/%s", dir, KG_FACTS_FILE);
    if (!kg_path_exists(path)) return KG_OK;
    int rc = kg_read_file(path, &text, NULL, err);
    if (rc == KG_OK) rc = kg_facts_parse(path, text, ev->plan, &ev->facts, err);
    free(text);
    return rc;
}

/* environment.json's compile_cache: the built objects that came from the
 * compile cache, as one list ("base.so, cand.so"); NULL when none did or
 * the folder has no environment.json yet. */
static int load_compile_cache(const char *dir, kg_evidence *ev, kg_err *err)
{
    char path[KG_PATH_MAX + 32], *text = NULL;
    snprintf(path, sizeof path, "%s/environment.json", dir);
    if (!kg_path_exists(path)) return KG_OK;
    int rc = kg_read_file(path, &text, NULL, err);
    if (rc != KG_OK) return rc;
    json_error_t je;
    json_t *m = json_loads(text, 0, &je), *cc = m != NULL ? json_object_get(m, "compile_cache") : NULL;
    free(text);
    if (m == NULL) return kg_errorf(err, KG_EINPUT, "%s:%d: not valid JSON (%s)", path, je.line, je.text);
    kg_sb sb = { 0 };
    const char *key;
    json_t *v;
    json_object_foreach(cc, key, v) kg_sb_printf(&sb, "%s%s", sb.len > 0 ? ", " : "", key);
    json_decref(m);
    if (sb.oom) {
        kg_sb_free(&sb);
        return kg_errorf(err, KG_ENOMEM, "out of memory");
    }
    ev->compile_cache = sb.buf;
    return KG_OK;
}

/* A shard's meta.json names the cases kg_shard_cases gives it, and none of
 * its rows belongs to another shard's case. */
static int shard_cases_check(const char *dir, kg_evidence *ev, kg_err *err)
{
    const kg_plan *plan = ev->plan;
    int rc = kg_shard_cases(plan, ev->shard.index, ev->shard.count, ev->case_on, err);
    if (rc < 0) return kg_errorf(err, KG_EINPUT, "%s/meta.json: shard %d/%d: %s", dir, ev->shard.index, ev->shard.count,
                                 err->msg);
    json_t *m = json_loads(ev->meta_json, 0, NULL);
    json_t *cases = json_object_get(json_object_get(m, "shard"), "cases");
    size_t k = 0, nlisted = json_array_size(cases);
    rc = KG_OK;
    for (int c = 0; c < plan->ncases && rc == KG_OK; c++) {
        if (!ev->case_on[c]) continue;
        const char *nm = json_string_value(json_array_get(cases, k));
        if (nm == NULL || strcmp(nm, plan->cases[c].name) != 0)
            rc = kg_errorf(err, KG_EINPUT, "%s/meta.json: shard %d/%d lists the cases it ran, and case %s is not where "
                           "the shard's assignment puts it (restore meta.json from the shard's campaign)", dir,
                           ev->shard.index, ev->shard.count, plan->cases[c].name);
        k++;
    }
    if (rc == KG_OK && k != nlisted)
        rc = kg_errorf(err, KG_EINPUT, "%s/meta.json: shard %d/%d lists %zu case(s), its assignment gives %zu (restore "
                       "meta.json from the shard's campaign)", dir, ev->shard.index, ev->shard.count, nlisted, k);
    json_decref(m);
    return rc;
}

/* A by-process shard's processes are of its own slots (kg_shard_of_slot);
 * each takes the seeds of kg_shard_seq (ev->seq). */
static int shard_procs_check(const char *dir, kg_evidence *ev, kg_err *err)
{
    int want = kg_shard_by(ev->plan, ev->shard.count) == KG_SHARD_BY_PROCESS;
    if (want != ev->shard.by_process)
        return kg_errorf(err, KG_EINPUT, "%s/meta.json: shard %d/%d is recorded as a shard of %s, but the plan (its "
                         "[campaign] shard and %d case(s)) deals %d shards by %s (restore meta.json from the shard's "
                         "campaign)", dir, ev->shard.index, ev->shard.count, ev->shard.by_process ? "processes" : "cases",
                         ev->plan->ncases, ev->shard.count, want ? "process" : "case");
    if (!want) return KG_OK;
    int nslots = 2 * ev->plan->campaign.processes, rc = KG_OK;
    /* the slots meta.json lists are the assignment's */
    json_t *m = json_loads(ev->meta_json, 0, NULL);
    json_t *slots = json_object_get(json_object_get(m, "shard"), "slots");
    size_t k = 0;
    for (int q = 0; q < nslots && rc == KG_OK; q++) {
        if (kg_shard_of_slot(q, ev->shard.count) != ev->shard.index) continue;
        json_t *v = json_array_get(slots, k++);
        if (!json_is_integer(v) || json_integer_value(v) != q) rc = KG_EINPUT;
    }
    if (rc == KG_OK && k != json_array_size(slots)) rc = KG_EINPUT;
    json_decref(m);
    if (rc != KG_OK)
        return kg_errorf(err, KG_EINPUT, "%s/meta.json: shard %d/%d lists slots that are not its assignment (pairs of "
                         "slots dealt round-robin: slot s to shard (s / 2) %% %d; restore meta.json from the shard's "
                         "campaign)", dir, ev->shard.index, ev->shard.count, ev->shard.count);
    if ((ev->seq = calloc((size_t)(ev->nproc > 0 ? ev->nproc : 1), sizeof *ev->seq)) == NULL)
        return kg_errorf(err, KG_ENOMEM, "out of memory");
    for (int p = 0; p < ev->nproc; p++) {
        const kg_proc_rec *r = &ev->procs[p];
        if (r->slot < 0 || r->slot >= nslots || kg_shard_of_slot(r->slot, ev->shard.count) != ev->shard.index)
            return kg_errorf(err, KG_EINPUT, "%s/processes.csv:%d: slot %d is not one of shard %d/%d's (slots are "
                             "dealt in pairs: slot s to shard (s / 2) %% %d; kgate merge takes it from its own shard)",
                             dir, p + 2, r->slot, ev->shard.index, ev->shard.count, ev->shard.count);
        ev->seq[p] = kg_shard_seq(r->slot, r->attempt < 0 ? 0 : r->attempt, nslots);
    }
    return KG_OK;
}

int kg_evidence_seq(const kg_evidence *ev, int p)
{
    return ev->seq != NULL && p >= 0 && p < ev->nproc ? ev->seq[p] : p;
}

static int load_one(const char *dir, kg_evidence *ev, kg_err *err)
{
    char path[KG_PATH_MAX + 64], *text = NULL;
    int rc;
    memset(ev, 0, sizeof *ev);
    ev->res_proc = -1;
    if ((rc = kg_folder_check(dir, err)) != KG_OK) return rc;
    snprintf(path, sizeof path, "%s/plan.kg", dir);
    if ((rc = kg_read_file(path, &text, NULL, err)) != KG_OK) goto done;
    if ((rc = kg_plan_parse_recorded(text, strlen(text), path, dir, &ev->plan, err)) != KG_OK) goto done;
    /* what the reader knows of the cases' ops: data the producer wrote */
    if ((rc = load_facts(dir, ev, err)) != KG_OK) goto done;
    snprintf(path, sizeof path, "%s/meta.json", dir);
    if ((rc = kg_read_file(path, &ev->meta_json, NULL, err)) != KG_OK) goto done;
    json_error_t je;
    json_t *meta = json_loads(ev->meta_json, 0, &je);
    if (meta == NULL) {
        rc = kg_errorf(err, KG_EINPUT, "%s:%d: not valid JSON (%s)", path, je.line, je.text);
        goto done;
    }
    ev->screen = json_is_true(json_object_get(meta, "screen"));
    json_decref(meta);
    int has_salt = 0;
    if ((rc = kg_salt_from_meta(ev->meta_json, &ev->input_salt, &has_salt, err)) != KG_OK) goto done;
    if ((rc = kg_evidence_shard_meta(ev->meta_json, &ev->shard, err)) != KG_OK) goto done;
    int nc = ev->plan->ncases, na = ev->plan->narms;
    if (ev->shard.count > 0) {
        if ((ev->case_on = calloc((size_t)nc + 1, 1)) == NULL) { rc = kg_errorf(err, KG_ENOMEM, "out of memory"); goto done; }
        if ((rc = shard_cases_check(dir, ev, err)) != KG_OK) goto done;
    }

    ev->state = calloc((size_t)(nc * na > 0 ? nc * na : 1), sizeof *ev->state);
    if (ev->state == NULL) { rc = kg_errorf(err, KG_ENOMEM, "out of memory"); goto done; }
    /* a shard's other cases ran elsewhere: their arms are absent here */
    for (int c = 0; c < nc; c++)
        for (int a = 0; a < na; a++)
            ev->state[c * na + a] = kg_plan_arm_applies(ev->plan, a, c) && (ev->case_on == NULL || ev->case_on[c])
                                        ? KG_ARM_OK : KG_ARM_ABSENT;
    /* a merged folder has no processes of its own: load_merged reads its shards' */
    if (ev->shard.merged > 0) goto done;
    if ((rc = load_procs(dir, ev, err)) != KG_OK) goto done;
    if (ev->shard.count > 0 && (rc = shard_procs_check(dir, ev, err)) != KG_OK) goto done;
    snprintf(path, sizeof path, "%s/watch.csv", dir);
    if ((rc = kg_rows_read_watch(path, &ev->watch, &ev->nwatch, err)) != KG_OK) goto done;
    int top = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (top >= 0) {
        folder_size(top, "", &ev->folder_files, &ev->folder_bytes);
        close(top);
    }
    outputs_size(dir, ev);
    snprintf(path, sizeof path, "%s/peaks.json", dir);
    if (kg_path_exists(path)) {
        if ((rc = load_peaks(path, &ev->peaks, err)) != KG_OK) goto done;
        ev->has_peaks = 1;
    }
    if ((rc = load_compile_cache(dir, ev, err)) != KG_OK) goto done;

    for (int p = 0; p < ev->nproc; p++) {
        int acc = ev->accepted[p];
        /* checks: an accepted process has them; another may (its records
         * are listed in the report; only its "fault" checks are folded) */
        snprintf(path, sizeof path, "%s/checks/proc-%03d.csv", dir, p);
        size_t from = ev->nchecks_all;
        if (acc || kg_path_exists(path)) {
            if ((rc = kg_rows_read_checks(path, ev->plan, p, &ev->checks, &ev->nchecks_all, err)) != KG_OK) goto done;
            fold_checks(ev, from, acc);
        }
        if (!acc) continue;
        kg_rows_raw_name(AT_FDCWD, dir, p, path, sizeof path);
        if ((rc = kg_rows_read_raw(path, ev->plan, p, &ev->rows, &ev->nrows, err)) != KG_OK) goto done;
        /* telemetry and resources exist where the backend reports them */
        snprintf(path, sizeof path, "%s/telemetry/proc-%03d.csv", dir, p);
        if (kg_path_exists(path) &&
            (rc = kg_rows_read_tel(path, ev->plan, p, &ev->tel, &ev->ntel, err)) != KG_OK)
            goto done;
        snprintf(path, sizeof path, "%s/telemetry/resources-%03d.csv", dir, p);
        if (ev->res_proc < 0 && kg_path_exists(path)) {
            /* the first accepted process: every process loads the same code */
            if ((rc = kg_rows_read_res(path, ev->plan, p, &ev->res, &ev->nres, err)) != KG_OK) goto done;
            ev->res_proc = p;
        }
    }
    /* a shard's rows are of its own cases only */
    for (size_t i = 0; ev->case_on != NULL && rc == KG_OK && i < ev->nrows; i++)
        if (!ev->case_on[ev->rows[i].kase]) {
            kg_rows_raw_name(AT_FDCWD, dir, ev->rows[i].proc, path, sizeof path);
            rc = kg_errorf(err, KG_EINPUT, "%s: a sample of case %s, which shard %d/%d does not run "
                           "(kgate merge takes that case from its own shard)", path,
                           ev->plan->cases[ev->rows[i].kase].name, ev->shard.index, ev->shard.count);
        }
    for (size_t i = 0; ev->case_on != NULL && rc == KG_OK && i < ev->nchecks_all; i++)
        if (!ev->case_on[ev->checks[i].kase])
            rc = kg_errorf(err, KG_EINPUT, "%s/checks/proc-%03d.csv: a check of case %s, which shard %d/%d does not run",
                           dir, ev->checks[i].proc, ev->plan->cases[ev->checks[i].kase].name, ev->shard.index,
                           ev->shard.count);
done:
    free(text);
    if (rc != KG_OK) kg_evidence_free(ev);
    return rc;
}

int kg_evidence_load(const char *dir, kg_evidence *ev, kg_err *err)
{
    int rc = load_one(dir, ev, err);
    if (rc != KG_OK || ev->shard.merged == 0) return rc;
    /* a merged folder: its own plan and meta, the shards' evidence */
    return load_merged(dir, ev, err);
}

/* grows *v (n0 elements) by n elements of size sz from src */
static int append(void **v, size_t n0, const void *src, size_t n, size_t sz)
{
    if (n == 0) return KG_OK;
    void *p = realloc(*v, (n0 + n) * sz);
    if (p == NULL) return KG_ENOMEM;
    memcpy((char *)p + n0 * sz, src, n * sz);
    *v = p;
    return KG_OK;
}

/* A merged folder (kgate merge, docs/scale-out.md): the evidence of each
 * shards/I in turn, process indices and schedule slots offset by the
 * processes and slots of the shards before it, so that the analysis sees
 * every case with the processes that ran it.  The shards' own checks
 * (plan hash, coverage, devices) are kgate merge's and verify's
 * (merge.c); here a shard that does not load, or a case no shard or two
 * shards ran, is an error. */
/* A merged folder's own records emptied: its shards' take their place. */
static void merged_reset(kg_evidence *ev)
{
    free(ev->procs); ev->procs = NULL;
    free(ev->accepted); ev->accepted = NULL;
    free(ev->rows); ev->rows = NULL;
    free(ev->checks); ev->checks = NULL;
    free(ev->tel); ev->tel = NULL;
    free(ev->res); ev->res = NULL;
    free(ev->watch); ev->watch = NULL;
    ev->nproc = 0;
    ev->nrows = ev->nchecks_all = ev->ntel = ev->nres = ev->nwatch = 0;
    ev->res_proc = -1;
    ev->nchecks = ev->nchecks_failed = 0;
    ev->out_rows = ev->out_shared = ev->out_logical = ev->out_stored = 0;
}

static int load_merged_procs(const char *dir, kg_evidence *ev, kg_err *err);

static int load_merged(const char *dir, kg_evidence *ev, kg_err *err)
{
    int n = ev->shard.merged, rc = KG_OK, poff = 0, soff = 0;
    const kg_plan *plan = ev->plan;
    int nc = plan->ncases, na = plan->narms;
    char path[KG_PATH_MAX + 64];
    merged_reset(ev);
    if (kg_shard_by(plan, n) == KG_SHARD_BY_PROCESS) return load_merged_procs(dir, ev, err);
    ev->case_shard = malloc(((size_t)nc + 1) * sizeof *ev->case_shard);
    if (ev->case_shard == NULL) return kg_errorf(err, KG_ENOMEM, "out of memory");
    for (int c = 0; c < nc; c++) {
        ev->case_shard[c] = -1;
        for (int a = 0; a < na; a++) ev->state[c * na + a] = KG_ARM_ABSENT;
    }
    for (int i = 0; i < n && rc == KG_OK; i++) {
        kg_evidence sh;
        snprintf(path, sizeof path, "%s/shards/%d", dir, i);
        if ((rc = load_one(path, &sh, err)) != KG_OK) break;
        if (sh.shard.count != n || sh.shard.index != i || strcmp(sh.plan->hash, plan->hash) != 0) {
            rc = kg_errorf(err, KG_EINPUT, "%s: is shard %d/%d of plan %.12s, the merged folder needs shard %d/%d of "
                           "plan %.12s (kgate merge writes shards/I from shard I)", path, sh.shard.index,
                           sh.shard.count, sh.plan->hash, i, n, plan->hash);
            kg_evidence_free(&sh);
            break;
        }
        for (int c = 0; c < nc && rc == KG_OK; c++) {
            if (!sh.case_on[c]) continue;
            ev->case_shard[c] = i;
            for (int a = 0; a < na; a++) ev->state[c * na + a] = sh.state[c * na + a];
        }
        for (int p = 0; p < sh.nproc; p++) sh.procs[p].slot += soff;
        for (size_t k = 0; k < sh.nrows; k++) sh.rows[k].proc += poff;
        for (size_t k = 0; k < sh.nchecks_all; k++) sh.checks[k].proc += poff;
        for (size_t k = 0; k < sh.ntel; k++) sh.tel[k].proc += poff;
        for (size_t k = 0; k < sh.nres; k++) sh.res[k].proc += poff;
        for (size_t k = 0; k < sh.nwatch; k++)
            if (sh.watch[k].proc >= 0) sh.watch[k].proc += poff;
        if (append((void **)&ev->procs, (size_t)ev->nproc, sh.procs, (size_t)sh.nproc, sizeof *sh.procs) ||
            append((void **)&ev->accepted, (size_t)ev->nproc, sh.accepted, (size_t)sh.nproc, sizeof *sh.accepted) ||
            append((void **)&ev->rows, ev->nrows, sh.rows, sh.nrows, sizeof *sh.rows) ||
            append((void **)&ev->checks, ev->nchecks_all, sh.checks, sh.nchecks_all, sizeof *sh.checks) ||
            append((void **)&ev->tel, ev->ntel, sh.tel, sh.ntel, sizeof *sh.tel) ||
            append((void **)&ev->watch, ev->nwatch, sh.watch, sh.nwatch, sizeof *sh.watch) ||
            (ev->res_proc < 0 && append((void **)&ev->res, 0, sh.res, sh.nres, sizeof *sh.res)))
            rc = kg_errorf(err, KG_ENOMEM, "out of memory merging %s", path);
        if (rc == KG_OK) {
            if (ev->res_proc < 0 && sh.res_proc >= 0) {
                ev->nres = sh.nres;
                ev->res_proc = sh.res_proc + poff;
            }
            ev->nproc += sh.nproc;
            ev->nrows += sh.nrows;
            ev->nchecks_all += sh.nchecks_all;
            ev->ntel += sh.ntel;
            ev->nwatch += sh.nwatch;
            ev->nchecks += sh.nchecks;
            ev->nchecks_failed += sh.nchecks_failed;
            ev->out_rows += sh.out_rows;
            ev->out_shared += sh.out_shared;
            ev->out_logical += sh.out_logical;
            ev->out_stored += sh.out_stored;
            if (i == 0) {
                ev->has_peaks = sh.has_peaks;
                ev->peaks = sh.peaks;
                ev->input_salt = sh.input_salt;
            }
            poff += sh.nproc;
            soff += 2 * plan->campaign.processes;
        }
        kg_evidence_free(&sh);
    }
    for (int c = 0; c < nc && rc == KG_OK; c++)
        if (ev->case_shard[c] < 0)
            rc = kg_errorf(err, KG_EINPUT, "%s: no shard ran case %s (kgate merge needs every shard 0..%d)", dir,
                           plan->cases[c].name, n - 1);
    if (rc != KG_OK) kg_evidence_free(ev);
    return rc;
}

/* Where each process's records start in v (n records of size sz whose
 * process index is the int at offset off, grouped by process in
 * increasing order, as load_one reads them): start[p] .. start[p + 1]
 * (nproc + 1 entries).  NULL when out of memory or not so grouped. */
static size_t *proc_starts(const void *v, size_t n, size_t sz, size_t off, int nproc)
{
    size_t *st = calloc((size_t)nproc + 2, sizeof *st);
    if (st == NULL) return NULL;
    int cur = 0;
    for (size_t k = 0; k < n; k++) {
        int p;
        memcpy(&p, (const char *)v + k * sz + off, sizeof p);
        if (p < cur || p >= nproc) {
            free(st);
            return NULL;
        }
        while (cur < p) st[++cur] = k;
    }
    while (cur < nproc) st[++cur] = n;
    return st;
}

/* One process of a by-process shard in the merged schedule. */
typedef struct merged_proc {
    int seq, shard, p;
} merged_proc;

static int by_seq(const void *a, const void *b)
{
    const merged_proc *x = a, *y = b;
    return (x->seq > y->seq) - (x->seq < y->seq);
}

/* Appends the records of shard process (i, p) from v (grouped by process
 * at st) to *dst (*dn of them), renumbered as process m. */
static int take_proc(void **dst, size_t *dn, const void *v, const size_t *st, int p, size_t sz, size_t off, int m)
{
    size_t k = st[p + 1] - st[p];
    if (append(dst, *dn, (const char *)v + st[p] * sz, k, sz) != KG_OK) return KG_ENOMEM;
    for (size_t j = 0; j < k; j++) memcpy((char *)*dst + (*dn + j) * sz + off, &m, sizeof m);
    *dn += k;
    return KG_OK;
}

/* The shards of a by-process merged folder in schedule order: their
 * processes sorted by the index their seeds took (kg_shard_seq: a slot's
 * first run is its unsharded process index), renumbered 0, 1, ... in that
 * order with their rows, checks and telemetry, so that the analysis is
 * the whole schedule's.  A process index two shards hold is an error. */
static int merge_procs_in_order(kg_evidence *ev, kg_evidence *sh, int n, const merged_proc *mp, int total,
                                const char *dir, kg_err *err)
{
    /* per shard: where each process's rows, checks and telemetry start, and its processes' new numbers */
    struct at { size_t *rs, *cs, *ts; int *newidx; } *at = calloc((size_t)n, sizeof *at);
    int rc = KG_OK, best = -1;
    if (at == NULL) return kg_errorf(err, KG_ENOMEM, "out of memory");
    for (int i = 0; i < n && rc == KG_OK; i++) {
        at[i].rs = proc_starts(sh[i].rows, sh[i].nrows, sizeof *sh[i].rows, offsetof(kg_row, proc), sh[i].nproc);
        at[i].cs = proc_starts(sh[i].checks, sh[i].nchecks_all, sizeof *sh[i].checks, offsetof(kg_check_rec, proc),
                               sh[i].nproc);
        at[i].ts = proc_starts(sh[i].tel, sh[i].ntel, sizeof *sh[i].tel, offsetof(kg_tel_rec, proc), sh[i].nproc);
        at[i].newidx = calloc((size_t)sh[i].nproc + 1, sizeof *at[i].newidx);
        if (at[i].rs == NULL || at[i].cs == NULL || at[i].ts == NULL || at[i].newidx == NULL)
            rc = kg_errorf(err, KG_ENOMEM, "%s/shards/%d: out of memory, or its records are not in process order", dir, i);
    }
    if (rc == KG_OK && ((ev->procs = calloc((size_t)total + 1, sizeof *ev->procs)) == NULL ||
                        (ev->accepted = calloc((size_t)total + 1, sizeof *ev->accepted)) == NULL))
        rc = kg_errorf(err, KG_ENOMEM, "out of memory");
    for (int m = 0; m < total && rc == KG_OK; m++) {
        const merged_proc *x = &mp[m];
        const kg_evidence *s = &sh[x->shard];
        const struct at *a = &at[x->shard];
        if (m > 0 && mp[m - 1].seq == x->seq) {
            rc = kg_errorf(err, KG_EINPUT, "%s: process %d (slot %d) is in shards/%d and shards/%d: each process of the "
                           "schedule runs in one shard (kgate merge refuses the set)", dir, x->seq,
                           s->procs[x->p].slot, mp[m - 1].shard, x->shard);
            break;
        }
        a->newidx[x->p] = m;
        ev->procs[m] = s->procs[x->p];
        ev->accepted[m] = s->accepted[x->p];
        if (take_proc((void **)&ev->rows, &ev->nrows, s->rows, a->rs, x->p, sizeof *s->rows, offsetof(kg_row, proc), m) ||
            take_proc((void **)&ev->checks, &ev->nchecks_all, s->checks, a->cs, x->p, sizeof *s->checks,
                      offsetof(kg_check_rec, proc), m) ||
            take_proc((void **)&ev->tel, &ev->ntel, s->tel, a->ts, x->p, sizeof *s->tel, offsetof(kg_tel_rec, proc), m))
            rc = kg_errorf(err, KG_ENOMEM, "out of memory merging %s", dir);
        if (best < 0 && s->res_proc == x->p) best = m;
    }
    ev->nproc = rc == KG_OK ? total : 0;
    for (int i = 0; i < n && rc == KG_OK; i++) {
        /* the host watch's rows, shard after shard, their processes renumbered */
        for (size_t k = 0; k < sh[i].nwatch; k++)
            if (sh[i].watch[k].proc >= 0 && sh[i].watch[k].proc < sh[i].nproc)
                sh[i].watch[k].proc = at[i].newidx[sh[i].watch[k].proc];
        if (append((void **)&ev->watch, ev->nwatch, sh[i].watch, sh[i].nwatch, sizeof *sh[i].watch) != KG_OK)
            rc = kg_errorf(err, KG_ENOMEM, "out of memory merging %s", dir);
        ev->nwatch += sh[i].nwatch;
        /* the resources of the schedule's first process that has them */
        if (best >= 0 && sh[i].res_proc >= 0 && at[i].newidx[sh[i].res_proc] == best) {
            if (append((void **)&ev->res, 0, sh[i].res, sh[i].nres, sizeof *sh[i].res) != KG_OK)
                rc = kg_errorf(err, KG_ENOMEM, "out of memory merging %s", dir);
            ev->nres = sh[i].nres;
            ev->res_proc = best;
            for (size_t k = 0; k < ev->nres && ev->res != NULL; k++) ev->res[k].proc = best;
        }
    }
    for (int i = 0; i < n; i++) {
        free(at[i].rs);
        free(at[i].cs);
        free(at[i].ts);
        free(at[i].newidx);
    }
    free(at);
    return rc;
}

/* The arm states and check counts of the merged schedule: every check
 * folded process by process in schedule order, as load_one folds a whole
 * campaign's. */
static int refold_checks(kg_evidence *ev, kg_err *err)
{
    const kg_plan *plan = ev->plan;
    int na = plan->narms;
    for (int c = 0; c < plan->ncases; c++)
        for (int a = 0; a < na; a++)
            ev->state[c * na + a] = kg_plan_arm_applies(plan, a, c) ? KG_ARM_OK : KG_ARM_ABSENT;
    ev->nchecks = ev->nchecks_failed = 0;
    size_t all = ev->nchecks_all;
    size_t *st = proc_starts(ev->checks, all, sizeof *ev->checks, offsetof(kg_check_rec, proc), ev->nproc);
    if (st == NULL) return kg_errorf(err, KG_ENOMEM, "out of memory");
    for (int m = 0; m < ev->nproc; m++) {
        ev->nchecks_all = st[m + 1];
        fold_checks(ev, st[m], ev->accepted[m]);
    }
    ev->nchecks_all = all;
    free(st);
    return KG_OK;
}

/* A merged folder of by-process shards: every shards/I loaded (each a
 * shard of processes of this plan and count), their processes in
 * schedule order (merge_procs_in_order), their checks folded in that
 * order (refold_checks); every case ran in every shard. */
static int load_merged_procs(const char *dir, kg_evidence *ev, kg_err *err)
{
    int n = ev->shard.merged, rc = KG_OK, total = 0, loaded = 0;
    const kg_plan *plan = ev->plan;
    char path[KG_PATH_MAX + 64];
    kg_evidence *sh = calloc((size_t)n, sizeof *sh);
    if (sh == NULL) return kg_errorf(err, KG_ENOMEM, "out of memory");
    ev->case_shard = malloc(((size_t)plan->ncases + 1) * sizeof *ev->case_shard);
    if (ev->case_shard == NULL) rc = kg_errorf(err, KG_ENOMEM, "out of memory");
    for (int c = 0; c < plan->ncases && rc == KG_OK; c++) ev->case_shard[c] = 0;
    for (int i = 0; i < n && rc == KG_OK; i++, loaded++) {
        snprintf(path, sizeof path, "%s/shards/%d", dir, i);
        if ((rc = load_one(path, &sh[i], err)) != KG_OK) break;
        if (sh[i].shard.count != n || sh[i].shard.index != i || !sh[i].shard.by_process ||
            strcmp(sh[i].plan->hash, plan->hash) != 0)
            rc = kg_errorf(err, KG_EINPUT, "%s: is shard %d/%d%s of plan %.12s, the merged folder needs shard %d/%d "
                           "of processes of plan %.12s (kgate merge writes shards/I from shard I)", path,
                           sh[i].shard.index, sh[i].shard.count, sh[i].shard.by_process ? " of processes" : " of cases",
                           sh[i].plan->hash, i, n, plan->hash);
        total += sh[i].nproc;
    }
    merged_proc *mp = rc == KG_OK ? calloc((size_t)total + 1, sizeof *mp) : NULL;
    if (rc == KG_OK && mp == NULL) rc = kg_errorf(err, KG_ENOMEM, "out of memory");
    for (int i = 0, k = 0; i < n && rc == KG_OK; i++)
        for (int p = 0; p < sh[i].nproc; p++) mp[k++] = (merged_proc){ kg_evidence_seq(&sh[i], p), i, p };
    if (rc == KG_OK) {
        qsort(mp, (size_t)total, sizeof *mp, by_seq);
        rc = merge_procs_in_order(ev, sh, n, mp, total, dir, err);
    }
    if (rc == KG_OK) rc = refold_checks(ev, err);
    for (int i = 0; i < n && rc == KG_OK; i++) {
        ev->out_rows += sh[i].out_rows;
        ev->out_shared += sh[i].out_shared;
        ev->out_logical += sh[i].out_logical;
        ev->out_stored += sh[i].out_stored;
    }
    if (rc == KG_OK) {
        ev->has_peaks = sh[0].has_peaks;
        ev->peaks = sh[0].peaks;
        ev->input_salt = sh[0].input_salt;
    }
    free(mp);
    for (int i = 0; i < loaded; i++) kg_evidence_free(&sh[i]);
    free(sh);
    if (rc != KG_OK) kg_evidence_free(ev);
    return rc;
}

void kg_evidence_free(kg_evidence *ev)
{
    if (ev == NULL) return;
    kg_plan_free(ev->plan);
    free(ev->meta_json);
    free(ev->compile_cache);
    free(ev->procs);
    free(ev->accepted);
    free(ev->rows);
    free(ev->checks);
    free(ev->tel);
    free(ev->res);
    free(ev->state);
    free(ev->watch);
    free(ev->case_on);
    free(ev->case_shard);
    free(ev->seq);
    free(ev->facts);
    memset(ev, 0, sizeof *ev);
    ev->res_proc = -1;
}

int kg_evidence_shard_meta(const char *meta_json, kg_shard_meta *sm, kg_err *err)
{
    memset(sm, 0, sizeof *sm);
    sm->device_index = -1;
    json_error_t je;
    json_t *m = json_loads(meta_json != NULL ? meta_json : "", 0, &je);
    if (m == NULL) return kg_errorf(err, KG_EINPUT, "meta.json:%d: not valid JSON (%s)", je.line, je.text);
    int rc = KG_OK;
    json_t *sh = json_object_get(m, "shard"), *mg = json_object_get(m, "merged");
    const char *s;
    if (sh != NULL) {
        json_t *i = json_object_get(sh, "index"), *n = json_object_get(sh, "count");
        if (!json_is_integer(i) || !json_is_integer(n) || json_integer_value(n) < 1 ||
            json_integer_value(n) > 4096 || json_integer_value(i) < 0 || json_integer_value(i) >= json_integer_value(n))
            rc = kg_errorf(err, KG_EINPUT, "meta.json: shard must hold an index in [0, count) and a count in [1, 4096] "
                           "(restore meta.json from the shard's campaign)");
        else {
            sm->index = (int)json_integer_value(i);
            sm->count = (int)json_integer_value(n);
            const char *by = json_string_value(json_object_get(sh, "by"));
            sm->by_process = by != NULL && strcmp(by, "process") == 0;
            if (by != NULL && !sm->by_process && strcmp(by, "case") != 0)
                rc = kg_errorf(err, KG_EINPUT, "meta.json: shard.by is \"%s\", not case or process (restore "
                               "meta.json from the shard's campaign)", by);
        }
    }
    if (rc == KG_OK && mg != NULL) {
        json_t *n = json_object_get(mg, "shards");
        if (!json_is_integer(n) || json_integer_value(n) < 1 || json_integer_value(n) > 4096)
            rc = kg_errorf(err, KG_EINPUT, "meta.json: merged.shards must be a count in [1, 4096] (restore meta.json "
                           "from kgate merge)");
        else
            sm->merged = (int)json_integer_value(n);
    }
    json_t *di = json_object_get(m, "device_index");
    if (json_is_integer(di)) sm->device_index = (int)json_integer_value(di);
    if ((s = json_string_value(json_object_get(m, "device_model"))) != NULL)
        snprintf(sm->device_model, sizeof sm->device_model, "%s", s);
    if ((s = json_string_value(json_object_get(m, "device"))) != NULL) snprintf(sm->device, sizeof sm->device, "%s", s);
    if ((s = json_string_value(json_object_get(m, "backend"))) != NULL)
        snprintf(sm->backend, sizeof sm->backend, "%s", s);
    json_decref(m);
    return rc;
}

/* ---- writing ---- */

static int write_json(int dirfd, const char *dir, const char *name, json_t *m, kg_err *err)
{
    char *text = json_dumps(m, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    if (text == NULL) return kg_errorf(err, KG_ENOMEM, "out of memory writing %s", name);
    char path[KG_PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    kg_sb sb = { 0 };
    kg_sb_printf(&sb, "%s\n", text);
    free(text);
    int rc = sb.oom ? kg_errorf(err, KG_ENOMEM, "out of memory")
                    : kg_write_atomic_at(dirfd, name, path, sb.buf, sb.len, err);
    kg_sb_free(&sb);
    return rc;
}

int kg_evidence_write_meta(int dirfd, const char *dir, const kg_plan *plan, const kg_meta *mt, kg_err *err)
{
    json_t *m = json_object();
    char buf[512];
    /* the hashes of the binary, sources and builds, and the compiler,
     * are in environment.json (the receipt); this is the run header */
    json_object_set_new(m, "schema", json_integer(KG_EVIDENCE_SCHEMA));
    json_object_set_new(m, "kgate_version", json_string(kg_version()));
    json_object_set_new(m, "kgate_git_sha", json_string(kg_git_sha()));
    json_object_set_new(m, "plan_sha256", json_string(plan->hash));
    json_object_set_new(m, "plan_path", json_string(plan->path));
    kg_utc_now(buf, sizeof buf);
    json_object_set_new(m, "started_utc", json_string(buf));
    struct utsname u;
    if (uname(&u) == 0) {
        json_object_set_new(m, "host", json_string(u.nodename));
        snprintf(buf, sizeof buf, "%s %s %s", u.sysname, u.release, u.machine);
        json_object_set_new(m, "os", json_string(buf));
    }
    json_object_set_new(m, "backend", json_string(mt->backend));
    json_object_set_new(m, "backend_notice", json_string(mt->notice));
    json_object_set_new(m, "device", json_string(mt->device));
    json_t *argv = json_array();
    for (int i = 0; i < mt->argc; i++) json_array_append_new(argv, json_string(mt->argv[i]));
    json_object_set_new(m, "argv", argv);
    json_object_set_new(m, "check_only", json_boolean(mt->check_only));
    json_object_set_new(m, "negative", json_boolean(mt->negative));
    if (mt->screen) json_object_set_new(m, "screen", json_true());
    json_object_set_new(m, "frozen_plan", mt->frozen_path != NULL ? json_string(mt->frozen_path) : json_null());
    /* every input of the campaign is salted with it (salt.h) */
    char salt[19];
    kg_salt_format(mt->input_salt, salt);
    json_object_set_new(m, "input_salt", json_string(salt));
    /* the device's identity (kgate merge compares the models) */
    json_object_set_new(m, "device_index", json_integer(mt->device_index));
    json_object_set_new(m, "device_model", json_string(mt->device_model != NULL ? mt->device_model : ""));
    if (mt->shard_n > 0) {
        json_t *sh = json_object(), *cases = json_array();
        json_object_set_new(sh, "index", json_integer(mt->shard_i));
        json_object_set_new(sh, "count", json_integer(mt->shard_n));
        for (int c = 0; c < plan->ncases; c++)
            if (mt->shard_on != NULL && mt->shard_on[c]) json_array_append_new(cases, json_string(plan->cases[c].name));
        json_object_set_new(sh, "cases", cases);
        if (mt->by_process) {
            json_t *slots = json_array();
            for (int q = 0; q < 2 * plan->campaign.processes; q++)
                if (kg_shard_of_slot(q, mt->shard_n) == mt->shard_i) json_array_append_new(slots, json_integer(q));
            json_object_set_new(sh, "by", json_string("process"));
            json_object_set_new(sh, "slots", slots);
        }
        json_object_set_new(m, "shard", sh);
    }
    if (mt->campaign_id != NULL) {
        json_t *cp = json_object(), *lines = json_array();
        json_object_set_new(cp, "id", json_string(mt->campaign_id));
        json_object_set_new(cp, "attempt", json_integer(mt->attempt));
        json_object_set_new(cp, "ledger", json_string(mt->ledger_path != NULL ? mt->ledger_path : ""));
        for (const char *p = mt->ledger_text != NULL ? mt->ledger_text : ""; *p != '\0';) {
            const char *nl = strchr(p, '\n');
            size_t n = nl != NULL ? (size_t)(nl - p) : strlen(p);
            json_array_append_new(lines, json_stringn(p, n));
            p += n + (nl != NULL);
        }
        json_object_set_new(cp, "ledger_lines", lines);
        json_object_set_new(m, "campaign", cp);
    }
    int rc = write_json(dirfd, dir, "meta.json", m, err);
    json_decref(m);
    return rc;
}

int kg_evidence_write_peaks(int dirfd, const char *dir, const char *backend, const kg_peaks *pk, kg_err *err)
{
    json_t *m = json_object();
    json_object_set_new(m, "schema", json_integer(KG_EVIDENCE_SCHEMA));
    json_object_set_new(m, "backend", json_string(backend));
    json_object_set_new(m, "status", json_string(pk->status));
    json_object_set_new(m, "method", json_string(pk->method));
    json_object_set_new(m, "cpus", json_integer(pk->ncpu));
    json_object_set_new(m, "flops_f32", pk->flops_f32 > 0.0 ? json_real(pk->flops_f32) : json_null());
    json_object_set_new(m, "flops_mma16", pk->flops_mma16 > 0.0 ? json_real(pk->flops_mma16) : json_null());
    json_object_set_new(m, "flops_note", json_string(pk->flops_note));
    json_t *bw = json_array();
    for (int i = 0; i < pk->nbw; i++) {
        json_t *r = json_object();
        json_object_set_new(r, "working_set_bytes", json_real(pk->bw_set[i]));
        json_object_set_new(r, "bytes_per_s", json_real(pk->bw_rate[i]));
        json_array_append_new(bw, r);
    }
    json_object_set_new(m, "bandwidth", bw);
    json_object_set_new(m, "margin", json_real(KG_PHYSICS_MARGIN));
    int rc = write_json(dirfd, dir, "peaks.json", m, err);
    json_decref(m);
    return rc;
}

/* peaks.json back into a kg_peaks; every field is required and typed
 * (kg_peaks_parse). */
static int load_peaks(const char *path, kg_peaks *pk, kg_err *err)
{
    char *text = NULL;
    int rc = kg_read_file(path, &text, NULL, err), line = 0;
    if (rc != KG_OK) return rc;
    const char *bad = kg_peaks_parse(text, pk, &line);
    free(text);
    if (bad != NULL && line > 0) return kg_errorf(err, KG_EINPUT, "%s:%d: %s", path, line, bad);
    if (bad != NULL)
        return kg_errorf(err, KG_EINPUT, "%s: field '%s' is missing or malformed (the file is written by kgate "
                         "before the first process; restore it from the campaign's archive)", path, bad);
    return KG_OK;
}

/* The receipt of what ran: binary, sources, build outputs, tools, host. */
int kg_evidence_write_environment(int dirfd, const kg_plan *plan, const char *dir, const char *backend, const char *device,
                                  const char *compiler, const struct kg_envrec_in *programs, kg_err *err)
{
    json_t *m = json_object();
    char buf[512], hex[65], exe[PATH_MAX], path[KG_PATH_MAX + 64];
    char **files = NULL;
    int nfiles = 0, rc = KG_OK;
    json_object_set_new(m, "schema", json_integer(KG_EVIDENCE_SCHEMA));
    json_object_set_new(m, "kgate_version", json_string(kg_version()));
    json_object_set_new(m, "kgate_git_sha", json_string(kg_git_sha()));
    if (kg_self_exe(exe, sizeof exe, NULL) == KG_OK && kg_sha256_file(exe, hex, NULL) == KG_OK) {
        json_object_set_new(m, "kgate_binary", json_string(exe));
        json_object_set_new(m, "kgate_binary_sha256", json_string(hex));
    }
    json_object_set_new(m, "plan_sha256", json_string(plan->hash));
    json_object_set_new(m, "backend", json_string(backend));
    json_object_set_new(m, "device", json_string(device));
    if (compiler != NULL) json_object_set_new(m, "compiler", json_string(compiler));
    if (programs != NULL) {
        json_object_set_new(m, "programs", kg_envrec_programs(programs));
        json_object_set_new(m, "environment", kg_envrec_environment(programs->env));
    }
    struct utsname u;
    if (uname(&u) == 0) {
        json_object_set_new(m, "host", json_string(u.nodename));
        snprintf(buf, sizeof buf, "%s %s %s", u.sysname, u.release, u.machine);
        json_object_set_new(m, "os", json_string(buf));
    }
    FILE *fp = fopen("/proc/cpuinfo", "r");
    char line[512], model[256] = "unknown";
    while (fp != NULL && fgets(line, sizeof line, fp) != NULL) {
        if (strncmp(line, "model name", 10) == 0 && strchr(line, ':') != NULL) {
            snprintf(model, sizeof model, "%s", strchr(line, ':') + 2);
            model[strcspn(model, "\n")] = '\0';
            break;
        }
    }
    if (fp != NULL) fclose(fp);
    json_object_set_new(m, "cpu_model", json_string(model));
    json_object_set_new(m, "cpus_online", json_integer(sysconf(_SC_NPROCESSORS_ONLN)));
    json_t *sources = json_object();
    for (int a = 0; a < plan->narms; a++) {
        char src[KG_PATH_MAX];
        if (plan->arms[a].source[0] == '\0' && !kg_arm_is_image(&plan->arms[a])) continue;
        if (kg_plan_source_path(plan, a, src, sizeof src, NULL) != KG_OK) continue;
        json_t *s = json_object();
        json_object_set_new(s, "path", json_string(src));
        /* a precompiled arm: its image is the arm (kind from its extension) */
        if (kg_arm_is_image(&plan->arms[a]))
            json_object_set_new(s, "image", json_string(kg_image_kind_name(kg_image_kind_of(plan->arms[a].image))));
        json_object_set_new(s, "sha256", kg_sha256_file(src, hex, NULL) == KG_OK ? json_string(hex) : json_null());
        /* the copy kept in the folder (chain.h), where the source was there to copy */
        char copy[128], cpath[KG_PATH_MAX + 160];
        kg_chain_source_copy(plan, a, copy, sizeof copy);
        snprintf(cpath, sizeof cpath, "%s/%s", dir, copy);
        if (copy[0] != '\0' && kg_path_exists(cpath)) json_object_set_new(s, "copy", json_string(copy));
        json_object_set_new(sources, plan->arms[a].name, s);
    }
    json_object_set_new(m, "sources", sources);
    /* what the workers load: every file the build left */
    json_t *built = json_object();
    snprintf(path, sizeof path, "%s/build", dir);
    if (kg_path_exists(path)) {
        if ((rc = kg_evidence_list(path, &files, &nfiles, err)) != KG_OK) goto done;
        for (int i = 0; i < nfiles; i++) {
            char f[KG_PATH_MAX + 600];
            snprintf(f, sizeof f, "%s/%s", path, files[i]);
            if (kg_sha256_file(f, hex, NULL) == KG_OK) json_object_set_new(built, files[i], json_string(hex));
        }
    }
    json_object_set_new(m, "build_sha256", built);
    /* the objects the compile cache supplied (build/NAME.cache beside each) */
    json_t *cached = json_object();
    for (int i = 0; i < nfiles; i++) {
        size_t l = strlen(files[i]);
        char f[KG_PATH_MAX + 600], *note = NULL;
        if (l <= 6 || strcmp(files[i] + l - 6, ".cache") != 0) continue;
        snprintf(f, sizeof f, "%s/%s", path, files[i]);
        if (kg_read_file(f, &note, NULL, NULL) != KG_OK) continue;
        note[strcspn(note, "\n")] = '\0';
        snprintf(f, sizeof f, "%.*s", (int)(l - 6), files[i]);
        json_object_set_new(cached, f, json_string(note));
        free(note);
    }
    if (json_object_size(cached) > 0) json_object_set_new(m, "compile_cache", cached);
    else json_decref(cached);
    rc = write_json(dirfd, dir, "environment.json", m, err);
done:
    for (int i = 0; i < nfiles; i++) free(files[i]);
    free(files);
    json_decref(m);
    return rc;
}

int kg_evidence_write_processes(int dirfd, const char *dir, const kg_proc_rec *p, int n, kg_err *err)
{
    kg_sb sb = { 0 };
    kg_rows_begin(&sb, KG_ROWS_PROCESSES);
    for (int i = 0; i < n; i++) kg_rows_put_proc(&sb, i, &p[i]);
    char path[KG_PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/processes.csv", dir);
    int rc = sb.oom ? kg_errorf(err, KG_ENOMEM, "out of memory")
                    : kg_write_atomic_at(dirfd, "processes.csv", path, sb.buf, sb.len, err);
    kg_sb_free(&sb);
    return rc;
}

int kg_evidence_read_processes(const char *dir, kg_proc_rec **out, int *n, kg_err *err)
{
    char path[KG_PATH_MAX + 32];
    int legacy = 0;
    *out = NULL;
    *n = 0;
    snprintf(path, sizeof path, "%s/processes.csv", dir);
    if (!kg_path_exists(path)) return KG_OK; /* stopped before the first process ended */
    int rc = kg_rows_read_procs(path, out, n, &legacy, err);
    if (rc == KG_OK && legacy) {
        free(*out);
        *out = NULL;
        *n = 0;
        return kg_errorf(err, KG_EINPUT, "%s: a schema 1 folder (no slot and attempt columns): cannot resume; "
                         "start the campaign again", path);
    }
    return rc;
}

/* ---- listing and SHA256SUMS ---- */

static int walk(const char *root, const char *rel, kg_strlist *l, kg_err *err)
{
    char path[KG_PATH_MAX * 2];
    snprintf(path, sizeof path, "%s%s%s", root, rel[0] ? "/" : "", rel);
    DIR *d = opendir(path);
    if (d == NULL) return kg_errorf(err, KG_EIO, "%s: %s", path, strerror(errno));
    struct dirent *e;
    int rc = KG_OK;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        char sub[KG_PATH_MAX * 2], full[KG_PATH_MAX * 4];
        snprintf(sub, sizeof sub, "%s%s%s", rel, rel[0] ? "/" : "", e->d_name);
        snprintf(full, sizeof full, "%s/%s", root, sub);
        struct stat st;
        if (lstat(full, &st) != 0) continue;
        if (S_ISDIR(st.st_mode)) {
            if ((rc = walk(root, sub, l, err)) != KG_OK) break;
        } else if (!S_ISREG(st.st_mode)) {
            /* a link, FIFO, socket or device is never listed, hashed or read */
            rc = kg_errorf(err, KG_EINPUT, "%s: %s: an evidence folder holds regular files and folders only", full,
                           kg_file_kind(st.st_mode));
            break;
        } else if (kg_strlist_add(l, sub) != 0) {
            rc = kg_errorf(err, KG_ENOMEM, "out of memory");
            break;
        }
    }
    closedir(d);
    return rc;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int kg_evidence_list(const char *dir, char ***paths, int *n, kg_err *err)
{
    kg_strlist l = { 0 };
    int rc = walk(dir, "", &l, err);
    if (rc != KG_OK) {
        kg_strlist_free(l.v, l.n);
        *paths = NULL;
        *n = 0;
        return rc;
    }
    if (l.n > 1) qsort(l.v, (size_t)l.n, sizeof *l.v, cmp_str);
    *paths = l.v;
    *n = l.n;
    return KG_OK;
}

int kg_evidence_write_sums(const char *dir, kg_err *err)
{
    char **files = NULL, path[KG_PATH_MAX * 3], hex[65];
    int n = 0, rc;
    kg_sb sb = { 0 };
    if ((rc = kg_evidence_list(dir, &files, &n, err)) != KG_OK) return rc;
    for (int i = 0; i < n; i++) {
        /* the signed envelope (attest.c) is written after SHA256SUMS */
        if (strcmp(files[i], "SHA256SUMS") == 0 || strcmp(files[i], "attestation.dsse.json") == 0) continue;
        snprintf(path, sizeof path, "%s/%s", dir, files[i]);
        if ((rc = kg_sha256_file(path, hex, err)) != KG_OK) goto done;
        kg_sb_printf(&sb, "%s  %s\n", hex, files[i]);
    }
    if (sb.oom) { rc = kg_errorf(err, KG_ENOMEM, "out of memory"); goto done; }
    snprintf(path, sizeof path, "%s/SHA256SUMS", dir);
    rc = kg_write_atomic(path, sb.buf ? sb.buf : "", sb.len, err);
done:
    kg_sb_free(&sb);
    kg_strlist_free(files, n);
    return rc;
}

/* ---- saved outputs ---- */

void kg_outputs_keep(kg_outputs *o, const kg_out_rec *r, const void *blob, size_t stored)
{
    if (o->oom) return;
    if (o->n == o->cap) {
        size_t cap = o->cap ? 2 * o->cap : 32;
        kg_out_rec *p = realloc(o->v, cap * sizeof *p);
        if (p == NULL) { o->oom = 1; return; }
        o->v = p;
        o->cap = cap;
    }
    /* the same output of the same inputs: its bytes are there already */
    for (size_t i = 0; i < o->n; i++) {
        const kg_out_rec *q = &o->v[i];
        if (q->kase == r->kase && q->output == r->output && q->seed == r->seed && q->bytes == r->bytes &&
            r->sha256[0] != '\0' && strcmp(q->sha256, r->sha256) == 0 && strcmp(q->encoding, r->encoding) == 0) {
            kg_out_rec *s = &o->v[o->n++];
            *s = *r;
            s->offset = q->offset;
            s->stored = q->stored;
            return;
        }
    }
    if (o->len + stored > o->dcap) {
        size_t cap = o->dcap ? o->dcap : 65536;
        while (cap < o->len + stored) cap *= 2;
        char *p = realloc(o->data, cap);
        if (p == NULL) { o->oom = 1; return; }
        o->data = p;
        o->dcap = cap;
    }
    kg_out_rec *s = &o->v[o->n++];
    *s = *r;
    s->offset = o->len;
    s->stored = stored;
    memcpy(o->data + o->len, blob, stored);
    o->len += stored;
}

void kg_outputs_index(const kg_outputs *o, const kg_plan *plan, int proc, kg_sb *idx)
{
    kg_rows_begin(idx, KG_ROWS_OUTPUTS);
    for (size_t i = 0; i < o->n; i++) {
        kg_out_rec r = o->v[i];
        r.proc = proc;
        kg_rows_put_out(idx, plan, &r);
    }
}

void kg_outputs_free(kg_outputs *o)
{
    if (o == NULL) return;
    free(o->v);
    free(o->data);
    memset(o, 0, sizeof *o);
}

/* planops.c: the ops a plan declares ([op NAME] with source = a C file,
 * docs/ops.md).  The source is compiled against kgate/op.h into a shared
 * object in a private folder and loaded, with dlopen, in the trusted
 * process that asks: the supervisor, a worker, the op server.
 * An arm host never loads one (it sees buffers and scalars only), nor
 * does a reader of a folder: verify's op server (check/opserver.c)
 * compiles the folder's copy and loads it confined.  The module defines
 * one object, `const kg_op kgate_op`; its source's SHA-256 is in the
 * plan's canonical text (so in the plan hash), and the evidence folder
 * keeps the source as sources/op-NAME.c. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "ops/ops_internal.h"
#include "base/safefs.h"
#include "base/util.h"
#include "toolchain/toolchain.h"

typedef struct plan_op {
    char name[KG_NAME_MAX];
    char sha256[65];
    const kg_op *op;
    void *handle;
} plan_op;

static plan_op loaded[KG_PLAN_MAX_OPS * 4];
static int nloaded;

/* The index in loaded of the op named name; -1 when none. */
static int loaded_index(const char *name)
{
    for (int i = 0; i < nloaded; i++)
        if (strcmp(loaded[i].name, name) == 0) return i;
    return -1;
}

/* Keeps po as the op of its name: in place of an earlier source of that
 * name (a second plan in this process), else appended. */
static int remember(const plan_op *po, kg_err *err)
{
    int have = loaded_index(po->name);
    if (have < 0 && nloaded >= (int)(sizeof loaded / sizeof loaded[0])) {
        dlclose(po->handle);
        return kg_errorf(err, KG_EINPUT, "too many declared ops loaded in one process");
    }
    if (kg_ops_register_declared(po->op) != 0) {
        dlclose(po->handle);
        return kg_errorf(err, KG_EINPUT, "too many declared ops loaded in one process");
    }
    if (have >= 0) loaded[have] = *po;
    else loaded[nloaded++] = *po;
    return KG_OK;
}

/* Where the module's slots are missing or out of range: why, else "". */
static void module_check(const kg_op *op, const char *name, char *why, size_t cap)
{
    why[0] = '\0';
    if (op->abi != KG_OP_ABI)
        snprintf(why, cap, "its kgate_op has .abi = %d, kgate reads %d (set .abi = KG_OP_ABI and rebuild)", op->abi,
                 KG_OP_ABI);
    else if (op->name == NULL || strcmp(op->name, name) != 0)
        snprintf(why, cap, "its kgate_op is named '%s', the plan declares [op %s] (make them the same)",
                 op->name ? op->name : "(none)", name);
    else if (op->nin < 1 || op->nin > KG_MAX_IN || op->nout < 1 || op->nout > KG_MAX_OUT)
        snprintf(why, cap, "nin = %d, nout = %d: an op has 1 to %d inputs and 1 to %d outputs", op->nin, op->nout,
                 KG_MAX_IN, KG_MAX_OUT);
    else if (op->sizes == NULL || op->out_dtype == NULL || op->admissible == NULL || op->reference == NULL ||
             op->bound == NULL || op->flops == NULL || op->min_bytes == NULL)
        snprintf(why, cap, "sizes, out_dtype, admissible, reference, bound, flops and min_bytes are required");
    else if (op->vars == NULL)
        snprintf(why, cap, "vars is required (the case variables it reads, e.g. \"n\" or \"B S D eps:real\")");
    else {
        for (int i = 0; i < op->nin && !why[0]; i++)
            if (op->in_names[i] == NULL) snprintf(why, cap, "in_names[%d] is not set", i);
        for (int o = 0; o < op->nout && !why[0]; o++)
            if (op->out_names[o] == NULL) snprintf(why, cap, "out_names[%d] is not set", o);
    }
}

/* dlopens so and takes its kgate_op (below). */
static int load_module(const kg_plan *plan, const kg_opdecl *od, const char *so, plan_op *out, kg_err *err);

/* Compiles path into so; log beside it. */
static int compile_module(const kg_plan *plan, const kg_opdecl *od, const char *path, const kg_settings *s,
                          const char *so, const char *log, kg_err *err)
{
    char inc[KG_PATH_MAX], incflag[KG_PATH_MAX + 3];
    int rc = kg_include_dir(s != NULL ? s->include_dir : NULL, inc, sizeof inc, err);
    if (rc != KG_OK) return rc;
    snprintf(incflag, sizeof incflag, "-I%s", inc);
    const char *cc = s != NULL && s->cc != NULL && s->cc[0] != '\0' ? s->cc : "cc";
    char *argv[] = { (char *)cc, (char *)"-std=c11", (char *)"-O2", (char *)"-shared", (char *)"-fPIC", incflag,
                     (char *)path, (char *)"-o", (char *)so, (char *)"-lm", NULL };
    int status = 0;
    rc = kg_run_capture(argv, log, &status, err);
    if (rc == KG_OK && (!WIFEXITED(status) || WEXITSTATUS(status) != 0)) {
        char head[3 * PATH_MAX];
        snprintf(head, sizeof head, "%s:%d: op '%s': %s failed to compile %s", plan->path, od->line, od->name, cc,
                 path);
        rc = kg_tool_failed(err, KG_EINPUT, log, head);
    }
    return rc;
}

/* Compiles path into dir/op.so, dir a private folder made here (its
 * name, never used before, is how the loader will know the module). */
static int build_private(const kg_plan *plan, const kg_opdecl *od, const char *path, const kg_settings *s,
                         char dir[PATH_MAX], kg_err *err)
{
    snprintf(dir, PATH_MAX, "/tmp/kgate-op.XXXXXX");
    if (mkdtemp(dir) == NULL) {
        dir[0] = '\0';
        return kg_errorf(err, KG_EIO, "cannot make a folder for op '%s': %s", od->name, strerror(errno));
    }
    char so[PATH_MAX + 16], log[PATH_MAX + 16];
    snprintf(so, sizeof so, "%s/op.so", dir);
    snprintf(log, sizeof log, "%s/op.log", dir);
    int rc = compile_module(plan, od, path, s, so, log, err);
    unlink(log);
    return rc;
}

/* Removes what build_private left (a loaded module stays mapped). */
static void remove_private(const char *dir)
{
    char so[PATH_MAX + 16];
    if (dir[0] == '\0') return;
    snprintf(so, sizeof so, "%s/op.so", dir);
    unlink(so);
    rmdir(dir);
}

/* dlopens so and takes its kgate_op. */
static int load_module(const kg_plan *plan, const kg_opdecl *od, const char *so, plan_op *out, kg_err *err)
{
    int rc = KG_OK;
    void *h = NULL;
    if ((h = dlopen(so, RTLD_NOW | RTLD_LOCAL)) == NULL)
        rc = kg_errorf(err, KG_EINPUT, "%s:%d: op '%s': cannot load its module: %s", plan->path, od->line, od->name,
                       dlerror());
    if (rc != KG_OK) return rc;
    const kg_op *op = dlsym(h, "kgate_op");
    if (op == NULL) {
        dlclose(h);
        return kg_errorf(err, KG_EINPUT, "%s:%d: op '%s': %s defines no kgate_op (define `const kg_op kgate_op = "
                         "{ .abi = KG_OP_ABI, .name = \"%s\", ... }`; docs/ops.md)", plan->path, od->line, od->name,
                         so, od->name);
    }
    char why[300];
    module_check(op, od->name, why, sizeof why);
    if (why[0] != '\0') {
        dlclose(h);
        return kg_errorf(err, KG_EINPUT, "%s:%d: op '%s': %s", plan->path, od->line, od->name, why);
    }
    memset(out, 0, sizeof *out);
    snprintf(out->name, sizeof out->name, "%s", od->name);
    memcpy(out->sha256, od->sha256, sizeof out->sha256);
    out->op = op;
    out->handle = h;
    return KG_OK;
}

/* The source of declared op o: beside the plan, or the folder's copy. */
static void op_source(const kg_plan *plan, int o, const char *folder, char *path, size_t cap)
{
    char name[KG_NAME_MAX + 16];
    kg_plan_op_copy_name(plan, o, name, sizeof name);
    if (folder != NULL) snprintf(path, cap, "%s/sources/%s", folder, name);
    else kg_plan_op_source_path(plan, o, path, cap);
}

/* The plan's [op] names none of the built-in ops, and path hashes to the
 * sha256 the plan holds for op o. */
static int check_source(const kg_plan *plan, int o, const char *path, int folder, kg_err *err)
{
    const kg_opdecl *od = &plan->ops[o];
    int n = 0;
    const kg_op *const *all = kg_op_all(&n);
    for (int i = 0; i < n; i++)
        if (strcmp(all[i]->name, od->name) == 0)
            return kg_errorf(err, KG_EINPUT, "%s:%d: [op %s]: '%s' is a built-in op (kgate list): give yours "
                             "another name", plan->path, od->line, od->name, od->name);
    char hex[65];
    int rc = kg_sha256_file(path, hex, err);
    if (rc != KG_OK) return rc;
    if (strcmp(hex, od->sha256) != 0)
        return kg_errorf(err, KG_EINPUT, "%s: op '%s': the source hashes to %.12s, the plan says %.12s (the source "
                         "changed since the plan was read%s)", path, od->name, hex, od->sha256,
                         folder ? ", or the folder's copy was edited" : "");
    return KG_OK;
}

/* The ops declared in Python, loaded into a helper once (their files
 * run, their functions found), so that a reference that does not load
 * stops the campaign before any worker. */
static int try_python(const kg_plan *plan, const kg_settings *s, kg_err *err)
{
    kg_pyops_conf pc = { .python = s != NULL ? s->python : NULL, .limit_s = plan->campaign.timeout_s };
    kg_pyops_configure(&pc);
    int rc = kg_pyops_start(-1, err);
    kg_pyops_stop();
    if (rc != KG_OK && err != NULL) {
        char old[KG_ERR_MSG_MAX];
        snprintf(old, sizeof old, "%s", err->msg);
        kg_err_clear(err);
        int o = 0;
        while (o < plan->nops - 1 && !plan->ops[o].python) o++;
        rc = kg_errorf(err, KG_EINPUT, "%s:%d: [op %s]: its reference does not load: %.800s", plan->path,
                       plan->ops[o].line, plan->ops[o].name, old);
    }
    return rc;
}

int kg_ops_bind(const kg_plan *plan, const kg_settings *s, kg_err *err)
{
    if (plan == NULL) return KG_OK;
    int rc = KG_OK, npy = 0;
    for (int o = 0; o < plan->nops && rc == KG_OK; o++) {
        const kg_opdecl *od = &plan->ops[o];
        int have = loaded_index(od->name);
        if (have >= 0 && strcmp(loaded[have].sha256, od->sha256) == 0) continue;
        char path[2 * KG_PATH_MAX + 32], dir[PATH_MAX] = "", so[PATH_MAX + 16];
        op_source(plan, o, NULL, path, sizeof path);
        if (od->python) {
            if ((rc = check_source(plan, o, path, 0, err)) == KG_OK) rc = kg_pyops_register(plan, o, NULL, err);
            npy++;
            continue;
        }
        if ((rc = check_source(plan, o, path, 0, err)) == KG_OK) rc = build_private(plan, od, path, s, dir, err);
        plan_op po;
        snprintf(so, sizeof so, "%s/op.so", dir);
        if (rc == KG_OK && (rc = load_module(plan, od, so, &po, err)) == KG_OK) rc = remember(&po, err);
        remove_private(dir);
    }
    if (rc == KG_OK && npy > 0) rc = try_python(plan, s, err);
    return rc;
}

int kg_ops_copy_sources(int dirfd, const char *dir, const kg_plan *plan, kg_err *err)
{
    int sfd = -1, rc = KG_OK;
    for (int o = 0; o < plan->nops && rc == KG_OK; o++) {
        const kg_opdecl *od = &plan->ops[o];
        char src[2 * KG_PATH_MAX + 2], rel[KG_NAME_MAX + 16], shown[KG_PATH_MAX + 160], *text = NULL;
        size_t len = 0;
        kg_plan_op_source_path(plan, o, src, sizeof src);
        if ((rc = kg_read_file(src, &text, &len, err)) != KG_OK) break;
        char hex[65];
        kg_sha256_hex(text, len, hex);
        if (strcmp(hex, od->sha256) != 0) {
            free(text);
            rc = kg_errorf(err, KG_EINPUT, "%s: op '%s' changed while the campaign started (hash %.12s, the plan's "
                           "%.12s): start again", src, od->name, hex, od->sha256);
            break;
        }
        if (sfd < 0 && (sfd = kg_open_dir(dirfd, "sources", 1, err)) < 0) {
            rc = sfd;
            free(text);
            break;
        }
        kg_plan_op_copy_name(plan, o, rel, sizeof rel);
        snprintf(shown, sizeof shown, "%s/sources/%s", dir, rel);
        rc = kg_write_atomic_at(sfd, rel, shown, text, len, err);
        free(text);
    }
    if (sfd >= 0) close(sfd);
    return rc;
}

int kg_ops_build(const kg_plan *plan, const kg_settings *s, const char *folder, const char *build_dir, kg_err *err)
{
    for (int o = 0; o < plan->nops; o++) {
        const kg_opdecl *od = &plan->ops[o];
        char src[2 * KG_PATH_MAX + 32], so[KG_PATH_MAX + 96], tmp[KG_PATH_MAX + 112], log[KG_PATH_MAX + 112];
        op_source(plan, o, folder, src, sizeof src);
        snprintf(so, sizeof so, "%s/op-%s.so", build_dir, od->name);
        snprintf(tmp, sizeof tmp, "%s.tmp", so);
        snprintf(log, sizeof log, "%s.log", so);
        int rc = folder != NULL ? check_source(plan, o, src, 1, err) : KG_OK;
        if (od->python) {
            /* nothing to build: the helper runs the reference's text */
            if (rc != KG_OK) return rc;
            continue;
        }
        if (rc == KG_OK) rc = kg_mkdir_p(build_dir, err);
        if (rc == KG_OK) rc = compile_module(plan, od, src, s, tmp, log, err);
        unlink(log);
        if (rc == KG_OK && rename(tmp, so) != 0)
            rc = kg_errorf(err, KG_EIO, "%s: cannot rename the op module into place: %s", so, strerror(errno));
        if (rc != KG_OK) {
            unlink(tmp);
            return rc;
        }
    }
    return KG_OK;
}

int kg_ops_load_built(const kg_plan *plan, const char *build_dir, kg_err *err)
{
    for (int o = 0; o < plan->nops; o++) {
        const kg_opdecl *od = &plan->ops[o];
        if (od->python) {
            int rc = kg_pyops_register(plan, o, NULL, err);
            if (rc != KG_OK) return rc;
            continue;
        }
        int have = loaded_index(od->name);
        if (have >= 0 && strcmp(loaded[have].sha256, od->sha256) == 0) continue;
        char so[KG_PATH_MAX + 96];
        snprintf(so, sizeof so, "%s/op-%s.so", build_dir, od->name);
        plan_op po;
        int rc = load_module(plan, od, so, &po, err);
        if (rc != KG_OK) return rc;
        if ((rc = remember(&po, err)) != KG_OK) return rc;
    }
    return KG_OK;
}

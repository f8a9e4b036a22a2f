/* opserver.c: the op server and its client (opserver.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "check/opserver.h"
#include "base/frame.h"
#include "base/util.h"
#include "kgate/op.h"
#include "kgate/oracle.h"
#include "sandbox/sandbox.h"

#define REQ_BYTES 24        /* case, precision, tolerance, seed */
#define TEXT_MAX 4096       /* an ERROR or READY text */

/* ---- the server ---- */

/* From the SIGSYS handler: the denied call on the reply pipe
 * (async-signal-safe: one write of a frame built on the stack). */
static void report_violation(int nr)
{
    unsigned char f[KG_FRAME_HEADER + 4];
    kg_frame_pack(f, KG_OPS_VIOLATION, 0, 4);
    kg_put32(f + KG_FRAME_HEADER, (uint32_t)nr);
    ssize_t w = write(1, f, sizeof f);
    (void)w;
}

static int say(uint32_t kind, uint32_t tag, const char *text)
{
    kg_err e = { 0 };
    size_t n = strlen(text);
    return kg_frame_write(1, kind, tag, text, n < TEXT_MAX ? n : TEXT_MAX, "verify", &e);
}

/* The prepared data of the last (case, seed) asked for. */
typedef struct served {
    const kg_plan *plan;
    kg_case_data d;
    int kase;
    uint64_t seed;
} served;

static int answer(served *sv, uint32_t tag, const unsigned char *req)
{
    int c = (int)kg_get32(req);
    kg_contract ct = { .precision = (kg_precision)kg_get32(req + 4) };
    uint64_t tb = kg_get64(req + 8), seed = kg_get64(req + 16);
    memcpy(&ct.tolerance, &tb, sizeof tb);
    char why[TEXT_MAX];
    kg_err e = { 0 };
    if (c < 0 || c >= sv->plan->ncases) {
        snprintf(why, sizeof why, "no case %d in the plan", c);
        return say(KG_OPS_ERROR, tag, why);
    }
    if (sv->kase != c || sv->seed != seed) {
        kg_oracle_release(&sv->d);
        sv->kase = -1;
        if (kg_oracle_prepare(&sv->plan->cases[c], seed, &sv->d, &e) != KG_OK) return say(KG_OPS_ERROR, tag, e.msg);
        sv->kase = c;
        sv->seed = seed;
    }
    const kg_case_data *d = &sv->d;
    const double *bound[KG_MAX_OUT];
    int weak[KG_MAX_OUT];
    size_t len = 4;
    for (int o = 0; o < d->nout; o++) {
        if (kg_oracle_bounds_ct(d, &ct, o, &bound[o], &weak[o], &e) != KG_OK) return say(KG_OPS_ERROR, tag, e.msg);
        len += 16 + 16 * (size_t)d->out_elems[o];
    }
    unsigned char *p = malloc(len), *q = p;
    if (p == NULL) return say(KG_OPS_ERROR, tag, "out of memory for the references");
    kg_put32(q, (uint32_t)d->nout);
    q += 4;
    for (int o = 0; o < d->nout; o++) {
        kg_put32(q, (uint32_t)d->out_dtype[o]);
        kg_put32(q + 4, (uint32_t)weak[o]);
        kg_put64(q + 8, (uint64_t)d->out_elems[o]);
        q += 16;
    }
    for (int o = 0; o < d->nout; o++) {
        size_t n = (size_t)d->out_elems[o] * sizeof(double);
        memcpy(q, d->ref[o], n);
        memcpy(q + n, bound[o], n);
        q += 2 * n;
    }
    int rc = kg_frame_write(1, KG_OPS_REFS, tag, p, len, "verify", &e);
    free(p);
    return rc;
}

/* The Python helper's confinement, in its child before the exec. */
static int confine_python(void *arg)
{
    char why[256];
    return kg_sandbox_python_child((const kg_sandbox_opts *)arg, why, sizeof why) != 0;
}

/* The plan's ops declared in Python, registered from the folder's
 * copies (sources/op-NAME.py), and their helper started with its socket
 * on the descriptor the sandbox keeps. */
static int start_python(const kg_opserver_opts *o, const kg_plan *plan, kg_err *err)
{
    int any = 0;
    for (int k = 0; k < plan->nops; k++) {
        if (!plan->ops[k].python) continue;
        any = 1;
        int rc = kg_pyops_register(plan, k, o->folder, err);
        if (rc != KG_OK) return rc;
    }
    if (!any) return KG_OK;
    /* the server's private folder, a kgate-made environment, the
     * server's limits and hidden folders */
    static char store[2048];
    static char *envp[16];
    static kg_sandbox_opts so;
    const char *dir = o->dir;
    if (kg_sandbox_env(dir, store, sizeof store, envp, 16) < 0)
        return kg_errorf(err, KG_EINTERNAL, "the Python helper's environment does not fit");
    so = (kg_sandbox_opts){ .parent = getpid(), .dir = dir, .mem_bytes = o->mem_bytes, .cpu_s = o->cpu_s,
                            .hide = o->hide };
    kg_pyops_conf pc = { .python = o->python, .limit_s = 300, .confine = 1, .hook = confine_python, .arg = &so,
                         .env = envp };
    kg_pyops_configure(&pc);
    return kg_pyops_start(KG_SANDBOX_SOCK_FD, err);
}

int kg_opserver_main(const kg_opserver_opts *o)
{
    char path[KG_PATH_MAX + 32], *text = NULL, why[512];
    kg_plan *plan = NULL;
    kg_err e = { 0 };
    int status = 1;
    signal(SIGPIPE, SIG_IGN);
    /* the plan and the op modules, built before any op code can run */
    snprintf(path, sizeof path, "%s/plan.kg", o->folder);
    kg_settings s = *kg_settings_defaults();
    s.cc = o->cc;
    s.include_dir = o->include_dir;
    if (kg_read_file(path, &text, NULL, &e) != KG_OK ||
        kg_plan_parse_recorded(text, strlen(text), path, o->folder, &plan, &e) != KG_OK ||
        kg_ops_build(plan, &s, o->folder, o->dir, &e) != KG_OK) {
        say(KG_OPS_ERROR, 0, e.msg);
        goto done;
    }
    /* the ops declared in Python: their helper started now, before the
     * server confines itself (it can start no process after) */
    if (start_python(o, plan, &e) != KG_OK) {
        say(KG_OPS_ERROR, 0, e.msg);
        goto done;
    }
    /* confined, then loaded: the modules' constructors run inside */
    unsigned active = 0;
    kg_sandbox_opts so = { .parent = o->parent, .dir = o->dir, .mem_bytes = o->mem_bytes, .cpu_s = o->cpu_s,
                           .on_violation = report_violation, .hide = o->hide, .blas = 1,
                           .pyhelper = (pid_t)kg_pyops_pid() };
    if (kg_sandbox_enter(&so, &active, why, sizeof why) != 0) {
        say(KG_OPS_ERROR, 0, why);
        goto done;
    }
    if (kg_ops_load_built(plan, o->dir, &e) != KG_OK) {
        say(KG_OPS_ERROR, 0, e.msg);
        goto done;
    }
    if (kg_sandbox_lock(&active, why, sizeof why) != 0) {
        say(KG_OPS_ERROR, 0, why);
        goto done;
    }
    kg_sandbox_text(active, why, sizeof why);
    if (say(KG_OPS_READY, 0, why) != KG_OK) goto done;
    served sv = { .plan = plan, .kase = -1 };
    for (;;) {
        kg_frame_hdr h;
        char *req = NULL;
        kg_err re = { 0 };
        if (kg_frame_read(0, REQ_BYTES, -1, &h, &req, "verify", &re) != KG_OK) {
            /* the client's end of the pipe closed: done */
            status = 0;
            break;
        }
        int rc = h.kind == KG_OPS_REF && h.len == REQ_BYTES ? answer(&sv, h.tag, (const unsigned char *)req)
                                                          : say(KG_OPS_ERROR, h.tag, "not a request");
        free(req);
        if (rc != KG_OK) break;
    }
    kg_oracle_release(&sv.d);
done:
    kg_plan_free(plan);
    free(text);
    return status;
}

/* ---- the client ---- */

struct kg_opclient {
    kg_opclient_opts o;
    char exe[PATH_MAX];
    char folder[PATH_MAX];      /* the folder the running server serves; "" none */
    char dir[PATH_MAX];         /* the server's private folder; "" none */
    pid_t pid;                  /* 0: none */
    int req, rep;               /* the pipes' ends: requests out, replies in */
    uint32_t seq;
    char dead[512];             /* the server failed: why ("" while it serves) */
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Removes the files of the private folder (the modules) and the folder. */
static void remove_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (d != NULL) {
        struct dirent *e;
        while ((e = readdir(d)) != NULL)
            if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) unlinkat(dirfd(d), e->d_name, 0);
        closedir(d);
    }
    rmdir(dir);
}

/* Kills what is left of the server, reaps it; *status its wait status. */
static void stop_server(kg_opclient *c, int kill_it, int *status)
{
    int st = 0;
    if (c->req >= 0) close(c->req);
    if (c->rep >= 0) close(c->rep);
    c->req = c->rep = -1;
    if (c->pid > 0) {
        /* its input closed, an honest server ends by itself */
        double until = now_s() + (kill_it ? 0 : 2.0);
        pid_t w;
        while ((w = waitpid(c->pid, &st, WNOHANG)) == 0 && now_s() < until) usleep(2000);
        if (w == 0) {
            kill(-c->pid, SIGKILL);
            kill(c->pid, SIGKILL);
            while (waitpid(c->pid, &st, 0) < 0 && errno == EINTR) {}
        }
    }
    c->pid = 0;
    if (status != NULL) *status = st;
    if (c->dir[0] != '\0') remove_dir(c->dir);
    c->dir[0] = '\0';
    c->folder[0] = '\0';
}

/* The server failed: killed and reaped, and why recorded (with how it
 * ended) in c->dead and err. */
static int failed(kg_opclient *c, const char *what, kg_err *err)
{
    int st = 0;
    stop_server(c, 1, &st);
    char how[96] = "";
    if (WIFEXITED(st)) snprintf(how, sizeof how, " (it exited with status %d)", WEXITSTATUS(st));
    else if (WIFSIGNALED(st)) snprintf(how, sizeof how, " (it died of signal %d, %s)", WTERMSIG(st),
                                       strsignal(WTERMSIG(st)));
    if (WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS && strstr(what, "forbidden") == NULL)
        /* denied where its handler could not run (a call made with every
         * signal blocked, as posix_spawn makes its clone) */
        snprintf(c->dead, sizeof c->dead, "the op server made a forbidden system call (the filter ended it before "
                 "it could name the call)");
    else
        snprintf(c->dead, sizeof c->dead, "the op server %s%s", what, strstr(what, "forbidden") ? "" : how);
    return kg_errorf(err, KG_EIO, "%s", c->dead);
}

/* Reads one reply frame of at most max bytes before the deadline. */
static int read_reply(kg_opclient *c, uint64_t max, double limit_s, kg_frame_hdr *h, char **payload, kg_err *err)
{
    kg_err e = { 0 };
    uint32_t cap = max > KG_FRAME_MAX ? KG_FRAME_MAX : (uint32_t)max;
    if (cap < 8) cap = 8;
    if (kg_frame_read(c->rep, cap > TEXT_MAX ? cap : TEXT_MAX, limit_s, h, payload, "the op server", &e) != KG_OK) {
        char what[600];
        snprintf(what, sizeof what, "%.500s", strstr(e.msg, "ended") ? "ended without answering" : e.msg);
        if (strstr(e.msg, "did not answer"))
            snprintf(what, sizeof what, "did not answer within %.0f s (an endless loop?)", limit_s);
        return failed(c, what, err);
    }
    if (h->kind == KG_OPS_VIOLATION && h->len == 4) {
        char name[64], what[160];
        kg_sandbox_syscall_name((int)kg_get32((const unsigned char *)*payload), name, sizeof name);
        free(*payload);
        *payload = NULL;
        snprintf(what, sizeof what, "made a forbidden system call (%s)", name);
        return failed(c, what, err);
    }
    if ((h->kind == KG_OPS_ERROR || h->kind == KG_OPS_READY) && h->len > TEXT_MAX) {
        free(*payload);
        *payload = NULL;
        return failed(c, "sent a text frame over its limit", err);
    }
    if (h->kind != KG_OPS_ERROR && h->kind != KG_OPS_READY && h->len > cap) {
        free(*payload);
        *payload = NULL;
        return failed(c, "sent a reply larger than the folder's outputs", err);
    }
    return KG_OK;
}

static int start_server(kg_opclient *c, const char *folder, kg_err *err)
{
    char dir[] = "/tmp/kgate-opserver.XXXXXX", parent[32], store[2 * PATH_MAX + 512], hide[3 * PATH_MAX + 4];
    char *envp[16], abs_folder[PATH_MAX];
    if (realpath(folder, abs_folder) == NULL)
        return kg_errorf(err, KG_EIO, "%s: %s", folder, strerror(errno));
    if (mkdtemp(dir) == NULL) return kg_errorf(err, KG_EIO, "cannot make the op server's folder: %s", strerror(errno));
    snprintf(c->dir, sizeof c->dir, "%s", dir);
    if (kg_sandbox_env(dir, store, sizeof store, envp, 16) < 0)
        return kg_errorf(err, KG_EINTERNAL, "the op server's environment does not fit");
    const kg_settings *s = c->o.settings;
    snprintf(parent, sizeof parent, "%ld", (long)getpid());
    /* the key folders and $HOME, but never "/" nor a folder that holds the
     * server's own (it loads its modules from there) */
    const char *cand[] = { s->key_dir, s->hide_dir, s->home_dir };
    size_t hl = 0;
    hide[0] = '\0';
    for (size_t i = 0; i < sizeof cand / sizeof cand[0]; i++) {
        const char *h = cand[i];
        size_t n = h != NULL ? strlen(h) : 0;
        while (n > 1 && h[n - 1] == '/') n--;
        if (n == 0 || h[0] != '/' || (n == 1) || (strncmp(dir, h, n) == 0 && dir[n] == '/') || strchr(h, ':') != NULL)
            continue;
        int w = snprintf(hide + hl, sizeof hide - hl, "%s%.*s", hl ? ":" : "", (int)n, h);
        if (w > 0 && (size_t)w < sizeof hide - hl) hl += (size_t)w;
    }
    char *argv[] = { c->exe, (char *)"opserver", (char *)"--folder", abs_folder, (char *)"--dir", dir,
                     (char *)"--parent", parent, (char *)"--hide", hide, (char *)"--cc",
                     (char *)(s->cc != NULL ? s->cc : ""), (char *)"--include",
                     (char *)(s->include_dir != NULL ? s->include_dir : ""), (char *)"--python",
                     (char *)(s->python != NULL ? s->python : ""), NULL };
    int in[2] = { -1, -1 }, out[2] = { -1, -1 };
    if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0) {
        int er = errno;
        for (int i = 0; i < 2; i++) {
            if (in[i] >= 0) close(in[i]);
            if (out[i] >= 0) close(out[i]);
        }
        return kg_errorf(err, KG_EIO, "cannot make the op server's pipes: %s", strerror(er));
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        int er = errno;
        close(in[0]); close(in[1]); close(out[0]); close(out[1]);
        return kg_errorf(err, KG_EIO, "cannot start the op server: %s", strerror(er));
    }
    if (pid == 0) {
        setpgid(0, 0);
        int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
        if (dup2(in[0], 0) < 0 || dup2(out[1], 1) < 0 || null < 0 || dup2(null, 2) < 0) _exit(127);
        /* kgate's own image, whatever its path names now (util.h) */
        const kg_settings *set = c->o.settings;
        execve(set->armhost_exe != NULL && set->armhost_exe[0] != '\0' ? c->exe : KG_SELF_EXEC, argv, envp);
        _exit(127);
    }
    setpgid(pid, pid);
    close(in[0]);
    close(out[1]);
    c->pid = pid;
    c->req = in[1];
    c->rep = out[0];
    snprintf(c->folder, sizeof c->folder, "%s", folder);
    c->dead[0] = '\0';
    /* READY, or why not */
    kg_frame_hdr h;
    char *p = NULL;
    double limit = c->o.start_s > 0 ? c->o.start_s : 120.0;
    int rc = read_reply(c, TEXT_MAX, limit, &h, &p, err);
    if (rc != KG_OK) return rc;
    if (h.kind == KG_OPS_READY && h.tag == 0) {
        free(p);
        return KG_OK;
    }
    char what[TEXT_MAX + 64];
    if (h.kind == KG_OPS_ERROR) snprintf(what, sizeof what, "could not start: %s", p);
    else snprintf(what, sizeof what, "sent a frame of kind %u before it was ready", h.kind);
    free(p);
    return failed(c, what, err);
}

/* The REFS payload p (len bytes) into out. */
static int take_refs(kg_opclient *c, const unsigned char *p, size_t len, kg_refs *out, kg_err *err)
{
    memset(out, 0, sizeof *out);
    uint32_t nout = len >= 4 ? kg_get32(p) : 0;
    size_t need = 4 + 16 * (size_t)nout;
    if (len < 4 || nout < 1 || nout > KG_MAX_OUT || len < need)
        return failed(c, "sent a malformed reply (its outputs)", err);
    for (uint32_t o = 0; o < nout; o++) {
        const unsigned char *h = p + 4 + 16 * o;
        uint32_t dt = kg_get32(h), weak = kg_get32(h + 4);
        uint64_t n = kg_get64(h + 8);
        if (dt >= KG_DT_COUNT || weak > 1 || n > (len - need) / 16)
            return failed(c, "sent a malformed reply (an output's dtype, flag or size)", err);
        out->out[o].dtype = (kg_dtype)dt;
        out->out[o].weak = (int)weak;
        out->out[o].elems = (int64_t)n;
        need += 16 * (size_t)n;
    }
    if (need != len) return failed(c, "sent a malformed reply (its length)", err);
    out->nout = (int)nout;
    const unsigned char *q = p + 4 + 16 * (size_t)nout;
    for (int o = 0; o < out->nout; o++) {
        size_t n = (size_t)out->out[o].elems;
        out->out[o].ref = malloc(n ? n * sizeof(double) : 1);
        out->out[o].bound = malloc(n ? n * sizeof(double) : 1);
        if (out->out[o].ref == NULL || out->out[o].bound == NULL) {
            kg_refs_free(out);
            return kg_errorf(err, KG_ENOMEM, "out of memory for the references");
        }
        memcpy(out->out[o].ref, q, n * sizeof(double));
        memcpy(out->out[o].bound, q + n * sizeof(double), n * sizeof(double));
        q += 2 * n * sizeof(double);
    }
    return KG_OK;
}

static int client_get(void *ctx, const char *dir, int kase, uint64_t seed, const kg_contract *ct,
                      uint64_t max_bytes, kg_refs *out, kg_err *err)
{
    kg_opclient *c = ctx;
    memset(out, 0, sizeof *out);
    if (c->dead[0] != '\0' && strcmp(c->folder, dir) == 0) return kg_errorf(err, KG_EIO, "%s", c->dead);
    if (c->pid == 0 || strcmp(c->folder, dir) != 0) {
        stop_server(c, 0, NULL);
        int rc = start_server(c, dir, err);
        if (rc != KG_OK) {
            snprintf(c->folder, sizeof c->folder, "%s", dir);
            return rc == KG_EINPUT ? KG_EIO : rc;
        }
    }
    unsigned char req[REQ_BYTES];
    uint64_t tb;
    memcpy(&tb, &ct->tolerance, sizeof tb);
    kg_put32(req, (uint32_t)kase);
    kg_put32(req + 4, (uint32_t)ct->precision);
    kg_put64(req + 8, tb);
    kg_put64(req + 16, seed);
    uint32_t tag = ++c->seq;
    kg_err we = { 0 };
    if (kg_frame_write(c->req, KG_OPS_REF, tag, req, sizeof req, "the op server", &we) != KG_OK) {
        /* it is gone: its last frame (a forbidden call) says why, if any */
        kg_frame_hdr h;
        char *p = NULL;
        int rc = read_reply(c, max_bytes, 1.0, &h, &p, err);
        free(p);
        return rc != KG_OK ? rc : failed(c, "stopped reading requests", err);
    }
    kg_frame_hdr h;
    char *p = NULL;
    double limit = c->o.request_s > 0 ? c->o.request_s : 300.0;
    int rc = read_reply(c, max_bytes, limit, &h, &p, err);
    if (rc != KG_OK) return rc;
    if (h.tag != tag || (h.kind != KG_OPS_REFS && h.kind != KG_OPS_ERROR)) {
        free(p);
        return failed(c, "sent a frame nobody asked for", err);
    }
    if (h.kind == KG_OPS_ERROR) {
        rc = kg_errorf(err, KG_EINPUT, "%s", p);
        free(p);
        return rc;
    }
    rc = take_refs(c, (const unsigned char *)p, h.len, out, err);
    free(p);
    return rc;
}

int kg_opclient_new(const kg_opclient_opts *o, kg_opclient **out, kg_err *err)
{
    *out = NULL;
    kg_opclient *c = calloc(1, sizeof *c);
    if (c == NULL) return kg_errorf(err, KG_ENOMEM, "out of memory");
    c->o = *o;
    if (c->o.settings == NULL) c->o.settings = kg_settings_defaults();
    c->req = c->rep = -1;
    int rc = KG_OK;
    if (c->o.settings->armhost_exe != NULL && c->o.settings->armhost_exe[0] != '\0')
        snprintf(c->exe, sizeof c->exe, "%s", c->o.settings->armhost_exe);
    else
        rc = kg_self_exe(c->exe, sizeof c->exe, err);
    if (rc != KG_OK) {
        free(c);
        return rc;
    }
    *out = c;
    return KG_OK;
}

void kg_opclient_free(kg_opclient *c)
{
    if (c == NULL) return;
    stop_server(c, 0, NULL);
    free(c);
}

kg_ref_source kg_opclient_source(kg_opclient *c)
{
    kg_ref_source s = { .ctx = c, .get = client_get };
    return s;
}

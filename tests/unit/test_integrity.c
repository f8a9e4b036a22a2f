/* test_integrity.c: device lock, quiet-host scan, frozen-plan diff, fault
 * injected atomic writes, folder listing and SHA256SUMS, saved outputs,
 * the rows parsed from memory, the worker's frames and writes through a
 * folder descriptor, what is read from a folder (links and special files
 * refused, size caps) and lock files that cannot be hijacked. */
#include <fcntl.h>
#include <signal.h>
#include <time.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include "run/channel.h"
#include "plan/frozen.h"
#include "kgate/evidence.h"
#include "run/lock.h"
#include "base/safefs.h"
#include <sys/stat.h>
#include "run/quiet.h"
#include "check.h"
#include "base/util.h"

static kg_plan *parse(const char *text)
{
    kg_plan *p = NULL;
    kg_err err = { 0 };
    int rc = kg_plan_parse(text, strlen(text), "mem.kg", ".", &p, &err);
    CHECK_MSG(rc == KG_OK, "%s", err.msg);
    return p;
}

static const char plan_a[] =
    "[campaign]\nbackend = fake\nsamples = 5\n"
    "[case a]\nop = rowsum\ndtype = f32\nM = 2\nN = 8\n"
    "[arm base]\nop = rowsum\nrole = baseline\nsource = x.c\n";

static void test_lock(const char *tmp)
{
    char dir[512];
    snprintf(dir, sizeof dir, "%s/locks", tmp);
    kg_settings s = *kg_settings_defaults();
    s.lock_dir = dir;
    char name[64];
    kg_lock_name("cpu", "whatever", name, sizeof name);
    CHECK(strcmp(name, "cpu") == 0);
    kg_lock_name("fake", "", name, sizeof name);
    CHECK(strcmp(name, "fake") == 0);
    kg_lock_name("cuda", "NVIDIA H200 (sm_90, UUID GPU-1a2b3c4d-0000-1111-2222-333344445555)", name, sizeof name);
    CHECK_MSG(strcmp(name, "GPU-1a2b3c4d-0000-1111-2222-333344445555") == 0, "%s", name);
    kg_lock_name("cuda", "no uuid", name, sizeof name);
    CHECK(strcmp(name, "gpu") == 0);

    int fd1 = -1, fd2 = -1;
    kg_err err = { 0 };
    CHECK(kg_lock_acquire(&s, "unit", 0, 0, 0, &fd1, &err) == KG_OK);
    CHECK(fd1 >= 0);
    /* flock locks belong to open files: a second open of the same lock,
     * even in this process, must not get it */
    kg_err err2 = { 0 };
    CHECK(kg_lock_acquire(&s, "unit", 0, 0.2, 0, &fd2, &err2) == KG_EIO);
    CHECK(fd2 == -1);
    CHECK_STR_CONTAINS(err2.msg, "in use by another campaign");
    char pid[32];
    snprintf(pid, sizeof pid, "pid %ld", (long)getpid());
    CHECK_STR_CONTAINS(err2.msg, pid);
    /* another device is independent */
    int fd3 = -1;
    CHECK(kg_lock_acquire(&s, "unit-other", 0, 0, 0, &fd3, &err) == KG_OK);
    kg_lock_release(fd3);
    kg_lock_release(fd1);
    kg_err err3 = { 0 };
    CHECK(kg_lock_acquire(&s, "unit", 0, 0, 0, &fd2, &err3) == KG_OK);
    kg_lock_release(fd2);
    kg_lock_release(-1);
}

/* The supervisor's wait in miniature (supervisor.c, run_worker): a poll
 * every KG_QUIET_POLL_S, judged by kg_quiet_judge.  KG_OK when quiet, 1
 * when it gave up (why: the last reason). */
static int wait_quiet(kg_quiet *q, double window_s, double give_up_s, double *waited, char *why, size_t cap,
                      kg_err *err)
{
    (void)err;
    double t0 = kg_mono_s();
    char w[512], said[512] = "";
    for (;;) {
        double now = kg_mono_s();
        *waited = now - t0;
        int bad = kg_quiet_poll(q, -1, w, sizeof w);
        if (bad) kg_quiet_say(w, said, sizeof said, 0, 0, -1);
        int v = kg_quiet_judge(q, bad, now, window_s, now - t0, give_up_s);
        if (v == KG_QUIET_GO) return KG_OK;
        if (v == KG_QUIET_GIVE_UP) {
            snprintf(why, cap, "%s", w);
            return 1;
        }
        struct timespec ts = { 0, (long)(KG_QUIET_POLL_S * 1e9) };
        nanosleep(&ts, NULL);
    }
}

static void test_quiet(void)
{
    kg_quiet q = { 0 };
    char why[512] = "";
    kg_quiet_free(&q);
    kg_quiet_init(&q, NULL, "", 0, "cpu", "host", 30, NULL);
    CHECK(kg_quiet_scan(&q, -1, why, sizeof why) == 0);
    /* a process of a name of our own: found by its exact name, not by a
     * prefix of it */
    int pipefd[2];
    CHECK(pipe(pipefd) == 0);
    pid_t child = fork();
    if (child == 0) {
        char name[16], c;
        snprintf(name, sizeof name, "kgq%05d", (int)getpid() % 100000);
        prctl(PR_SET_NAME, name, 0, 0, 0);
        close(pipefd[1]);
        while (read(pipefd[0], &c, 1) > 0) {}   /* until the parent closes */
        _exit(0);
    }
    CHECK(child > 0);
    close(pipefd[0]);
    if (child > 0) {
        char name[16], list[64], expect[48];
        snprintf(name, sizeof name, "kgq%05d", (int)child % 100000);
        snprintf(expect, sizeof expect, "(pid %d)", (int)child);
        /* wait until the child has taken its name */
        char path[64], comm[32] = "";
        snprintf(path, sizeof path, "/proc/%d/comm", (int)child);
        for (int i = 0; i < 200 && strncmp(comm, name, strlen(name)) != 0; i++) {
            FILE *cf = fopen(path, "r");
            if (cf != NULL) {
                if (fgets(comm, sizeof comm, cf) == NULL) comm[0] = '\0';
                fclose(cf);
            }
            if (strncmp(comm, name, strlen(name)) != 0) usleep(5000);
        }
        snprintf(list, sizeof list, "nothing-here, %s", name);
        kg_quiet_free(&q);
    kg_quiet_init(&q, NULL, list, 0, "cpu", "host", 30, NULL);
        CHECK(kg_quiet_scan(&q, -1, why, sizeof why) == 1);
        CHECK_STR_CONTAINS(why, name);
        CHECK_STR_CONTAINS(why, expect);
        /* the process itself is ignored when asked */
        CHECK(kg_quiet_scan(&q, (int)child, why, sizeof why) == 0);
        /* a name that only starts like it does not match */
        snprintf(list, sizeof list, "%.*s", (int)strlen(name) - 1, name);
        kg_quiet_free(&q);
    kg_quiet_init(&q, NULL, list, 0, "cpu", "host", 30, NULL);
        CHECK(kg_quiet_scan(&q, -1, why, sizeof why) == 0);
        close(pipefd[1]);
        waitpid(child, NULL, 0);
    }
    /* defaults: compilers judged on a GPU's host, observed and recorded
     * (not judged) on the cpu backend, where a compiler is other work
     * like any; nothing on fake */
    kg_quiet_free(&q);
    kg_quiet_init(&q, NULL, NULL, 0, "cuda", "host", 30, NULL);
    CHECK(strcmp(q.forbid, KG_QUIET_DEFAULT_FORBID) == 0);
    CHECK(q.observe[0] == '\0');
    kg_quiet_free(&q);
    kg_quiet_init(&q, NULL, NULL, 0, "cpu", "host", 30, NULL);
    CHECK(q.forbid[0] == '\0');
    CHECK(strcmp(q.observe, KG_QUIET_DEFAULT_FORBID) == 0);
    /* the host's other work, in cores over a window: busy ticks (user,
     * nice, system, irq, softirq) less kgate's own */
    unsigned long long a[8] = { 100, 0, 50, 1000, 0, 0, 0, 0 }, b[8] = { 250, 0, 100, 1050, 0, 0, 0, 0 };
    CHECK(fabs(kg_quiet_foreign_cores(a, b, 0, 1.0, 100) - 2.0) < 1e-9);
    CHECK(fabs(kg_quiet_foreign_cores(a, b, 100, 1.0, 100) - 1.0) < 1e-9);
    CHECK(kg_quiet_foreign_cores(a, b, 500, 1.0, 100) == 0);
    kg_quiet_free(&q);
    kg_quiet_init(&q, NULL, NULL, 0, "fake", "host", 30, NULL);
    CHECK(q.forbid[0] == '\0');
    /* no quiet window declared: no default list */
    kg_quiet_free(&q);
    kg_quiet_init(&q, NULL, NULL, 0, "cpu", "host", 0, NULL);
    CHECK(q.forbid[0] == '\0');
    /* the settings' list (KGATE_FORBID) when the options give none */
    kg_settings s = *kg_settings_defaults();
    s.forbid = "x,y";
    kg_quiet_free(&q);
    kg_quiet_init(&q, &s, NULL, 0, "cpu", "host", 30, NULL);
    CHECK(strcmp(q.forbid, "x,y") == 0);
    kg_quiet_free(&q);
    kg_quiet_init(&q, &s, "z", 0, "cpu", "host", 30, NULL);
    CHECK(strcmp(q.forbid, "z") == 0);
    /* the load bound */
    double l1 = 0;
    FILE *fp = fopen("/proc/loadavg", "r");
    if (fp != NULL && fscanf(fp, "%lf", &l1) == 1 && l1 > 0.05) {
        kg_quiet_free(&q);
    kg_quiet_init(&q, NULL, "", l1 / 1000, "cpu", "host", 30, NULL);
        CHECK(kg_quiet_scan(&q, -1, why, sizeof why) == 1);
        CHECK_STR_CONTAINS(why, "load average");
    }
    if (fp != NULL) fclose(fp);
    kg_quiet_free(&q);
    kg_quiet_init(&q, NULL, "", 1e9, "cpu", "host", 30, NULL);
    CHECK(kg_quiet_scan(&q, -1, why, sizeof why) == 0);
    int n = -1;
    CHECK(kg_quiet_device_foreign(&q, 0, &n, why, sizeof why) == KG_EUNSUPPORTED);
    CHECK(n == 0);
    kg_err err = { 0 };
    double waited = -1;
    CHECK(wait_quiet(&q, 0, 10, &waited, why, sizeof why, &err) == KG_OK);
    CHECK(waited >= 0 && waited < 5);
    kg_quiet_free(&q);
}

/* The watch is continuous: a host quiet since the watch began needs no
 * new window, one that was not quiet waits for the whole window again;
 * a forbidden process that never leaves ends the wait with 1 (not an
 * error), naming it; each new reason is kept once for the log. */
static void test_quiet_continuous(void)
{
    kg_quiet q = { 0 };
    char why[512] = "";
    kg_err err = { 0 };
    double waited = -1;
    /* the CPU-host bounds off: other work on the test machine is not the point here */
    kg_quiet_limits off = { 0, 0, 0 };
    kg_quiet_init(&q, NULL, "kgate-test-nq", 0, "cpu", "host", 2.0, &off);
    CHECK(q.cpu != NULL);   /* the load is recorded; with the bounds off it judges nothing */
    q.quiet_since -= 10;   /* quiet for 10 s already */
    CHECK(wait_quiet(&q, 2.0, 5, &waited, why, sizeof why, &err) == KG_OK);
    CHECK(waited < 1.0);
    q.quiet_since = kg_mono_s();
    CHECK(wait_quiet(&q, 0.5, 5, &waited, why, sizeof why, &err) == KG_OK);
    CHECK(waited >= 0.45);
    pid_t child = fork();
    if (child == 0) {
        prctl(PR_SET_NAME, "kgate-test-nq");
        for (;;) pause();
    }
    CHECK(child > 0);
    struct timespec ts = { 0, 100 * 1000 * 1000 };
    nanosleep(&ts, NULL);
    CHECK(wait_quiet(&q, 0.5, 0.8, &waited, why, sizeof why, &err) == 1);
    CHECK(strstr(why, "kgate-test-nq") != NULL);
    CHECK(waited >= 0.8);
    char taken[512];
    CHECK(kg_quiet_take(&q, taken, sizeof taken) == 1);
    CHECK(strstr(taken, "kgate-test-nq") != NULL);
    CHECK(kg_quiet_take(&q, taken, sizeof taken) == 0);   /* the same reason is kept once */
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    CHECK(wait_quiet(&q, 0.3, 5, &waited, why, sizeof why, &err) == KG_OK);
    CHECK(waited >= 0.25);
    CHECK(strncmp(kg_quiet_match(&q), "not at all", 10) == 0);
    kg_quiet_free(&q);
}

/* The CPU-host verdict over one window: steal and foreign CPU against
 * their bounds, kgate's own ticks subtracted. */
static void test_quiet_cpu_judge(void)
{
    kg_quiet_limits lim = { 0.10, 0.5, 0.15 };
    char why[300] = "";
    /* user nice system idle iowait irq softirq steal, 100 Hz, 1 s on 2 cores: 200 ticks */
    unsigned long long a[8] = { 1000, 0, 500, 5000, 10, 0, 5, 100 };
    unsigned long long quiet[8] = { 1090, 0, 510, 5098, 10, 0, 5, 102 };   /* 100 busy, all kgate's */
    CHECK(kg_quiet_cpu_judge(a, quiet, 100, 1.0, 100, &lim, why, sizeof why) == 0);
    /* the same busy ticks, only 20 of them kgate's: 0.8 cores foreign */
    CHECK(kg_quiet_cpu_judge(a, quiet, 20, 1.0, 100, &lim, why, sizeof why) == 1);
    CHECK(strstr(why, "max_foreign_cpu") != NULL && strstr(why, "0.80 cores") != NULL);
    /* 30 ticks stolen while the host's work ran 120: 20% of 150 */
    unsigned long long stolen[8] = { 1110, 0, 510, 5050, 10, 0, 5, 130 };
    CHECK(kg_quiet_cpu_judge(a, stolen, 120, 1.0, 100, &lim, why, sizeof why) == 1);
    CHECK(strstr(why, "steal time 20.0%") != NULL);
    /* 2 stolen of 102: under the bound */
    unsigned long long little[8] = { 1090, 0, 510, 5096, 10, 0, 5, 102 };
    CHECK(kg_quiet_cpu_judge(a, little, 100, 1.0, 100, &lim, why, sizeof why) == 0);
    /* bounds of 0 are not judged */
    kg_quiet_limits off = { 0, 0, 0 };
    CHECK(kg_quiet_cpu_judge(a, stolen, 0, 1.0, 100, &off, why, sizeof why) == 0);
    /* the fastest core's clock: a fall of more than 15% below its highest reading is one
     * verdict, and the reference starts again from the fallen clock */
    double fmax = 0;
    CHECK(kg_quiet_freq_judge(&fmax, 3000000, 0.15) == 0 && fmax == 3000000);
    CHECK(kg_quiet_freq_judge(&fmax, 3600000, 0.15) == 0 && fmax == 3600000);
    CHECK(kg_quiet_freq_judge(&fmax, 3100000, 0.15) == 0);   /* 13.9% below: within the bound */
    CHECK(kg_quiet_freq_judge(&fmax, 3000000, 0.15) == 1 && fmax == 3000000);   /* 16.7% below */
    CHECK(kg_quiet_freq_judge(&fmax, 2990000, 0.15) == 0);   /* the same fall is not reported twice */
    CHECK(kg_quiet_freq_judge(&fmax, 1000000, 0) == 0);      /* a bound of 0 is not judged */
    /* no ticks (a counter that went backwards) is no verdict */
    CHECK(kg_quiet_cpu_judge(quiet, a, 0, 1.0, 100, &lim, why, sizeof why) == 0);
}

static void test_frozen(const char *tmp)
{
    kg_plan *a = parse(plan_a);
    char text_b[1024];
    snprintf(text_b, sizeof text_b, "%s", plan_a);
    char *s = strstr(text_b, "samples = 5");
    s[10] = '7';
    strcat(text_b, "[arm cand]\nop = rowsum\nsource = y.c\n");
    kg_plan *b = parse(text_b);
    if (a == NULL || b == NULL) { kg_plan_free(a); kg_plan_free(b); return; }
    kg_sb d = { 0 };
    kg_frozen_diff(a->canonical, b->canonical, &d);
    CHECK_STR_CONTAINS(d.buf, "[campaign] samples: 5 -> 7");
    CHECK_STR_CONTAINS(d.buf, "+ [arm cand] source = y.c");
    kg_sb_free(&d);
    kg_frozen_diff(b->canonical, a->canonical, &d);
    CHECK_STR_CONTAINS(d.buf, "- [arm cand] source = y.c");
    kg_sb_free(&d);

    char path[512];
    snprintf(path, sizeof path, "%s/a.frozen", tmp);
    kg_err err = { 0 };
    CHECK(kg_frozen_write(a, path, &err) == KG_OK);
    CHECK(kg_frozen_check(a, path, &err) == KG_OK);
    kg_err e2 = { 0 };
    CHECK(kg_frozen_check(b, path, &e2) == KG_EINPUT);
    CHECK_STR_CONTAINS(e2.msg, "samples: 5 -> 7");
    /* the frozen file re-parses to the same hash */
    kg_plan *c = NULL;
    kg_err e3 = { 0 };
    CHECK(kg_plan_load(path, &c, &e3) == KG_OK);
    if (c != NULL) CHECK(strcmp(c->hash, a->hash) == 0);
    kg_plan_free(c);
    kg_plan_free(a);
    kg_plan_free(b);
}

static void test_fault_and_sums(const char *tmp)
{
    char dir[512], path[600], *text = NULL;
    snprintf(dir, sizeof dir, "%s/folder", tmp);
    kg_err err = { 0 };
    CHECK(kg_mkdir_p(dir, &err) == KG_OK);
    snprintf(path, sizeof path, "%s/b.txt", dir);
    CHECK(kg_write_atomic(path, "old\n", 4, &err) == KG_OK);
    kg_fault_write_after(0);
    kg_err e2 = { 0 };
    CHECK(kg_write_atomic(path, "new contents\n", 13, &e2) == KG_EIO);
    kg_fault_write_after(-1);
    CHECK_STR_CONTAINS(e2.msg, "disk is full");
    CHECK(kg_read_file(path, &text, NULL, &err) == KG_OK);
    CHECK(text != NULL && strcmp(text, "old\n") == 0);
    free(text);
    char **files = NULL;
    int n = 0;
    snprintf(path, sizeof path, "%s/sub/deeper", dir);
    CHECK(kg_mkdir_p(path, &err) == KG_OK);
    snprintf(path, sizeof path, "%s/sub/deeper/c.bin", dir);
    CHECK(kg_write_atomic(path, "", 0, &err) == KG_OK);
    snprintf(path, sizeof path, "%s/a.txt", dir);
    CHECK(kg_write_atomic(path, "abc", 3, &err) == KG_OK);
    CHECK(kg_evidence_list(dir, &files, &n, &err) == KG_OK);
    /* no temporary file was left by the failed write */
    CHECK(n == 3);
    if (n == 3) {
        CHECK(strcmp(files[0], "a.txt") == 0);
        CHECK(strcmp(files[1], "b.txt") == 0);
        CHECK(strcmp(files[2], "sub/deeper/c.bin") == 0);
    }
    for (int i = 0; i < n; i++) free(files[i]);
    free(files);
    CHECK(kg_evidence_write_sums(dir, &err) == KG_OK);
    snprintf(path, sizeof path, "%s/SHA256SUMS", dir);
    CHECK(kg_read_file(path, &text, NULL, &err) == KG_OK);
    /* sha256("abc") and sha256("") */
    CHECK_STR_CONTAINS(text, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad  a.txt\n");
    CHECK_STR_CONTAINS(text, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855  sub/deeper/c.bin\n");
    free(text);
}

static void test_outputs(const char *tmp)
{
    kg_plan *p = parse(plan_a);
    if (p == NULL) return;
    float v[4] = { 1, 2, 3, 4 };
    kg_outputs o = { 0 };
    /* rows say the logical size (bytes) and digest; the blob is what is stored */
    kg_out_rec r0 = { .kase = 0, .arm = 0, .output = 0, .phase = KG_PHASE_PRE, .check = "poison0", .seed = 42,
                      .pass = 1, .max_abs = 0.5, .bytes = 64, .encoding = "ulp-zstd", .sha256 = "aa" };
    kg_out_rec r1 = { .kase = 0, .arm = 0, .output = 0, .phase = KG_PHASE_POST, .check = "fresh", .seed = 43,
                      .pass = 0, .max_abs = 2, .bytes = 64, .encoding = "ulp-zstd", .sha256 = "bb" };
    kg_outputs_keep(&o, &r0, v, sizeof v);
    kg_outputs_keep(&o, &r1, v + 2, 2 * sizeof *v);
    /* the same output of the same inputs (a second check, an A/A copy): its bytes are shared */
    kg_out_rec r2 = r0;
    snprintf(r2.check, sizeof r2.check, "poison1");
    kg_outputs_keep(&o, &r2, v, sizeof v);
    CHECK(o.n == 3 && o.len == 24 && o.v[2].offset == 0 && o.v[2].stored == 16);
    kg_err err = { 0 };
    /* the worker sends the index and the bytes; here they go to files as
     * the supervisor stores them */
    kg_sb idx = { 0 };
    kg_outputs_index(&o, p, 7, &idx);
    char path[600], *text = NULL;
    size_t len = 0;
    snprintf(path, sizeof path, "%s/outputs", tmp);
    CHECK(kg_mkdir_p(path, &err) == KG_OK);
    snprintf(path, sizeof path, "%s/outputs/proc-007.bin", tmp);
    CHECK(kg_write_atomic(path, o.data, o.len, &err) == KG_OK);
    snprintf(path, sizeof path, "%s/outputs/proc-007.csv", tmp);
    CHECK(idx.buf != NULL && kg_write_atomic(path, idx.buf, idx.len, &err) == KG_OK);
    kg_sb_free(&idx);
    kg_outputs_free(&o);
    CHECK(kg_read_file(path, &text, NULL, &err) == KG_OK);
    CHECK_STR_CONTAINS(text, "7,a,base,pre,poison0,0,42,0,64,pass,0.5,16,ulp-zstd,aa\n");
    CHECK_STR_CONTAINS(text, "7,a,base,post,fresh,0,43,16,64,fail,2,8,ulp-zstd,bb\n");
    free(text);
    /* the index reads back, strictly */
    kg_out_rec *back = NULL;
    size_t nback = 0;
    CHECK(kg_rows_read_out(path, p, 7, &back, &nback, &err) == KG_OK);
    CHECK(nback == 3);
    if (nback == 3) {
        CHECK(back[1].offset == 16 && back[1].stored == 8 && back[1].bytes == 64 && back[1].seed == 43 &&
              !back[1].pass);
        CHECK(back[1].phase == KG_PHASE_POST && strcmp(back[1].check, "fresh") == 0);
        CHECK(strcmp(back[1].encoding, "ulp-zstd") == 0 && strcmp(back[1].sha256, "bb") == 0);
    }
    free(back);
    back = NULL;
    nback = 0;
    /* an index of schema 4 and older (eleven columns): the bytes as they are */
    char opath[600];
    snprintf(opath, sizeof opath, "%s/outputs/old.csv", tmp);
    const char *old = "process,case,arm,phase,check,output,seed,offset,bytes,result,max_abs\n"
                      "7,a,base,pre,poison0,0,42,0,16,pass,0.5\n";
    CHECK(kg_write_atomic(opath, old, strlen(old), &err) == KG_OK);
    CHECK(kg_rows_read_out(opath, p, 7, &back, &nback, &err) == KG_OK);
    CHECK(nback == 1 && back != NULL && back[0].stored == 16 && strcmp(back[0].encoding, "raw") == 0 &&
          back[0].sha256[0] == '\0');
    free(back);
    back = NULL;
    nback = 0;
    /* raw rows of schema 7 and older (no cpu, process_cpu): not recorded, not pinned */
    snprintf(opath, sizeof opath, "%s/old-raw.csv", tmp);
    char oldraw[200];
    snprintf(oldraw, sizeof oldraw, "process,direction,round,arm,case,sample,ns,plan\n7,fwd,0,base,a,1,12.500,%.16s\n",
             p->hash);
    CHECK(kg_write_atomic(opath, oldraw, strlen(oldraw), &err) == KG_OK);
    kg_row *raw = NULL;
    size_t nraw = 0;
    CHECK_MSG(kg_rows_read_raw(opath, p, 7, &raw, &nraw, &err) == KG_OK, "%s", err.msg);
    CHECK(nraw == 1 && raw != NULL && raw[0].cpu == -1 && raw[0].pin_cpu == -1 && !kg_row_contaminated(&raw[0]));
    free(raw);
    CHECK(kg_rows_read_out(path, p, 6, &back, &nback, &err) == KG_EINPUT);   /* another process's file */
    CHECK_STR_CONTAINS(err.msg, "proc-007.csv:2: column process");
    free(back);
    snprintf(path, sizeof path, "%s/outputs/proc-007.bin", tmp);
    CHECK(kg_read_file(path, &text, &len, &err) == KG_OK);
    CHECK(len == 24);
    if (len == 24) CHECK(memcmp(text, v, 16) == 0 && memcmp(text + 16, v + 2, 8) == 0);
    free(text);
    kg_plan_free(p);
}

/* The strict readers over memory: the same rules as over a file, and
 * whole lines only. */
static void test_parse_memory(void)
{
    kg_plan *p = parse(plan_a);
    if (p == NULL) return;
    kg_sb sb = { 0 };
    kg_rows_begin(&sb, KG_ROWS_RAW);
    kg_row r = { .proc = 3, .dir = KG_DIR_REV, .round = 1, .arm = 0, .kase = 0, .sample = 2, .ns = 12.5, .cpu = 5,
                 .pin_cpu = 1 };
    kg_rows_put_raw(&sb, p, &r);
    kg_row *v = NULL;
    size_t n = 0;
    kg_err err = { 0 };
    CHECK(kg_rows_parse_raw("sent", sb.buf, sb.len, p, 3, &v, &n, &err) == KG_OK);
    CHECK(n == 1 && v != NULL && v[0].ns == 12.5 && v[0].round == 1);
    /* the sample's CPU and the process's: a contaminated sample reads back as one */
    CHECK(n == 1 && v != NULL && v[0].cpu == 5 && v[0].pin_cpu == 1 && kg_row_contaminated(&v[0]));
    free(v);
    v = NULL;
    n = 0;
    CHECK(kg_rows_parse_raw("sent", sb.buf, sb.len, p, 4, &v, &n, &err) == KG_EINPUT);   /* another process */
    CHECK_STR_CONTAINS(err.msg, "sent:2: column process");
    free(v);
    v = NULL;
    n = 0;
    kg_err e2 = { 0 };
    CHECK(kg_rows_parse_raw("sent", sb.buf, sb.len - 1, p, 3, &v, &n, &e2) == KG_EINPUT);   /* cut short */
    CHECK_STR_CONTAINS(e2.msg, "does not end with a newline");
    free(v);
    v = NULL;
    n = 0;
    kg_err e3 = { 0 };
    char *nul = malloc(sb.len);
    if (nul != NULL) {
        memcpy(nul, sb.buf, sb.len);
        nul[sb.len - 3] = '\0';
        CHECK(kg_rows_parse_raw("sent", nul, sb.len, p, 3, &v, &n, &e3) == KG_EINPUT);
        CHECK_STR_CONTAINS(e3.msg, "NUL");
        free(nul);
    }
    free(v);
    kg_sb_free(&sb);
    kg_plan_free(p);
}

/* Frames through a pipe: what is sent is what the supervisor's side
 * takes in, and a frame of another process breaks the protocol. */
static void test_frames(void)
{
    int fd[2];
    CHECK(pipe(fd) == 0);
    kg_err err = { 0 };
    CHECK(kg_frame_now(fd[1], 5, 1, 2, KG_NOW_TIME, 3, &err) == KG_OK);
    CHECK(kg_frame_send(fd[1], KG_FRAME_CHECKS, 5, "abc\n", 4, &err) == KG_OK);
    CHECK(kg_frame_send(fd[1], KG_FRAME_RAW, 5, "", 0, &err) == KG_OK);
    close(fd[1]);
    (void)fcntl(fd[0], F_SETFL, O_NONBLOCK);
    kg_chan c;
    kg_chan_init(&c, 5);
    CHECK(kg_chan_pump(&c, fd[0], &err) == KG_OK);
    CHECK(c.eof && c.bad[0] == '\0');
    CHECK(c.now_set && c.now_case == 1 && c.now_arm == 2 && c.now_phase == KG_NOW_TIME && c.now_round == 3);
    CHECK(c.part[KG_FRAME_CHECKS] != NULL && c.partlen[KG_FRAME_CHECKS] == 4);
    CHECK(c.part[KG_FRAME_RAW] != NULL && c.partlen[KG_FRAME_RAW] == 0);
    kg_chan_free(&c);
    close(fd[0]);
    CHECK(pipe(fd) == 0);
    CHECK(kg_frame_send(fd[1], KG_FRAME_RAW, 6, "x\n", 2, &err) == KG_OK);
    close(fd[1]);
    (void)fcntl(fd[0], F_SETFL, O_NONBLOCK);
    kg_chan_init(&c, 5);
    CHECK(kg_chan_pump(&c, fd[0], &err) == KG_OK);
    CHECK(c.bad[0] != '\0' && c.part[KG_FRAME_RAW] == NULL);
    kg_chan_free(&c);
    close(fd[0]);

    /* frames one process may not send: a NOW frame of another length, a
     * kind twice, a kind there is none of, bytes that are not a frame */
    static const struct {
        int kind;
        const char *data;
        size_t len;
        const char *why;
    } bad[] = {
        { KG_FRAME_NOW, "0123456789ab", 12, "a NOW frame of 12 bytes" },
        { KG_FRAME_CHECKS, "abc\n", 4, "a second frame of kind" },
        { KG_FRAME_NKINDS, "", 0, "not one process 5 sends" },
        { 0, "", 0, "not one process 5 sends" },
        { -1, "no frame\n", 9, "not a kgate frame" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CHECK(pipe(fd) == 0);
        kg_err_clear(&err);
        CHECK(kg_frame_send(fd[1], KG_FRAME_CHECKS, 5, "abc\n", 4, &err) == KG_OK);
        if (bad[i].kind >= 0) CHECK(kg_frame_send(fd[1], bad[i].kind, 5, bad[i].data, bad[i].len, &err) == KG_OK);
        else CHECK(write(fd[1], bad[i].data, bad[i].len) == (ssize_t)bad[i].len);
        CHECK(kg_frame_send(fd[1], KG_FRAME_RAW, 5, "x\n", 2, &err) == KG_OK);
        (void)fcntl(fd[0], F_SETFL, O_NONBLOCK);
        kg_chan_init(&c, 5);
        CHECK(kg_chan_pump(&c, fd[0], &err) == KG_OK);
        CHECK_STR_CONTAINS(c.bad, bad[i].why);
        CHECK(c.part[KG_FRAME_CHECKS] != NULL && c.part[KG_FRAME_RAW] == NULL);
        /* a broken worker's pipe is drained, so that it never blocks on a
         * full pipe: 1 MiB more, none of it kept */
        char junk[4096];
        memset(junk, 'j', sizeof junk);
        (void)fcntl(fd[1], F_SETFL, O_NONBLOCK);
        for (int k = 0; k < 256; k++) {
            CHECK(write(fd[1], junk, sizeof junk) == (ssize_t)sizeof junk);
            if (k % 8 == 7) CHECK(kg_chan_pump(&c, fd[0], &err) == KG_OK);
        }
        close(fd[1]);
        CHECK(kg_chan_pump(&c, fd[0], &err) == KG_OK && c.eof);
        CHECK(c.in.len - c.in.at == 0 && c.part[KG_FRAME_RAW] == NULL);
        kg_chan_free(&c);
        close(fd[0]);
    }
}

/* Writes through a folder descriptor: a temporary planted as a link is
 * removed, never followed, and a name with a '/' is refused. */
static void test_write_at(const char *tmp)
{
    char path[600], target[600], *text = NULL;
    snprintf(target, sizeof target, "%s/outside", tmp);
    snprintf(path, sizeof path, "%s/at.txt.tmp.%ld", tmp, (long)getpid());
    FILE *fp = fopen(target, "w");
    if (fp != NULL) { fputs("keep\n", fp); fclose(fp); }
    CHECK(symlink(target, path) == 0);
    int dfd = open(tmp, O_RDONLY | O_DIRECTORY);
    CHECK(dfd >= 0);
    kg_err err = { 0 };
    CHECK(kg_write_atomic_at(dfd, "at.txt", NULL, "new\n", 4, &err) == KG_OK);
    CHECK(kg_read_file(target, &text, NULL, &err) == KG_OK);
    if (text != NULL) CHECK(strcmp(text, "keep\n") == 0);
    free(text);
    text = NULL;
    snprintf(path, sizeof path, "%s/at.txt", tmp);
    CHECK(kg_read_file(path, &text, NULL, &err) == KG_OK);
    if (text != NULL) CHECK(strcmp(text, "new\n") == 0);
    free(text);
    kg_err e2 = { 0 };
    CHECK(kg_write_atomic_at(dfd, "a/b", NULL, "x", 1, &e2) == KG_EINTERNAL);
    close(dfd);
}

/* kgate's own processes by identity (quiet.c): the caller and what
 * descends from it are kgate's, its parent and init are not, and a pid
 * this namespace does not have says so. */
static void test_descends(void)
{
    long self = (long)getpid();
    CHECK(kg_proc_descends(self, self) == 1);
    CHECK(kg_proc_descends((long)getppid(), self) == 0);
    CHECK(kg_proc_descends(1, self) == 0);
    CHECK(kg_proc_descends(2147483000L, self) == -1);
    /* fds: the middle child says the grandchild's pid; hold: the grandchild
     * waits on it until the checks are done */
    int fds[2], hold[2];
    CHECK(pipe(fds) == 0 && pipe(hold) == 0);
    pid_t child = fork();
    if (child == 0) {
        /* a grandchild, so the walk goes up more than one parent */
        close(fds[0]);
        pid_t g = fork();
        if (g == 0) {
            char c;
            close(fds[1]);
            close(hold[1]);
            if (read(hold[0], &c, 1) < 0) _exit(1);
            _exit(0);
        }
        close(hold[0]);
        close(hold[1]);
        char buf[32];
        int n = snprintf(buf, sizeof buf, "%ld\n", (long)g);
        if (write(fds[1], buf, (size_t)n) != n) _exit(1);
        close(fds[1]);
        waitpid(g, NULL, 0);
        _exit(0);
    }
    close(fds[1]);
    close(hold[0]);
    char buf[32] = "";
    ssize_t n = read(fds[0], buf, sizeof buf - 1);
    long g = n > 0 ? strtol(buf, NULL, 10) : -1;
    CHECK_MSG(g > 0 && kg_proc_descends(g, self) == 1, "grandchild %ld descends from %ld", g, self);
    CHECK(kg_proc_descends(self, (long)child) == 0);
    char stc = 0;
    long pp = 0;
    CHECK(kg_proc_stat((long)child, &stc, &pp) == 0 && pp == self && stc != 0);
    /* the CPU a process ran on last, and that CPU's steal (the arm host's
     * steal credit, docs/cpu-backend.md): this process runs on one of
     * this machine's CPUs, whose /proc/stat line has a steal column */
    int cpu = kg_proc_last_cpu(self);
    long ncpu = sysconf(_SC_NPROCESSORS_CONF);
    CHECK_MSG(cpu >= 0 && (ncpu <= 0 || cpu < ncpu), "last CPU %d of %ld", cpu, ncpu);
    double tick = 0, st = kg_proc_steal_cpu_ns(cpu, &tick), all = kg_proc_steal_ns(NULL);
    CHECK_MSG(st >= 0 && tick > 0 && st <= all + tick, "cpu%d steal %g ns of the machine's %g", cpu, st, all);
    CHECK(kg_proc_steal_cpu_ns(1 << 22, NULL) < 0 && kg_proc_steal_cpu_ns(-1, NULL) < 0);
    CHECK(kg_proc_last_cpu(-5) < 0);
    close(hold[1]);   /* the grandchild reads end of file and ends */
    close(fds[0]);
    waitpid(child, NULL, 0);
}

static void put(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (f != NULL) { fputs(text, f); fclose(f); }
}

/* A lock file is never followed, never another file's second name, never a
 * FIFO; a new one is 0644; an existing one is not truncated; a lock folder
 * anyone may write without the sticky bit is refused. */
static void test_lock_hygiene(const char *tmp)
{
    char dir[512], victim[600], path[700];
    kg_settings s = *kg_settings_defaults();
    snprintf(dir, sizeof dir, "%s/locks-h", tmp);
    CHECK(mkdir(dir, 0755) == 0);
    s.lock_dir = dir;
    snprintf(victim, sizeof victim, "%s/victim.txt", tmp);
    put(victim, "victim\n");
    CHECK(chmod(victim, 0600) == 0);
    int fd = -1;
    kg_err e1 = { 0 }, e2 = { 0 }, e3 = { 0 }, e4 = { 0 }, e5 = { 0 };
    snprintf(path, sizeof path, "%s/sym.lock", dir);
    CHECK(symlink(victim, path) == 0);
    CHECK(kg_lock_acquire(&s, "sym", 0, 0, 0, &fd, &e1) == KG_EINPUT && fd == -1);
    CHECK_STR_CONTAINS(e1.msg, "symbolic link");
    snprintf(path, sizeof path, "%s/hard.lock", dir);
    CHECK(link(victim, path) == 0);
    CHECK(kg_lock_acquire(&s, "hard", 0, 0, 0, &fd, &e2) == KG_EINPUT && fd == -1);
    CHECK_STR_CONTAINS(e2.msg, "more than one");
    snprintf(path, sizeof path, "%s/fifo.lock", dir);
    CHECK(mkfifo(path, 0644) == 0);
    CHECK(kg_lock_acquire(&s, "fifo", 0, 0, 0, &fd, &e3) == KG_EINPUT && fd == -1);
    CHECK_STR_CONTAINS(e3.msg, "a FIFO");
    char *text = NULL;
    CHECK(kg_read_file(victim, &text, NULL, NULL) == KG_OK && text != NULL && strcmp(text, "victim\n") == 0);
    free(text);
    struct stat st;
    CHECK(stat(victim, &st) == 0 && (st.st_mode & 07777) == 0600);
    /* a new lock file: 0644 whatever the umask; an old one keeps its length */
    mode_t um = umask(077);
    CHECK(kg_lock_acquire(&s, "new", 0, 0, 0, &fd, &e4) == KG_OK);
    umask(um);
    snprintf(path, sizeof path, "%s/new.lock", dir);
    CHECK(stat(path, &st) == 0 && (st.st_mode & 07777) == 0644);
    kg_lock_note_worker(fd, 12345);
    kg_lock_note_worker(fd, 0);
    kg_lock_release(fd);
    snprintf(path, sizeof path, "%s/old.lock", dir);
    put(path, "0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000\n");
    CHECK(kg_lock_acquire(&s, "old", 0, 0, 0, &fd, &e4) == KG_OK);
    kg_lock_release(fd);
    CHECK(stat(path, &st) == 0 && st.st_size == 101);
    char want[32];
    snprintf(want, sizeof want, "%ld\n", (long)getpid());
    CHECK(kg_read_file(path, &text, NULL, NULL) == KG_OK && text != NULL && strncmp(text, want, strlen(want)) == 0);
    free(text);
    /* a folder anyone may write, without the sticky bit */
    char open_dir[600];
    snprintf(open_dir, sizeof open_dir, "%s/locks-open", tmp);
    CHECK(mkdir(open_dir, 0755) == 0 && chmod(open_dir, 0777) == 0);
    s.lock_dir = open_dir;
    CHECK(kg_lock_acquire(&s, "x", 0, 0, 0, &fd, &e5) == KG_EUSAGE && fd == -1);
    CHECK_STR_CONTAINS(e5.msg, "sticky");
    CHECK(chmod(open_dir, 01777) == 0);
    CHECK(kg_lock_acquire(&s, "x", 0, 0, 0, &fd, &e5) == KG_OK);
    kg_lock_release(fd);
}

/* What kgate reads from a folder: regular files and folders only, with a cap. */
static void test_safefs(const char *tmp)
{
    char dir[512], path[700], hex[65];
    char *text = NULL;
    snprintf(dir, sizeof dir, "%s/ev-h", tmp);
    CHECK(mkdir(dir, 0755) == 0);
    snprintf(path, sizeof path, "%s/sub", dir);
    CHECK(mkdir(path, 0755) == 0);
    snprintf(path, sizeof path, "%s/sub/a.csv", dir);
    put(path, "a,b\n1,2\n");
    kg_err e = { 0 };
    CHECK(kg_folder_check(dir, &e) == KG_OK);
    CHECK(kg_outdir_check(dir, 1, &e) == KG_OK);
    kg_err ne = { 0 };
    CHECK(kg_outdir_check(dir, 0, &ne) == KG_EUSAGE);
    CHECK_STR_CONTAINS(ne.msg, "is not empty");
    kg_err fe = { 0 };
    CHECK(kg_outdir_check(path, 0, &fe) == KG_EUSAGE);
    CHECK_STR_CONTAINS(fe.msg, "is not a folder (it is a regular file)");
    /* the cap is in the message */
    kg_err ce = { 0 };
    CHECK(kg_read_file_cap(path, 4, &text, NULL, &ce) == KG_EINPUT && text == NULL);
    CHECK_STR_CONTAINS(ce.msg, "MiB");
    CHECK(kg_read_file_cap(path, 0, &text, NULL, &ce) == KG_OK && text != NULL && strcmp(text, "a,b\n1,2\n") == 0);
    free(text);
    text = NULL;
    /* a FIFO: refused at once, by the reader, the hash and the walk */
    char fifo[720];
    snprintf(fifo, sizeof fifo, "%s/sub/p.log", dir);
    CHECK(mkfifo(fifo, 0644) == 0);
    kg_err e1 = { 0 }, e2 = { 0 }, e3 = { 0 }, e4 = { 0 };
    CHECK(kg_read_file(fifo, &text, NULL, &e1) == KG_EINPUT);
    CHECK_STR_CONTAINS(e1.msg, "a FIFO");
    CHECK(kg_sha256_file(fifo, hex, &e2) == KG_EINPUT);
    CHECK(kg_folder_check(dir, &e3) == KG_EINPUT);
    CHECK_STR_CONTAINS(e3.msg, "sub/p.log: a FIFO");
    CHECK(kg_outdir_check(dir, 1, &e4) == KG_EINPUT);
    CHECK(unlink(fifo) == 0);
    /* a link, to a file or to a folder */
    char lnk[720];
    snprintf(lnk, sizeof lnk, "%s/sub/l.csv", dir);
    CHECK(symlink("/etc/passwd", lnk) == 0);
    kg_err e5 = { 0 }, e6 = { 0 }, e7 = { 0 };
    CHECK(kg_folder_check(dir, &e5) == KG_EINPUT);
    CHECK_STR_CONTAINS(e5.msg, "sub/l.csv: a symbolic link");
    CHECK(unlink(lnk) == 0);
    snprintf(lnk, sizeof lnk, "%s/raw", dir);
    CHECK(symlink(tmp, lnk) == 0);
    CHECK(kg_folder_check(dir, &e6) == KG_EINPUT);
    CHECK_STR_CONTAINS(e6.msg, "raw: a symbolic link");
    char **files = NULL;
    int nf = 0;
    CHECK(kg_evidence_list(dir, &files, &nf, &e7) == KG_EINPUT);
    kg_strlist_free(files, nf);
    CHECK(unlink(lnk) == 0);
    /* a character device */
    kg_err e8 = { 0 };
    CHECK(kg_read_file("/dev/zero", &text, NULL, &e8) == KG_EINPUT && text == NULL);
    CHECK_STR_CONTAINS(e8.msg, "a character device");
    /* a log is created through the folder's descriptor: a linked subfolder,
     * a linked file or a FIFO is refused, and the link's target is untouched */
    int dfd = open(dir, O_RDONLY | O_DIRECTORY);
    CHECK(dfd >= 0);
    kg_err c1 = { 0 }, c2 = { 0 }, c3 = { 0 };
    int lfd = kg_create_at(dfd, "logs", "proc-000.log", "logs/proc-000.log", &c1);
    CHECK(lfd >= 0);
    if (lfd >= 0) close(lfd);
    snprintf(lnk, sizeof lnk, "%s/logs/proc-001.log", dir);
    CHECK(symlink(path, lnk) == 0);
    CHECK(kg_create_at(dfd, "logs", "proc-001.log", "logs/proc-001.log", &c2) < 0);
    CHECK_STR_CONTAINS(c2.msg, "symbolic link");
    snprintf(lnk, sizeof lnk, "%s/linked", dir);
    CHECK(symlink(tmp, lnk) == 0);
    CHECK(kg_create_at(dfd, "linked", "proc-000.log", "linked/proc-000.log", &c3) < 0);
    CHECK_STR_CONTAINS(c3.msg, "a link or not a folder");
    if (dfd >= 0) close(dfd);
    CHECK(kg_read_file(path, &text, NULL, NULL) == KG_OK && text != NULL && strcmp(text, "a,b\n1,2\n") == 0);
    free(text);
    text = NULL;
    /* the streamed hash equals the one of the bytes */
    char want[65];
    kg_sha256_hex("a,b\n1,2\n", 8, want);
    CHECK(kg_sha256_file(path, hex, NULL) == KG_OK && strcmp(hex, want) == 0);
}

int main(void)
{
    char tmp[] = "/tmp/kgate-test-integrity-XXXXXX";
    if (mkdtemp(tmp) == NULL) return 1;
    test_lock(tmp);
    test_lock_hygiene(tmp);
    test_safefs(tmp);
    test_descends();
    test_quiet();
    test_quiet_continuous();
    test_quiet_cpu_judge();
    test_frozen(tmp);
    test_fault_and_sums(tmp);
    test_outputs(tmp);
    test_parse_memory();
    test_frames();
    test_write_at(tmp);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", tmp);
    return kg_test_finish("integrity");
}

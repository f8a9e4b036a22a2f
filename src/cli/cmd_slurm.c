/* cmd_slurm.c: `kgate slurm PLAN --shards N -o DIR`: a campaign as a Slurm
 * job array of shards and a merge job that depends on it (docs/scale-out.md).
 *
 * kgate schedules nothing itself: it writes two sbatch scripts into
 * DIR.slurm/, shards.sbatch (--array=0-(N-1), one task per shard, the
 * shard index from SLURM_ARRAY_TASK_ID, each task `kgate run PLAN --shard
 * I/N --campaign ID --ledger DIR/ledger -o DIR/shards/I`, one campaign id
 * made here for every task, or --resume of the folder a failed task left) and
 * merge.sbatch (`kgate merge DIR DIR/shards/0 ...`), prints them, and with
 * --submit submits both with sbatch, the merge with
 * --dependency=afterok:ARRAY_JOB.  `kgate slurm --resume DIR` submits again
 * the array tasks whose shard folder is not complete, and the merge. */
#include <errno.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "kgate/plan.h"
#include "plan/shard.h"
#include "base/util.h"
#include "evidence/ledger.h"
#include "cli.h"

extern char **environ;

static const char about[] =
    "Writes a Slurm job array that runs the campaign PLAN as N shards (kgate run PLAN --shard I/N, I from\n"
    "SLURM_ARRAY_TASK_ID, one GPU per task with --gres gpu:1) and a merge job that runs once every task\n"
    "succeeded (--dependency=afterok): kgate merge DIR DIR/shards/*.  The scripts and the tasks' logs go to\n"
    "DIR.slurm/; DIR becomes the merged evidence folder.  --submit submits them with sbatch (from PATH);\n"
    "kgate slurm --resume DIR submits again the shards that did not complete, and the merge.\n";

static const char footer[] = "Exit status: 0 written (or submitted), 2 usage error or sbatch failed.\n";

/* s in single quotes for sh */
static void q(kg_sb *sb, const char *s)
{
    kg_sb_puts(sb, "'");
    for (; *s != '\0'; s++) {
        if (*s == '\'') kg_sb_puts(sb, "'\\''");
        else kg_sb_printf(sb, "%c", *s);
    }
    kg_sb_puts(sb, "'");
}

typedef struct slurm_opts {
    const char *plan, *out, *partition, *gres, *time, *account, *key;
    int shards;
    char campaign[KG_CAMPAIGN_ID_MAX + 1]; /* the campaign's id, made once here */
} slurm_opts;

static void header(kg_sb *sb, const slurm_opts *o, const char *name, const char *log)
{
    kg_sb_puts(sb, "#!/bin/sh\n");
    kg_sb_printf(sb, "#SBATCH --job-name=%s\n", name);
    kg_sb_printf(sb, "#SBATCH --output=%s\n", log);
    kg_sb_puts(sb, "#SBATCH --ntasks=1\n");
    if (o->partition != NULL) kg_sb_printf(sb, "#SBATCH --partition=%s\n", o->partition);
    if (o->time != NULL) kg_sb_printf(sb, "#SBATCH --time=%s\n", o->time);
    if (o->account != NULL) kg_sb_printf(sb, "#SBATCH --account=%s\n", o->account);
}

static int write_scripts(const slurm_opts *o, const char *exe, const char *sdir, const char *name, kg_sb *arr,
                         kg_sb *mrg, kg_err *err)
{
    char log[2 * PATH_MAX + 48], jn[160];
    /* the array: one shard per task */
    snprintf(log, sizeof log, "%s/shard-%%a.out", sdir);
    snprintf(jn, sizeof jn, "kgate-%s", name);
    header(arr, o, jn, log);
    kg_sb_printf(arr, "#SBATCH --array=0-%d\n", o->shards - 1);
    if (o->gres != NULL) kg_sb_printf(arr, "#SBATCH --gres=%s\n", o->gres);
    kg_sb_printf(arr, "# kgate slurm: shard $SLURM_ARRAY_TASK_ID of %d of the campaign; the merge job runs after "
                      "every task succeeded\n", o->shards);
    kg_sb_puts(arr, "set -u\nKGATE=");
    q(arr, exe);
    kg_sb_puts(arr, "\nPLAN=");
    q(arr, o->plan);
    kg_sb_puts(arr, "\nOUT=");
    q(arr, o->out);
    kg_sb_printf(arr, "\nN=%d\n", o->shards);
    kg_sb_printf(arr, "# every shard, and every attempt of a shard, is of this one campaign; each numbers its attempt in "
                      "$OUT/ledger\nCAMPAIGN=%s\n", o->campaign);
    kg_sb_puts(arr, "I=${SLURM_ARRAY_TASK_ID:?not a Slurm array task}\nD=\"$OUT/shards/$I\"\n");
    if (o->key != NULL) {
        kg_sb_puts(arr, "KEY=");
        q(arr, o->key);
        kg_sb_puts(arr, "\nset -- --key \"$KEY\"\n");
    } else {
        kg_sb_puts(arr, "set --\n");
    }
    kg_sb_puts(arr,
               "mkdir -p \"$OUT/shards\" || exit 2\n"
               "if [ -f \"$D/SHA256SUMS\" ]; then echo \"kgate: shard $I/$N is complete: $D\"; exit 0; fi\n"
               "# a task that failed before left its folder: the campaign goes on from it\n"
               "if [ -f \"$D/plan.kg\" ]; then\n"
               "    \"$KGATE\" run \"$PLAN\" --shard \"$I/$N\" --campaign \"$CAMPAIGN\" --resume \"$D\" --quiet \"$@\"\n"
               "else\n"
               "    \"$KGATE\" run \"$PLAN\" --shard \"$I/$N\" --campaign \"$CAMPAIGN\" --ledger \"$OUT/ledger\" -o \"$D\" "
               "--quiet \"$@\"\n"
               "fi\n"
               "rc=$?\n"
               "# 0 passed, 1 failed, 3 invalid: the shard completed (the merged folder decides); 2: an error\n"
               "case $rc in 0|1|3) exit 0 ;; *) exit $rc ;; esac\n");
    /* the merge */
    snprintf(log, sizeof log, "%s/merge.out", sdir);
    snprintf(jn, sizeof jn, "kgate-%s-merge", name);
    header(mrg, o, jn, log);
    kg_sb_puts(mrg, "# kgate slurm: merges the shards into the campaign's evidence folder\nset -u\nKGATE=");
    q(mrg, exe);
    kg_sb_puts(mrg, "\nOUT=");
    q(mrg, o->out);
    kg_sb_puts(mrg, "\nSTATUS=");
    q(mrg, sdir);
    kg_sb_puts(mrg, "/merge.status\n");
    if (o->key != NULL) {
        kg_sb_puts(mrg, "KEY=");
        q(mrg, o->key);
        kg_sb_puts(mrg, "\nset -- --key \"$KEY\"\n");
    } else {
        kg_sb_puts(mrg, "set --\n");
    }
    kg_sb_puts(mrg, "\"$KGATE\" merge --quiet \"$@\" \"$OUT\"");
    for (int i = 0; i < o->shards; i++) kg_sb_printf(mrg, " \"$OUT/shards/%d\"", i);
    kg_sb_puts(mrg, "\nrc=$?\necho $rc > \"$STATUS\"\n"
                    "# the gate's verdict is in the folder (exit 0 passed, 1 failed, 3 invalid); 2: an error\n"
                    "case $rc in 0|1|3) exit 0 ;; *) exit $rc ;; esac\n");
    if (arr->oom || mrg->oom) return kg_errorf(err, KG_ENOMEM, "out of memory");
    return KG_OK;
}

/* sbatch ARGS..., its stdout (--parsable: "JOBID[;CLUSTER]") into id */
static int sbatch(char *const *args, char *id, size_t cap)
{
    int p[2];
    if (pipe(p) != 0) return KG_EXIT_USAGE;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, p[1], 1);
    posix_spawn_file_actions_addclose(&fa, p[0]);
    pid_t pid;
    int e = posix_spawnp(&pid, "sbatch", &fa, NULL, args, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(p[1]);
    if (e != 0) {
        close(p[0]);
        fprintf(stderr, "kgate slurm: cannot run sbatch: %s (is Slurm's sbatch on PATH?)\n", strerror(e));
        return KG_EXIT_USAGE;
    }
    size_t n = 0;
    ssize_t k;
    while (n + 1 < cap && (k = read(p[0], id + n, cap - 1 - n)) != 0) {
        if (k < 0) {
            if (errno == EINTR) continue;
            break;
        }
        n += (size_t)k;
    }
    id[n] = '\0';
    close(p[0]);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
    id[strcspn(id, ";\n")] = '\0';
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0 || id[0] < '0' || id[0] > '9') {
        fprintf(stderr, "kgate slurm: sbatch %s failed (status %d): its message is above\n", args[1],
                WIFEXITED(st) ? WEXITSTATUS(st) : -1);
        return KG_EXIT_USAGE;
    }
    return KG_EXIT_PASS;
}

/* Submits the array (tasks: NULL for the script's own --array) and the
 * merge after it; with no task to run, the merge alone. */
static int submit(const char *sdir, const char *tasks, int merge_only)
{
    char arr[2 * PATH_MAX + 48], mrg[2 * PATH_MAX + 48], aid[128] = "", mid[128] = "", dep[160], arrayopt[1200];
    snprintf(arr, sizeof arr, "%s/shards.sbatch", sdir);
    snprintf(mrg, sizeof mrg, "%s/merge.sbatch", sdir);
    if (!merge_only) {
        char *a1[] = { (char *)"sbatch", (char *)"--parsable", arr, NULL };
        char *a2[] = { (char *)"sbatch", (char *)"--parsable", arrayopt, arr, NULL };
        if (tasks != NULL) snprintf(arrayopt, sizeof arrayopt, "--array=%s", tasks);
        if (sbatch(tasks != NULL ? a2 : a1, aid, sizeof aid) != KG_EXIT_PASS) return KG_EXIT_USAGE;
        snprintf(dep, sizeof dep, "--dependency=afterok:%s", aid);
        char *m1[] = { (char *)"sbatch", (char *)"--parsable", dep, mrg, NULL };
        if (sbatch(m1, mid, sizeof mid) != KG_EXIT_PASS) return KG_EXIT_USAGE;
        printf("shards job %s (array %s)\nmerge job %s (after ok %s)\n", aid, tasks != NULL ? tasks : "all", mid, aid);
    } else {
        char *m1[] = { (char *)"sbatch", (char *)"--parsable", mrg, NULL };
        if (sbatch(m1, mid, sizeof mid) != KG_EXIT_PASS) return KG_EXIT_USAGE;
        printf("merge job %s (every shard is complete)\n", mid);
    }
    char jobs[2 * PATH_MAX + 16], line[400];
    snprintf(jobs, sizeof jobs, "%s/jobs", sdir);
    FILE *fp = fopen(jobs, "a");
    if (fp != NULL) {
        snprintf(line, sizeof line, "shards %s tasks %s merge %s\n", aid[0] ? aid : "-",
                 merge_only ? "-" : tasks != NULL ? tasks : "all", mid);
        fputs(line, fp);
        fclose(fp);
    }
    fflush(stdout);
    return KG_EXIT_PASS;
}

static int resume(const char *out)
{
    char sdir[2 * PATH_MAX], path[2 * PATH_MAX + 64], *text = NULL;
    snprintf(sdir, sizeof sdir, "%s.slurm", out);
    snprintf(path, sizeof path, "%s/shards.sbatch", sdir);
    kg_err err = { 0 };
    if (kg_read_file(path, &text, NULL, &err) != KG_OK) {
        fprintf(stderr, "kgate slurm --resume %s: no %s: start the campaign with kgate slurm PLAN --shards N -o %s\n", out,
                path, out);
        return KG_EXIT_USAGE;
    }
    const char *nl = strstr(text, "\nN=");
    int n = nl != NULL ? atoi(nl + 3) : 0;
    free(text);
    if (n < 1) {
        fprintf(stderr, "kgate slurm --resume: %s names no shard count (N=): write it again with kgate slurm\n", path);
        return KG_EXIT_USAGE;
    }
    snprintf(path, sizeof path, "%s/SHA256SUMS", out);
    if (kg_path_exists(path)) {
        printf("%s is merged already: every shard completed (kgate verify %s)\n", out, out);
        return KG_EXIT_PASS;
    }
    kg_sb tasks = { 0 };
    int missing = 0;
    for (int i = 0; i < n; i++) {
        snprintf(path, sizeof path, "%s/shards/%d/SHA256SUMS", out, i);
        if (kg_path_exists(path)) continue;
        kg_sb_printf(&tasks, "%s%d", missing ? "," : "", i);
        missing++;
    }
    if (missing > 0) fprintf(stderr, "kgate: %d of %d shard(s) not complete: %s\n", missing, n, tasks.buf);
    int rc = submit(sdir, tasks.buf, missing == 0);
    kg_sb_free(&tasks);
    return rc;
}

int kg_cmd_slurm(int argc, char **argv, const kg_settings *env)
{
    (void)env;
    slurm_opts o = { 0 };
    int do_submit = 0;
    const char *resume_dir = NULL;
    const kg_cli_opt opts[] = {
        { .name = "shards", .arg = "N", .kind = KG_CLI_INT, .dst = &o.shards, .min = 1, .max = KG_SHARD_MAX,
          .help = "the number of shards: array tasks 0..N-1 (at most the plan's cases, or, sharded by process, its "
                  "processes per direction: docs/scale-out.md)" },
        { .name = "out", .short_name = 'o', .arg = "DIR", .kind = KG_CLI_STRING, .dst = &o.out,
          .help = "the merged evidence folder (the shards: DIR/shards/I; scripts and logs: DIR.slurm/)" },
        { .name = "partition", .arg = "P", .kind = KG_CLI_STRING, .dst = &o.partition, .help = "sbatch --partition" },
        { .name = "gres", .arg = "G", .kind = KG_CLI_STRING, .dst = &o.gres,
          .help = "sbatch --gres for each shard, e.g. gpu:1 (one GPU per task)" },
        { .name = "time", .arg = "T", .kind = KG_CLI_STRING, .dst = &o.time, .help = "sbatch --time, e.g. 01:00:00" },
        { .name = "account", .arg = "A", .kind = KG_CLI_STRING, .dst = &o.account, .help = "sbatch --account" },
        { .name = "key", .arg = "FILE", .kind = KG_CLI_STRING, .dst = &o.key,
          .help = "the signing key the shards and the merge sign with (default: each node's user key)" },
        { .name = "submit", .kind = KG_CLI_FLAG, .dst = &do_submit, .value = 1,
          .help = "submit the array and the merge with sbatch and print their job ids" },
        { .name = "resume", .arg = "DIR", .kind = KG_CLI_STRING, .dst = &resume_dir,
          .help = "submit again the shards of DIR that did not complete (failed array tasks), then the merge" },
        { .name = NULL },
    };
    const kg_cli_spec spec = { .cmd = "slurm", .args = "PLAN", .about = about, .opts = opts, .footer = footer };
    /* --resume DIR takes no plan: its scripts name it */
    int has_resume = 0;
    for (int i = 1; i < argc; i++) has_resume |= strncmp(argv[i], "--resume", 8) == 0;
    const kg_cli_spec spec_r = { .cmd = "slurm", .args = NULL, .about = about, .opts = opts, .footer = footer };
    int parsed = kg_cli_parse(has_resume ? &spec_r : &spec, argc, argv, &o.plan);
    if (parsed != KG_CLI_GO) return parsed;
    if (resume_dir != NULL) return resume(resume_dir);
    if (o.shards < 1 || o.out == NULL) {
        fprintf(stderr, "kgate slurm: needs --shards N and -o DIR (see kgate slurm --help)\n");
        return KG_EXIT_USAGE;
    }
    kg_plan *plan = NULL;
    kg_err err = { 0 };
    if (kg_plan_load(o.plan, &plan, &err) != KG_OK) return kg_cli_fail(KG_EINPUT, err.msg);
    unsigned char *on = calloc((size_t)plan->ncases + 1, 1);
    int rc = on == NULL ? KG_ENOMEM : KG_OK;
    for (int i = 0; i < o.shards && rc == KG_OK; i++)
        if (kg_shard_cases(plan, i, o.shards, on, &err) < 0) rc = KG_EUSAGE;
    if (rc == KG_OK && plan->campaign.looks > 1)
        rc = kg_errorf(&err, KG_EUSAGE, "%s: a sequential design (looks = %d) cannot be sharded", o.plan,
                       plan->campaign.looks);
    char name[80];
    snprintf(name, sizeof name, "%s", plan->campaign.name);
    free(on);
    kg_plan_free(plan);
    if (rc != KG_OK) return kg_cli_fail(rc, err.msg[0] ? err.msg : "out of memory");
    /* absolute paths: the tasks start in another folder, maybe on another node */
    char exe[PATH_MAX], plan_abs[PATH_MAX], out_abs[2 * PATH_MAX + 8], key_abs[PATH_MAX], sdir[2 * PATH_MAX + 16];
    if (kg_self_exe(exe, sizeof exe, &err) != KG_OK) return kg_cli_fail(KG_EIO, err.msg);
    if (realpath(o.plan, plan_abs) == NULL) return kg_cli_fail(KG_EIO, "cannot resolve the plan's path");
    if (o.key != NULL && realpath(o.key, key_abs) == NULL) {
        fprintf(stderr, "kgate slurm: --key %s: no such key file\n", o.key);
        return KG_EXIT_USAGE;
    }
    if (o.out[0] == '/') snprintf(out_abs, sizeof out_abs, "%s", o.out);
    else {
        char cwd[PATH_MAX];
        if (getcwd(cwd, sizeof cwd) == NULL) return kg_cli_fail(KG_EIO, "cannot read the working folder");
        if (strlen(cwd) + strlen(o.out) + 2 > sizeof out_abs) return kg_cli_fail(KG_EUSAGE, "-o DIR: path too long");
        kg_sb ab = { 0 };
        kg_sb_printf(&ab, "%s/%s", cwd, o.out);
        if (ab.oom || ab.buf == NULL) return kg_cli_fail(KG_ENOMEM, "out of memory");
        memcpy(out_abs, ab.buf, ab.len + 1);
        kg_sb_free(&ab);
    }
    o.plan = plan_abs;
    o.out = out_abs;
    if (o.key != NULL) o.key = key_abs;
    snprintf(sdir, sizeof sdir, "%s.slurm", out_abs);
    if (kg_path_exists(sdir)) {
        fprintf(stderr, "kgate slurm: %s exists: this campaign was written already (kgate slurm --resume %s)\n", sdir,
                o.out);
        return KG_EXIT_USAGE;
    }
    kg_sb arr = { 0 }, mrg = { 0 };
    char path[2 * PATH_MAX + 64];
    if (kg_campaign_id_new(o.campaign, &err) != KG_OK) return kg_cli_fail(KG_EIO, err.msg);
    if (write_scripts(&o, exe, sdir, name, &arr, &mrg, &err) != KG_OK || kg_mkdir_p(sdir, &err) != KG_OK) {
        kg_sb_free(&arr);
        kg_sb_free(&mrg);
        return kg_cli_fail(KG_EIO, err.msg);
    }
    snprintf(path, sizeof path, "%s/shards.sbatch", sdir);
    rc = kg_write_atomic(path, arr.buf, arr.len, &err);
    snprintf(path, sizeof path, "%s/merge.sbatch", sdir);
    if (rc == KG_OK) rc = kg_write_atomic(path, mrg.buf, mrg.len, &err);
    if (rc == KG_OK && !do_submit) {
        printf("# %s/shards.sbatch\n%s\n# %s/merge.sbatch\n%s\n", sdir, arr.buf, sdir, mrg.buf);
        printf("# submit with:\n#   kgate slurm --resume %s\n# or by hand:\n#   J=$(sbatch --parsable %s/shards.sbatch)\n"
               "#   sbatch --dependency=afterok:$J %s/merge.sbatch\n", o.out, sdir, sdir);
    }
    kg_sb_free(&arr);
    kg_sb_free(&mrg);
    if (rc != KG_OK) return kg_cli_fail(rc, err.msg);
    fprintf(stderr, "kgate: wrote %s/shards.sbatch (%d array tasks of campaign %s) and %s/merge.sbatch\n", sdir,
            o.shards, o.campaign, sdir);
    return do_submit ? submit(sdir, NULL, 0) : KG_EXIT_PASS;
}

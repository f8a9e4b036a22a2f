/* cmd_run.c: `kgate run PLAN [-o DIR]`: a campaign, its short answer on stdout
 * and its verdict as the exit status. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "evidence/attest.h"
#include "evidence/envrec.h"
#include "run/supervisor.h"
#include "plan/shard.h"
#include "evidence/ledger.h"
#include "run/quiet.h"
#include "base/util.h"
#include "cli.h"
#include "brief.h"
#include "summary.h"
#include "annotations.h"

static const char about[] =
    "Runs the campaign PLAN declares: every arm is checked for correctness before and after timing\n"
    "in every process; rounds of interleaved samples run in 2 x processes fresh worker processes,\n"
    "directions alternating (forward, then case and arm order reversed).  Writes the evidence folder\n"
    "(default kgate-out/NAME-UTCTIME), prints the short answer on stdout (the gate, one line per\n"
    "candidate and case, the control, warnings, the paths of report.html and the folder; the full\n"
    "report.md with --report or kgate report DIR) and the verdict on stderr.  On a terminal one\n"
    "progress line on stderr is rewritten in place (waits included); otherwise a line per process.\n";

static const char footer[] =
    "Exit status: 0 gate passed, 1 gate failed or inconclusive, 2 usage or input error,\n"
    "3 invalid campaign (control failed, no usable process, or the host never became quiet).\n";

/* The key that signs the folder: --key FILE (which must exist), else the
 * user's default key when there is one, else none (*path = NULL).  The
 * file is not read here: the supervisor reads it once every worker has
 * ended (attest.h). */
static int signing_key(const kg_settings *env, const char *key, char *buf, size_t cap, const char **path)
{
    struct stat st;
    *path = NULL;
    if (key != NULL) {
        if (stat(key, &st) != 0 || !S_ISREG(st.st_mode)) {
            fprintf(stderr, "kgate run: --key %s: no such key file (kgate key init makes one)\n", key);
            return KG_EXIT_USAGE;
        }
        *path = key;
    } else if (env->key_dir != NULL) {
        snprintf(buf, cap, "%s/%s", env->key_dir, KG_ATTEST_PRIV);
        if (stat(buf, &st) == 0 && S_ISREG(st.st_mode)) *path = buf;
    }
    return KG_CLI_GO;
}

/* One line on stderr when a signing run's environment holds variables
 * that can replace code (evidence/envrec.h): verify --key will name them. */
static void tell_unattested(const char *key_path, const kg_settings *env)
{
    char names[1024];
    if (key_path != NULL && kg_envrec_unattested(env->environ_list, names, sizeof names) > 0)
        fprintf(stderr, "kgate: the signed statement records an unattested environment (%s: each can replace code "
                "the campaign ran): kgate verify --key fails unless --allow-env names them\n", names);
}

/* The key ID that signed the folder into keyid; 0 when it is unsigned
 * (a newcomer never asked for signing: the short answer says
 * "unsigned" once, and nothing else does). */
static int signature_of(const char *key_path, char *keyid)
{
    kg_err err = { 0 };
    return key_path != NULL && kg_attest_keyid(key_path, keyid, &err) == KG_OK;
}

/* --json on stdout, --github on stdout (on stderr beside --json) and
 * --junit FILE, when asked; a failure to write them is a usage error
 * (exit 2) unless the campaign already failed worse */
static int machine_outputs(const kg_summary_in *sum, int json, int github, const char *junit, int status)
{
    kg_err e = { 0 };
    if (github) kg_cli_github(json ? stderr : stdout, sum);
    if (json && kg_cli_summary_json(stdout, sum, &e) != KG_OK) {
        fprintf(stderr, "kgate run --json: %s\n", e.msg);
        if (status < KG_EXIT_USAGE) status = KG_EXIT_USAGE;
    }
    fflush(stdout);
    kg_err_clear(&e);
    if (junit != NULL && kg_cli_junit(junit, sum, &e) != KG_OK) {
        fprintf(stderr, "kgate run --junit %s: %s\n", junit, e.msg);
        if (status < KG_EXIT_USAGE) status = KG_EXIT_USAGE;
    }
    return status;
}

/* --shard, --campaign and --ledger: the shard parsed, and a campaign id
 * made for a shard run that names none (printed for its other shards). */
static int shard_options(kg_run_opts *o, const char *shard, char *made_id)
{
    if (shard != NULL) {
        kg_err se = { 0 };
        if (kg_shard_parse(shard, &o->shard_i, &o->shard_n, &se) != KG_OK) return kg_cli_fail(KG_EUSAGE, se.msg);
        if (o->campaign_id != NULL && !kg_campaign_id_ok(o->campaign_id))
            return kg_cli_fail(KG_EUSAGE, "--campaign: an id is 1 to 64 of A-Z a-z 0-9 . _ -");
        if (o->campaign_id == NULL && !o->resume) {
            if (kg_campaign_id_new(made_id, &se) != KG_OK) return kg_cli_fail(KG_EIO, se.msg);
            o->campaign_id = made_id;
            fprintf(stderr, "kgate: shard %s starts a new campaign %s: run its other shards with --campaign %s (and "
                    "the same --ledger), or kgate merge refuses them\n", shard, made_id, made_id);
        }
    } else if (o->campaign_id != NULL || o->ledger_path != NULL) {
        return kg_cli_fail(KG_EUSAGE, "--campaign and --ledger name a shard's campaign: they go with --shard I/N");
    }
    return KG_CLI_GO;
}

/* argv with the signing key's path replaced, for meta.json; NULL when
 * out of memory. */
static char **key_hidden(int argc, char **argv)
{
    char **shown = calloc((size_t)argc + 1, sizeof *shown);
    if (shown == NULL) return NULL;
    for (int i = 0; i < argc; i++) {
        shown[i] = argv[i];
        if (strncmp(argv[i], "--key=", 6) == 0) shown[i] = (char *)"--key=(the signing key)";
        else if (i > 0 && strcmp(argv[i - 1], "--key") == 0) shown[i] = (char *)"(the signing key)";
    }
    return shown;
}

int kg_cmd_run(int argc, char **argv, const kg_settings *env)
{
    kg_run_opts o = { 0 };
    int progress = -1, full = 0;
    o.argc = argc;
    o.argv = argv; /* as given: the parser reorders a copy */
    o.settings = env;
    int repeats = 0, has_repeats = 0, less = 0, json = 0, github = 0, no_cache = 0;
    const char *key = NULL, *junit = NULL, *shard = NULL, *devices = NULL;
    char made_id[KG_CAMPAIGN_ID_MAX + 1];
    int device = 0;
    double t_start = kg_mono_s();
    const kg_cli_opt opts[] = {
        { .name = "out", .short_name = 'o', .arg = "DIR", .kind = KG_CLI_STRING, .dst = &o.out_dir,
          .help = "evidence folder (must not hold a campaign already)" },
        { .name = "backend", .arg = "NAME", .kind = KG_CLI_STRING, .dst = &o.backend,
          .help = "override the plan's backend: auto, cpu, fake, cuda" },
        { .name = "progress", .kind = KG_CLI_FLAG, .dst = &progress, .value = 1,
          .help = "the progress line rewritten in place on stderr even when it is not a terminal (default: on a "
                  "terminal; otherwise a line per process)" },
        { .name = "no-progress", .kind = KG_CLI_FLAG, .dst = &progress, .value = 0, .help = "no progress on stderr" },
        { .name = "report", .kind = KG_CLI_FLAG, .dst = &full, .value = 1,
          .help = "print the full report.md on stdout instead of the short answer" },
        { .name = "no-cache", .kind = KG_CLI_FLAG, .dst = &no_cache, .value = 1,
          .help = "compile every cpu arm, neither reading nor writing the compile cache (KGATE_CACHE=0)" },
        { .name = "frozen", .arg = "FILE", .kind = KG_CLI_STRING, .dst = &o.frozen_path,
          .help = "refuse PLAN unless its canonical hash is FILE's (kgate freeze); lists what changed" },
        { .name = "smoke", .kind = KG_CLI_FLAG, .dst = &o.smoke, .value = 1,
          .help = "a smoke run: every check of the plan, but 1 process per direction of 2 rounds of 3 samples and "
                  "no quiet window; the folder records it (plan key smoke = yes), the candidates' verdict is SMOKE "
                  "and the gate fails (exit 1): it shows that the plan runs, and decides nothing" },
        { .name = "resume", .arg = "DIR", .kind = KG_CLI_STRING, .dst = &o.out_dir, .seen = &o.resume,
          .help = "continue the campaign in DIR (after a crash or kill): PLAN must be its plan; completed "
                  "processes are kept, the interrupted one is run again" },
        { .name = "lock-timeout", .arg = "S", .kind = KG_CLI_REAL, .dst = &o.lock_timeout_s, .min = 0, .max = 1e9,
          .seen = &o.has_lock_timeout,
          .help = "give up (exit 2) when the device is still locked by another campaign after S s (default: "
                  "wait as long as it takes)" },
        { .name = "quiet-window", .arg = "S", .kind = KG_CLI_REAL, .dst = &o.quiet_s, .min = 0, .max = 1e9,
          .seen = &o.has_quiet, .help = "quiet window before each process, s (default: the plan's quiet key; 0: no "
                                         "wait, the host's load still recorded)" },
        { .name = "quiet-budget", .arg = "S", .kind = KG_CLI_REAL, .dst = &o.quiet_budget_s, .min = 0, .max = 1e9,
          .seen = &o.has_quiet_budget,
          .help = "the whole campaign's waits for a quiet host, s, after which it stops INVALID (default: the plan's "
                  "quiet_budget, 120; 0: no budget)" },
        { .name = "quiet", .short_name = 'q', .kind = KG_CLI_FLAG, .dst = &less, .value = 1,
          .help = "less output: nothing on stdout and no progress; only the verdict line on stderr" },
        { .name = "json", .kind = KG_CLI_FLAG, .dst = &json, .value = 1,
          .help = "print one JSON summary on stdout instead of the report: verdicts, gate, evidence folder, "
                  "signature (docs/ci.md)" },
        { .name = "github", .kind = KG_CLI_FLAG, .dst = &github, .value = 1,
          .help = "also print GitHub Actions annotations (::error, ::warning, ::notice lines naming the plan) for "
                  "an INCORRECT arm, a failed gate and an INVALID campaign, on stdout after the report (on stderr "
                  "with --json; docs/ci.md)" },
        { .name = "junit", .arg = "FILE", .kind = KG_CLI_STRING, .dst = &junit,
          .help = "also write JUnit XML to FILE: one test case per gated case and arm (docs/ci.md)" },
        { .name = "forbid", .arg = "NAMES", .kind = KG_CLI_STRING, .dst = &o.forbid,
          .help = "comma-separated process names that must not run during a campaign (default: the plan's forbid, "
                  "else $KGATE_FORBID, else " KG_QUIET_DEFAULT_FORBID " when a quiet window is declared: judged on "
                  "cuda, observed and recorded on cpu; none on fake)" },
        { .name = "max-load", .arg = "L", .kind = KG_CLI_REAL, .dst = &o.max_load, .min = 0, .max = 1e9,
          .help = "1-minute load average bound (default: none)" },
        { .name = "repeats", .arg = "N", .kind = KG_CLI_INT, .dst = &repeats, .min = 0, .max = 1e9,
          .seen = &has_repeats, .help = "runs again a contaminated process up to N times (default 3)" },
        { .name = "archive", .kind = KG_CLI_FLAG, .dst = &o.archive, .value = 1,
          .help = "also write DIR.tar.gz next to the folder (needs libarchive.so.13)" },
        { .name = "key", .arg = "FILE", .kind = KG_CLI_STRING, .dst = &key,
          .help = "sign the folder with the Ed25519 private key FILE (kgate key init; default: the user's "
                  "key, $XDG_CONFIG_HOME/kgate/" KG_ATTEST_PRIV ", when it exists)" },
        { .name = "shard", .arg = "SHARD", .kind = KG_CLI_STRING, .dst = &shard,
          .help = "run shard SHARD = I/N (I of N, from 0): the cases dealt to it round-robin in canonical order, or, when "
                  "the plan has fewer cases than N or says [campaign] shard = process, the pairs of processes dealt "
                  "to it (each with every case and arm); the folder records the shard for kgate merge "
                  "(docs/scale-out.md)" },
        { .name = "campaign", .arg = "ID", .kind = KG_CLI_STRING, .dst = &o.campaign_id,
          .help = "with --shard: the campaign's id, the same for every shard of it (kgate slurm and --devices make "
                  "one; without it a shard makes a new campaign and prints its id)" },
        { .name = "ledger", .arg = "FILE", .kind = KG_CLI_STRING, .dst = &o.ledger_path,
          .help = "with --shard: the campaign's ledger, where each shard run numbers its attempt (default: "
                  "kgate-ID.ledger beside the folder; docs/scale-out.md)" },
        { .name = "device", .arg = "D", .kind = KG_CLI_INT, .dst = &device, .min = 0, .max = 1023,
          .seen = &o.has_device, .help = "run on device D instead of the plan's device key" },
        { .name = "devices", .arg = "LIST", .kind = KG_CLI_STRING, .dst = &devices,
          .help = "comma-separated devices (0,1,2,3): one shard per device, in parallel, then kgate merge into the "
                  "folder (-o DIR is required; the shards are DIR/shards/I)" },
        { .name = NULL },
    };
    const kg_cli_spec spec = { .cmd = "run", .args = "PLAN", .about = about, .opts = opts, .footer = footer };
    int parsed = kg_cli_parse(&spec, argc, argv, &o.plan_path);
    if (parsed != KG_CLI_GO) return parsed;
    /* the campaign's own copy of the settings */
    kg_settings s = *env;
    s.no_cache |= no_cache;
    o.settings = env = &s;
    if (has_repeats) o.max_repeats = repeats == 0 ? -1 : repeats;
    o.device = device;
    if ((parsed = shard_options(&o, shard, made_id)) != KG_CLI_GO) return parsed;
    if (devices != NULL) {
        if (shard != NULL || o.has_device || o.resume)
            return kg_cli_fail(KG_EUSAGE, "--devices runs its own shards: it takes no --shard, --device or --resume");
        return kg_cli_run_devices(argc, argv, env, o.plan_path, o.out_dir, devices, key, less, json);
    }
    o.progress = progress == 1 || (progress < 0 && isatty(2));
    o.progress_lines = progress < 0 && !isatty(2);
    if (less) o.progress = o.progress_lines = 0;
    char defkey[1200], **shown = NULL;
    if ((parsed = signing_key(env, key, defkey, sizeof defkey, &o.key_path)) != KG_CLI_GO) return parsed;
    /* meta.json records the command line without the key's path: the
     * workers read the folder */
    if (key != NULL && (o.argv = shown = key_hidden(argc, argv)) == NULL) return kg_cli_fail(KG_ENOMEM, "out of memory");
    char dir[1024] = "";
    kg_analysis an;
    kg_err err = { 0 };
    int rc = kg_campaign_run(&o, dir, sizeof dir, &an, &err);
    free(shown);
    kg_summary_in sum = { .command = "run", .plan_path = o.plan_path, .dir = dir, .key_path = o.key_path,
                          .an = rc == KG_OK ? &an : NULL };
    if (rc != KG_OK) {
        int st = kg_cli_fail(rc, err.msg);
        if (dir[0] != '\0') fprintf(stderr, "kgate: evidence so far is in %s\n", dir);
        sum.error = err.msg;
        sum.exit_status = st;
        sum.seconds = kg_mono_s() - t_start;
        return machine_outputs(&sum, json, github, junit, st);
    }
    char keyid[65];
    int signed_ = signature_of(o.key_path, keyid);
    int brief = !less && !json && !full;
    if (!less && !json && full) kg_cli_print_report(dir);
    if (brief) kg_cli_brief(stdout, &an, dir, signed_ ? keyid : NULL);
    /* on a terminal the short answer already says the verdict and the folder */
    int interactive = brief && isatty(1) && isatty(2);
    int status = interactive ? (an.invalid ? KG_EXIT_INVALID : an.gate_pass ? KG_EXIT_PASS : KG_EXIT_FAIL)
                             : kg_cli_gate_line(&an);
    if (!less && !interactive) {
        if (an.invalid && an.invalid_why[0] != '\0' && strcmp(an.invalid_why, an.gate_reason) != 0)
            fprintf(stderr, "kgate: the campaign is INVALID: %s\n", an.invalid_why);
        fprintf(stderr, "kgate: evidence in %s\n", dir);
        if (signed_) fprintf(stderr, "kgate: signed %s/%s with key %s\n", dir, KG_ATTEST_FILE, keyid);
    }
    if (!less) tell_unattested(o.key_path, env);
    sum.exit_status = status;
    sum.seconds = kg_mono_s() - t_start;
    status = machine_outputs(&sum, json, github, junit, status);
    kg_analysis_free(&an);
    return status;
}

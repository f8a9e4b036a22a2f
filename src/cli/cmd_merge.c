/* cmd_merge.c: `kgate merge OUT SHARD_DIR...`: the shards of a campaign,
 * checked and merged into one signed evidence folder (merge.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "evidence/attest.h"
#include "verify/merge.h"
#include "cli.h"

static const char about[] =
    "Checks every shard folder (kgate run PLAN --shard I/N): its hashes, chain, recomputed reports and replayed\n"
    "outputs, its signature (with --pub, or the signing key's public half), the same plan hash, each shard of\n"
    "0..N-1, and one device model unless the plan says [campaign] devices = any; one campaign id, and every\n"
    "attempt of every shard that the shards' ledger records and the ledger name.  Then writes OUT: attempt 1 of\n"
    "shard I as OUT/shards/I (the verdict uses it), a later attempt A as OUT/shards/I.A, the ledger, the plan, the reports of every case, SHA256SUMS and a signature.\n"
    "kgate verify OUT verifies every shard again (docs/scale-out.md).\n";

static const char footer[] =
    "Exit status: 0 gate passed, 1 gate failed or inconclusive, 2 usage error or a shard refused,\n"
    "3 invalid campaign.\n";

int kg_cli_merge_into(const char *out, const char *const *dirs, int n, const char *key, const char *pub,
                      const char *ledger, int argc, char **argv, const kg_settings *env, int quiet)
{
    char defkey[1200];
    struct stat st;
    const char *key_path = NULL;
    if (key != NULL) {
        if (stat(key, &st) != 0 || !S_ISREG(st.st_mode)) {
            fprintf(stderr, "kgate merge: --key %s: no such key file (kgate key init makes one)\n", key);
            return KG_EXIT_USAGE;
        }
        key_path = key;
    } else if (env->key_dir != NULL) {
        snprintf(defkey, sizeof defkey, "%s/%s", env->key_dir, KG_ATTEST_PRIV);
        if (stat(defkey, &st) == 0 && S_ISREG(st.st_mode)) key_path = defkey;
    }
    /* the shards' signatures: --pub, else the signing key's own public half */
    if (pub == NULL) pub = key_path;
    kg_merge_opts o = { .out = out, .dirs = dirs, .n = n, .key_path = key_path, .pub_path = pub, .argc = argc,
                        .argv = argv, .ledger_path = ledger };
    kg_analysis an;
    kg_err err = { 0 };
    if (kg_merge_write(&o, &an, &err) != KG_OK) {
        fprintf(stderr, "kgate merge: %s\n", err.msg);
        return KG_EXIT_USAGE;
    }
    if (!quiet) kg_cli_print_report(out);
    int status = kg_cli_gate_line(&an);
    fprintf(stderr, "kgate: merged %d shard(s) into %s (%s)\n", n, out,
            key_path != NULL ? "signed" : "unsigned: no --key and no key made by kgate key init");
    kg_analysis_free(&an);
    return status;
}

int kg_cmd_merge(int argc, char **argv, const kg_settings *env)
{
    const char *first = NULL, *key = NULL, *pub = NULL, *ledger = NULL, *rest[KG_SHARD_ARGS_MAX + 1];
    int nrest = 0, quiet = 0;
    const kg_cli_opt opts[] = {
        { .name = "key", .arg = "FILE", .kind = KG_CLI_STRING, .dst = &key,
          .help = "sign OUT with the Ed25519 private key FILE (default: the user's key, when it exists)" },
        { .name = "pub", .arg = "PUB", .kind = KG_CLI_STRING, .dst = &pub,
          .help = "the public key every shard's signature must verify with (default: the signing key's)" },
        { .name = "ledger", .arg = "FILE", .kind = KG_CLI_STRING, .dst = &ledger,
          .help = "the campaign's ledger (default: OUT/ledger, else the one the shards recorded, when there)" },
        { .name = "quiet", .short_name = 'q', .kind = KG_CLI_FLAG, .dst = &quiet, .value = 1,
          .help = "no report on stdout, only the verdict line" },
        { .name = NULL },
    };
    const kg_cli_spec spec = { .cmd = "merge", .args = "OUT SHARD_DIR...", .about = about, .opts = opts,
                               .footer = footer, .rest = rest, .nrest = &nrest, .rest_cap = KG_SHARD_ARGS_MAX + 1 };
    int parsed = kg_cli_parse(&spec, argc, argv, &first);
    if (parsed != KG_CLI_GO) return parsed;
    if (nrest < 2) {
        fprintf(stderr, "kgate merge: needs OUT and at least one shard folder (see kgate merge --help)\n");
        return KG_EXIT_USAGE;
    }
    return kg_cli_merge_into(rest[0], rest + 1, nrest - 1, key, pub, ledger, argc, argv, env, quiet);
}

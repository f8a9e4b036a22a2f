/* cmd_verify.c: `kgate verify DIR`: checks an evidence folder (hashes,
 * recomputed reports, the chain, replayed outputs).  It writes nothing in
 * the folder.  The replay's references come from the op server
 * (check/opserver.h), a confined process of their own. */
#include <stdio.h>
#include <string.h>
#include "verify/verify.h"
#include "check/opserver.h"
#include "evidence/attest.h"
#include "cli.h"
#include "base/util.h"


static const char about[] =
    "Checks the evidence folder DIR without changing it:\n"
    "  - every file listed in SHA256SUMS has its hash, and no file is unlisted;\n"
    "  - plan.kg hashes to plan.sha256; the reports recomputed from the raw samples equal\n"
    "    report.md, report.html, results.json and results.csv byte for byte;\n"
    "  - processes.csv's chain, the schedule and the build provenance hold;\n"
    "  - every saved checked output (outputs/) is compared again with a float64 reference\n"
    "    recomputed on the CPU from its recorded seed, and agrees with checks/.\n"
    "With --key PUB, first the signature: attestation.dsse.json must be a DSSE envelope signed\n"
    "by PUB's private key over an in-toto statement whose subjects are the folder's files with\n"
    "their SHA-256; a folder without one is unsigned, which fails.  Without --key the signer's\n"
    "keyid is named but not checked, and an unsigned folder is said to be so.\n"
    "With --key, the statement's unattested environment also fails: each variable of the\n"
    "signing run that can replace code the campaign ran (KGATE_WORKER_WRAPPER, KGATE_CC,\n"
    "LD_PRELOAD, ...; docs/evidence.md) is a line \"unattested environment: NAME=value\" unless\n"
    "--allow-env names it.\n"
    "The references come from the op server: a process of its own that compiles the folder's\n"
    "op sources and runs them confined (a system-call allow-list, no writes, no network, the\n"
    "signing key's folder and $HOME hidden, CPU and time limits).  Only the values it returns\n"
    "count: if it crashes, hangs, makes a forbidden call or sends a malformed reply, the folder\n"
    "is NOT verified.\n"
    "Prints one line per problem naming the file, then a summary.\n";

static int verify_folder(const char *dir, const char *pub, const kg_attest_allow *allow, const kg_ref_source *refs);

/* --allow-env's names (comma-separated) into names, at most cap; the
 * count, or -1 when one is not a variable's name. */
static int allow_names(char *list, const char **names, int cap)
{
    int n = 0;
    for (char *tok = strtok(list, ","); tok != NULL; tok = strtok(NULL, ",")) {
        if (n == cap || tok[0] == '\0' || strspn(tok, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_") !=
            strlen(tok))
            return -1;
        names[n++] = tok;
    }
    return n;
}

static const char footer[] = "Exit status: 0 verified, 1 a mismatch, 2 usage error or not an evidence folder.\n";

int kg_cmd_verify(int argc, char **argv, const kg_settings *env)
{
    const char *dir = NULL, *pub = NULL, *allow_env = NULL;
    double op_timeout = 300;
    const kg_cli_opt opts[] = {
        { .name = "key", .arg = "PUB", .kind = KG_CLI_STRING, .dst = &pub,
          .help = "the public key (kgate key init's " KG_ATTEST_PUB ") that must have signed the folder" },
        { .name = "allow-env", .arg = "NAMES", .kind = KG_CLI_STRING, .dst = &allow_env,
          .help = "with --key: accept these unattested variables of the signing run's environment (comma-separated names)" },
        { .name = "op-timeout", .arg = "S", .kind = KG_CLI_REAL, .dst = &op_timeout, .min = 0.1, .max = 86400,
          .help = "the op server's limit for one reference, in seconds (300)" },
        { .name = NULL },
    };
    const kg_cli_spec spec = { .cmd = "verify", .args = "DIR", .about = about, .opts = opts, .footer = footer };
    int parsed = kg_cli_parse(&spec, argc, argv, &dir);
    if (parsed != KG_CLI_GO) return parsed;
    char list[1024];
    const char *names[64];
    kg_attest_allow allow = { names, 0 };
    if (allow_env != NULL) {
        snprintf(list, sizeof list, "%s", allow_env);
        if (pub == NULL || (allow.n = allow_names(list, names, 64)) < 0) {
            fprintf(stderr, "kgate verify: --allow-env %s: %s\n", allow_env, pub == NULL ? "needs --key PUB (it "
                    "accepts variables of a signed statement)" : "expected variable names separated by commas "
                    "(letters, digits, _), at most 64");
            return KG_EXIT_USAGE;
        }
    }
    kg_opclient *oc = NULL;
    kg_err err = { 0 };
    const kg_opclient_opts oo = { .settings = env, .request_s = op_timeout };
    if (kg_opclient_new(&oo, &oc, &err) != KG_OK) {
        fprintf(stderr, "kgate verify: %s\n", err.msg);
        return KG_EXIT_USAGE;
    }
    kg_ref_source refs = kg_opclient_source(oc);
    int rc = verify_folder(dir, pub, &allow, &refs);
    kg_opclient_free(oc);
    return rc;
}

static int verify_folder(const char *dir, const char *pub, const kg_attest_allow *allow, const kg_ref_source *refs)
{
    kg_sb out = { 0 };
    kg_err err = { 0 };
    int nbad = 0;
    /* the signature before anything else: a folder it does not vouch for
     * is not checked further */
    kg_attest_state ast;
    char keyid[65];
    kg_sb aout = { 0 };
    int abad = 0;
    if (kg_attest_check(dir, pub, allow, &ast, keyid, &aout, &abad, &err) != KG_OK) {
        kg_sb_free(&aout);
        fprintf(stderr, "kgate verify: --key %s: %s\n", pub, err.msg);
        return KG_EXIT_USAGE;
    }
    for (char *cur = aout.buf, *nl; cur != NULL && *cur != '\0'; cur = nl ? nl + 1 : NULL) {
        nl = strchr(cur, '\n');
        if (nl) *nl = '\0';
        fprintf(stderr, "kgate verify: MISMATCH %s\n", cur);
    }
    kg_sb_free(&aout);
    if (ast == KG_ATTEST_BAD_SIG || (ast == KG_ATTEST_UNSIGNED && pub != NULL)) {
        fprintf(stderr, "kgate verify: %s: %s: NOT verified\n", dir,
                ast == KG_ATTEST_UNSIGNED ? "unsigned" : "the signature does not hold");
        return KG_EXIT_FAIL;
    }
    if (kg_cli_quiet) {
        /* nothing on stdout */
    } else if (ast == KG_ATTEST_UNSIGNED) printf("%s: unsigned (no attestation.dsse.json): who produced it is not checked\n", dir);
    else if (ast == KG_ATTEST_UNCHECKED)
        printf("%s: signed by key %s: signature not checked (kgate verify --key PUB checks it)\n", dir, keyid);
    else if (ast == KG_ATTEST_GOOD) printf("%s: signature ok: key %s\n", dir, keyid);
    int rc = kg_verify_dir_key(dir, pub, refs, &out, &nbad, &err);
    nbad += abad;
    if (rc != KG_OK) {
        kg_sb_free(&out);
        fprintf(stderr, "kgate verify: %s\n", err.msg);
        return KG_EXIT_USAGE;
    }
    /* problems on stderr, the summary (last line) on stdout */
    char *last = out.buf ? strrchr(out.buf, '\n') : NULL;
    if (last != NULL) {
        *last = '\0';
        char *prev = strrchr(out.buf, '\n');
        if (prev != NULL) {
            *prev = '\0';
            for (char *cur = out.buf, *nl; cur != NULL; cur = nl ? nl + 1 : NULL) {
                nl = strchr(cur, '\n');
                if (nl) *nl = '\0';
                /* a line that is a note, not a problem, is printed as one */
                if (strncmp(cur, "note: ", 6) == 0) fprintf(stderr, "kgate verify: %s\n", cur);
                else fprintf(stderr, "kgate verify: MISMATCH %s\n", cur);
            }
            if (!kg_cli_quiet) printf("%s: %s\n", dir, prev + 1);
        } else if (!kg_cli_quiet) {
            printf("%s: %s\n", dir, out.buf);
        }
    }
    if (nbad) fprintf(stderr, "kgate verify: %s: %d problem(s): NOT verified\n", dir, nbad);
    else if (!kg_cli_quiet) printf("%s: verified\n", dir);
    kg_sb_free(&out);
    return nbad ? KG_EXIT_FAIL : KG_EXIT_PASS;
}

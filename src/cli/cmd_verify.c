/* cmd_verify.c: `kgate verify DIR`: checks an evidence folder (hashes,
 * recomputed reports, replayed outputs).  It writes nothing. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "verify/verify.h"
#include "sandbox/sandbox.h"
#include "kgate/op.h"
#include "evidence/attest.h"
#include "cli.h"
#include "base/util.h"


static const char about[] =
    "Checks the evidence folder DIR without changing it:\n"
    "  - every file listed in SHA256SUMS has its hash, and no file is unlisted;\n"
    "  - plan.kg hashes to plan.sha256; the reports recomputed from the raw samples equal\n"
    "    report.md, report.html, results.json and results.csv byte for byte;\n"
    "  - every saved checked output (outputs/) is compared again with a float64 reference\n"
    "    recomputed on the CPU from its recorded seed, and agrees with checks/.\n"
    "With --key PUB, first the signature: attestation.dsse.json must be a DSSE envelope signed\n"
    "by PUB's private key over an in-toto statement whose subjects are the folder's files with\n"
    "their SHA-256; a folder without one is unsigned, which fails.  Without --key the signer's\n"
    "keyid is named but not checked, and an unsigned folder is said to be so.\n"
    "The folder's own op modules (sources/op-NAME.c) are compiled, then loaded under a\n"
    "system-call filter: they cannot write a file, start a program or a process, open a\n"
    "socket, signal another process or type into a terminal; a denied call ends verify\n"
    "with NOT verified.\n"
    "Prints one line per problem naming the file, then a summary.\n";

/* The folder's op modules are its producer's code: verify loads them
 * under kg_sandbox_reader (planops.c compiles them first).  A call the
 * filter denies ends verify here, NOT verified. */
static const char *verifying;

static void put(const char *text)
{
    ssize_t w = write(2, text, strlen(text));
    (void)w;
}

static void op_violation(int nr)
{
    put("kgate verify: ");
    put(verifying != NULL ? verifying : "the folder");
    put(": the folder's op module made a forbidden system call (");
    put(kg_sandbox_denied_name(nr));
    put(") while verify ran it: NOT verified\n");
    _exit(KG_EXIT_FAIL);
}

static int confine_ops(char *why, size_t cap)
{
    return kg_sandbox_reader(op_violation, why, cap);
}

static int verify_folder(const char *dir, const char *pub);

static const char footer[] = "Exit status: 0 verified, 1 a mismatch, 2 usage error or not an evidence folder.\n";

int kg_cmd_verify(int argc, char **argv, const kg_settings *env)
{
    (void)env; /* needs none of the environment */
    const char *dir = NULL, *pub = NULL;
    const kg_cli_opt opts[] = {
        { .name = "key", .arg = "PUB", .kind = KG_CLI_STRING, .dst = &pub,
          .help = "the public key (kgate key init's " KG_ATTEST_PUB ") that must have signed the folder" },
        { .name = NULL },
    };
    const kg_cli_spec spec = { .cmd = "verify", .args = "DIR", .about = about, .opts = opts, .footer = footer };
    int parsed = kg_cli_parse(&spec, argc, argv, &dir);
    if (parsed != KG_CLI_GO) return parsed;
    /* the checks run in a child, so that a folder's op module stopped by
     * the filter where its handler cannot run (a call made with every
     * signal blocked, as posix_spawn makes its clone) is still named here */
    fflush(NULL);
    pid_t child = fork();
    if (child < 0) {
        fprintf(stderr, "kgate verify: cannot fork: %s\n", strerror(errno));
        return KG_EXIT_USAGE;
    }
    if (child == 0) return verify_folder(dir, pub);
    int status = 0;
    while (waitpid(child, &status, 0) < 0)
        if (errno != EINTR) {
            fprintf(stderr, "kgate verify: waitpid: %s\n", strerror(errno));
            return KG_EXIT_USAGE;
        }
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    int sig = WTERMSIG(status);
    if (sig == SIGSYS)
        fprintf(stderr, "kgate verify: %s: the folder's op module made a forbidden system call while verify ran "
                "it: NOT verified\n", dir);
    else
        fprintf(stderr, "kgate verify: %s: verify died of signal %d (%s): NOT verified\n", dir, sig, strsignal(sig));
    return KG_EXIT_FAIL;
}

static int verify_folder(const char *dir, const char *pub)
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
    if (kg_attest_check(dir, pub, &ast, keyid, &aout, &abad, &err) != KG_OK) {
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
    if (ast == KG_ATTEST_UNSIGNED) printf("%s: unsigned (no attestation.dsse.json): who produced it is not checked\n", dir);
    else if (ast == KG_ATTEST_UNCHECKED)
        printf("%s: signed by key %s: signature not checked (kgate verify --key PUB checks it)\n", dir, keyid);
    else if (ast == KG_ATTEST_GOOD) printf("%s: signature ok: key %s\n", dir, keyid);
    verifying = dir;
    kg_ops_confine_foreign(confine_ops);
    int rc = kg_verify_dir_key(dir, pub, &out, &nbad, &err);
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
            printf("%s: %s\n", dir, prev + 1);
        } else {
            printf("%s: %s\n", dir, out.buf);
        }
    }
    if (nbad) fprintf(stderr, "kgate verify: %s: %d problem(s): NOT verified\n", dir, nbad);
    else printf("%s: verified\n", dir);
    kg_sb_free(&out);
    return nbad ? KG_EXIT_FAIL : KG_EXIT_PASS;
}

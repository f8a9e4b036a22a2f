/* cmd_key.c: `kgate key init [--out DIR]`: makes the Ed25519 key pair
 * that signs evidence folders (attest.h). */
#include <stdio.h>
#include <string.h>
#include "evidence/attest.h"
#include "cli.h"

static const char about[] =
    "init: makes an Ed25519 key pair for signing evidence folders: DIR/" KG_ATTEST_PRIV " (the private\n"
    "key, mode 0600; an existing one is never overwritten) and DIR/" KG_ATTEST_PUB " (the public key,\n"
    "for kgate verify --key).  DIR defaults to $XDG_CONFIG_HOME/kgate, else ~/.config/kgate, where\n"
    "kgate run finds the key when it is given no --key.  Prints the two paths.\n";

static const char footer[] = "Exit status: 0 written, 2 usage error or a key already there.\n";

int kg_cmd_key(int argc, char **argv, const kg_settings *env)
{
    const char *sub = NULL, *out = NULL;
    const kg_cli_opt opts[] = {
        { .name = "out", .arg = "DIR", .kind = KG_CLI_STRING, .dst = &out,
          .help = "the folder of the key files (default $XDG_CONFIG_HOME/kgate or ~/.config/kgate)" },
        { .name = NULL },
    };
    const kg_cli_spec spec = { .cmd = "key", .args = "init", .about = about, .opts = opts, .footer = footer,
                               .quiet_help = "make the key pair without naming its files" };
    int parsed = kg_cli_parse(&spec, argc, argv, &sub);
    if (parsed != KG_CLI_GO) return parsed;
    if (strcmp(sub, "init") != 0) {
        fprintf(stderr, "kgate key: unknown action '%s' (kgate key init makes a key pair)\n", sub);
        return KG_EXIT_USAGE;
    }
    if (out == NULL) out = env->key_dir;
    if (out == NULL) {
        fprintf(stderr, "kgate key init: neither XDG_CONFIG_HOME nor HOME is set: pass --out DIR\n");
        return KG_EXIT_USAGE;
    }
    char priv[1200], pub[1200];
    kg_err err = { 0 };
    int rc = kg_attest_key_init(out, priv, sizeof priv, pub, sizeof pub, &err);
    if (rc != KG_OK) return kg_cli_fail(rc, err.msg);
    if (kg_cli_quiet) return KG_EXIT_PASS;
    printf("private key %s (mode 0600: keep it to yourself; kgate run --key signs with it)\n", priv);
    printf("public key  %s (for kgate verify DIR --key)\n", pub);
    return KG_EXIT_PASS;
}

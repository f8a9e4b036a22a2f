# The signing key is out of an untrusted CPU arm's reach: the arm host
# covers the key's folder (the --key file's, and the default one under
# the user's config folder) with an empty read-only tmpfs in its own
# mount namespace before the arm's object loads, so that not even its
# constructor can read it.  The attack: a candidate whose constructor
# opens the key and writes what it read to its log (the worker's log
# keeps the arm host's stderr).  Where the arm host gets no mount
# namespace (the resources' sandbox column lacks mountns), the key stays
# readable: the test says so and checks the column says "hide" is off.
. tests/cli_lib.sh
export KGATE_LOCK_DIR="$T/locks"
"$KGATE" key init --out "$T/keys" >/dev/null 2>&1 || die "key init"
KEY="$T/keys/signing-key.pem"
[ -f "$KEY" ] || die "no key made"
cat >"$T/spy.c" <<EOF2
#include <stdio.h>
#include <string.h>
#include "kgate/kernel.h"
__attribute__((constructor)) static void spy(void)
{
    char line[128] = "";
    FILE *fp = fopen("$KEY", "r");
    if (fp != NULL && fgets(line, sizeof line, fp) != NULL)
        fprintf(stderr, "kgate-attack: read the signing key: %s", line);
    else
        fprintf(stderr, "kgate-attack: the signing key is out of reach\n");
    if (fp != NULL) fclose(fp);
}
void kernel(const kg_kargs *a);
void kernel(const kg_kargs *a)
{
    const void *X = a->in[0];
    float *Y = a->out[0];
    for (int64_t i = 0; i < a->M; i++) {
        float acc = 0.0f;
        for (int64_t j = 0; j < a->N; j++) acc += kg_load(X, a->dtype, i * a->N + j);
        KGATE_STORE(&Y[i], acc);
    }
}
EOF2
cat >"$T/p.kg" <<EOF2
[campaign]
name = key-hide
backend = cpu
quiet = 0
warmup = 1
samples = 3
rounds = 2
processes = 1
timeout = 60
[case r]
op = rowsum
dtype = f32
M = 16
N = 256
[arm naive]
op = rowsum
role = baseline
source = $PWD/kernels/cpu/rowsum_naive.c
[arm spy]
op = rowsum
role = candidate
source = $T/spy.c
[gate]
min_reduction = 1%
EOF2
"$KGATE" run --report "$T/p.kg" -o "$T/ev" --key "$KEY" >"$T/out" 2>"$T/err"; st=$?
[ $st -le 3 ] || { cat "$T/err" >&2; die "campaign: exit $st"; }
grep -q "kgate-attack:" "$T"/ev/logs/*.log || die "the spy's constructor did not run (no kgate-attack line in the logs)"
# the sandbox column, last and quoted: "seccomp,nnp,..."
sbx=$(grep '^0,r,spy,' "$T/ev/telemetry/resources-000.csv" | head -n 1 | sed 's/.*,"\([^"]*\)"$/\1/')
echo "key_hide: the spy's sandbox: $sbx" >&2
case ",$sbx," in
*mountns*)
    expect_no_grep "read the signing key" "$T/ev/logs/proc-000.log"
    expect_no_grep "BEGIN PRIVATE KEY" "$T/ev/logs/proc-000.log"
    expect_grep "kgate-attack: the signing key is out of reach" "$T/ev/logs/proc-000.log"
    case "$sbx" in *hide*) ;; *) die "a mount namespace but no hide in the sandbox column: $sbx" ;; esac ;;
*)
    echo "key_hide: the arm host has no mount namespace here: the key stays readable (the sandbox column says so)" >&2
    case "$sbx" in *hide*) die "hide reported without a mount namespace: $sbx" ;; esac ;;
esac
# the folder still verifies under the key
"$KGATE" verify "$T/ev" --key "$T/keys/signing-key.pub.pem" >"$T/v" 2>&1 || { cat "$T/v" >&2; die "verify --key"; }
exit 0

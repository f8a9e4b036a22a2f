# kgate verify runs no op code of its own: an evidence folder handed over
# by someone else carries the C source of its declared op
# (sources/op-NAME.c), and the references that replay its saved outputs
# come from the op server, a process of its own that compiles that source
# and runs it confined (docs/security.md, "Verifying a folder from someone
# else").  Nothing the op code does decides verify's outcome but the
# reference values it returns.  The attacks, each from the op module while
# it runs for verify (its constructor, or its reference):
#   exit0    _exit(0): with a later edit of the folder, and without one
#   the system calls a deny-list let through: fchmodat2 (on the verifier's
#            signing key), setxattrat, mq_open, msgget, shmget, sethostname
#            (the current name), clock_settime (the current time), fsopen,
#            move_mount, open_tree, acct (off)
#   write, exec, socket, tiocsti: a file, a program, a socket, a keystroke
#   garbage, bigframe: a malformed frame, an oversized one on the reply pipe
#   loop     a reference that never returns
#   key      reading the signing key's folder under $HOME
# Each must end NOT verified, exit 1 (the key attack: verified, the key out
# of reach), and leave nothing behind.
. tests/cli_lib.sh
export KGATE_LOCK_DIR="$T/locks"
R=$(pwd)
mkdir -p "$T/ops" "$T/home"
export HOME="$T/home"
unset XDG_CONFIG_HOME
"$KGATE" key init >/dev/null 2>&1 || die "kgate key init"
KEYDIR="$HOME/.config/kgate"
KEY=$(ls "$KEYDIR"/*.pem 2>/dev/null | grep -v pub | head -n 1)
[ -n "$KEY" ] && [ -f "$KEY" ] || die "no signing key under $KEYDIR"
chmod 600 "$KEY"
ATTACK="$T/attack"
{ echo '#define _GNU_SOURCE 1'; sed 's/\.reference = conv_reference,/.reference = attacked_reference,/' examples/ops/conv1d.c; } >"$T/ops/conv1d.c"
grep -q attacked_reference "$T/ops/conv1d.c" || die "the op's reference slot was not found"
# the declaration the op's table needs, before the table
awk '/^const kg_op kgate_op = \{/ { print "static int attacked_reference(const kg_case *c, const double *const in[], double *const out[], kg_err *err);" } { print }' \
    "$T/ops/conv1d.c" >"$T/ops/conv1d.tmp" && mv "$T/ops/conv1d.tmp" "$T/ops/conv1d.c"
cat >>"$T/ops/conv1d.c" <<EOF2

/* the attacker's payload: it acts only when $ATTACK names an attack, which
 * the test writes after the campaign, so the campaign ran as any other */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
static char attack[64];
static int attacked_reference(const kg_case *c, const double *const in[], double *const out[], kg_err *err)
{
    if (strcmp(attack, "loop") == 0)
        for (volatile unsigned long spin = 0;; spin++) {}
    return conv_reference(c, in, out, err);
}
static void went(const char *what, long rc) { fprintf(stderr, "payload: %s returned %ld\n", what, rc); }
__attribute__((constructor)) static void payload(void)
{
    FILE *f = fopen("$ATTACK", "r");
    if (f == NULL) return;
    if (fgets(attack, sizeof attack, f) == NULL) attack[0] = '\0';
    fclose(f);
    attack[strcspn(attack, "\n")] = '\0';
    const char *a = attack;
    char host[256] = "";
    struct timespec now;
    if (strcmp(a, "exit0") == 0) _exit(0);
    else if (strcmp(a, "fchmodat2") == 0) went(a, syscall(452, AT_FDCWD, "$KEY", 0644, 0));
    else if (strcmp(a, "setxattrat") == 0) went(a, syscall(463, AT_FDCWD, "$ATTACK", 0, "user.kgate", NULL, 0));
    else if (strcmp(a, "mq_open") == 0) {
        long q = syscall(SYS_mq_open, "kgate-attack", O_RDWR | O_CREAT, 0600, NULL);
        went(a, q);
        if (q >= 0) { close((int)q); syscall(SYS_mq_unlink, "kgate-attack"); }
    } else if (strcmp(a, "msgget") == 0) {
        long q = syscall(SYS_msgget, 0, 0600 | 01000);
        went(a, q);
        if (q >= 0) syscall(SYS_msgctl, q, 0, NULL);
    } else if (strcmp(a, "shmget") == 0) {
        long q = syscall(SYS_shmget, 0, 4096, 0600 | 01000);
        went(a, q);
        if (q >= 0) syscall(SYS_shmctl, q, 0, NULL);
    } else if (strcmp(a, "sethostname") == 0) {
        FILE *hf = fopen("/proc/sys/kernel/hostname", "r");
        if (hf != NULL && fgets(host, sizeof host, hf) != NULL) host[strcspn(host, "\n")] = '\0';
        if (hf != NULL) fclose(hf);
        went(a, syscall(SYS_sethostname, host, strlen(host)));
    } else if (strcmp(a, "clock_settime") == 0) {
        clock_gettime(CLOCK_REALTIME, &now);
        went(a, syscall(SYS_clock_settime, CLOCK_REALTIME, &now));
    } else if (strcmp(a, "fsopen") == 0) went(a, syscall(430, "tmpfs", 0));
    else if (strcmp(a, "move_mount") == 0) went(a, syscall(429, -1, "", -1, "", 0));
    else if (strcmp(a, "open_tree") == 0) went(a, syscall(428, AT_FDCWD, "/", 0));
    else if (strcmp(a, "acct") == 0) went(a, syscall(SYS_acct, NULL));
    else if (strcmp(a, "write") == 0) {
        int fd = open("$T/mark", O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (fd >= 0) { ssize_t w = write(fd, "written\n", 8); (void)w; close(fd); }
    } else if (strcmp(a, "exec") == 0) {
        int st = system("echo started > '$T/mark'");
        (void)st;
    } else if (strcmp(a, "socket") == 0) {
        int s = socket(AF_INET, SOCK_STREAM, 0);
        if (s >= 0) { fprintf(stderr, "payload: socket opened\n"); close(s); }
    } else if (strcmp(a, "tiocsti") == 0) {
        const char *c = "x";
        if (ioctl(2, TIOCSTI, c) == 0) fprintf(stderr, "payload: typed into the terminal\n");
    } else if (strcmp(a, "garbage") == 0) {
        ssize_t w = write(1, "this is not a frame of kgate's at all\n", 38);
        (void)w;
    } else if (strcmp(a, "bigframe") == 0) {
        unsigned char h[16] = { 0x4b, 0x47, 0x46, 0x31, 2, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0x30 };
        ssize_t w = write(1, h, sizeof h);
        (void)w;
    } else if (strcmp(a, "key") == 0) {
        int fd = open("$KEY", O_RDONLY);
        if (fd >= 0) _exit(0);   /* the key was readable: the server ends, and verify says so */
    }
}
EOF2
cat >"$T/plan.kg" <<PLAN
[campaign]
name = verify-confine
backend = cpu
quiet = 0
warmup = 1
samples = 3
rounds = 2
processes = 1
seed = 5
margin = 1%
timeout = 60

[op conv1d]
source = ops/conv1d.c

[case sig]
op = conv1d
dtype = bf16
B = 4
L = 200
W = 5

[arm naive]
op = conv1d
role = baseline
source = $R/kernels/cpu/conv1d_naive.c
entry = conv1d_naive

[arm tiled]
op = conv1d
role = candidate
source = $R/kernels/cpu/conv1d_tiled.c
entry = conv1d_tiled

[gate]
PLAN
"$KGATE" run --report "$T/plan.kg" -o "$T/ev" --no-progress --quiet-window 0 >"$T/run.out" 2>"$T/run.err"; st=$?
[ $st -le 1 ] || { cat "$T/run.err" >&2; die "the campaign: exit $st"; }
[ -f "$T/ev/attestation.dsse.json" ] || die "the campaign's folder is not signed (the key under \$HOME)"
PUB=$(ls "$KEYDIR"/*pub* | head -n 1)
KEYMODE=$(stat -c %a "$KEY")

# ---- 0. without an attack the folder verifies: the op server stops nothing verify needs
"$KGATE" verify --key "$PUB" "$T/ev" >"$T/v0.out" 2>"$T/v0.err"; st=$?
[ $st = 0 ] || { cat "$T/v0.out" "$T/v0.err" >&2; die "the honest folder: verify exit $st"; }
expect_grep ": verified$" "$T/v0.out"
expect_grep "saved outputs replayed" "$T/v0.out"
grep -q " 0 saved outputs replayed" "$T/v0.out" && die "the honest folder: no saved output was replayed"

not_verified() { # attack what-the-error-says
    a=$1
    [ $st = 1 ] || { cat "$T/v-$a.out" "$T/v-$a.err" >&2; die "attack '$a': verify exit $st (1 expected: NOT verified)"; }
    grep -q "NOT verified" "$T/v-$a.err" || { cat "$T/v-$a.err" >&2; die "attack '$a': not said NOT verified"; }
    grep -q ": verified$" "$T/v-$a.out" && die "attack '$a': verify also printed verified"
    grep -q "the op server $2" "$T/v-$a.err" ||
        { cat "$T/v-$a.err" >&2; die "attack '$a': verify did not say 'the op server $2'"; }
    [ -e "$T/mark" ] && die "attack '$a': the op module's payload left $(cat "$T/mark") in a file during verify"
    grep -q "payload: " "$T/v-$a.err" && die "attack '$a': the op module's output reached verify's"
    [ "$(stat -c %a "$KEY")" = "$KEYMODE" ] || die "attack '$a': the signing key's mode changed to $(stat -c %a "$KEY")"
    echo "ok   attack '$a': $(grep -m1 'the op server' "$T/v-$a.err" | sed 's/.*the op server/the op server/')"
}
attack() { # name [verify options...]
    a=$1; shift
    rm -f "$T/mark"
    echo "$a" >"$ATTACK"
    "$KGATE" verify --key "$PUB" "$@" "$T/ev" >"$T/v-$a.out" 2>"$T/v-$a.err"; st=$?
    rm -f "$ATTACK"
}

# ---- 1. _exit(0) from the op module, after a later edit of the folder: a
# changed check row (its text only: the chain and SHA256SUMS name it)
cp -r "$T/ev" "$T/ev-edited"
sed -i '2s/pass/fail/' "$T/ev-edited/checks/proc-000.csv"
echo exit0 >"$ATTACK"
"$KGATE" verify --key "$PUB" "$T/ev-edited" >"$T/v-edit.out" 2>"$T/v-edit.err"; st=$?
rm -f "$ATTACK"
[ $st = 1 ] || { cat "$T/v-edit.out" "$T/v-edit.err" >&2; die "_exit(0) with an edited folder: verify exit $st"; }
expect_grep "NOT verified" "$T/v-edit.err"
echo "ok   attack 'exit0' with an edited check row: NOT verified"
# ... and without an edit: the server's end is a failure, whatever its status
attack exit0
not_verified exit0 "ended"

# ---- 2. the system calls a deny-list let through, and the ones it named
for a in fchmodat2 setxattrat mq_open msgget shmget sethostname clock_settime fsopen move_mount open_tree acct \
         write exec socket tiocsti; do
    attack "$a"
    not_verified "$a" "made a forbidden system call"
done

# ---- 3. a malformed frame, an oversized one
attack garbage
not_verified garbage ""
attack bigframe
not_verified bigframe ""

# ---- 4. a reference that never returns: ended by the limit
t0=$(date +%s)
attack loop --op-timeout 2
not_verified loop "did not answer within 2 s"
[ $(( $(date +%s) - t0 )) -lt 60 ] || die "attack 'loop': verify took $(( $(date +%s) - t0 )) s"

# ---- 5. the signing key's folder, under $HOME: out of the op code's sight
# where the server gets a mount namespace of its own
attack key
if unshare --user --map-root-user --mount true 2>/dev/null; then
    [ $st = 0 ] || { cat "$T/v-key.out" "$T/v-key.err" >&2; die "attack 'key': the op code could read the signing key (verify exit $st)"; }
    echo "ok   attack 'key': the signing key is out of the op server's sight"
else
    echo "note attack 'key': this machine gives no process a mount namespace, so the key folder is not hidden here (verify exit $st)"
fi

# ---- 6. kgate report and kgate compare run no op code: the reports are
# rebuilt byte for byte with the attack armed, from ops.json
echo exit0 >"$ATTACK"
expect_report_identical "$T/ev"
"$KGATE" compare "$T/ev" "$T/ev" >"$T/cmp.out" 2>"$T/cmp.err" || { cat "$T/cmp.err" >&2; die "compare with the attack armed"; }
rm -f "$ATTACK"
echo "verify_confine: ok"

# kgate verify runs a folder's op module confined: an evidence folder
# handed over by someone else carries the C source of its declared op
# (sources/op-NAME.c), which verify compiles and loads to recompute the
# references.  The module's code runs under a system-call filter entered
# before it is loaded (docs/security.md, "Verifying a folder from someone
# else"): it cannot write or create a file, start a program or a process,
# or open a socket; a call it tries is named and the folder is NOT
# verified.  The attacks, each from the module's constructor when it runs
# inside `kgate verify`: write a file, start a shell, open a socket, push
# input into the terminal (TIOCSTI).
. tests/cli_lib.sh
R=$(pwd)
mkdir -p "$T/ops"
cp examples/ops/conv1d.c "$T/ops/conv1d.c"
cat >>"$T/ops/conv1d.c" <<'EOF2'

/* the attacker's payload: it acts only inside `kgate verify`, so the
 * campaign that made the folder ran as any other */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>
__attribute__((constructor)) static void payload(void)
{
    const char *what = getenv("KG_TEST_ATTACK"), *mark = getenv("KG_TEST_MARK");
    if (what == NULL || mark == NULL) return;
    char buf[512];
    int in = open("/proc/self/cmdline", O_RDONLY);
    ssize_t n = in >= 0 ? read(in, buf, sizeof buf - 1) : 0;
    if (in >= 0) close(in);
    if (n <= 0 || memmem(buf, (size_t)n, "verify", 7) == NULL) return;
    if (strcmp(what, "write") == 0) {
        int fd = open(mark, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (fd >= 0) { ssize_t w = write(fd, "written\n", 8); (void)w; close(fd); }
    } else if (strcmp(what, "exec") == 0) {
        char cmd[600];
        snprintf(cmd, sizeof cmd, "echo started > '%s'", mark);
        int st = system(cmd);
        (void)st;
    } else if (strcmp(what, "tiocsti") == 0) {
        /* a command pushed into the terminal's input, for the user's shell to run after verify */
        const char *c = "x";
        if (ioctl(2, TIOCSTI, c) == 0) fprintf(stderr, "payload: typed into the terminal\n");
    } else if (strcmp(what, "socket") == 0) {
        int s = socket(AF_INET, SOCK_STREAM, 0);
        if (s >= 0) { fprintf(stderr, "payload: socket opened\n"); close(s); }
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
"$KGATE" run "$T/plan.kg" -o "$T/ev" --no-progress >"$T/run.out" 2>"$T/run.err"; st=$?
[ $st -le 1 ] || { cat "$T/run.err" >&2; die "the campaign: exit $st"; }

# ---- 0. without an attack the folder verifies (the confinement stops nothing verify needs)
"$KGATE" verify "$T/ev" >"$T/v0.out" 2>"$T/v0.err"; st=$?
[ $st = 0 ] || { cat "$T/v0.out" "$T/v0.err" >&2; die "the honest folder: verify exit $st"; }
expect_grep "verified" "$T/v0.out"

# ---- 1-3. each attack is stopped, named, and the folder is not verified
for a in write exec socket tiocsti; do
    rm -f "$T/mark"
    KG_TEST_ATTACK=$a KG_TEST_MARK="$T/mark" "$KGATE" verify "$T/ev" >"$T/v-$a.out" 2>"$T/v-$a.err"; st=$?
    [ -e "$T/mark" ] && die "attack '$a': the op module's payload left $(cat "$T/mark") in a file during verify"
    grep -q "payload: socket opened" "$T/v-$a.err" && die "attack '$a': the op module opened a socket during verify"
    grep -q "payload: typed into the terminal" "$T/v-$a.err" && die "attack '$a': the op module typed into the terminal"
    [ $st = 1 ] || { cat "$T/v-$a.out" "$T/v-$a.err" >&2; die "attack '$a': verify exit $st (1 expected: NOT verified)"; }
    grep -q "op module made a forbidden system call" "$T/v-$a.err" ||
        { cat "$T/v-$a.err" >&2; die "attack '$a': verify did not say that the op module was stopped"; }
    grep -q "NOT verified" "$T/v-$a.err" || { cat "$T/v-$a.err" >&2; die "attack '$a': not said NOT verified"; }
    grep -q ": verified$" "$T/v-$a.out" && die "attack '$a': verify also printed verified"
    echo "ok   attack '$a' from the op module stopped: $(grep -m1 'forbidden system call' "$T/v-$a.err" | sed 's/.*: the folder/the folder/')"
done

# ---- 4. kgate report, which loads the module as trusted code of the user who runs it
# (unconfined: it writes the reports), regenerates every report byte for byte
expect_report_identical "$T/ev"
echo "verify_confine: ok"

# A campaign whose kgate executable is replaced while it runs (a rebuild,
# `make` or `pip install` beside a long campaign) keeps running the image
# it started with: workers, arm hosts and the op server are started from
# /proc/self/exe, not from the path, which by then names another file (or
# none, "... (deleted)").  Before, every arm host started after the
# replacement exited with status 127 (the exec of the path failed) and
# each of those processes lost its arms.
#   - the executable is copied, a cpu campaign runs from the copy, and the
#     copy is replaced by a script that fails as soon as the first process
#     is recorded; every later process still ends ok, the campaign ends
#     in a verdict, and the evidence verifies.
. tests/cli_lib.sh
mkdir -p "$T/bin" "$T/p"
cat >"$T/p/p.kg" <<PLAN
[campaign]
quiet = 0
backend = cpu
warmup = 1
samples = 20
rounds = 10
processes = 2
margin = 5%
timeout = 60
[case r]
op = rowsum
dtype = f32
M = 64
N = 2048
[arm base]
op = rowsum
role = baseline
source = $PWD/kernels/cpu/rowsum_naive.c
[arm cand]
op = rowsum
source = $PWD/kernels/cpu/rowsum_naive.c
[gate]
PLAN
try() { # attempt: 0 when the replacement came while the campaign ran
    rm -rf "$T/ev"
    cp "$KGATE" "$T/bin/kgate"
    KGATE_INCLUDE=$PWD/include "$T/bin/kgate" run "$T/p/p.kg" -o "$T/ev" --no-progress >"$T/out" 2>"$T/err" &
    pid=$!
    i=0
    # the first process recorded: a data row in processes.csv
    while [ "$(cat "$T/ev/processes.csv" 2>/dev/null | wc -l)" -lt 2 ] && kill -0 $pid 2>/dev/null && [ $i -lt 1200 ]; do
        sleep 0.05
        i=$((i + 1))
    done
    # a rebuild: another file at the path (renamed over it, as make and the linker do)
    printf '#!/bin/sh\necho "the replaced kgate ran: $*" >&2\nexit 99\n' >"$T/bin/kgate.new"
    chmod +x "$T/bin/kgate.new"
    mv -f "$T/bin/kgate.new" "$T/bin/kgate"
    running=no
    kill -0 $pid 2>/dev/null && running=yes
    wait $pid
    st=$?
    [ $running = yes ]
}
ok=no
for attempt in 1 2 3; do
    if try; then ok=yes; break; fi
done
[ $ok = yes ] || die "the campaign ended before its executable could be replaced (3 attempts)"
[ $st -le 1 ] || { cat "$T/err" >&2; die "a campaign whose executable was replaced: exit $st, expected a verdict"; }
expect_no_grep "the replaced kgate ran" "$T/err"
rows=$(awk -F, 'NR > 1' "$T/ev/processes.csv" | wc -l)
[ "$rows" = 4 ] || { cat "$T/ev/processes.csv" >&2; die "$rows processes recorded, expected 4"; }
bad=$(awk -F, 'NR > 1 && $3 != "ok"' "$T/ev/processes.csv")
[ -z "$bad" ] || { echo "$bad" >&2; die "processes after the replacement did not end ok"; }
expect_honest "$T/ev" "a campaign whose executable was replaced"
"$KGATE" verify "$T/ev" >"$T/v.out" 2>&1 || { cat "$T/v.out" >&2; die "verify"; }
echo "self_exe: ok"

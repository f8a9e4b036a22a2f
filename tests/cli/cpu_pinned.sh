# The worker and all its arm hosts share one CPU for the life of a process
# (docs/cpu-backend.md, "One CPU per process"): every host's affinity is
# that one CPU (each host's kernel reports its own, in the process's log),
# every raw row records the CPU its sample ran on next to the process's,
# the CPU varies by process over the CPUs kgate was started with, a
# candidate whose host names another CPU in its replies (cpu_lie.c) does not
# mark its samples as run elsewhere (the CPU is read from outside), and an
# arm that tries to move its host to other CPUs is stopped by the sandbox.
. tests/cli_lib.sh
[ -n "${KEEP:-}" ] && trap - EXIT && echo "kept $T" >&2
root=$(pwd)
ncpu=$(nproc)
pin=""
[ "$ncpu" -ge 2 ] && pin="taskset -c 0,1"
plan() { # file kernel-of-cand
    cat >"$1" <<PLAN
[campaign]
backend = cpu
quiet = 0
max_steal = 0
warmup = 1
samples = 2
rounds = 2
processes = 3
timeout = 60
[case small]
op = rowsum
dtype = f32
M = 4
N = 64
[arm base]
op = rowsum
role = baseline
source = $root/tests/plans/kernels/affinity_tell.c
[arm cand]
op = rowsum
role = candidate
source = $root/tests/plans/kernels/$2
[arm inworker]
op = rowsum
role = candidate
source = $root/kernels/cpu/rowsum_naive.c
trusted = yes
PLAN
}
plan "$T/p.kg" cpu_lie.c
$pin "$KGATE" run "$T/p.kg" -o "$T/ev" >"$T/run.out" 2>"$T/run.err"; st=$?
[ $st -le 1 ] || { tail -n 30 "$T/run.err" >&2; die "run: exit $st"; }
# every host's kernel saw exactly one CPU it may run on
grep -h "host-affinity:" "$T/ev"/logs/proc-*.log | sed 's/.*host-affinity: //' | sort | uniq -c >"$T/aff"
echo "hosts' affinity as their kernels saw it:"; cat "$T/aff"
[ -s "$T/aff" ] || die "no host reported its affinity"
grep -v "allowed=1 " "$T/aff" && die "an arm host may run on more than one CPU"
# every raw row: the CPU its sample ran on, and the process's CPU
raw_text "$T/ev/raw/proc-000.csv.gz" >"$T/raw0"
expect_grep "^process,direction,round,arm,case,sample,ns,plan,cpu,process_cpu$" "$T/raw0"
for f in "$T/ev"/raw/proc-*.csv.gz; do
    raw_text "$f" | awk -F, -v f="$f" 'NR > 1 { if ($10 < 0 || $9 != $10) bad = bad " row " NR ": cpu " $9 " process " $10;
                                if (p != "" && $10 != p) bad = bad " two process CPUs"; p = $10 }
                       END { if (bad != "") { print f ":" bad; exit 1 } print p }' >>"$T/cpus" ||
        { cat "$T/cpus" >&2; die "a sample ran on another CPU than its process's, or none was recorded"; }
done
# each host ran where its kernel said: the kernels' CPUs are the processes' CPUs
for f in "$T/ev"/logs/proc-*.log; do
    n=${f##*proc-}; n=${n%.log}
    want=$(raw_text "$T/ev/raw/proc-$n.csv.gz" | awk -F, 'NR == 2 { print $10 }')
    grep "host-affinity:" "$f" | grep -qv "cpu=$want\$" && die "process $n: a host ran on another CPU than $want"
done
echo "process CPUs: $(tr '\n' ' ' <"$T/cpus")"
if [ -n "$pin" ]; then
    [ "$(sort -u "$T/cpus" | tr '\n' ' ')" = "0 1 " ] || die "the processes' CPUs do not cover the 2 CPUs allowed"
fi
expect_grep "CPU placement" "$T/ev/report.md"
expect_grep "0 contaminated samples" "$T/ev/report.md"
"$KGATE" verify "$T/ev" >/dev/null 2>"$T/v.err" || { cat "$T/v.err" >&2; die "folder does not verify"; }
# a candidate that moves its host to other CPUs is stopped by the sandbox
plan "$T/m.kg" affinity_move.c
$pin "$KGATE" run "$T/m.kg" -o "$T/mv" >"$T/mv.out" 2>"$T/mv.err"; st=$?
expect_grep "| small | cand | candidate |.*| INCORRECT |" "$T/mv/report.md"
grep -h "sched_setaffinity" "$T/mv"/checks/proc-*.csv >/dev/null || die "the fault does not name sched_setaffinity"
exit 0

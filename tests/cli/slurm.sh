# A real Slurm on this machine: munged, slurmctld and slurmd for localhost,
# configured under the test's folder, started here and always stopped
# (trap).  `kgate slurm --submit` submits a fake-backend plan as a job array
# of 2 shards and its merge job (afterok); the test waits for the merge,
# verifies the merged folder (every shard again), requires its verdicts to
# equal an unsharded run's with the same seeds, then makes one shard fail
# and checks that `kgate slurm --resume` submits only that shard again,
# and the merge.  The same for a small cpu-backend plan (verified, its
# verdicts not compared: real timings).
#
# Needs Debian's slurm-wlm and munge (tools/install-deps.sh installs them)
# and root (the daemons run as root with SlurmUser=root).  Without them the
# test says SKIP and passes, unless CI=true: in CI it must run.
# kgate-test: waits (Slurm jobs polled until they end)
. tests/cli_lib.sh
need() {
    if [ "${CI:-}" = "true" ]; then die "slurm.sh: $1 (CI=true: install with sh tools/install-deps.sh, run as root)"; fi
    echo "SKIP slurm.sh: $1"
    exit 0
}
for b in sbatch squeue sacct slurmctld slurmd munged mungekey; do
    command -v $b >/dev/null 2>&1 || need "no $b (apt-get install slurm-wlm munge)"
done
[ "$(id -u)" -eq 0 ] || need "the test's Slurm runs as root"
S=$T/slurm
mkdir -p "$S/state" "$S/spool" "$S/log" "$S/munge"
chmod 700 "$S/munge"
# ports of this run's own (a second run of the test beside it picks others)
base=$((20000 + ($$ % 2000) * 2))
CPUS=$(nproc)
host=$(hostname -s 2>/dev/null || hostname)
mungekey -c -k "$S/munge/munge.key" >/dev/null 2>&1 || dd if=/dev/urandom of="$S/munge/munge.key" bs=1024 count=1 2>/dev/null
chmod 400 "$S/munge/munge.key"
SOCK=$S/munge/munge.socket
cat >"$S/slurm.conf" <<EOF
ClusterName=kgatetest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$base
SlurmdPort=$((base + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$SOCK
CredType=cred/munge
StateSaveLocation=$S/state
SlurmdSpoolDir=$S/spool
SlurmctldPidFile=$S/slurmctld.pid
SlurmdPidFile=$S/slurmd.pid
SlurmctldLogFile=$S/log/slurmctld.log
SlurmdLogFile=$S/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
ReturnToService=2
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=0
MinJobAge=600
KillWait=5
Waittime=0
NodeName=$host NodeAddr=127.0.0.1 CPUs=$CPUS RealMemory=1000 State=UNKNOWN
PartitionName=kgate Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF=$S/slurm.conf
MPID=
CPID=
DPID=
stop() {
    [ -n "$DPID" ] && kill "$DPID" 2>/dev/null
    [ -n "$CPID" ] && kill "$CPID" 2>/dev/null
    [ -n "$MPID" ] && kill "$MPID" 2>/dev/null
    sleep 1
    [ -n "$DPID" ] && kill -9 "$DPID" 2>/dev/null
    [ -n "$CPID" ] && kill -9 "$CPID" 2>/dev/null
    [ -n "$MPID" ] && kill -9 "$MPID" 2>/dev/null
    rm -rf "$T"
}
trap stop EXIT
munged -F -f --socket="$SOCK" --key-file="$S/munge/munge.key" --pid-file="$S/munge/munged.pid" \
    --log-file="$S/log/munged.log" --seed-file="$S/munge/seed" >"$S/log/munged.out" 2>&1 &
MPID=$!
i=0
while [ ! -S "$SOCK" ] && [ $i -lt 50 ]; do sleep 0.2; i=$((i + 1)); done
[ -S "$SOCK" ] || { cat "$S/log/munged.out" "$S/log/munged.log" >&2 2>/dev/null; die "munged did not start"; }
slurmctld -D -i -f "$S/slurm.conf" >"$S/log/slurmctld.out" 2>&1 &
CPID=$!
slurmd -D -N "$host" -f "$S/slurm.conf" >"$S/log/slurmd.out" 2>&1 &
DPID=$!
# the node idle: the cluster is up
i=0
until sinfo -h -N -o '%T' 2>/dev/null | grep -q '^idle'; do
    i=$((i + 1))
    if [ $i -gt 120 ]; then
        tail -n 20 "$S/log/slurmctld.log" "$S/log/slurmd.log" "$S/log/slurmctld.out" "$S/log/slurmd.out" >&2 2>/dev/null
        die "the node never became idle (sinfo: $(sinfo -h -N 2>&1 | head -n 3))"
    fi
    sleep 0.5
done
echo "slurm.sh: slurmctld and slurmd up ($CPUS CPUs, ports $base, $((base + 1)))"

# waits for the merge job of a campaign DIR (its DIR.slurm/merge.status), at most $2 s
wait_merge() {
    i=0
    while [ ! -s "$1.slurm/merge.status" ]; do
        i=$((i + 1))
        if [ $i -gt $(($2 * 2)) ]; then
            squeue >&2
            tail -n 30 "$1".slurm/*.out >&2 2>/dev/null
            die "the merge job of $1 did not end in $2 s"
        fi
        sleep 0.5
    done
}
# waits until no job of the cluster is pending or running
wait_idle() {
    i=0
    while [ -n "$(squeue -h 2>/dev/null)" ]; do
        i=$((i + 1))
        [ $i -gt $(($1 * 2)) ] && { squeue >&2; die "jobs still queued after $1 s"; }
        sleep 0.5
    done
}

# 1. a fake-backend plan as an array of 2 shards; the merged verdicts equal an unsharded run's
P=tests/plans/fake-shard.kg
"$KGATE" run --report "$P" -q -o "$T/whole" 2>"$T/whole.err"
st=$?
[ "$st" -le 1 ] || { cat "$T/whole.err" >&2; die "the unsharded run: exit $st"; }
"$KGATE" slurm "$P" --shards 2 -o "$T/c" --time 00:10:00 --submit >"$T/submit.out" 2>"$T/submit.err"
expect_status 0 $? "kgate slurm --submit"
expect_grep '^shards job [0-9]* (array all)' "$T/submit.out"
expect_grep '^merge job [0-9]* (after ok [0-9]*)' "$T/submit.out"
expect_grep '#SBATCH --array=0-1' "$T/c.slurm/shards.sbatch"
expect_grep 'SLURM_ARRAY_TASK_ID' "$T/c.slurm/shards.sbatch"
wait_merge "$T/c" 240
st=$(cat "$T/c.slurm/merge.status")
[ "$st" -le 1 ] || { cat "$T/c.slurm/merge.out" >&2; die "the merge job: kgate merge exit $st"; }
"$KGATE" verify "$T/c" >"$T/v.out" 2>"$T/v.err"
expect_status 0 $? "kgate verify of the merged folder"
expect_grep '2 shards verified' "$T/v.out"
cut -d, -f1-5 "$T/whole/results.csv" >"$T/whole.v"
cut -d, -f1-5 "$T/c/results.csv" >"$T/c.v"
cmp -s "$T/whole.v" "$T/c.v" || { diff "$T/whole.v" "$T/c.v" >&2; die "the merged verdicts differ from the unsharded run's"; }
cmp -s "$T/whole/results.csv" "$T/c/results.csv" || die "the merged results.csv differs from the unsharded run's"
grep -q '"gate_pass"' "$T/c/results.json" || die "no gate in the merged results.json"

# 2. a failed array task: --resume submits that shard only, then the merge
wait_idle 60
rm -rf "$T/c/shards/1/SHA256SUMS" "$T/c/shards/1/report.md" "$T/c/SHA256SUMS" "$T/c.slurm/merge.status"
# (the campaign's ledger, $T/c/ledger, stays: a failed task leaves it as it is)
find "$T/c" -maxdepth 1 -type f ! -name ledger -delete
rm -rf "$T/c/raw"
"$KGATE" slurm --resume "$T/c" >"$T/resume.out" 2>"$T/resume.err"
expect_status 0 $? "kgate slurm --resume"
expect_grep '1 of 2 shard(s) not complete: 1' "$T/resume.err"
expect_grep '^shards job [0-9]* (array 1)' "$T/resume.out"
wait_merge "$T/c" 240
"$KGATE" verify "$T/c" >"$T/v2.out" 2>"$T/v2.err" || { cat "$T/v2.err" >&2; die "verify after --resume"; }
cut -d, -f1-5 "$T/c/results.csv" >"$T/c2.v"
cmp -s "$T/whole.v" "$T/c2.v" || die "the verdicts after --resume differ from the unsharded run's"

# 3. a cpu-backend plan through the same path
wait_idle 60
cat >"$T/cpu.kg" <<EOF
[campaign]
name = slurm-cpu
backend = cpu
quiet = 0
warmup = 1
samples = 3
rounds = 2
processes = 1
timeout = 120

[case s1]
op = rowsum
dtype = f32
M = 8
N = 64

[case s2]
op = rowsum
dtype = f32
M = 16
N = 64

[arm base]
op = rowsum
role = baseline
source = $PWD/kernels/cpu/rowsum_naive.c

[arm cand]
op = rowsum
role = candidate
source = $PWD/kernels/cpu/rowsum_unrolled.c
EOF
"$KGATE" slurm "$T/cpu.kg" --shards 2 -o "$T/cpu" --submit >"$T/cs.out" 2>"$T/cs.err"
expect_status 0 $? "kgate slurm --submit (cpu)"
wait_merge "$T/cpu" 400
st=$(cat "$T/cpu.slurm/merge.status")
[ "$st" -le 1 ] || [ "$st" -eq 3 ] || { cat "$T/cpu.slurm/"*.out >&2; die "the cpu merge job: kgate merge exit $st"; }
"$KGATE" verify "$T/cpu" >"$T/cv.out" 2>"$T/cv.err" || { cat "$T/cv.err" >&2; die "verify of the cpu campaign"; }
expect_grep '2 shards verified' "$T/cv.out"
for c in s1 s2; do grep -q "^$c,cand,candidate" "$T/cpu/results.csv" || die "case $c missing from the merged cpu results"; done
echo "slurm.sh: ok"

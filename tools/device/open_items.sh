#!/bin/sh
# tools/device/open_items.sh OUT [PART ...]: the measurements the open issues still need on a GPU,
# in one device call, in order of priority, under one deadline, with one archive to bring back.
# PARTs (default: kb cache shard screen), each run only while DEADLINE (seconds from the start,
# default 560) leaves it its budget, and each cut at that budget:
#   kb       issue 31: a smoke test of torch library arms on the GPU (90 s; where it fails, the
#            problems run on bin/kgate-prev-portable), then the KernelBench-style problems not yet
#            timed (tools/device/py31_run.sh kb):
#            10_mean_reduction in full (170 s), 06_linear_relu's run alone (its checks are on
#            record: KB_CHECKS=0; 150 s)
#   gpu      make test-gpu's script (tests/gpu/run.sh)                     budget 290 s
#   cache    issue 33 item 1: the cache regime table (tools/device/cache_regime.sh)   230 s
#   cachesweep issue 33 item 1: the warm pairs at pack 1, 2, 4, 8 with bin/kgate-base-portable (a
#            binary from before the pack refusal), how the gap grows with the footprint  4 x 45 s
#   tf32check test-gpu section 19's plan (tests/gpu/tf32_wgmma.kg) alone, its failed rows   90 s
#   shard    issue 33 item 4: shards by process on one GPU (tools/device/shard_process.sh) 110 s
#   screen   issue 33 item 5: 64 variants screened (tools/device/screen64.sh, SCREEN64_FULL=0) 260 s
#   ctxprobe issue 33 item 5: how many CUDA contexts of two hardware queues (an arm host's since
#            df2ddfd) live at once: 132 and 200 (CONNS=2 tools/device/ctx_probe.py 132 200; the
#            default's 64 and 132 are in docs/measurements/h100-2026-12-05g)   80 s
#   tf32     how cuBLAS's TF32 converts f32 inputs (tools/device/tf32_probe.py: rounding to
#            nearest or truncation; kgate's tf32 contract admits both since 18092d9:
#            docs/measurements/cpu-2026-12-05-tf32-truncation/)             budget 60 s
#   helpers  issue 33 (a verdict's cost): tools/bench/helper_start.sh on the cuda backend, the
#            binary before the helpers started side by side (bin/kgate-prev-portable, carried in
#            the same archive) against this one, once each                  budget 150 s
#   hopper   issue 34: the Hopper split-K arms checked, ranked, ncu (tools/device/hopper_splitk.sh;
#            107 s on an H200 for 37 arms)                                   240 s
#   hopperk  issue 34: the arms that split K their own way (wg_k*, KSPLIT) against the best of
#            RED=3 and WGS=2, a subset plan (tools/device/hopper_subset.py; 57 s on an H100 for 10 arms) 120 s
#   hoppertma issue 34: the same for the TMA-fed forms (PLAN=examples/replication/splitk_hopper_tma.kg) 240 s
#   hopperf32 issue 34: the f32 form as TF32 (PLAN=examples/replication/splitk_hopper_f32.kg:
#            wgmma .tf32, cp.async and TMA, against cuBLAS's TF32 mode)      240 s
#   hopperwn issue 34: kgate screen, frozen confirmation and ncu of examples/replication/splitk_hopper_wn.kg
#            (tools/device/hopper_final.sh: the warpgroups splitting the block's columns, WGN=1) 330 s
#   hoppermc issue 34: kgate screen, frozen confirmation and ncu of examples/replication/splitk_hopper_mc.kg
#            (tools/device/hopper_final.sh: column blocks sharing A's tile by TMA multicast, MC=2, 4) 330 s
#   hopperw2 issue 34: kgate screen, frozen confirmation and ncu of examples/replication/splitk_hopper_w2.kg
#            (tools/device/hopper_final.sh: two-warpgroup forms: RED=1, the producer warp, multicast)  330 s
#   hopperconf issue 34: the committed frozen confirmation of splitk_hopper_final.kg's screen again
#            (examples/replication/splitk_hopper_final-family-confirm.kg; 114 s on an H100)  160 s
#   hopperf16 issue 34: the confirmed arms on f16 (examples/replication/splitk_hopper_f16.kg, frozen)  160 s
#   hopperf32s issue 34: kgate screen, frozen confirmation and ncu of the TF32 family
#            examples/replication/splitk_hopper_f32_screen.kg (tools/device/hopper_final.sh)  330 s
# Each part's summaries (never its evidence folders) go to OUT/open.tgz, with parts.txt: each
# part's exit status and wall time, or why it was skipped.  The binary: bin/kgate-portable from
# .carry/bins.tgz (make portable && strip bin/kgate-portable && tar czf .carry/bins.tgz
# bin/kgate-portable, carried as .carry).
set -u
OUT=${1:?usage: open_items.sh OUT [PART ...]}
shift
PARTS=${*:-kb cache shard screen}
ROOT=$(pwd)
DEADLINE=${DEADLINE:-560}
T0=$(date +%s)
W=$(mktemp -d)
R=$W/open
mkdir -p "$R" "$OUT"
# always from the archive: a warm machine keeps an earlier call's bin/ (ignored files stay)
[ -f .carry/bins.tgz ] && tar xzf .carry/bins.tgz
export KGATE="$ROOT/bin/kgate-portable" KGATE_INCLUDE="$ROOT/include"
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv; "$KGATE" --version
  git -C "$ROOT" rev-parse HEAD 2>/dev/null; date -u; } >"$R/env.txt" 2>&1

# part NAME BUDGET COMMAND...: runs it when the deadline leaves BUDGET seconds, cut at BUDGET
part() {
    name=$1 budget=$2
    shift 2
    left=$(( DEADLINE - ($(date +%s) - T0) ))
    if [ "$left" -lt "$budget" ]; then
        echo "$name: skipped, $left s left of the deadline, its budget is $budget s" >>"$R/parts.txt"
        return
    fi
    t=$(date +%s)
    KGATE_LOCK_DIR=$(mktemp -d) timeout "$budget" "$@" >"$R/$name.log" 2>&1
    last=$?
    echo "$name: exit $last after $(( $(date +%s) - t )) s" >>"$R/parts.txt"
}
last=0
# family NAME PLAN: issue 34's method on a family plan in one part (tools/device/hopper_final.sh:
# kgate screen, the frozen confirmation, ncu), its archive as NAME.tgz
family() {
    part "$1" 330 env LIMIT=320 sh tools/device/hopper_final.sh "$W/$1" "$2"
    [ -f "$W/$1/final.tgz" ] && cp "$W/$1/final.tgz" "$R/$1.tgz"
}

for p in $PARTS; do
    case $p in
    kb)
        # torch library arms on the GPU first (a kgate check: the helpers' start, new in this binary);
        # where it fails, the problems run on the binary before it, whose helpers start one by one
        KB_K=$KGATE
        part smoke 90 env KGATE_PYTHON="$(command -v python3)" HELPER_START_CHECK=1 sh tools/bench/helper_start.sh "$W/smoke" cuda "$KGATE"
        if [ "$last" != 0 ] && [ -x bin/kgate-prev-portable ]; then
            KB_K=$ROOT/bin/kgate-prev-portable
            echo "kb: the smoke failed on this binary; the problems run on bin/kgate-prev-portable" >>"$R/parts.txt"
        fi
        # through py31_run.sh, which installs the Python package first (the problems' files import it)
        part kb10 170 env KGATE="$KB_K" KB_PROBLEMS=10_mean_reduction STEP_LIMIT=140 KB_LIMIT=160 sh tools/device/py31_run.sh "$W/k10" kb
        part kb06 150 env KGATE="$KB_K" KB_PROBLEMS=06_linear_relu KB_CHECKS=0 STEP_LIMIT=130 KB_LIMIT=140 sh tools/device/py31_run.sh "$W/k06" kb
        for k in 10 06; do [ -f "$W/k$k/py31.tgz" ] && cp "$W/k$k/py31.tgz" "$R/kb$k.tgz"; done ;;
    gpu)
        part test-gpu 290 sh tests/gpu/run.sh ;;
    cache)
        part cache 230 env CACHE_REGIME_BUDGET=200 sh tools/device/cache_regime.sh "$W/c"
        mkdir -p "$R/cache"
        cp "$W"/c/*.md "$W"/c/*.txt "$W"/c/*.log "$R/cache/" 2>/dev/null ;;
    shard)
        part shard 110 sh tools/device/shard_process.sh "$W/s"
        [ -d "$W/s/r" ] && cp -r "$W/s/r" "$R/shard" ;;
    screen)
        part screen 260 env SCREEN64_FULL=0 SCREEN64_LIMIT=250 bash tools/device/screen64.sh "$W/scr"
        mkdir -p "$R/screen"
        cp "$W"/scr/*.md "$W"/scr/*.txt "$W"/scr/*.err "$W"/scr/*.csv "$R/screen/" 2>/dev/null ;;
    cachesweep)
        # how the warm gap grows with the fresh sets' footprint: the binary from before the refusal
        # (bin/kgate-base-portable, carried in the same archive), warm pairs at pack 1, 2, 4 and 8
        if [ -x bin/kgate-base-portable ]; then
            for p in 1 2 4 8; do
                part "sweep$p" 45 env CACHE_BASE= PACK=$p PAIRS="warm-fresh warm-resident" CACHE_REGIME_BUDGET=40 \
                    KGATE="$ROOT/bin/kgate-base-portable" sh tools/device/cache_regime.sh "$W/cs$p"
                mkdir -p "$R/cachesweep"
                cp "$W/cs$p/table.md" "$R/cachesweep/table-p$p.md" 2>/dev/null
                cp "$W/cs$p/cache-rows.txt" "$R/cachesweep/rows-p$p.txt" 2>/dev/null
            done
        else
            echo "cachesweep: skipped, no bin/kgate-base-portable in .carry/bins.tgz" >>"$R/parts.txt"
        fi ;;
    tf32check)
        # test-gpu section 19's plan alone, its failed rows brought back
        part tf32check 90 "$KGATE" check tests/gpu/tf32_wgmma.kg -o "$W/tf32c"
        grep -h ",fail," "$W/tf32c/checks/proc-000.csv" >"$R/tf32check-fails.csv" 2>/dev/null
        cp "$W/tf32c/report.md" "$R/tf32check-report.md" 2>/dev/null
        # the folder itself (its outputs hold what each arm computed: a failed element taken apart here)
        tar czf "$R/tf32check-folder.tgz" -C "$W" tf32c 2>/dev/null ;;
    ctxprobe)
        part ctxprobe 80 env CONNS=2 python3 tools/device/ctx_probe.py 132 200 ;;
    tf32)
        part tf32 60 python3 tools/device/tf32_probe.py ;;
    helpers)
        if [ -x bin/kgate-prev-portable ]; then
            part helpers 150 env KGATE_PYTHON="$(command -v python3)" sh tools/bench/helper_start.sh "$W/hst" cuda \
                "$ROOT/bin/kgate-prev-portable" "$KGATE"
        else
            echo "helpers: skipped, no bin/kgate-prev-portable in .carry/bins.tgz" >>"$R/parts.txt"
        fi ;;
    hopper)
        part hopper 240 env LIMIT=230 sh tools/device/hopper_splitk.sh "$W/hs" ncu
        [ -f "$W/hs/hopper_splitk.tgz" ] && cp "$W/hs/hopper_splitk.tgz" "$R/hopper.tgz" ;;
    hopperk)
        python3 tools/device/hopper_subset.py examples/replication/splitk_hopper.kg examples/replication/_sub.kg \
            'wg_k*' wg_clu_atom_w2_n32 wg_clu_atom_n64
        part hopperk 120 env LIMIT=110 PLAN=examples/replication/_sub.kg sh tools/device/hopper_splitk.sh "$W/hk"
        rm -f examples/replication/_sub.kg
        [ -f "$W/hk/hopper_splitk.tgz" ] && cp "$W/hk/hopper_splitk.tgz" "$R/hopperk.tgz" ;;
    hoppertma)
        part hoppertma 240 env LIMIT=230 PLAN=examples/replication/splitk_hopper_tma.kg sh tools/device/hopper_splitk.sh "$W/ht"
        [ -f "$W/ht/hopper_splitk.tgz" ] && cp "$W/ht/hopper_splitk.tgz" "$R/hoppertma.tgz" ;;
    hopperf32)
        part hopperf32 240 env LIMIT=230 PLAN=examples/replication/splitk_hopper_f32.kg sh tools/device/hopper_splitk.sh "$W/hf" ncu
        [ -f "$W/hf/hopper_splitk.tgz" ] && cp "$W/hf/hopper_splitk.tgz" "$R/hopperf32.tgz" ;;
    hopperwn) family hopperwn examples/replication/splitk_hopper_wn.kg ;;
    hoppermc) family hoppermc examples/replication/splitk_hopper_mc.kg ;;
    hopperw2) family hopperw2 examples/replication/splitk_hopper_w2.kg ;;
    hopperconf)
        part hopperconf 160 env STEP_LIMIT=140 sh tools/device/hopper_confirm.sh "$W/hc" confirm \
            examples/replication/splitk_hopper_final-family-confirm.kg
        [ -f "$W/hc/confirm.tgz" ] && cp "$W/hc/confirm.tgz" "$R/hopperconf.tgz" ;;
    hopperf16)
        part hopperf16 160 env STEP_LIMIT=140 sh tools/device/hopper_confirm.sh "$W/h16" confirm \
            examples/replication/splitk_hopper_f16.kg
        [ -f "$W/h16/confirm.tgz" ] && cp "$W/h16/confirm.tgz" "$R/hopperf16.tgz" ;;
    hopperf32s) family hopperf32s examples/replication/splitk_hopper_f32_screen.kg ;;
    *)
        echo "$p: unknown part (kb gpu cache shard screen ctxprobe tf32 helpers hopper hopperk hoppertma hopperf32 hopperwn hoppermc hopperw2 hopperconf hopperf16 hopperf32s)" >>"$R/parts.txt" ;;
    esac
done
echo "total $(( $(date +%s) - T0 )) s" >>"$R/parts.txt"
tar czf "$OUT/open.tgz" -C "$W" open
cat "$R/parts.txt"

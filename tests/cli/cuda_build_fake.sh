#!/bin/sh
# The cuda backend's build, against the stand-in driver of
# tests/unit/fake_libcuda.c (no GPU) and the real NVRTC: every NVRTC
# compile of a plan runs at once on the host's cores before the first
# process (kg_cuda_compile_many), each arm takes its own results in turn,
# and the workers load the campaign's build/ARM.DTYPE.cubin instead of
# compiling again.
#   - five arms over two cases, one of them specialized (a build per
#     case): six cubins in build/, the campaign runs and verifies, and
#     NVRTC ran only in kgate's own process, six arm compiles and one of
#     kgate's fill kernel (a stand-in NVRTC, tests/unit/nvrtc_count.c,
#     logs each compile): the two workers compiled nothing;
#   - an arm that does not compile among them: the campaign stops before
#     its first process, naming that arm and NVRTC's message, as a serial
#     build does.
# Skipped without NVRTC or without the stand-in driver.
. tests/cli_lib.sh
FAKE=$(pwd)/${BUILD:-build}/tests/libcuda_fake.so
[ -f "$FAKE" ] || { echo "cuda_build_fake: no $FAKE, skipped" >&2; exit 0; }
ldconfig -p 2>/dev/null | grep -q 'libnvrtc\.so' || [ -n "${CUDA_HOME:-}" ] ||
    { echo "cuda_build_fake: no NVRTC, skipped" >&2; exit 0; }
SRC=$(pwd)/kernels/cuda/gemm_bt_naive.cu
sed "s/^extern \"C\" __global__/this does not compile;\nextern \"C\" __global__/" "$SRC" >"$T/broken.cu"
grep -q "this does not compile" "$T/broken.cu" || die "the broken source was not made"
arm() { # name role source [defines] [specialize]
    printf '[arm %s]\nop = gemm_bt\nrole = %s\ntrusted = yes\nsource = %s\nentry = gemm_bt_naive\n' "$1" "$2" "$3"
    [ -n "${4:-}" ] && printf 'defines = %s\n' "$4"
    [ -n "${5:-}" ] && printf 'specialize = %s\n' "$5"
    printf 'grid = ceildiv(N, 16), ceildiv(M, 16)\nblock = 16, 16\nargs = A, B, C, M, N, K\n'
}
plan() { # broken: yes|no
    printf '[campaign]\nname = build_fake\nbackend = cuda\nquiet = 0\nwarmup = 1\nsamples = 2\nrounds = 1\n'
    printf 'processes = 1\ntimeout = 120\n'
    printf '[case s]\nop = gemm_bt\ndtype = f32\nM = 16\nN = 16\nK = 8\n'
    printf '[case t]\nop = gemm_bt\ndtype = f32\nM = 32\nN = 16\nK = 8\n'
    arm base baseline "$SRC"
    for k in 1 2; do arm "v$k" candidate "$SRC" "VARIANT=$k"; done
    arm sp candidate "$SRC" "VARIANT=3" yes
    [ "$1" = yes ] && arm broken candidate "$T/broken.cu"
    arm v4 candidate "$SRC" "VARIANT=4"
}
COUNT=$(pwd)/${BUILD:-build}/tests/libnvrtc_count.so
[ -f "$COUNT" ] || die "no $COUNT (make test-bin builds it)"
plan no >"$T/ok.kg"
KGATE_LIBNVRTC=$COUNT KGATE_TEST_NVRTC_LOG=$T/nvrtc.log KGATE_LIBCUDA=$FAKE KGATE_INCLUDE=$(pwd)/include \
    "$KGATE" run "$T/ok.kg" -o "$T/ok" --no-progress >"$T/ok.log" 2>&1; st=$?
[ $st -le 1 ] || { cat "$T/ok.log" "$T/ok/processes.csv" >&2; die "five arms: exit $st"; }
for f in base.f32 v1.f32 v2.f32 v4.f32 sp.s sp.t; do
    [ -s "$T/ok/build/$f.cubin" ] || die "five arms: no build/$f.cubin"
done
[ -s "$T/ok/build/kgate_fill.sm_90.cubin" ] || { ls "$T/ok/build" >&2; die "five arms: no build of kgate's fill kernel"; }
[ "$(ls "$T/ok/build/"*.cubin | wc -l)" = 7 ] || { ls "$T/ok/build" >&2; die "five arms: not six cubins and the fill's"; }
KGATE_LIBCUDA=$FAKE "$KGATE" verify "$T/ok" >"$T/ok.verify" 2>&1 || { cat "$T/ok.verify" >&2; die "five arms: verify"; }
# both processes ran every arm on both cases, yet NVRTC ran only in kgate's
# own process: the build's six arm compiles and one of the fill kernel (and
# kgate's peaks kernel); the workers compiled nothing
[ "$(grep -c . "$T/ok/processes.csv")" = 3 ] || { cat "$T/ok/processes.csv" >&2; die "five arms: not two processes"; }
[ -f "$T/nvrtc.log" ] || die "five arms: the stand-in NVRTC logged no compile (was it loaded?)"
[ "$(grep -c ' .*gemm_bt_naive\.cu$' "$T/nvrtc.log")" = 6 ] ||
    { cat "$T/nvrtc.log" >&2; die "five arms: not the build's 6 arm compiles (a worker compiled an arm?)"; }
[ "$(grep -c ' kgate_fill\.cu$' "$T/nvrtc.log")" = 1 ] ||
    { cat "$T/nvrtc.log" >&2; die "five arms: the fill kernel was compiled more than once (by a worker?)"; }
[ "$(cut -d' ' -f1 "$T/nvrtc.log" | sort -u | wc -l)" = 1 ] ||
    { cat "$T/nvrtc.log" >&2; die "five arms: NVRTC ran in several processes"; }
echo "ok   five arms over two cases, one specialized: six cubins and the fill's built before the first process, the two workers load them (NVRTC ran in kgate's process only), the campaign verifies"
plan yes >"$T/bad.kg"
KGATE_LIBCUDA=$FAKE KGATE_INCLUDE=$(pwd)/include "$KGATE" run "$T/bad.kg" -o "$T/bad" --no-progress >"$T/bad.log" 2>&1; st=$?
expect_status 2 $st "an arm that does not compile"
expect_grep "arm 'broken': NVRTC could not compile .*broken.cu(22): error: .*this does not compile" "$T/bad.log"
[ -e "$T/bad/processes.csv" ] && [ "$(awk 'END { print NR }' "$T/bad/processes.csv")" -gt 1 ] &&
    die "an arm that does not compile: a process ran"
echo "ok   an arm that does not compile stops the campaign before its first process, named with NVRTC's message"
echo "cuda_build_fake: ok"

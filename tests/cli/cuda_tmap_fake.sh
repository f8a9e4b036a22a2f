# Tensor map arguments (docs/plan-format.md, "Tensor maps"): an argument
# written A:tmap:16x16 passes the kernel a CUtensorMap of A, encoded by
# kgate where the buffer is mapped (the worker for a trusted arm, the arm's
# cuda host for an untrusted one), for every input set of a pack, against
# the stand-in driver of tests/unit/fake_libcuda.c, whose
# cuTensorMapEncodeTiled checks the driver's rules and whose gemm_bt_tma
# reads A and B through the maps (a map of the wrong matrix faults):
#   - kernels/cuda/gemm_bt_tma.cu, trusted and untrusted, pack 2 under
#     fresh inputs: every check passes on a case whose row pitch the TMA
#     can address, each operation of the timed graph reads its own input
#     set through its own maps (the stand-in faults a graph whose two
#     operations read one A: FAKE_CUDA_DISTINCT_SETS), and the folder
#     verifies;
#   - a case whose row pitch (K = 30 floats, 120 bytes) is not a multiple of
#     16 bytes: the tensor map arms are INADMISSIBLE there, saying why, and
#     the baseline still runs it;
#   - the plan's errors, refused before the first process: a box side over
#     256, a swizzle the TMA lacks, a bad form; and the box rows the TMA
#     cannot take (wider than the swizzle, not of 16 bytes): inadmissible.
# Skipped without NVRTC or without the stand-in driver.
. tests/cli_lib.sh
FAKE=$(pwd)/${BUILD:-build}/tests/libcuda_fake.so
[ -f "$FAKE" ] || { echo "cuda_tmap_fake: no $FAKE, skipped" >&2; exit 0; }
ldconfig -p 2>/dev/null | grep -q 'libnvrtc\.so' || [ -n "${CUDA_HOME:-}" ] ||
    { echo "cuda_tmap_fake: no NVRTC, skipped" >&2; exit 0; }
# a graph whose operations read one input set faults, in the arm hosts too
# (each operation of a pack reads a set of its own)
fake_cuda_copy FAKE_CUDA_DISTINCT_SETS=1
TMA=$(pwd)/kernels/cuda/gemm_bt_tma.cu
plan() { # args-of-the-tma-arms [extra-lines-of-the-tma-arms]
    printf '[campaign]\nname = tmap_fake\nbackend = cuda\nquiet = 0\nwarmup = 1\nsamples = 2\nrounds = 2\n'
    printf 'processes = 3\npack = 2\ninputs = fresh\ntimeout = 120\n'
    printf '[case s]\nop = gemm_bt\ndtype = f32\nM = 40\nN = 24\nK = 64\n'
    printf '[case odd]\nop = gemm_bt\ndtype = f32\nM = 16\nN = 16\nK = 30\nprimary = no\n'
    printf '[arm base]\nop = gemm_bt\nrole = baseline\ntrusted = yes\nsource = %s\n' "$(pwd)/kernels/cuda/gemm_bt_naive.cu"
    printf '[arm tma]\nop = gemm_bt\nsource = %s\nargs = %s\n%s' "$TMA" "$1" "${2:-}"
    printf '[arm tma_t]\nop = gemm_bt\ntrusted = yes\nsource = %s\nargs = %s\n%s' "$TMA" "$1" "${2:-}"
}
run() { # name args [extra]
    plan "$2" "${3:-}" >"$T/$1.kg"
    rm -rf "$T/$1"
    KGATE_LIBCUDA=$FAKE KGATE_INCLUDE=$(pwd)/include "$KGATE" run --report "$T/$1.kg" -o "$T/$1" --no-progress \
        >"$T/$1.log" 2>&1
}
results() { # folder case arm: state,verdict
    awk -F, -v c="$2" -v a="$3" 'NR == 1 { for (i = 1; i <= NF; i++) h[$i] = i; next }
        $h["case"] == c && $h["arm"] == a { print $h["state"] "," $h["verdict"] }' "$1/results.csv"
}
failed_but() { # folder: failed check rows other than case odd's admission
    failed_checks "$1" | awk -F, '!($3 == "odd" && $6 == "admissible")'
}
run ok "A:tmap:16x16, B:tmap:16x16, C, M, N, K"; st=$?
[ $st -le 1 ] || { cat "$T/ok.log" >&2; die "tensor maps: exit $st"; }
bad=$(failed_but "$T/ok")
[ -z "$bad" ] || { echo "$bad" | head -20 >&2; die "tensor map arms failed checks"; }
for a in tma tma_t; do
    case $(results "$T/ok" s $a) in ok,*) ;; *) cat "$T/ok/results.csv" >&2; die "$a on case s is not ok" ;; esac
    [ "$(results "$T/ok" odd $a | cut -d, -f1)" = inadmissible ] ||
        { cat "$T/ok/results.csv" >&2; die "$a on case odd (K % 4 != 0) is not inadmissible"; }
done
case $(results "$T/ok" odd base) in ok,*|,*) ;; *) cat "$T/ok/results.csv" >&2; die "the baseline did not run case odd" ;; esac
KGATE_LIBCUDA=$FAKE "$KGATE" verify "$T/ok" >"$T/ok.verify" 2>&1 || { cat "$T/ok.verify" >&2; die "verify"; }
echo "ok   tensor maps of A and B, trusted and hosted, pack 2 under fresh inputs: every check passes (held-out shapes included); K % 4 != 0 is inadmissible by the kernel's contract"
# without the contract's precondition: the map itself is refused for a
# 120-byte row pitch, and the case is inadmissible for the arm, saying why
run nopre "A:tmap:16x16, B:tmap:16x16, C, M, N, K" "requires = K > 0
"; st=$?
[ $st -le 1 ] || { cat "$T/nopre.log" >&2; die "without requires: exit $st"; }
for a in tma tma_t; do
    [ "$(results "$T/nopre" odd $a | cut -d, -f1)" = inadmissible ] ||
        { cat "$T/nopre/results.csv" >&2; die "$a on case odd (a 120-byte row pitch) is not inadmissible"; }
done
expect_grep "odd,tma,pre,admissible,fail,.*argument A:tmap:16x16: its row pitch, 30 columns x 4 bytes, is not a multiple of 16 bytes" "$T/nopre/checks/proc-000.csv"
expect_grep "odd,tma_t,pre,admissible,fail,.*argument A:tmap:16x16: its row pitch, 30 columns x 4 bytes, is not a multiple of 16 bytes" "$T/nopre/checks/proc-000.csv"
echo "ok   without the precondition, a 120-byte row pitch is inadmissible where kgate encodes the map, saying why"

bad() { # args message: refused by the build, before any process
    run bad "$1"; st=$?
    [ $st = 2 ] || { cat "$T/bad.log" >&2; die "args = $1: exit $st, expected 2 (refused before the first process)"; }
    [ -f "$T/bad/processes.csv" ] && [ "$(grep -c . "$T/bad/processes.csv")" -gt 1 ] && die "args = $1: a process ran"
    grep -q -- "$2" "$T/bad.log" "$T/bad/report.md" 2>/dev/null ||
        { cat "$T/bad.log" >&2; die "args = $1: no message '$2'"; }
}
bad "A:tmap:300x16, B:tmap:16x16, C, M, N, K" "bad.kg:30: args: arm 'tma': argument 'A:tmap:300x16': the box is 300x16; each side is 1 to 256"
bad "A:tmap:16x16:sw48, B:tmap:16x16, C, M, N, K" "swizzle 48 bytes; the TMA swizzles 32, 64 or 128"
inadm() { # args message: every case inadmissible for the tensor map arms, saying why
    run bad "$1"; st=$?
    [ $st -le 1 ] || { cat "$T/bad.log" >&2; die "args = $1: exit $st"; }
    for a in tma tma_t; do
        [ "$(results "$T/bad" s $a | cut -d, -f1)" = inadmissible ] || die "args = $1: $a is not inadmissible on case s"
    done
    grep -q -- "$2" "$T/bad/checks/proc-000.csv" || { cat "$T/bad/checks/proc-000.csv" >&2; die "args = $1: no message '$2'"; }
}
inadm "A:tmap:16x16:sw32, B:tmap:16x16, C, M, N, K" "a box row, 16 columns x 4 bytes, is wider than the 32-byte swizzle"
inadm "A:tmap:16x2, B:tmap:16x16, C, M, N, K" "a box row, 2 columns x 4 bytes, is not a multiple of 16 bytes"
bad "A:tmap16x16, B, C, M, N, K" "a tensor map is written NAME:tmap:RxC"
bad "A:f32, B, C, M, N, K" "a buffer takes no type suffix but :tmap:RxC"
echo "ok   a box over 256, a swizzle the TMA lacks, a bad form: each refused before the first process with its rule; a box row wider than its swizzle or not of 16 bytes: inadmissible where the map is encoded"
echo "cuda_tmap_fake: ok"

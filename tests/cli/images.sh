# Precompiled arms (image = PATH): a rowsum built to a shared object
# outside kgate runs as a cpu arm end to end, passes the checks, and its
# report says the numerical negative is not applicable; require_negative =
# yes then fails the gate with that reason; the image's hash is in the
# evidence and kgate verify catches an edited copy; a wrong image is
# rejected by the checks; a constructor that writes a file outside runs
# only in the sandboxed arm host (never in the supervisor or the worker)
# and is stopped there; bad plans give errors that name the line and the
# fix.  Where the stand-in CUDA driver and NVRTC are present, a cubin,
# a PTX and a shared object are tried as cuda images.
# kgate-test: first (nvcc builds, where it is installed)
. tests/cli_lib.sh
CC=${CC:-cc}
mkdir -p "$T/p/k"
build_so() { # source.c out.so
    "$CC" -std=c11 -O2 -shared -fPIC -I"$PWD/include" "$1" -o "$2" -lm ||
        die "cannot build $2 from $1"
}
build_so kernels/cpu/rowsum_unrolled.c "$T/p/k/rs_fast.so"
# a wrong rowsum: the last row is never written
cat >"$T/p/k/skip.c" <<'C'
#include "kgate/kernel.h"
void kernel(const kg_kargs *a);
void kernel(const kg_kargs *a)
{
    const void *X = a->in[0];
    float *Y = a->out[0];
    for (int64_t i = 0; i + 1 < a->M; i++) {
        float acc = 0.0f;
        for (int64_t j = 0; j < a->N; j++) acc += kg_load(X, a->dtype, i * a->N + j);
        KGATE_STORE(&Y[i], acc);
    }
}
C
build_so "$T/p/k/skip.c" "$T/p/k/skip.so"
# an honest rowsum whose constructor tries to leave a file outside: at
# dlopen, before the first call
cat >"$T/p/k/ctor.c" <<C
#include <fcntl.h>
#include <unistd.h>
#include "kgate/kernel.h"
__attribute__((constructor)) static void leave_a_file(void)
{
    int fd = open("$T/ctor-was-here", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) { (void)write(fd, "x", 1); close(fd); }
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
C
build_so "$T/p/k/ctor.c" "$T/p/k/ctor.so"

head_plan() { # name
    cat <<PLAN
[campaign]
quiet = 0
name = $1
backend = cpu
warmup = 1
samples = 3
rounds = 3
processes = 3
margin = 5%
control_margin = 5%
max_steal = 0
timeout = 60
[case r]
op = rowsum
dtype = f16
M = 33
N = 257
[arm rs]
op = rowsum
role = baseline
source = $PWD/kernels/cpu/rowsum_naive.c
[arm rs_copy]
op = rowsum
role = control
of = rs
PLAN
}
{ head_plan img; cat <<PLAN
[arm fast]
op = rowsum
image = k/rs_fast.so
[gate]
min_reduction = 5%
PLAN
} >"$T/p/img.kg"

# 1. an honest image arm, end to end
"$KGATE" run --report "$T/p/img.kg" -o "$T/ev" >"$T/out" 2>"$T/err"; st=$?
[ $st -le 1 ] || [ $st -eq 3 ] || { cat "$T/err" >&2; die "image run: exit status $st"; }
expect_grep "6 accepted, 0 excluded" "$T/out"
expect_grep "| r | fast | candidate |" "$T/out"
bad=$(awk -F, 'FNR > 1 && $7 == "fail" && $6 != "timing:escape"' "$T/ev"/checks/proc-*.csv)
[ -z "$bad" ] || { echo "$bad" >&2; die "failed checks of an honest image arm"; }
expect_grep 'Arm `fast` (candidate): negative: not applicable (precompiled image `k/rs_fast.so`)' "$T/ev/report.md"
expect_grep '"negative": "not applicable (precompiled image)"' "$T/ev/results.json"
expect_report_identical "$T/ev"
# the image is the arm: copied byte for byte into build/ and sources/, its hash recorded
cmp -s "$T/p/k/rs_fast.so" "$T/ev/build/fast.so" || die "build/fast.so is not the image"
cmp -s "$T/p/k/rs_fast.so" "$T/ev/sources/fast.so" || die "sources/fast.so is not the image"
[ ! -f "$T/ev/build/fast.so.log" ] || die "an image is not compiled: no compiler log expected"
sha=$(sha256sum "$T/p/k/rs_fast.so" | cut -d' ' -f1)
expect_grep "\"sha256\": \"$sha\"" "$T/ev/environment.json"
expect_grep '"image": "so"' "$T/ev/environment.json"
expect_grep "image = k/rs_fast.so" "$T/ev/plan.kg"
"$KGATE" verify "$T/ev" >"$T/v.out" 2>"$T/v.err"; st=$?
expect_status 0 $st "verify of an untouched image campaign"
cp -r "$T/ev" "$T/ev2"
printf 'x' >>"$T/ev2/sources/fast.so"
"$KGATE" verify "$T/ev2" >"$T/v.out" 2>"$T/v.err"; st=$?
expect_status 1 $st "verify after the image copy in sources/ was altered"
cat "$T/v.out" "$T/v.err" >"$T/v.all"
expect_grep "sources/fast.so: SHA-256 .* differs from environment.json.s record of arm fast.s image" "$T/v.all"
cp -r "$T/ev" "$T/ev3"
printf 'x' >>"$T/ev3/build/fast.so"
"$KGATE" verify "$T/ev3" >"$T/v.out" 2>"$T/v.err"; st=$?
expect_status 1 $st "verify after the built image was altered"

# 2. the negative of an image cannot be shown: kgate check says so, refuses
# --negative for it, and a gate that requires it fails with the reason
"$KGATE" check "$T/p/img.kg" -o "$T/chk" >"$T/out" 2>"$T/err"; st=$?
expect_status 0 $st "check of an honest image arm"
expect_grep "arm fast: negative: not applicable (precompiled image k/rs_fast.so)" "$T/out"
"$KGATE" check "$T/p/img.kg" -o "$T/neg" --negative fast >"$T/out" 2>"$T/err"; st=$?
expect_status 2 $st "check --negative of an image arm"
expect_grep "negative: not applicable (precompiled image k/rs_fast.so)" "$T/err"
sed 's/^min_reduction = 5%/min_reduction = 5%\nrequire_negative = yes/' "$T/p/img.kg" >"$T/p/req.kg"
"$KGATE" run --report "$T/p/req.kg" -o "$T/req" >"$T/out" 2>"$T/err"; st=$?
[ $st -eq 1 ] || [ $st -eq 3 ] || { cat "$T/err" >&2; die "require_negative run: exit status $st, expected 1 (or 3)"; }
expect_grep "## Gate: FAIL" "$T/req/report.md"
expect_grep "Result: case r, arm fast: negative: not applicable (precompiled image), and the gate requires it (require_negative = yes" \
    "$T/req/report.md"
expect_grep "require_negative = yes" "$T/req/plan.kg"
# a plan without the key keeps its canonical form (and hash)
expect_no_grep "require_negative" "$T/ev/plan.kg"

# 3. a wrong image is rejected by the checks: INCORRECT
{ head_plan wrong; cat <<PLAN
[arm skip]
op = rowsum
image = k/skip.so
[gate]
min_reduction = 5%
PLAN
} >"$T/p/wrong.kg"
"$KGATE" run --report "$T/p/wrong.kg" -o "$T/wrong" >"$T/out" 2>"$T/err"; st=$?
[ $st -eq 1 ] || [ $st -eq 3 ] || { cat "$T/err" >&2; die "wrong image run: exit status $st"; }
expect_grep "| r | skip | candidate |.*INCORRECT" "$T/wrong/report.md"
expect_grep "Result: case r, arm skip: INCORRECT" "$T/wrong/report.md"

# 4. a constructor runs only in the sandboxed arm host: its write is denied
# there (the arm fails), and nothing of it ran in the supervisor, which
# copied the image, or in the worker
{ head_plan ctor; cat <<PLAN
[arm ctor]
op = rowsum
image = k/ctor.so
[gate]
min_reduction = 5%
PLAN
} >"$T/p/ctor.kg"
"$KGATE" check "$T/p/ctor.kg" -o "$T/ctor" >"$T/out" 2>"$T/err"; st=$?
[ $st -ne 0 ] || die "check of an image whose constructor writes a file: exit 0"
[ ! -e "$T/ctor-was-here" ] || die "the image's constructor wrote a file outside its sandbox"
cat "$T/out" "$T/err" "$T/ctor"/logs/*.log "$T/ctor/processes.csv" >"$T/ctor.all" 2>/dev/null
expect_grep "sandbox violation" "$T/ctor.all"

# 5. bad plans: each error names the file, the line and the fix
bad_plan() { # name expected-message  (plan on stdin; run on the cpu backend)
    cat >"$T/p/$1.kg"
    "$KGATE" check "$T/p/$1.kg" -o "$T/bad-$1" >"$T/out" 2>"$T/err"; st=$?
    [ $st -ne 0 ] || die "bad plan $1: exit 0"
    expect_grep "$2" "$T/err"
}
{ head_plan both; cat <<PLAN
[arm x]
op = rowsum
source = $PWD/kernels/cpu/rowsum_naive.c
image = k/rs_fast.so
PLAN
} | bad_plan both "both.kg:29: arm has both source and image: 'image = k/rs_fast.so' (keep one of them"
{ head_plan ext; cat <<PLAN
[arm x]
op = rowsum
image = k/rs_fast.dll
PLAN
} | bad_plan ext "ext.kg:28: unknown kind of image: 'image = k/rs_fast.dll' (an image's name ends in .so"
{ head_plan wrongbe; cat <<PLAN
[arm x]
op = rowsum
image = k/fast.cubin
PLAN
} | bad_plan wrongbe "arm 'x': image 'k/fast.cubin' is a cuda image (.cubin); the cpu backend runs a shared object"
{ head_plan missing; cat <<PLAN
[arm x]
op = rowsum
image = k/absent.so
PLAN
} | bad_plan missing "missing.kg:26: kernel image not found: '$T/p/k/absent.so' (fix 'image' of \[arm x\]"
{ head_plan noentry; cat <<PLAN
[arm x]
op = rowsum
image = k/rs_fast.so
entry = no_such_kernel
PLAN
} | bad_plan noentry "arm 'x': no function 'no_such_kernel' in its image (set entry = NAME)"
printf 'not an object\n' >"$T/p/k/text.so"
{ head_plan notelf; cat <<PLAN
[arm x]
op = rowsum
image = k/text.so
PLAN
} | bad_plan notelf "image $T/p/k/text.so cannot be run on the cpu backend: it is not an ELF file"
"$CC" -std=c11 -O2 -c -fPIC -I"$PWD/include" kernels/cpu/rowsum_unrolled.c -o "$T/p/k/obj.so"
{ head_plan relobj; cat <<PLAN
[arm x]
op = rowsum
image = k/obj.so
PLAN
} | bad_plan relobj "it is an object file (.o), not a shared object"
{ head_plan flags; cat <<PLAN
[arm x]
op = rowsum
image = k/rs_fast.so
cflags = -O3
PLAN
} | bad_plan flags "flags.kg:29: compiler options on a precompiled arm: 'cflags = -O3' (an image is not compiled by kgate"
{ head_plan nokernel; cat <<PLAN
[arm x]
op = rowsum
PLAN
} | bad_plan nokernel "add 'source = PATH', 'image = PATH' (a precompiled kernel) or 'builtin = NAME'"

# 6. cuda images against the stand-in driver (no GPU), where it and NVRTC are here
FAKE=$(pwd)/${BUILD:-build}/tests/libcuda_fake.so
if [ -f "$FAKE" ] && { ldconfig -p 2>/dev/null | grep -q 'libnvrtc\.so' || [ -n "${CUDA_HOME:-}" ]; }; then
    cuda_plan() { # name image
        cat <<PLAN
[campaign]
name = $1
backend = cuda
quiet = 0
warmup = 2
samples = 5
rounds = 2
processes = 1
timeout = 120
[case c]
op = gemm_bt
dtype = f32
M = 9
N = 17
K = 5
[arm base]
op = gemm_bt
role = baseline
trusted = yes
source = $(pwd)/kernels/cuda/gemm_bt_naive.cu
entry = gemm_bt_naive
grid = ceildiv(N, 16), ceildiv(M, 16)
block = 16, 16
args = A, B, C, M, N, K
[arm img]
op = gemm_bt
image = $2
entry = gemm_bt_naive
grid = ceildiv(N, 16), ceildiv(M, 16)
block = 16, 16
args = A, B, C, M, N, K
PLAN
    }
    fake_cuda() { KGATE_LIBCUDA=$FAKE KGATE_INCLUDE=$(pwd)/include "$KGATE" "$@"; }
    # a real cubin for sm_90 (the stand-in device's), from NVRTC: the baseline's build
    cuda_plan cu0 k/rs_fast.so >"$T/p/cu0.kg"
    fake_cuda check "$T/p/cu0.kg" -o "$T/cu0" >"$T/out" 2>"$T/err"; st=$?
    [ $st -ne 0 ] || die "a .so as a cuda image: exit 0"
    expect_grep "image 'k/rs_fast.so' is a shared object, which runs on the cpu backend" "$T/err"
    cp "$T/cu0/build/base.f32.cubin" "$T/p/k/gemm.cubin" 2>/dev/null ||
        { cuda_plan cu1 k/none.cubin | sed '/^\[arm img\]/,$d' >"$T/p/cu1.kg"
          fake_cuda check "$T/p/cu1.kg" -o "$T/cu1" >"$T/out" 2>"$T/err"
          cp "$T/cu1/build/base.f32.cubin" "$T/p/k/gemm.cubin" || die "no cubin from the baseline's build"; }
    cuda_plan cubin k/gemm.cubin >"$T/p/cubin.kg"
    fake_cuda run --report "$T/p/cubin.kg" -o "$T/cubin" --no-progress >"$T/out" 2>"$T/err"; st=$?
    expect_status 1 $st "a cubin image against the stand-in driver (one process per direction: no interval)"
    expect_grep "check records; 0 failed" "$T/cubin/report.md"
    expect_grep 'Arm `img` (candidate): negative: not applicable (precompiled image `k/gemm.cubin`)' "$T/cubin/report.md"
    cmp -s "$T/p/k/gemm.cubin" "$T/cubin/build/img.f32.cubin" || die "build/img.f32.cubin is not the image"
    cmp -s "$T/p/k/gemm.cubin" "$T/cubin/sources/img.cubin" || die "sources/img.cubin is not the image"
    fake_cuda verify "$T/cubin" >"$T/v.out" 2>"$T/v.err"; st=$?
    expect_status 0 $st "verify of a cubin image campaign"
    # PTX for a later device than the stand-in's sm_90
    printf '.version 8.8\n.target sm_100\n.address_size 64\n' >"$T/p/k/later.ptx"
    cuda_plan ptx k/later.ptx >"$T/p/ptx.kg"
    fake_cuda check "$T/p/ptx.kg" -o "$T/ptx" >"$T/out" 2>"$T/err"; st=$?
    [ $st -ne 0 ] || die "PTX for sm_100 on an sm_90: exit 0"
    expect_grep "cannot run on this device: its .target is sm_100 and the device is sm_90" "$T/err"
    # a host shared object renamed .cubin
    cp "$T/p/k/rs_fast.so" "$T/p/k/host.cubin"
    cuda_plan host k/host.cubin >"$T/p/host.kg"
    fake_cuda check "$T/p/host.kg" -o "$T/host" >"$T/out" 2>"$T/err"; st=$?
    [ $st -ne 0 ] || die "a host object as a cubin: exit 0"
    expect_grep "it is an ELF file but not a CUDA one (EM_CUDA): a host object" "$T/err"
    # images built by nvcc, where it is installed: sm_90a and sm_90 cubins, a fatbin
    # and PTX run; a cubin for sm_80, and a fatbin without code for sm_90, do not
    if command -v nvcc >/dev/null 2>&1; then
        G=kernels/cuda/gemm_bt_naive.cu
        nvcc -cubin -arch=sm_90a -Iinclude $G -o "$T/p/k/g90a.cubin" &&
        nvcc -cubin -arch=sm_80 -Iinclude $G -o "$T/p/k/g80.cubin" &&
        nvcc -fatbin -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 -Iinclude $G \
            -o "$T/p/k/g.fatbin" &&
        nvcc -fatbin -gencode arch=compute_80,code=sm_80 -gencode arch=compute_100,code=compute_100 -Iinclude $G \
            -o "$T/p/k/g80.fatbin" &&
        nvcc -ptx -arch=compute_90 -Iinclude $G -o "$T/p/k/g.ptx" || die "nvcc could not build the test images"
        for img in g90a.cubin g.fatbin g.ptx; do
            cuda_plan nv k/$img >"$T/p/nv.kg"
            fake_cuda check "$T/p/nv.kg" -o "$T/nv-$img" >"$T/out" 2>"$T/err"; st=$?
            expect_status 0 $st "check of the nvcc image $img"
            expect_grep " 0 failed" "$T/out"
        done
        cuda_plan nv80 k/g80.cubin >"$T/p/nv80.kg"
        fake_cuda check "$T/p/nv80.kg" -o "$T/nv80" >"$T/out" 2>"$T/err"; st=$?
        [ $st -ne 0 ] || die "a cubin for sm_80 on an sm_90: exit 0"
        expect_grep "it was built for sm_80 and the device is sm_90 (compute capability 9.0): rebuild it with -arch=sm_90a" "$T/err"
        cuda_plan fb80 k/g80.fatbin >"$T/p/fb80.kg"
        fake_cuda check "$T/p/fb80.kg" -o "$T/fb80" >"$T/out" 2>"$T/err"; st=$?
        [ $st -ne 0 ] || die "a fatbin without sm_90 code on an sm_90: exit 0"
        expect_grep "it holds no code for sm_90 (compute capability 9.0): cubin sm_80, PTX sm_100" "$T/err"
    else
        echo "images: no nvcc: the nvcc images are skipped" >&2
    fi
else
    echo "images: no stand-in CUDA driver or NVRTC: the cuda image part is skipped" >&2
fi
echo "images: ok"

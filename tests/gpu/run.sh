#!/usr/bin/env bash
# tests/gpu/run.sh - the whole GPU check of kmux in one command, for a machine with an NVIDIA GPU
# (written for the offline H200 we can get: driver 580, nvcc 13.0, CMake, ninja, python3 with
# PyTorch cu130 and cuBLAS/cuDNN in NVIDIA's pip wheels, no package registry):
#   1. stop at once (exit 2) when there is no GPU;
#   2. Criterion and jansson: that machine has neither (and no pkg-config): carry them with
#      tests/gpu/bundle_deps.sh (run beforehand on a machine that has them, e.g. the CI image:
#      it fills <repo>/.gpu-deps, which run.sh puts in CMAKE_PREFIX_PATH; give the folder to
#      the remote run). No pkg-config is needed (cmake/KmuxDeps.cmake finds them either way);
#      when configure finds either missing, the run stops there (exit 6) naming bundle_deps.sh;
#   3. configure and build (Release; the CUDA plugin only, for the GPU's own architecture, e.g.
#      sm_90 on an H200), and only the targets the run uses: libkmux, the CUDA plugin,
#      kmux-info, kmux-bench, kmux_gpu_checks and the test programs of the ctest stage (not the
#      emulator, sanitizer or CPU-only programs); cuBLASLt and cuDNN come from the toolkit or the
#      pip wheels (backends/cuda/CMakeLists.txt searches both; the plugin's RUNPATH points at
#      what it found);
#   4. kmux-bench on cuda:0 over tests/gpu/cases.batch -> kmux.jsonl (every problem verified
#      against ref), then torch_bench.py on the same problems -> torch.jsonl (both append and
#      flush every record: a timeout loses nothing); every record carries the GPU name, driver,
#      clocks (machine label), library versions and the git commit;
#   5. `kmux-bench report kmux.jsonl torch.jsonl`: the side-by-side table, printed as soon as
#      the benchmarks end (within 62% of the budget: about 6 minutes of a 10-minute limit);
#   6. kmux_gpu_checks: the CUDA backend's GPU-only checks against ref (precision strict f32 vs
#      TF32 at K = 16384, i8 d_scale/amax, unaligned operands and bias, fp8 with K and N not
#      multiples of 16, asymmetric convolution padding, honest bf16x9 names), and every
#      implementation of each plan - cuBLASLt's, cuDNN's and kmux's own GEMM and convolution
#      kernels (kernels/gpu, "kmux-gpu:...") - on every GEMM type row and convolution case, one
#      table line per implementation (impls_gemm, impls_conv; summarised in checks-impls.txt);
#   7. ctest -R 'cuda|conformance|^test_amp$' with the GPU present (test_cuda, test_cuda_host,
#      the *_cuda tests: the epilogues, a step captured into a CUDA graph, alpha/beta in device
#      memory; test_amp and the conformance suites, which then run on cuda:0 on their small
#      shapes: the first 4 implementations of each plan and every kmux-gpu one beyond them,
#      KMUX_CONFORMANCE_IMPLS=kmux-gpu:), with the time left;
#   8. the summary, and the table again.
# Each stage ends by a fixed share of the budget (build 40%, kmux-bench 52%, PyTorch 62%, checks
# 80%, ctest 97%); a stage that ends early leaves its time to the next. A part that cannot run
# (no PyTorch) is reported loudly and makes the exit status non-zero; the other parts still run.
#
#   tests/gpu/run.sh [--configure-only|--build-only] [--quick] [BUILD_DIR]
#                                                            (BUILD_DIR default: build-gpu)
#
#   --configure-only  configure only, also without a GPU (a check of the dependencies)
#   --build-only  configure and build, also without a GPU (a check of the toolchain)
#   --quick       fewer benchmark problems and shorter timing (fits 10 minutes with the build)
# Environment:
#   KMUX_CUDA_ARCHS    GPU architectures to build, e.g. "90"; default: the GPU's own (nvidia-smi
#                      compute_cap), or the project's list (sm_80, 86, 89, 90) when unknown
#   KMUX_GPU_BUDGET_S  total time budget in seconds (default 570)
#   KMUX_GPU_MIN_TIME  seconds each benchmark problem is timed for (default 0.3; --quick 0.1)
#   KMUX_GPU_DEPS      folder of carried build dependencies (default <repo>/.gpu-deps)
#   KMUX_GPU_BATCH     the benchmark problems (default tests/gpu/cases.batch)
#   KMUX_GPU_CMAKE_ARGS  further configure arguments, split at blanks (tests/gpu/dry_run.sh
#                      hides this machine's pkg-config and /usr with them)
#   OUT                when set, logs, records and the report go to $OUT/gpu-run (else
#                      BUILD_DIR/gpu-run), written as they are made
#   KMUX_GPU_JOBS      build jobs (default: nproc)
#   KMUX_COMMIT        the commit to name in records when the tree is not a git checkout
#   CUDNN_ROOT, CUBLASLT_ROOT  where cuDNN / cuBLASLt live, when neither the toolkit nor a pip
#                      wheel of this python3 has them
#
# Exit status: 0 all passed; 2 no GPU (nothing was built or run); 3 toolchain missing or
# configure/build failed; 4 a GPU check or test failed or timed out; 5 a benchmark problem failed
# verification or did not run; 6 a dependency is missing (Criterion, jansson: configured, nothing
# built) or a part could not run (PyTorch).
set -u -o pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
build_only=0
quick=0
build=""
for a in "$@"; do
    case "$a" in
    --build-only) build_only=1 ;;
    --configure-only) build_only=2 ;;
    --quick) quick=1 ;;
    -h | --help) sed -n '2,66p' "$0"; exit 0 ;;
    -*) echo "run.sh: unknown option $a (see --help)"; exit 3 ;;
    *) build="$a" ;;
    esac
done
[ -n "$build" ] || build="$root/build-gpu"
case "$build" in /*) ;; *) build="$PWD/$build" ;; esac
budget=${KMUX_GPU_BUDGET_S:-570}
start=$(date +%s)
deadline=$((start + budget))
# seconds for a stage that must end by $1 permille of the budget (at least $2, never past the
# deadline): the reserves of later stages scale with the budget
until_mark() {
    local now t
    now=$(date +%s)
    t=$((start + budget * $1 / 1000 - now))
    [ "$t" -lt "$2" ] && t=$2
    [ $((now + t)) -gt "$deadline" ] && t=$((deadline - now))
    [ "$t" -lt 1 ] && t=1
    echo "$t"
}
say() { echo "run.sh [$(($(date +%s) - start))s] $*"; }
missing=() # parts that could not run, for the summary and exit status 6
loud() { echo "run.sh: ************************************************************"; echo "run.sh: *** $*"; echo "run.sh: ************************************************************"; }

# ---- 1. a GPU? (first, so a machine without one stops at once) -------------------------------
gpu_arch=""
if [ "$build_only" = 0 ]; then
    gpus=""
    if command -v nvidia-smi >/dev/null 2>&1; then
        gpus=$(nvidia-smi -L 2>&1 | grep -E '^GPU [0-9]+' || true)
        why="nvidia-smi lists no GPU: $(nvidia-smi -L 2>&1 | head -n 1)"
    elif [ -e /dev/nvidia0 ] || [ -r /proc/driver/nvidia/version ]; then
        gpus="(nvidia-smi missing, NVIDIA driver present)"
    else
        why="no nvidia-smi, no /dev/nvidia0, no /proc/driver/nvidia/version: no NVIDIA driver on this machine"
    fi
    if [ -z "$gpus" ]; then
        echo "run.sh: NO GPU: $why"
        echo "run.sh: nothing was built or run (use --build-only to check the build here). Exit status 2."
        exit 2
    fi
    say "GPU: $(echo "$gpus" | head -n 4 | tr '\n' ' ')"
fi
# the GPU's architecture (also for --build-only / --configure-only on a GPU machine)
command -v nvidia-smi >/dev/null 2>&1 &&
    gpu_arch=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n 1 | tr -d ' .')

# ---- 2. toolchain, libraries, dependencies --------------------------------------------------
command -v cmake >/dev/null 2>&1 || { echo "run.sh: cmake not found. Exit status 3."; exit 3; }
if ! command -v nvcc >/dev/null 2>&1; then
    for d in /usr/local/cuda/bin /usr/local/cuda-*/bin; do
        [ -x "$d/nvcc" ] && export PATH="$d:$PATH" && break
    done
fi
command -v nvcc >/dev/null 2>&1 || { echo "run.sh: nvcc not found (install the CUDA toolkit or put it on PATH). Exit status 3."; exit 3; }
cuda_home=$(cd "$(dirname "$(command -v nvcc)")/.." && pwd)
generator=()
command -v ninja >/dev/null 2>&1 && generator=(-G Ninja)
jobs=${KMUX_GPU_JOBS:-$(nproc 2>/dev/null || echo 4)}
archs=${KMUX_CUDA_ARCHS:-$gpu_arch}

cmake_args=(-DCMAKE_BUILD_TYPE=Release -DKMUX_WITH_CUDA=ON -DKMUX_WITH_HIP=OFF -DKMUX_WITH_ONEDNN=OFF
            -DKMUX_WITH_OPENBLAS=OFF -DKMUX_BUILD_BENCH=ON -DCUDAToolkit_ROOT="$cuda_home")
[ -n "$archs" ] && cmake_args+=(-DCMAKE_CUDA_ARCHITECTURES="$archs")
[ -n "${CUDNN_ROOT:-}" ] && cmake_args+=(-DCUDNN_ROOT="$CUDNN_ROOT")
[ -n "${CUBLASLT_ROOT:-}" ] && cmake_args+=(-DCUBLASLT_ROOT="$CUBLASLT_ROOT")
# NVIDIA's pip wheels (CMake finds them itself; their folders also go on LD_LIBRARY_PATH for the
# programs run below, so that cuDNN finds its sub-libraries)
wheel_libs=$(python3 - 2>/dev/null <<'EOF'
import glob, os, site
dirs = []
for sp in site.getsitepackages() + [site.getusersitepackages()]:
    for w in ("cublas", "cudnn", "cuda_runtime", "cu13", "cu12"):
        d = os.path.join(sp, "nvidia", w, "lib")
        if os.path.isdir(d):
            dirs.append(d)
print(":".join(dirs))
EOF
)
[ -n "$wheel_libs" ] && say "NVIDIA pip wheels: $wheel_libs"
run_ld="$wheel_libs"
deps=${KMUX_GPU_DEPS:-$root/.gpu-deps}
# Criterion and jansson carried in $deps (bundle_deps.sh): their prefixes for CMake, their
# libraries (and what those need) for the programs run below
prefixes=""
for dep in criterion jansson; do
    if [ -d "$deps/$dep/include" ] && [ -d "$deps/$dep/lib" ]; then
        prefixes="${prefixes:+$prefixes;}$deps/$dep"
        run_ld="$deps/$dep/lib${run_ld:+:$run_ld}"
        say "$dep from $deps/$dep"
    fi
done
[ -n "$prefixes" ] && cmake_args+=(-DCMAKE_PREFIX_PATH="$prefixes")
# shellcheck disable=SC2206 # split at blanks, as documented
[ -n "${KMUX_GPU_CMAKE_ARGS:-}" ] && cmake_args+=($KMUX_GPU_CMAKE_ARGS)

# ---- 3. configure and build what the run uses -------------------------------------------------
log="$build/gpu-run"
[ -n "${OUT:-}" ] && log="$OUT/gpu-run"
mkdir -p "$log"
say "configure: $build (${archs:+sm archs $archs, }$jobs jobs; logs: $log)"
timeout "$(until_mark 150 30)" cmake -S "$root" -B "$build" "${generator[@]}" "${cmake_args[@]}" >"$log/configure.log" 2>&1
rc=$?
grep -E "kmux: (CUDA|criterion|jansson)|kmux backends built|RUNPATH" "$log/configure.log" | sed 's/^/  /'
# Criterion or jansson missing (cmake/KmuxDeps.cmake's line): nothing is built
if grep -qE "kmux: (criterion|jansson) NOT FOUND" "$log/configure.log"; then
    for dep in criterion jansson; do
        grep -q "kmux: $dep NOT FOUND" "$log/configure.log" &&
            loud "$dep NOT FOUND (no pkg-config module, nothing in $deps/$dep or the system). Run tests/gpu/bundle_deps.sh
run.sh: *** on a machine that has it (the CI image has both) and carry .gpu-deps to this one."
    done
    echo "run.sh: nothing was built. Exit status 6."
    exit 6
fi
if [ $rc -ne 0 ]; then
    tail -n 30 "$log/configure.log"
    echo "run.sh: configure FAILED (log: $log/configure.log). Exit status 3."
    exit 3
fi
if ! grep -q "kmux: CUDA backend built" "$log/configure.log"; then
    echo "run.sh: the CUDA backend is not built (see above). Exit status 3."
    exit 3
fi
if [ "$build_only" = 2 ]; then
    echo "run.sh: --configure-only: configure done."
    exit 0
fi
# the ctest stage's tests -> their programs: a test named after its program, or after the
# program plus a suffix (test_cuda_listing and test_cuda_gpu run test_cuda); scripts have none
ctest_re='cuda|conformance|^test_amp$'
ctest_skip='^(cuda_gpu_checks|cuda_run_sh_no_gpu|cuda_fake_.*|test_fake_cuda_driver)$' # the fakes' tests: CI's
all_targets=$(cmake --build "$build" --target help 2>/dev/null | sed -n 's/^\([A-Za-z0-9_.+-]*\): .*/\1/p; s/^\.\.\. \([A-Za-z0-9_.+-]*\).*/\1/p')
has_target() { echo "$all_targets" | grep -qx "$1"; }
targets=(kmux kmux-cuda kmux-info kmux-bench kmux_gpu_checks)
for name in $(cd "$build" && ctest -N -R "$ctest_re" -E "$ctest_skip" | sed -n 's/^ *Test *#[0-9]*: *//p'); do
    t=$name
    while [ -n "$t" ] && ! has_target "$t"; do
        case "$t" in *_*) t=${t%_*} ;; *) t="" ;; esac
    done
    [ -n "$t" ] && [[ " ${targets[*]} " != *" $t "* ]] && targets+=("$t")
done
for t in "${targets[@]}"; do
    has_target "$t" || { echo "run.sh: the build has no target $t. Exit status 3."; exit 3; }
done
say "build (up to $(until_mark 400 60)s): ${targets[*]}"
export LD_LIBRARY_PATH="$run_ld${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
if ! timeout "$(until_mark 400 60)" cmake --build "$build" -j "$jobs" --target "${targets[@]}" >"$log/build.log" 2>&1; then
    grep -E "error|FAILED" "$log/build.log" | head -n 20
    echo "run.sh: build FAILED or timed out (log: $log/build.log). Exit status 3."
    exit 3
fi
say "built"
if [ "$build_only" = 1 ]; then
    echo "run.sh: --build-only: configure and build done."
    exit 0
fi

# ---- 4. is cuda:0 usable for kmux? ----------------------------------------------------------
"$build/bin/kmux-info" >"$log/kmux-info.log" 2>&1 || true
cuda_line=$(grep -E "^ *cuda " "$log/kmux-info.log" | head -n 1)
echo "  ${cuda_line:-kmux-info lists no cuda backend}"
if ! echo "$cuda_line" | grep -q " available"; then
    echo "run.sh: NO GPU for kmux: a GPU is present but the cuda backend cannot use it (log: $log/kmux-info.log). Exit status 2."
    exit 2
fi

# ---- 5. benchmarks: kmux on cuda:0, then PyTorch on the same problems; the table ------------
commit=${KMUX_COMMIT:-$(git -C "$root" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)}
gq() { nvidia-smi --query-gpu="$1" --format=csv,noheader,nounits 2>/dev/null | head -n 1 | sed 's/^ *//;s/ *$//'; }
label="$(gq name), driver $(gq driver_version), max clocks sm $(gq clocks.max.sm) MHz mem $(gq clocks.max.mem) MHz (at start sm $(gq clocks.sm) mem $(gq clocks.mem)), commit $commit"
say "records labelled: $label"
min_time=${KMUX_GPU_MIN_TIME:-0.3}
batch=${KMUX_GPU_BATCH:-$here/cases.batch}
if [ "$quick" = 1 ]; then
    min_time=${KMUX_GPU_MIN_TIME:-0.1}
    grep -vE 'db43|res2_3x3_tf32|f16_8192' "$batch" >"$log/cases-quick.batch"
    batch="$log/cases-quick.batch"
fi
rc_bench=0
torch_status="not run"
t=$(until_mark 520 30)
say "kmux-bench on cuda:0 (up to ${t}s) -> $log/kmux.jsonl"
timeout "$t" "$build/bin/kmux-bench" --backend=cuda:0 --batch="$batch" --min-time="$min_time" \
    --label="$label" --out="$log/kmux.jsonl" >"$log/kmux-bench.log" 2>&1
rc=$?
tail -n 25 "$log/kmux-bench.log" | sed 's/^/  /'
n=$(wc -l <"$log/kmux.jsonl" 2>/dev/null || echo 0)
case $rc in
0) bench_status="PASS ($n records)" ;;
124) bench_status="TIMEOUT after ${t}s ($n records kept)"; rc_bench=5 ;;
*) bench_status="FAIL (exit $rc, $n records)"; rc_bench=5 ;;
esac
if [ ! -s "$log/kmux.jsonl" ]; then
    torch_status="not run (no kmux records)"
elif python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' >/dev/null 2>&1; then
    t=$(until_mark 620 20)
    say "PyTorch on the same problems (up to ${t}s) -> $log/torch.jsonl"
    PYTHONUNBUFFERED=1 timeout "$t" python3 "$here/torch_bench.py" --records "$log/kmux.jsonl" \
        --out "$log/torch.jsonl" --min-time "$min_time" >"$log/torch-bench.log" 2>&1
    rc=$?
    tail -n 20 "$log/torch-bench.log" | sed 's/^/  /'
    case $rc in
    0) torch_status="ran ($(wc -l <"$log/torch.jsonl") records)" ;;
    124) torch_status="TIMEOUT after ${t}s ($(wc -l <"$log/torch.jsonl" 2>/dev/null || echo 0) records kept)" ;;
    *) torch_status="FAIL (exit $rc, see $log/torch-bench.log)" ;;
    esac
    [ $rc -ne 0 ] && missing+=("PyTorch benchmark ($torch_status)")
else
    torch_status="not run: python3 -c 'import torch' with CUDA failed"
    missing+=("PyTorch benchmark (no torch with CUDA)")
    loud "PyTorch with CUDA NOT available: kmux is benchmarked alone"
fi
report() {
    [ -s "$log/kmux.jsonl" ] || { echo "run.sh: no benchmark records, no table"; return; }
    local files=("$log/kmux.jsonl")
    [ -s "$log/torch.jsonl" ] && files+=("$log/torch.jsonl")
    [ -s "$log/report.txt" ] || "$build/bin/kmux-bench" report "${files[@]}" >"$log/report.txt" 2>&1 || true
    cat "$log/report.txt"
}
echo
say "the side-by-side table (kmux $bench_status; PyTorch $torch_status):"
report
echo

# ---- 6. GPU checks --------------------------------------------------------------------------
rc_checks=0
t=$(until_mark 800 30)
say "kmux_gpu_checks (up to ${t}s)"
timeout "$t" "$build/bin/kmux_gpu_checks" >"$log/checks.log" 2>&1
rc=$?
grep -E "^(PASS|FAIL|SKIP)" "$log/checks.log" | grep -vE "^PASS impls_" | sed 's/^/  /'
# the implementation table (one line per implementation of every plan), and how many ran
grep -E "^  impls_" "$log/checks.log" >"$log/checks-impls.txt" || true
say "implementations run against ref: $(grep -c ' ok ' "$log/checks-impls.txt") ok, $(grep -cE ' (WRONG|FAILED) ' "$log/checks-impls.txt") wrong or failed, $(grep -c 'kmux-gpu:' "$log/checks-impls.txt") of them kmux-gpu (table: $log/checks-impls.txt)"
case $rc in
0) checks_status="PASS" ;;
77) checks_status="SKIPPED: $(grep -m 1 '^SKIP' "$log/checks.log")"; rc_checks=4 ;;
124) checks_status="TIMEOUT after ${t}s"; rc_checks=4 ;;
*) checks_status="FAIL (exit $rc, $(grep -c '^FAIL' "$log/checks.log") failed)"; rc_checks=4 ;;
esac

# ---- 7. tests, with the time that is left ----------------------------------------------------
rc_tests=0
t=$(until_mark 970 20)
say "ctest (up to ${t}s)"
# the tests that run on cuda:0 (test_cuda*, the conformance suites); kmux_gpu_checks ran
# above, and the dry-run test of this script is for machines without a GPU
(cd "$build" && KMUX_CONFORMANCE_IMPLS=kmux-gpu: KMUX_CONFORMANCE_SHAPES=small timeout "$t" ctest --output-on-failure -j "$(((jobs + 1) / 2))" --timeout 300 \
    -R "$ctest_re" -E "$ctest_skip") >"$log/ctest.log" 2>&1
rc=$?
summary=$(grep -E "tests passed|tests failed" "$log/ctest.log" | tail -n 1)
if [ $rc -eq 0 ]; then
    tests_status="PASS: $summary"
else
    rc_tests=4
    [ $rc -eq 124 ] && tests_status="TIMEOUT after ${t}s" || tests_status="FAIL: $summary"
    grep -E "^[0-9/ ]*Test +#.*(Failed|Timeout|Exception)|\*\*\*" "$log/ctest.log" | head -n 20
fi

# ---- 8. summary, and the table again (the end of the output is what a remote run shows) ------
echo
echo "run.sh summary ($(($(date +%s) - start))s of ${budget}s): GPU checks $checks_status; kmux benchmark $bench_status; PyTorch $torch_status; tests $tests_status"
[ ${#missing[@]} -gt 0 ] && loud "NOT RUN: ${missing[*]}"
echo "logs and records: $log"
echo
report

[ $rc_checks -ne 0 ] && exit $rc_checks
[ $rc_tests -ne 0 ] && exit $rc_tests
[ $rc_bench -ne 0 ] && exit $rc_bench
[ ${#missing[@]} -gt 0 ] && exit 6
exit 0

#!/usr/bin/env bash
# tests/gpu/run.sh - the whole GPU check of kmux in one command, for a machine with an NVIDIA GPU
# (written for H100/H200): configure and build (Release, CUDA on), run the test suite with the
# GPU present (ctest: test_cuda and the cross-device conformance tests then exercise cuda:0),
# then benchmark kmux against PyTorch on the same shapes (tests/gpu/cases.csv) when
# `python3 -c 'import torch'` works, kmux alone otherwise. Finishes within the time budget
# (default 480 s) and prints a short table LAST.
#
#   tests/gpu/run.sh [--build-only] [BUILD_DIR]        (BUILD_DIR default: build-gpu)
#
# Environment:
#   KMUX_CUDA_ARCHS       e.g. "90": build GPU code for sm_90 only (faster); default: the project's
#                         list (sm_80, sm_86, sm_89, sm_90 + PTX)
#   KMUX_GPU_BUDGET_S     total time budget in seconds (default 480)
#   KMUX_GPU_MIN_MS       minimum length of one timed batch in ms (default 100)
#   CUDNN_ROOT            where cudnn.h / libcudnn.so.9 live when the toolkit has no cuDNN (the
#                         script also tries Python's nvidia-cudnn wheel); CUBLASLT_ROOT likewise
#   KMUX_GPU_DEPS         folder of carried build dependencies (default <repo>/.gpu-deps), see
#                         bundle_deps.sh (Criterion, for machines without it)
#
# Exit status: 0 all passed; 2 no GPU found (nothing was built or run); 3 toolchain missing or
# configure/build failed; 4 tests failed or timed out; 5 a benchmark case failed verification or
# did not run. Logs and CSV results: BUILD_DIR/gpu-run/.
set -u -o pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
build_only=0
build=""
for a in "$@"; do
    case "$a" in
    --build-only) build_only=1 ;;
    -h | --help) sed -n '2,27p' "$0"; exit 0 ;;
    *) build="$a" ;;
    esac
done
[ -n "$build" ] || build="$root/build-gpu"
case "$build" in /*) ;; *) build="$PWD/$build" ;; esac
budget=${KMUX_GPU_BUDGET_S:-480}
start=$(date +%s)
deadline=$((start + budget))
left() { echo $((deadline - $(date +%s))); }
# seconds for a stage: what is left minus a reserve for the stages after it, at least $2
stage() { local t=$(($(left) - $1)); [ "$t" -lt "$2" ] && t=$2; echo "$t"; }
say() { echo "run.sh [$(($(date +%s) - start))s] $*"; }

# ---- 1. a GPU? (first, so a machine without one stops at once) -------------------------------
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

# ---- 2. toolchain ---------------------------------------------------------------------------
command -v cmake >/dev/null 2>&1 || { echo "run.sh: cmake not found"; exit 3; }
if ! command -v nvcc >/dev/null 2>&1; then
    for d in /usr/local/cuda/bin /usr/local/cuda-*/bin; do
        [ -x "$d/nvcc" ] && export PATH="$d:$PATH" && break
    done
fi
command -v nvcc >/dev/null 2>&1 || { echo "run.sh: nvcc not found (install the CUDA toolkit or put it on PATH)"; exit 3; }
cuda_home=$(cd "$(dirname "$(command -v nvcc)")/.." && pwd)
generator=()
command -v ninja >/dev/null 2>&1 && generator=(-G Ninja)
jobs=${KMUX_GPU_JOBS:-$(nproc 2>/dev/null || echo 4)}

cmake_args=(-DCMAKE_BUILD_TYPE=Release -DKMUX_WITH_CUDA=ON -DKMUX_BUILD_BENCH=OFF
            -DCUDAToolkit_ROOT="$cuda_home")
if [ -n "${KMUX_CUDA_ARCHS:-}" ]; then
    cmake_args+=(-DCMAKE_CUDA_ARCHITECTURES="$KMUX_CUDA_ARCHS")
fi
# cuDNN: the toolkit's, CUDNN_ROOT, or Python's nvidia-cudnn wheel
if [ -z "${CUDNN_ROOT:-}" ] && [ ! -f "$cuda_home/include/cudnn.h" ]; then
    wheel=$(python3 -c 'import nvidia.cudnn, os; print(os.path.dirname(nvidia.cudnn.__file__))' 2>/dev/null || true)
    [ -n "$wheel" ] && [ -f "$wheel/include/cudnn.h" ] && export CUDNN_ROOT="$wheel"
fi
[ -n "${CUDNN_ROOT:-}" ] && cmake_args+=(-DCUDNN_ROOT="$CUDNN_ROOT") && say "cuDNN from $CUDNN_ROOT"
# cuBLASLt: the toolkit's, CUBLASLT_ROOT, or Python's nvidia-cublas wheel
if [ -z "${CUBLASLT_ROOT:-}" ] && ! ls "$cuda_home"/lib64/libcublasLt.so* "$cuda_home"/lib/libcublasLt.so* >/dev/null 2>&1; then
    wheel=$(python3 -c 'import nvidia.cublas, os; print(os.path.dirname(nvidia.cublas.__file__))' 2>/dev/null || true)
    [ -n "$wheel" ] && [ -f "$wheel/include/cublasLt.h" ] && export CUBLASLT_ROOT="$wheel"
fi
[ -n "${CUBLASLT_ROOT:-}" ] && cmake_args+=(-DCUBLASLT_ROOT="$CUBLASLT_ROOT") && say "cuBLASLt from $CUBLASLT_ROOT"
# Criterion (the test framework): installed, carried in KMUX_GPU_DEPS, or tests are skipped
deps=${KMUX_GPU_DEPS:-$root/.gpu-deps}
tests_built=1
test_ld=""
if ! pkg-config --exists criterion 2>/dev/null; then
    if [ -f "$deps/criterion/lib/pkgconfig/criterion.pc" ]; then
        export PKG_CONFIG_PATH="$deps/criterion/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
        test_ld="$deps/criterion/lib" # for the test programs only, not for python/torch
        say "Criterion from $deps/criterion"
    else
        tests_built=0
        cmake_args+=(-DKMUX_BUILD_TESTS=OFF)
        say "WARNING: Criterion not found (pkg-config criterion; no $deps/criterion): the test suite is not built;"
        say "         run tests/gpu/bundle_deps.sh on a machine that has it and carry .gpu-deps along"
    fi
fi

# ---- 3. configure and build -----------------------------------------------------------------
log="$build/gpu-run"
mkdir -p "$log"
say "configure: $build (${KMUX_CUDA_ARCHS:+sm archs $KMUX_CUDA_ARCHS, }$jobs jobs)"
if ! timeout "$(stage 300 30)" cmake -S "$root" -B "$build" "${generator[@]}" "${cmake_args[@]}" >"$log/configure.log" 2>&1; then
    tail -n 30 "$log/configure.log"
    echo "run.sh: configure FAILED (log: $log/configure.log). Exit status 3."
    exit 3
fi
grep -E "kmux: CUDA|kmux backends built" "$log/configure.log" | sed 's/^/  /'
if ! timeout "$(stage 240 60)" cmake --build "$build" -j "$jobs" >"$log/build.log" 2>&1; then
    grep -E "error|FAILED" "$log/build.log" | head -n 20
    echo "run.sh: build FAILED or timed out (log: $log/build.log). Exit status 3."
    exit 3
fi
say "built"
if [ "$build_only" = 1 ]; then
    echo "run.sh: --build-only: configure and build done. Exit status 0."
    exit 0
fi

# ---- 4. is cuda:0 usable for kmux? ----------------------------------------------------------
"$build/bin/kmux-info" >"$log/kmux-info.log" 2>&1 || true
grep -E "^ *cuda " "$log/kmux-info.log" | sed 's/^/  /'
: >"$log/empty.csv"
"$build/bin/kmux-gpu-bench" --cases "$log/empty.csv" >/dev/null 2>"$log/probe.log"
case $? in
0) say "cuda:0: $(head -n 1 "$log/probe.log" | sed 's/^kmux-gpu-bench: //')" ;;
2)
    cat "$log/probe.log"
    echo "run.sh: NO GPU for kmux: a GPU is present but the cuda backend cannot use it (see above). Exit status 2."
    exit 2
    ;;
*) cat "$log/probe.log"; echo "run.sh: kmux-gpu-bench failed to start. Exit status 3."; exit 3 ;;
esac

# ---- 5. tests -------------------------------------------------------------------------------
tests_status="not built (no Criterion)"
rc_tests=0
if [ "$tests_built" = 1 ]; then
    t=$(stage 200 60) # keep ~200 s for the benchmarks
    say "ctest (up to ${t}s)"
    (cd "$build" && LD_LIBRARY_PATH="$test_ld${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" timeout "$t" ctest --output-on-failure -j "$(((jobs + 1) / 2))" --timeout 240) >"$log/ctest.log" 2>&1
    rc=$?
    summary=$(grep -E "tests passed|tests failed" "$log/ctest.log" | tail -n 1)
    if [ $rc -eq 0 ]; then
        tests_status="PASS: $summary"
    else
        rc_tests=4
        [ $rc -eq 124 ] && tests_status="TIMEOUT after ${t}s" || tests_status="FAIL: $summary"
        grep -E "^[0-9/ ]*Test +#.*(Failed|Timeout|Exception)|\*\*\*" "$log/ctest.log" | head -n 20
    fi
fi

# ---- 6. benchmarks --------------------------------------------------------------------------
min_ms=${KMUX_GPU_MIN_MS:-100}
t=$(stage 100 30)
say "kmux benchmark (up to ${t}s)"
timeout "$t" "$build/bin/kmux-gpu-bench" --cases "$here/cases.csv" --out "$log/kmux.csv" --min-ms "$min_ms" \
    >"$log/kmux-bench.log" 2>&1
rc_kmux=$?
grep -vE "^name,|,ok$" "$log/kmux-bench.log" | head -n 20
torch_status="not run"
: >"$log/torch.csv"
if python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' >/dev/null 2>&1; then
    t=$(stage 10 20)
    say "PyTorch benchmark (up to ${t}s)"
    PYTHONUNBUFFERED=1 timeout "$t" python3 "$here/torch_bench.py" --cases "$here/cases.csv" --out "$log/torch.csv" \
        --min-ms "$min_ms" >"$log/torch-bench.log" 2>&1
    rc=$?
    torch_status=$([ $rc -eq 0 ] && echo "ran" || echo "exit $rc (see $log/torch-bench.log)")
    [ $rc -ne 0 ] && tail -n 5 "$log/torch-bench.log"
else
    torch_status="python3 -c 'import torch' with CUDA failed: kmux alone"
fi

# ---- 7. summary and the table (last) --------------------------------------------------------
bench_status="PASS"
[ $rc_kmux -ne 0 ] && bench_status=$([ $rc_kmux -eq 124 ] && echo "TIMEOUT" || echo "FAIL (a case did not run or verify)")
echo
echo "run.sh summary ($(($(date +%s) - start))s): tests $tests_status; kmux benchmark $bench_status; torch $torch_status"
echo "logs: $log"
echo
awk -F, '
    FNR == 1 { next }
    FILENAME == ARGV[1] { tms[$1] = $2; ttf[$1] = $3; next }
    {
        name = $1; kind = $2; shape = $3; ms = $5; tf = $6; check = $8
        if (kind == "overhead") {
            k = (ms != "") ? sprintf("%.1f us", ms) : check
            t = (tms[name] != "") ? sprintf("%.1f us", tms[name]) : "-"
            r = (ms != "" && tms[name] != "") ? sprintf("%.0f%%", 100 * tms[name] / ms) : "-"
        } else {
            k = (tf != "") ? tf : check
            t = (ttf[name] != "") ? ttf[name] : "-"
            r = (tf != "" && ttf[name] != "") ? sprintf("%.0f%%", 100 * tf / ttf[name]) : "-"
        }
        v = (r == "-") ? "" : ((r + 0 >= 95) ? "ok" : "BELOW")
        printf "%-28s %-42s %12s %12s %7s  %s\n", name, shape, k, t, r, v
    }
    BEGIN { printf "%-28s %-42s %12s %12s %7s  %s\n", "case", "shape", "kmux TFLOP/s", "torch TFLOP/s", "ratio", "target 95%" }
' "$log/torch.csv" "$log/kmux.csv"

[ $rc_tests -ne 0 ] && exit $rc_tests
[ $rc_kmux -ne 0 ] && exit 5
exit 0

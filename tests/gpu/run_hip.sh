#!/usr/bin/env bash
# tests/gpu/run_hip.sh - the whole GPU check of kmux's HIP backend in one command, for a machine
# with an AMD GPU and ROCm 5 or 6 (written for MI300X / MI300A, gfx942; never run on one yet):
#   1. stop at once (exit 2) when there is no AMD GPU (/dev/kfd, libamdhip64, rocminfo);
#   2. configure and build (Release; CPU plugins off, CUDA off, KMUX_WITH_HIP=ON) with code
#      objects for the GPU's own architecture (rocminfo, else gfx942); the device compiler is the
#      host's ROCm (ROCM_PATH, found by cmake/KmuxHipToolchain.cmake: its amdclang++), else kmux's
#      compile-only toolchain (scripts/setup-hip-toolchain.sh);
#   3. kmux-info (the hip backend must be available, with the GPU's architecture);
#   4. ctest: test_hip_device (memory, streams, a wrapped hipStream_t, events, every cast and the
#      mixed-precision kernels, the degenerate matmul and GEMM on rocBLAS on hip:0, bit for bit
#      against ref), the fake-runtime and bundle tests, and the conformance suites (which then
#      also run on hip:0, walking every implementation: hipBLASLt's candidates, rocBLAS, MIOpen's
#      solutions and the own kernels where the host has the libraries);
#   5. kmux-check --backend=hip --quick -> kmux-check.txt: the AMD libraries found with their
#      versions and a small GEMM and convolution through each against ref ("library ..." lines);
#   6. kmux-bench on hip:0 over tests/gpu/cases.batch -> kmux-hip.jsonl (GEMM and convolution on
#      the host's hipBLASLt, rocBLAS and MIOpen where it has them, else kernels/gpu's own kernels;
#      the records name the implementation), and `kmux-bench report`, printed last.
#
#   tests/gpu/run_hip.sh [--build-only] [BUILD_DIR]      (BUILD_DIR default: build-hip)
#
# Environment: KMUX_HIP_ARCHS (e.g. "gfx942"), ROCM_PATH (default /opt/rocm), KMUX_GPU_JOBS
# (build jobs, default nproc), KMUX_GPU_BUDGET_S (default 570).
# Exit status: 0 all passed; 2 no AMD GPU (nothing was built or run); 3 configure/build failed;
# 4 a check or test failed; 5 a benchmark problem failed verification.
# Logs, records and the report: BUILD_DIR/hip-run/.
set -u -o pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
build_only=0
build=""
for a in "$@"; do
    case "$a" in
    --build-only) build_only=1 ;;
    -h | --help) sed -n '2,25p' "$0"; exit 0 ;;
    -*) echo "run_hip.sh: unknown option $a (see --help)"; exit 3 ;;
    *) build="$a" ;;
    esac
done
[ -n "$build" ] || build="$root/build-hip"
case "$build" in /*) ;; *) build="$PWD/$build" ;; esac
log="$build/hip-run"
mkdir -p "$log"
start=$(date +%s)
budget=${KMUX_GPU_BUDGET_S:-570}
left() { echo $((budget - ($(date +%s) - start))); }
say() { echo "run_hip.sh: $*"; }
rocm=${ROCM_PATH:-/opt/rocm}

# 1. an AMD GPU?
arch=${KMUX_HIP_ARCHS:-}
if [ "$build_only" -eq 0 ]; then
    if [ ! -e /dev/kfd ]; then
        say "NO AMD GPU: /dev/kfd does not exist (no amdgpu kernel driver). Exit status 2."
        exit 2
    fi
    if [ -z "$arch" ] && [ -x "$rocm/bin/rocminfo" ]; then
        arch=$("$rocm/bin/rocminfo" 2>/dev/null | grep -oE 'gfx[0-9a-f]+' | sort -u | tr '\n' ';')
        arch=${arch%;}
    fi
fi
[ -n "$arch" ] || arch=gfx942
say "architectures: $arch"

# 2. configure and build
args=(-DCMAKE_BUILD_TYPE=Release -DKMUX_WITH_HIP=ON -DKMUX_WITH_CUDA=OFF -DKMUX_HIP_ARCHS="$arch"
      -DROCM_PATH="$rocm")
command -v ninja >/dev/null 2>&1 && args+=(-G Ninja)
jobs=${KMUX_GPU_JOBS:-$(nproc)}
say "configure ($build)"
if ! cmake -S "$root" -B "$build" "${args[@]}" >"$log/configure.log" 2>&1; then
    tail -n 30 "$log/configure.log"; say "configure FAILED. Exit status 3."; exit 3
fi
grep -E 'kmux: (hip|HIP)' "$log/configure.log" | sed 's/^/  /'
say "build"
if ! cmake --build "$build" -j "$jobs" >"$log/build.log" 2>&1; then
    tail -n 30 "$log/build.log"; say "build FAILED. Exit status 3."; exit 3
fi
[ "$build_only" -eq 1 ] && { say "built (--build-only)."; exit 0; }

status=0
# 3. the backend must be there, with the GPU's architecture
"$build/bin/kmux-info" >"$log/kmux-info.txt" 2>&1
sed -n '1,12p' "$log/kmux-info.txt" | sed 's/^/  /'
if ! grep -qE '^  hip +available' "$log/kmux-info.txt"; then
    say "FAIL: the hip backend is not available:"; grep -E '^  hip' "$log/kmux-info.txt"
    status=4
fi

# 4. tests (the device tests, then the fake-runtime, bundle and conformance suites)
t=$(left)
say "ctest (up to ${t}s)"
(cd "$build" && timeout "$((t > 60 ? t - 60 : 30))" ctest --output-on-failure --timeout 300 \
    -R 'hip|conformance') >"$log/ctest.log" 2>&1
rc=$?
grep -E "tests passed|tests failed" "$log/ctest.log" | tail -n 1 | sed 's/^/  /'
grep -E "Test +#.*(Failed|Timeout|Exception)" "$log/ctest.log" | head -n 20 | sed 's/^/  /'
grep -qE 'test_hip_device .*Passed' "$log/ctest.log" ||
    { say "FAIL: test_hip_device did not pass on hip:0 (see $log/ctest.log)"; status=4; }
[ "$rc" -eq 0 ] || status=4

# 5. the readiness report: which AMD libraries, and does each compute
if [ -x "$build/bin/kmux-check" ]; then
    t=$(left)
    say "kmux-check --backend=hip --quick (up to $((t > 120 ? 120 : t))s) -> $log/kmux-check.txt"
    timeout "$((t > 120 ? 120 : t))" "$build/bin/kmux-check" --backend=hip --quick \
        >"$log/kmux-check.txt" 2>&1
    grep -E 'librar' "$log/kmux-check.txt" | sed 's/^/  /'
    if grep -E 'librar' "$log/kmux-check.txt" | grep -q FAIL && [ "$status" -eq 0 ]; then
        status=4
    fi
fi

# 6. benchmark (records even for refused problems) and the report
if [ -x "$build/bin/kmux-bench" ]; then
    t=$(left)
    say "kmux-bench on hip:0 (up to ${t}s) -> $log/kmux-hip.jsonl"
    timeout "$((t > 20 ? t - 10 : 10))" "$build/bin/kmux-bench" --backend=hip:0 \
        --batch="$here/cases.batch" --out="$log/kmux-hip.jsonl" >"$log/kmux-bench.log" 2>&1
    brc=$?
    tail -n 25 "$log/kmux-bench.log" | sed 's/^/  /'
    if grep -q 'FAIL' "$log/kmux-bench.log" && [ "$status" -eq 0 ]; then status=5; fi
    [ "$brc" -eq 124 ] && say "kmux-bench timed out (records so far are kept)"
    "$build/bin/kmux-bench" report "$log/kmux-hip.jsonl" >"$log/report.txt" 2>&1 || true
    cat "$log/report.txt"
else
    say "kmux-bench not built (no jansson): no benchmark"
fi
say "exit status $status (logs in $log)"
exit "$status"

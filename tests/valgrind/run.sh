#!/usr/bin/env bash
# The valgrind stage of scripts/test.sh: builds tests/valgrind/cpu_devices.c against the normal
# build (BUILD/lib/libkmux.so and its plugins) and runs it under memcheck. Fails on any memcheck
# error (invalid read/write, use of uninitialised values, invalid free, definite leak) through
# --error-exitcode, and on any wrong result (the program's own exit status). Then the fault
# sweeps of the GPU plugins over the fake runtimes, each fault run under memcheck (below).
# Usage: tests/valgrind/run.sh BUILD_DIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=$(cd "${1:?usage: run.sh BUILD_DIR}" && pwd)
out=$build/valgrind
mkdir -p "$out"
${CC:-cc} -std=c11 -g -O1 -Wall -Wextra -Werror "$here/cpu_devices.c" -I"$root/include" \
  -L"$build/lib" -lkmux -Wl,-rpath,"$build/lib" -o "$out/cpu_devices"
# Valgrind 3.19 has no AVX-512: its CPUID hides it, and oneDNN's JIT is capped to AVX2 besides.
export ONEDNN_MAX_CPU_ISA=AVX2
# The CPU devices only: the GPU plugins (RUNPATH to CUDA/HIP library folders) cannot run here, and
# loading one trips a known false report in glibc's ld.so (strncmp over-read in is_dst while it
# expands the RUNPATH), which is not kmux's code.
export KMUX_BACKENDS=openblas,onednn
status=0
valgrind --tool=memcheck --error-exitcode=99 --leak-check=full --show-leak-kinds=definite \
  --errors-for-leak-kinds=definite --track-origins=yes --num-callers=30 \
  --log-file="$out/memcheck.log" "$out/cpu_devices" || status=$?
if [ "$status" -ne 0 ]; then
  cat "$out/memcheck.log" >&2
  echo "valgrind stage FAILED (status $status: 99 = memcheck errors, else the program's)" >&2
  exit 1
fi
grep -E 'ERROR SUMMARY' "$out/memcheck.log"

# The GPU plugins' host code on every fault path (issue 51), over the fake runtimes and
# libraries of the build (when built): the allocation sweep and the runtime's / driver's
# vendor-call sweep of tests/faults, each fault run under memcheck (FAULT_SWEEP_VALGRIND=1).
# About 2.5 minutes on 2 cores.
unset KMUX_BACKENDS
fake_hip=$build/tests/fake_hip fake_cuda=$build/tests/fake_cuda prog=$build/bin/alloc_fault_program
export FAULT_SWEEP_VALGRIND=1
if [ -x "$prog" ] && [ -f "$fake_hip/libkmux-fake-hip.so" ]; then
  for mode in alloc vendor; do
    KMUX_HIP_RUNTIME=$fake_hip/libkmux-fake-hip.so KMUX_ROCBLAS_LIBRARY=$fake_hip/libkmux-fake-rocblas.so \
      KMUX_HIPBLASLT_LIBRARY=$fake_hip/libkmux-fake-hipblaslt.so \
      KMUX_MIOPEN_LIBRARY=$fake_hip/libkmux-fake-miopen.so KMUX_BACKENDS=hip \
      KMUX_FAKE_FAIL_LIB=libamdhip64 sh "$root/tests/faults/fault_sweep.sh" "$mode" "$prog" hip:0 |
      grep -v '^absorbed'
  done
fi
if [ -x "$prog" ] && [ -f "$fake_cuda/driver/libcuda.so.1" ]; then
  for mode in alloc vendor; do
    KMUX_CUDA_LIB_PATH=$fake_cuda/lt:$fake_cuda/dnn:$fake_cuda/driver KMUX_BACKENDS=cuda \
      KMUX_FAKE_FAIL_LIB=libcuda sh "$root/tests/faults/fault_sweep.sh" "$mode" "$prog" cuda:0 |
      grep -v '^absorbed'
  done
fi

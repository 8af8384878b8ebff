#!/usr/bin/env bash
# The valgrind stage of scripts/test.sh: builds tests/valgrind/cpu_devices.c against the normal
# build (BUILD/lib/libkmux.so and its plugins) and runs it under memcheck. Fails on any memcheck
# error (invalid read/write, use of uninitialised values, invalid free, definite leak) through
# --error-exitcode, and on any wrong result (the program's own exit status).
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

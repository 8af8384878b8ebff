#!/usr/bin/env bash
# expect_caught.sh PLANT EXE... - passes only when the emulated suite, built with the planted bug
# PLANT (kernels/gpu/kmux_gpu_vendor.h: KMUX_GPU_PLANT_*), FAILS: at least one Criterion test of
# the executables fails or crashes. An executable that does not run at all (no Criterion summary)
# is an error, not a catch.
set -uo pipefail
plant=$1
shift
caught=0
for exe in "$@"; do
  out=$("$exe" --jobs 2 --fail-fast 2>&1)
  rc=$?
  summary=$(echo "$out" | grep -E 'Synthesis: Tested:' | tail -1)
  if [ -z "$summary" ]; then
    echo "expect_caught: $plant: $(basename "$exe") did not run (rc $rc):" >&2
    echo "$out" | tail -20 >&2
    exit 2
  fi
  if [ "$rc" -ne 0 ] && echo "$summary" | grep -qE '(Failing|Crashing): [1-9]'; then
    echo "expect_caught: $plant caught by $(basename "$exe"): $summary"
    echo "$out" | grep -E '\[FAIL\]|CRASH|ERROR: AddressSanitizer|__syncthreads|got ' | head -5
    caught=1
  else
    echo "expect_caught: $plant NOT caught by $(basename "$exe"): $summary"
  fi
done
if [ "$caught" -eq 0 ]; then
  echo "expect_caught: the planted bug '$plant' was not caught by the emulated suite" >&2
  exit 1
fi

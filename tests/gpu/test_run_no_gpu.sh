#!/bin/sh
# ctest cuda_run_sh_no_gpu: on a machine without a GPU, tests/gpu/run.sh stops at once with exit
# status 2 and says "NO GPU", having built nothing. Skipped (77) where a GPU is present: there
# run.sh does the real run. $1: a scratch build folder.
here=$(cd "$(dirname "$0")" && pwd)
dir=${1:-${TMPDIR:-/tmp}/kmux-run-sh-dry}
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU [0-9]'; then
    echo "a GPU is present: run tests/gpu/run.sh itself"
    exit 77
fi
rm -rf "$dir"
out=$("$here/run.sh" "$dir" 2>&1)
rc=$?
echo "$out"
[ "$rc" -eq 2 ] || { echo "FAIL: exit status $rc, want 2"; exit 1; }
echo "$out" | grep -q "NO GPU" || { echo "FAIL: no 'NO GPU' line"; exit 1; }
[ ! -e "$dir/CMakeCache.txt" ] || { echo "FAIL: run.sh configured a build without a GPU"; exit 1; }
echo "PASS: run.sh without a GPU stops at the 'NO GPU' exit"

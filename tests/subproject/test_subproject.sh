#!/usr/bin/env bash
# Builds tests/subproject (a parent project with add_subdirectory(kmux)) with the CPU plugins off
# to keep it short, and runs its program on "ref".
# Usage: test_subproject.sh <source-dir> <scratch-dir>
set -euo pipefail
src=$1 out=$2
rm -rf "$out"
cmake -S "$src/tests/subproject" -B "$out" -G Ninja -DKMUX_SOURCE="$src" -DKMUX_WERROR=ON \
  -DKMUX_WITH_OPENBLAS=OFF -DKMUX_WITH_ONEDNN=OFF -DKMUX_WITH_CUDA=OFF >/dev/null
cmake --build "$out" --target parent_app >/dev/null
"$out/parent_app" ref
echo "add_subdirectory test passed"

#!/usr/bin/env bash
# Builds tests/subproject (a parent project with add_subdirectory(kmux)) with CMake's default
# generator (Unix Makefiles on Debian, what a parent project or an IDE most often uses) and the
# CPU plugins off to keep it short, checks that kmux's tests, benchmarks and examples are off by
# default there (kmux is not the top-level project), and runs the parent's program (a GEMM and a
# convolution through kmux::kmux) on "ref".
# Usage: test_subproject.sh <source-dir> <scratch-dir>
set -euo pipefail
src=$1 out=$2
rm -rf "$out"
unset CMAKE_GENERATOR
cmake -S "$src/tests/subproject" -B "$out" -DKMUX_SOURCE="$src" -DKMUX_WERROR=ON \
  -DKMUX_WITH_OPENBLAS=OFF -DKMUX_WITH_ONEDNN=OFF -DKMUX_WITH_CUDA=OFF >/dev/null
for opt in KMUX_BUILD_TESTS KMUX_BUILD_BENCH KMUX_BUILD_EXAMPLES; do
  grep -q "^$opt:BOOL=OFF\$" "$out/CMakeCache.txt" ||
    { echo "$opt is not OFF by default under a parent project: $(grep "^$opt:" "$out/CMakeCache.txt")"; exit 1; }
done
[ ! -e "$out/kmux/tests" ] || { echo "kmux's tests were configured under a parent project"; exit 1; }
cmake --build "$out" --target parent_app -j2 >/dev/null
"$out/parent_app" ref
echo "add_subdirectory test passed"

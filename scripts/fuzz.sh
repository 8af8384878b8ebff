#!/usr/bin/env bash
# Builds every libFuzzer target of tests/fuzz (tests/fuzz/fuzz_<name>.c, registered in
# tests/fuzz/CMakeLists.txt) with clang, -fsanitize=fuzzer,address,undefined, and runs each for a
# bounded time on a scratch copy of its checked-in corpus (tests/fuzz/corpus/<name>/).
# FUZZ_SECONDS=S per target (default 30), or FUZZ_RUNS=N to bound by inputs instead.
# A crash, leak, sanitizer report or timeout fails the script; the input that caused it is left in
# <build>/fuzz-artifacts/ (replay: <build>/bin/<name> <file>).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${KMUX_FUZZ_BUILD_DIR:-build-fuzz}
command -v clang >/dev/null || { echo "fuzz.sh: clang not found (scripts/setup-debian.sh installs it)"; exit 1; }
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_BUILD_TYPE=Debug -DKMUX_BUILD_FUZZ=ON -DKMUX_BUILD_TESTS=OFF \
  -DKMUX_WITH_CUDA=OFF -DKMUX_WITH_HIP=OFF >/dev/null
targets=()
for src in tests/fuzz/fuzz_*.c; do
  targets+=("$(basename "$src" .c)")
done
cmake --build "$BUILD" --target "${targets[@]}"
mkdir -p "$BUILD/fuzz-artifacts"
if [ -n "${FUZZ_RUNS:-}" ]; then bound=(-runs="$FUZZ_RUNS"); else bound=(-max_total_time="${FUZZ_SECONDS:-30}"); fi
for t in "${targets[@]}"; do
  work=$(mktemp -d)
  if [ -d "tests/fuzz/corpus/$t" ]; then cp "tests/fuzz/corpus/$t"/* "$work"/; fi
  echo "== $t (${bound[*]}, $(ls "$work" | wc -l) corpus inputs)"
  if ! "$BUILD/bin/$t" "${bound[@]}" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
      -artifact_prefix="$BUILD/fuzz-artifacts/$t-" "$work" 2>"$BUILD/fuzz-$t.log"; then
    tail -n 40 "$BUILD/fuzz-$t.log"
    echo "fuzz.sh: $t failed; inputs in $BUILD/fuzz-artifacts/"
    rm -rf "$work"
    exit 1
  fi
  grep -E "^stat::number_of_executed_units|^#[0-9]+ +DONE" "$BUILD/fuzz-$t.log" | tail -n 2
  rm -rf "$work"
done
echo "fuzz.sh: ${#targets[@]} target(s) passed"

#!/usr/bin/env bash
# Builds every libFuzzer target of tests/fuzz (tests/fuzz/fuzz_<name>.c, registered in
# tests/fuzz/CMakeLists.txt) with clang, -fsanitize=fuzzer,address,undefined, and runs each for a
# bounded time on a scratch copy of its checked-in corpus (tests/fuzz/corpus/<name>/).
# Each target stops at FUZZ_RUNS inputs (default 200000) or FUZZ_SECONDS (default 60), whichever
# comes first. fuzz_gemm and fuzz_conv drive libkmux (core + ref, no plugins) with sanitizers and
# coverage instrumentation in the target itself (libkmux is linked as built; instrumenting the
# shared library needs clang's shared sanitizer runtime, left for later).
# A crash, leak, sanitizer report or timeout fails the script; the input that caused it is left in
# <build>/fuzz-artifacts/ (replay: <build>/bin/<name> <file>).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${KMUX_FUZZ_BUILD_DIR:-build-fuzz}
command -v clang >/dev/null || { echo "fuzz.sh: clang not found (scripts/setup-debian.sh installs it)"; exit 1; }
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_BUILD_TYPE=Debug -DKMUX_BUILD_FUZZ=ON -DKMUX_BUILD_TESTS=OFF -DKMUX_BUILD_BENCH=OFF \
  -DKMUX_WITH_OPENBLAS=OFF -DKMUX_WITH_ONEDNN=OFF -DKMUX_WITH_CUDA=OFF -DKMUX_WITH_HIP=OFF >/dev/null
targets=()
for src in tests/fuzz/fuzz_*.c; do
  targets+=("$(basename "$src" .c)")
done
cmake --build "$BUILD" --target "${targets[@]}"
mkdir -p "$BUILD/fuzz-artifacts"
bound=(-runs="${FUZZ_RUNS:-200000}" -max_total_time="${FUZZ_SECONDS:-60}")
for t in "${targets[@]}"; do
  work=$(mktemp -d)
  if [ -d "tests/fuzz/corpus/$t" ]; then cp "tests/fuzz/corpus/$t"/* "$work"/; fi
  echo "== $t (${bound[*]}, $(ls "$work" | wc -l) corpus inputs)"
  if ! ASAN_OPTIONS=detect_leaks=1:halt_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
      "$BUILD/bin/$t" "${bound[@]}" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
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

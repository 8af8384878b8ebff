#!/usr/bin/env bash
# libFuzzer runs of every target in tests/fuzz/ (fuzz_*.c), as CI runs them (scripts/test.sh):
# each target is built with clang -fsanitize=fuzzer,address,undefined together with kmux's core
# and the "ref" backend (compiled from source with the same sanitizers and coverage, no plugins),
# then run from its checked-in corpus tests/fuzz/corpus/<target>/ for a bounded number of runs
# and seconds (an input that runs over 30 s is a hang: a failure). New inputs go to a scratch folder, never into the checked-in corpus; a crash
# leaves its input in $BUILD/<target>/ and fails the script.
#   KMUX_FUZZ_BUILD_DIR (build-fuzz)  KMUX_FUZZ_RUNS (200000)  KMUX_FUZZ_SECONDS (60, per target)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${KMUX_FUZZ_BUILD_DIR:-build-fuzz}
runs=${KMUX_FUZZ_RUNS:-200000}
secs=${KMUX_FUZZ_SECONDS:-60}
cc=${KMUX_FUZZ_CC:-clang}
mkdir -p "$build/obj"
san=(-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer)
cflags=(-std=c11 -g -O1 -fvisibility=hidden -Wall -Wextra -Werror -Wno-unused-parameter
        -Iinclude -I. -Idispatch -Idispatch/common -Ikernels/cpu -Ibackends/cpu_common
        -DKMUX_PLUGIN_DIR=\"/nonexistent/kmux-fuzz-no-plugins\" -DKMUX_GIT_COMMIT=\"fuzz\"
        -DKMUX_VERSION_STRING=\"fuzz\")

# kmux's core + ref, instrumented for coverage (fuzzer-no-link), compiled once
objs=()
for src in dispatch/*.c backends/ref/*.c backends/cpu_common/*.c dispatch/common/*.c kernels/cpu/*.c; do
  obj=$build/obj/$(echo "${src%.c}" | tr / _).o
  if [ ! -f "$obj" ] || [ "$src" -nt "$obj" ]; then
    "$cc" "${cflags[@]}" "${san[@]}" -fsanitize=fuzzer-no-link -c "$src" -o "$obj"
  fi
  objs+=("$obj")
done

status=0
for src in tests/fuzz/fuzz_*.c; do
  name=$(basename "${src%.c}")
  corpus=tests/fuzz/corpus/$name
  out=$build/$name
  mkdir -p "$out/new"
  "$cc" "${cflags[@]}" "${san[@]}" -fsanitize=fuzzer "$src" "${objs[@]}" -lm -ldl -pthread \
    -o "$out/$name"
  t0=$(date +%s)
  # detect_leaks: libFuzzer's own leak check per input; no plugins, so no vendor suppressions.
  if ASAN_OPTIONS=detect_leaks=1:halt_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    "$out/$name" -runs="$runs" -max_total_time="$secs" -timeout=30 -print_final_stats=1 \
    -artifact_prefix="$out/" "$out/new" "$corpus" >"$out/log" 2>&1; then
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$out/log")
    cov=$(grep -Eo 'cov: [0-9]+' "$out/log" | tail -1)
    echo "fuzz: $name: ${execs:-?} inputs in $(($(date +%s) - t0)) s (${cov:-cov ?}), corpus $(ls "$corpus" | wc -l) + $(ls "$out/new" | wc -l) new"
  else
    echo "fuzz: $name FAILED (crash input in $out/):" >&2
    tail -60 "$out/log" >&2
    status=1
  fi
done
exit $status

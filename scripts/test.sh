#!/usr/bin/env bash
# The whole test suite, as CI runs it: a normal build (every backend whose toolkit is found,
# warnings as errors) with its tests, a clang build (warnings as errors) with the quick tests,
# then the same suite again under AddressSanitizer and UndefinedBehaviorSanitizer. GPU tests report themselves skipped (with the reason) when no GPU
# is present; tests/gpu/run.sh runs them on a machine that has one.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== build (warnings as errors) =="
KMUX_BUILD_DIR=build ./scripts/build.sh
echo "== kmux-info =="
./build/bin/kmux-info
echo "== tests =="
ctest --test-dir build --output-on-failure --timeout 1200

echo "== clang build (warnings as errors) + quick tests =="
# The library, the plugins and the tools must build with clang as well as gcc; the quick subset
# (ctest label "quick", seconds) checks that what clang built runs. CUDA: nvcc picks its own host
# compiler, so it is left out here.
CC=clang CXX=clang++ KMUX_BUILD_DIR=build-clang ./scripts/build.sh -DKMUX_WITH_CUDA=OFF
ctest --test-dir build-clang --output-on-failure --timeout 600 -L quick

echo "== AddressSanitizer + UndefinedBehaviorSanitizer build =="
# CUDA is left out here: its plugin cannot run without a GPU and nvcc does not take -fsanitize.
KMUX_BUILD_DIR=build-asan ./scripts/build.sh -DCMAKE_BUILD_TYPE=Debug \
  -DKMUX_SANITIZE=address,undefined -DKMUX_WITH_CUDA=OFF
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:halt_on_error=1
# use_tls=0: Debian 12's GCC 12 LeakSanitizer crashes in its exit-time tracer ("Tracer caught
# signal 11", "LeakSanitizer has encountered a fatal error") when it walks the dynamic TLS of
# worker threads of a dlopen()ed library, here oneDNN's OpenMP threads inside libkmux-onednn.so.
# Not scanning TLS avoids it; the price is glibc's TLS-held dlerror buffers (suppressed).
export LSAN_OPTIONS=use_tls=0:suppressions=$PWD/tests/sanitizer/lsan.supp:print_suppressions=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# The suppressions themselves: glibc's dlerror buffers hidden, own leaks still reported (it needs
# libc6-dbg, see tests/sanitizer/lsan.supp).
./tests/sanitizer/lsan-selftest.sh build-asan/lsan-selftest
ctest --test-dir build-asan --output-on-failure --timeout 2400 -LE no_sanitizer

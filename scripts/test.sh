#!/usr/bin/env bash
# The whole test suite, as CI runs it: a normal build (every backend whose toolkit is found,
# warnings as errors) with its tests; a clang build (warnings as errors) with the quick tests; a
# program on every CPU device under valgrind (memcheck);
# the concurrency test under ThreadSanitizer; the suite again under AddressSanitizer and
# UndefinedBehaviorSanitizer, without the CUDA and HIP plugins and their tests and without the
# tests labelled no_sanitizer or gpu_emu (README.md, "Development", lists them); and short
# libFuzzer runs of tests/fuzz/ (scripts/fuzz.sh). Each
# stage prints its wall time. GPU tests report themselves skipped (with the reason) when no GPU
# is present; tests/gpu/run.sh runs them on a machine that has one.
set -euo pipefail
cd "$(dirname "$0")/.."

stage_t0=$(date +%s)
stage_done() { echo "== $1: $(($(date +%s) - stage_t0)) s =="; stage_t0=$(date +%s); }

echo "== build (warnings as errors) =="
# KMUX_WITH_HIP=ON: the HIP plugin must carry code objects (a ROCm install's compiler, else the
# compile-only toolchain that setup-debian.sh sets up), so that its tests run instead of skipping.
KMUX_BUILD_DIR=build ./scripts/build.sh -DKMUX_WITH_HIP=ON
echo "== kmux-info =="
./build/bin/kmux-info
echo "== tests =="
ctest --test-dir build --output-on-failure --timeout 1200
stage_done "build and tests"

echo "== clang build (warnings as errors) + quick tests =="
# The library, the plugins and the tools must build with clang as well as gcc; the quick subset
# (ctest label "quick", seconds) checks that what clang built runs. CUDA: the plugin is C (the
# driver API; its kernels are nvcc fatbins), built here with its fakes, for sm_90 only (the
# fatbins are not what this stage checks).
# HIP: its code objects are built by the gcc stage already (clang-19 compiles them either way).
# Generator: CMake's default, Unix Makefiles, as a packager, an IDE or a parent project uses it
# (Ninja, which every other stage uses, makes the folders of a custom command's outputs; Make does
# not): a custom command that writes into a folder nobody made fails here.
CMAKE_GENERATOR="Unix Makefiles" CC=clang CXX=clang++ KMUX_BUILD_DIR=build-clang ./scripts/build.sh \
  -DCMAKE_CUDA_ARCHITECTURES=90 -DKMUX_WITH_HIP=OFF
ctest --test-dir build-clang --output-on-failure --timeout 600 -L quick
stage_done "clang build and quick tests"

echo "== valgrind (memcheck) on every CPU device =="
./tests/valgrind/run.sh build
stage_done "valgrind"

echo "== ThreadSanitizer: the concurrency test =="
# Its own build (CUDA off, no benchmarks), and only the concurrency program: many threads on one
# context on every CPU device, contexts created beside them (Criterion's fork-based runner does
# not start under TSan, so the other suites are not run here). Vendor pools: tsan.supp.
mkdir -p build-tsan
cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKMUX_WERROR=ON \
  -DKMUX_SANITIZE=thread -DKMUX_WITH_CUDA=OFF -DKMUX_WITH_HIP=OFF -DKMUX_BUILD_BENCH=OFF \
  >build-tsan/configure.log ||
  { cat build-tsan/configure.log; exit 1; }
cmake --build build-tsan -j"$(nproc)" --target kmux_concurrency # and the CPU plugins it uses
TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$PWD/tests/sanitizer/tsan.supp" \
  ./build-tsan/bin/kmux_concurrency
stage_done "ThreadSanitizer"

echo "== AddressSanitizer + UndefinedBehaviorSanitizer build =="
# CUDA is left out here: its plugin cannot run without a GPU and nvcc does not take -fsanitize.
# HIP and the emulated GPU kernels are left out too: the plugin's host code runs in the first stage,
# and the emulated kernels' tests (label gpu_emu) are built with ASan + UBSan in every build.
KMUX_BUILD_DIR=build-asan ./scripts/build.sh -DCMAKE_BUILD_TYPE=Debug \
  -DKMUX_SANITIZE=address,undefined -DKMUX_WITH_CUDA=OFF -DKMUX_WITH_HIP=OFF
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
ctest --test-dir build-asan --output-on-failure --timeout 2400 -LE "no_sanitizer|gpu_emu"
stage_done "AddressSanitizer + UndefinedBehaviorSanitizer"

echo "== libFuzzer: tests/fuzz/ against ref =="
./scripts/fuzz.sh
stage_done "libFuzzer"

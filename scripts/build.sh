#!/usr/bin/env bash
# Configures and builds kmux into ./build (warnings are errors). Backends are built when their
# toolkit is found; the configure output says which were built and why others were not.
# Extra arguments go to cmake's configure step, e.g. -DKMUX_WITH_CUDA=OFF. The generator is Ninja
# unless CMAKE_GENERATOR is set (CMake reads it; scripts/test.sh's clang stage uses Unix Makefiles).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${KMUX_BUILD_DIR:-build}
export CMAKE_GENERATOR=${CMAKE_GENERATOR:-Ninja}
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKMUX_WERROR=ON "$@"
cmake --build "$BUILD" -j"$(nproc)"

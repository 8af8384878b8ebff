#!/usr/bin/env bash
# Configures and builds kmux into ./build (warnings are errors). Backends are built when their
# toolkit is found; the configure output says which were built and why others were not.
# Extra arguments go to cmake's configure step, e.g. -DKMUX_WITH_CUDA=OFF.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${KMUX_BUILD_DIR:-build}
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKMUX_WERROR=ON "$@"
cmake --build "$BUILD" -j"$(nproc)"

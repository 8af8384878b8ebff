#!/usr/bin/env bash
# Installs everything kmux needs on Debian 12 from Debian's own packages (run as root, or with
# sudo available). Idempotent. The CUDA toolkit is not a Debian package: when /usr/local/cuda
# exists the CUDA backend is built too, otherwise it is skipped (and kmux-info says so).
set -euo pipefail
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi
PACKAGES=(
  build-essential cmake ninja-build pkg-config git clang-format   # toolchain
  clang libclang-rt-14-dev                                         # second compiler; libFuzzer + sanitizer runtimes (fuzz.sh)
  libopenblas-dev                                                  # cpu:openblas backend
  libdnnl-dev ocl-icd-opencl-dev                                   # cpu:onednn (its CMake config needs OpenCL)
  libcriterion-dev                                                 # tests
  libc6-dbg                                                        # glibc symbols: LSan suppressions name its frames
  valgrind                                                         # memcheck stage of scripts/test.sh
  libjansson-dev                                                   # kmux-bench JSON lines
  chromium                                                         # report page test (headless)
  python3-jsonschema                                               # tests/gpu: torch_bench.py records
  zlib1g-dev dataset-fashion-mnist                                 # examples/train_fashion_mnist
)
# Node.js runs the JSON-schema check of kmux-bench records. Take Debian's only when no node/npm is
# there already (a nodesource nodejs ships its own npm and conflicts with Debian's npm package).
command -v node >/dev/null 2>&1 || PACKAGES+=(nodejs)
command -v npm >/dev/null 2>&1 || PACKAGES+=(npm)
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${PACKAGES[@]}" >/dev/null
echo "setup-debian: installed ${PACKAGES[*]}"

#!/usr/bin/env bash
# Installs everything kmux needs on Debian 12 from Debian's own packages (run as root, or with
# sudo available), and kmux's compile-only HIP toolchain (scripts/setup-hip-toolchain.sh). Every
# download of the build and the tests happens here. Idempotent. The CUDA toolkit is not a Debian
# package: when /usr/local/cuda exists the CUDA backend is built too, otherwise it is skipped (and
# kmux-info says so).
set -euo pipefail
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi
PACKAGES=(
  build-essential cmake ninja-build pkg-config git clang-format   # toolchain
  dpkg-dev file                                                    # cpack -G DEB (dpkg-shlibdeps; CPack needs file)
  clang libclang-rt-14-dev                                         # second compiler; libFuzzer + sanitizer runtimes (fuzz.sh)
  clang-19 clang-tools-19 lld-19 llvm-19                           # HIP device compiler (setup-hip-toolchain.sh)
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
# The HIP plugin's device compiler when the host has no ROCm: clang-19 with the ROCm device
# libraries of Debian 13, downloaded and unpacked once into /var/cache/kmux/hip-toolchain.
"$(dirname "$0")/setup-hip-toolchain.sh"

# ---- Ajv for the JSON-schema tests (tests/bench/schema.sh; added for the "no downloads in the
# tests" issue). The schemas are JSON Schema draft 2020-12 with "format": Debian 12 has only
# node-ajv 6 (no 2020-12) and no ajv-formats, so npm installs these pinned versions here, once,
# never during the tests, into a fixed folder every user can read (the tests read the same
# KMUX_NODE_DIR, default /var/cache/kmux/node). Idempotent: nothing is fetched when the pinned
# versions are there.
KMUX_NODE_DIR=${KMUX_NODE_DIR:-/var/cache/kmux/node}
KMUX_NODE_PACKAGES=(ajv@8.20.0 ajv-formats@3.0.1)
node_ok=1
for p in "${KMUX_NODE_PACKAGES[@]}"; do
  f=$KMUX_NODE_DIR/node_modules/${p%@*}/package.json
  [ -f "$f" ] && [ "$(node -p "require('$f').version" 2>/dev/null)" = "${p##*@}" ] || node_ok=0
done
if [ "$node_ok" = 0 ]; then
  $SUDO mkdir -p "$KMUX_NODE_DIR"
  [ -w "$KMUX_NODE_DIR" ] || $SUDO chown "$(id -u):$(id -g)" "$KMUX_NODE_DIR"
  npm install --prefix "$KMUX_NODE_DIR" --no-audit --no-fund --save-exact "${KMUX_NODE_PACKAGES[@]}" >/dev/null
  chmod -R a+rX "$KMUX_NODE_DIR"
fi
echo "setup-debian: ${KMUX_NODE_PACKAGES[*]} in $KMUX_NODE_DIR"

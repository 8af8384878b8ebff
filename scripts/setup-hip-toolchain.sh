#!/usr/bin/env bash
# Sets up kmux's compile-only HIP toolchain on Debian 12, from Debian's packages alone, for hosts
# without ROCm: a compiler that targets AMD GPUs (gfx90a, gfx942, gfx1100) so that the HIP plugin
# carries real code objects and its tests run. Called by scripts/setup-debian.sh; downloads
# happen here and nowhere else (CMake only reads what this script wrote).
#
# Why: Debian 12's own hipcc (ROCm 5.2, LLVM 15) does not know gfx942. Debian 12's clang-19 does,
# and Debian 13's rocm-device-libs-17 (the ROCm 6.0 device libraries) carries the gfx942 bitcode.
# The Debian 13 (and, for the ROCm 6 headers only, Debian unstable) packages are downloaded and
# unpacked into the cache folder, never installed. Nothing built this way can run here (no GPU).
#
# Usage: scripts/setup-hip-toolchain.sh [--print]      (as root, or with sudo for apt-get)
#   KMUX_HIP_TOOLCHAIN_DIR  cache folder (default /var/cache/kmux/hip-toolchain)
#   --print                 only print the settings of an existing toolchain (exit 1 if none)
# Writes $KMUX_HIP_TOOLCHAIN_DIR/toolchain.env, KEY=VALUE lines:
#   KMUX_HIP_CLANG     the HIP compiler (clang++-19)
#   KMUX_HIP_FLAGS     its flags: -x hip, code object version 5, the device libraries, the headers
#   KMUX_HIP_ROOT      the unpacked HIP 5.7 tree (headers, rocBLAS headers; test_hip_abi)
#   KMUX_HIP6_INCLUDE  ROCm 6 HIP headers (hipDeviceProp_t R0600; test_hip_abi)
#   KMUX_HIP_LLVM_BIN  clang-offload-bundler, llvm-objcopy, llvm-readelf (test_hip_bundle)
#   KMUX_HIP_TOOLCHAIN what it is, in words (CMake's configure line)
# Cost on a fresh machine: ~80 MB of Debian 12 packages (clang-19 & co), ~3 MB unpacked beside.
# Exit status: 0 ready, 1 failed (the reason on stderr).
set -euo pipefail
# Bump when what this script produces changes: an older toolchain.env is then rebuilt.
TOOLCHAIN_VERSION=1
W=${KMUX_HIP_TOOLCHAIN_DIR:-/var/cache/kmux/hip-toolchain}
ENV_FILE=$W/toolchain.env
log() { echo "setup-hip-toolchain: $*" >&2; }

if [ "${1:-}" = "--print" ]; then
  [ -f "$ENV_FILE" ] || { log "no toolchain at $W (run scripts/setup-hip-toolchain.sh)"; exit 1; }
  cat "$ENV_FILE"
  exit 0
fi
if [ -f "$ENV_FILE" ] && grep -qx "KMUX_HIP_TOOLCHAIN_VERSION=$TOOLCHAIN_VERSION" "$ENV_FILE" &&
  command -v clang++-19 >/dev/null; then
  log "ready at $W"
  exit 0
fi

SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi
LLVM=/usr/lib/llvm-19/bin
if ! command -v clang++-19 >/dev/null || [ ! -x "$LLVM/clang-offload-bundler" ] ||
  ! command -v ld.lld-19 >/dev/null || ! command -v llvm-readelf-19 >/dev/null; then
  log "installing clang-19, clang-tools-19 (clang-offload-bundler), lld-19, llvm-19"
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
    clang-19 clang-tools-19 lld-19 llvm-19 >/dev/null
fi

$SUDO mkdir -p "$W"
[ -w "$W" ] || $SUDO chown "$(id -u):$(id -g)" "$W"
tmp=$W/.work
rm -rf "$tmp" "$W/root" "$W/hip6"
mkdir -p "$tmp/apt/lists/partial" "$tmp/apt/cache/archives/partial" "$tmp/debs" "$tmp/debs6"
# The mirror of this machine's own apt sources (deb822 or one-line form).
mirror=$(grep -rhE '^(URIs:|deb )' /etc/apt/sources.list /etc/apt/sources.list.d/ 2>/dev/null |
  grep -oE 'https?://[^ ]+/debian/?' | grep -v security | head -1 || true)
mirror=${mirror%/}
[ -n "$mirror" ] || { log "no Debian mirror found in /etc/apt sources"; exit 1; }
key=/usr/share/keyrings/debian-archive-keyring.gpg
printf 'deb [signed-by=%s] %s trixie main\ndeb [signed-by=%s] %s sid main\n' \
  "$key" "$mirror" "$key" "$mirror" >"$tmp/apt/sources.list"
: >"$tmp/apt/status"
APT=(-o Dir::Etc::SourceList="$tmp/apt/sources.list" -o Dir::Etc::SourceParts=/nonexistent
  -o Dir::State::Lists="$tmp/apt/lists" -o Dir::State::status="$tmp/apt/status"
  -o Dir::Cache="$tmp/apt/cache" -o APT::Default-Release=trixie -o APT::Sandbox::User=root)
log "fetching Debian 13 rocm-device-libs-17, libamdhip64-dev, librocblas-dev and unstable's libamdhip64-dev (headers) into $W"
apt-get "${APT[@]}" update -qq >&2 || { log "apt-get update of the Debian 13 / unstable lists failed"; exit 1; }
(cd "$tmp/debs" && apt-get "${APT[@]}" download -qq rocm-device-libs-17/trixie libamdhip64-dev/trixie \
  librocblas-dev/trixie >&2) || { log "download of the Debian 13 packages failed"; exit 1; }
(cd "$tmp/debs6" && apt-get "${APT[@]}" download -qq libamdhip64-dev/sid >&2) ||
  { log "download of unstable's libamdhip64-dev failed"; exit 1; }
mkdir -p "$W/root" "$W/hip6"
for d in "$tmp"/debs/*.deb; do dpkg -x "$d" "$W/root"; done
for d in "$tmp"/debs6/*.deb; do dpkg -x "$d" "$W/hip6"; done
hip5=$(dpkg-deb -f "$tmp"/debs/libamdhip64-dev_*.deb Version)
hip6=$(dpkg-deb -f "$tmp"/debs6/libamdhip64-dev_*.deb Version)
libs=$(dpkg-deb -f "$tmp"/debs/rocm-device-libs-17_*.deb Version)
rm -rf "$tmp"

R=$W/root/usr
bc=$(ls "$R"/lib/llvm-*/lib/clang/*/amdgcn/bitcode/oclc_isa_version_942.bc 2>/dev/null | head -1 || true)
[ -n "$bc" ] || { log "rocm-device-libs-17 carries no gfx942 bitcode (oclc_isa_version_942.bc)"; exit 1; }
BC=$(dirname "$bc")
[ -f "$R/include/hip/hip_runtime.h" ] || { log "libamdhip64-dev brought no hip/hip_runtime.h"; exit 1; }
[ -f "$W/hip6/usr/include/hip/hip_runtime_api.h" ] || { log "unstable's libamdhip64-dev brought no headers"; exit 1; }
clang_version=$(clang++-19 --version | sed -n 's/.*clang version \([0-9.]*\).*/\1/p' | head -1)
# -isystem makes the Debian 13 HIP headers win over Debian 12's /usr/include/hip (if any);
# -mcode-object-version=5 matches the ABI of the device libraries clang links.
{
  echo "KMUX_HIP_TOOLCHAIN_VERSION=$TOOLCHAIN_VERSION"
  echo "KMUX_HIP_CLANG=$(command -v clang++-19)"
  echo "KMUX_HIP_FLAGS=-x hip -mcode-object-version=5 -fPIC --rocm-device-lib-path=$BC --hip-path=$R -isystem $R/include"
  echo "KMUX_HIP_ROOT=$R"
  echo "KMUX_HIP6_INCLUDE=$W/hip6/usr/include"
  echo "KMUX_HIP_LLVM_BIN=$LLVM"
  echo "KMUX_HIP_TOOLCHAIN=clang $clang_version with Debian 13 rocm-device-libs-17 $libs and HIP $hip5 headers (compile-only; ROCm 6 headers: HIP $hip6)"
} >"$ENV_FILE.tmp"
mv "$ENV_FILE.tmp" "$ENV_FILE"
chmod -R a+rX "$W"
log "ready at $W: $(sed -n 's/^KMUX_HIP_TOOLCHAIN=//p' "$ENV_FILE")"

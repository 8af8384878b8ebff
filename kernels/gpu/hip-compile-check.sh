#!/usr/bin/env bash
# Compile check of kernels/gpu for AMD MI300 (gfx942) on a machine without a GPU or ROCm.
#
# Compiles every .cu file of kernels/gpu as HIP (-x hip) for gfx942 with kmux's compile-only
# toolchain (scripts/setup-hip-toolchain.sh, run by scripts/setup-debian.sh: Debian 12 clang-19 +
# Debian 13 ROCm 6.0 device libraries), links them into a shared object, then checks that
# object: the .hip_fatbin section must hold a gfx942 code object (clang-offload-bundler --list),
# which must contain every kernel, and the library must define the extern "C" launchers of
# kmux_gpu_kernels.h. Nothing is run (no GPU is needed). The CMake build compiles the plugin's
# four sources the same way; this also covers kmux_gpu_post.cu (CUDA's cuBLASLt completion), so
# that every source of kernels/gpu stays HIP-clean.
#
# Usage: kernels/gpu/hip-compile-check.sh [OUT_DIR]
#   OUT_DIR  where objects go (default: a temporary folder, removed at the end)
#   KMUX_HIP_TOOLCHAIN_DIR  the toolchain's folder (default /var/cache/kmux/hip-toolchain)
# Exit status: 0 when everything compiles and checks out; 2 when the toolchain is not set up;
# anything else is a failed check.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
out=${1:-}
log() { echo "hip-compile-check: $*" >&2; }

settings=$("$repo/scripts/setup-hip-toolchain.sh" --print) || {
  log "the compile-only HIP toolchain is not set up: run scripts/setup-hip-toolchain.sh"; exit 2; }
KMUX_HIP_CLANG=$(echo "$settings" | sed -n 's/^KMUX_HIP_CLANG=//p')
KMUX_HIP_FLAGS=$(echo "$settings" | sed -n 's/^KMUX_HIP_FLAGS=//p')
LLVM_BIN=$(echo "$settings" | sed -n 's/^KMUX_HIP_LLVM_BIN=//p')

if [ -z "$out" ]; then
  out=$(mktemp -d)
  trap 'rm -rf "$out"' EXIT
fi
mkdir -p "$out"

srcs=("$repo"/kernels/gpu/*.cu)
[ -e "${srcs[0]}" ] || { log "no .cu files in $repo/kernels/gpu"; exit 2; }
objs=()
for f in "${srcs[@]}"; do
  o="$out/$(basename "$f" .cu).o"
  log "compiling $(basename "$f") for gfx942"
  # shellcheck disable=SC2086  # KMUX_HIP_FLAGS is a list of flags
  $KMUX_HIP_CLANG $KMUX_HIP_FLAGS --offload-arch=gfx942 -std=c++17 -O2 -Wall -Wextra -Werror \
    -Wno-unused-parameter -I"$repo/include" -I"$repo/dispatch/common" -I"$repo/kernels/gpu" \
    -c "$f" -o "$o"
  objs+=("$o")
done
lib="$out/libkmux_gpu_kernels_gfx942.so"
$KMUX_HIP_CLANG -shared -fuse-ld=lld "${objs[@]}" -o "$lib"

# 1. each object's .hip_fatbin holds a gfx942 code object (checked per object: the linker
#    concatenates the bundles of several objects, and the bundler lists only the first);
# 2. that code object is an AMDGPU ELF for gfx942 with a kernel descriptor for every __global__
#    function of the source (templates once per dtype).
fail=0
total=0
for f in "${srcs[@]}"; do
  o="$out/$(basename "$f" .cu).o"
  fatbin="$o.hip_fatbin"
  "$LLVM_BIN/llvm-objcopy" --dump-section=.hip_fatbin="$fatbin" "$o" "$o.tmp" && rm -f "$o.tmp"
  bundles=$("$LLVM_BIN/clang-offload-bundler" --list --type=o --input="$fatbin")
  target=$(echo "$bundles" | grep -E 'amdgcn-amd-amdhsa-+gfx942' | head -1 || true)
  if [ -z "$target" ]; then
    log "FAIL: $(basename "$f"): no gfx942 code object (bundles: $(echo "$bundles" | tr '\n' ' '))"
    fail=1
    continue
  fi
  co="$o.gfx942.co"
  "$LLVM_BIN/clang-offload-bundler" --unbundle --type=o --targets="$target" \
    --input="$fatbin" --output="$co"
  flags=$("$LLVM_BIN/llvm-readelf" --file-header "$co" | grep -E 'Flags:' || true)
  echo "$flags" | grep -q gfx942 || { log "FAIL: $(basename "$f"): code object $flags"; fail=1; }
  kds=$("$LLVM_BIN/llvm-readelf" --symbols "$co" | awk '$NF ~ /\.kd$/ {print $NF}' | sort -u)
  n=$(echo "$kds" | grep -c . || true)
  total=$((total + n))
  names=$(tr '\n' ' ' <"$f" | sed -E 's/__launch_bounds__ *\([^)]*\)//g' | grep -oE '__global__[^(]*' |
          grep -oE '[A-Za-z_][A-Za-z0-9_]* *$' || true)
  for k in $names; do
    echo "$kds" | grep -q "$k" || { log "FAIL: $(basename "$f"): no kernel $k in the code object"; fail=1; }
  done
  log "$(basename "$f"): $target, $n kernels"
done

# 3. the launchers of kmux_gpu_kernels.h are defined
for sym in kmux_gpu_cast kmux_gpu_amax kmux_gpu_unscale_check_finite kmux_gpu_loss_scale_update \
           kmux_gpu_fp8_scale_update kmux_gpu_gemm kmux_gpu_gemm_name kmux_gpu_conv2d \
           kmux_gpu_conv2d_name kmux_gpu_post_launch kmux_gpu_pack_bytes kmux_gpu_pick_tile \
           kmux_gpu_tile_count; do
  nm -D --defined-only "$lib" | grep -qw "$sym" || { log "FAIL: $sym not defined"; fail=1; }
done
[ "$fail" -eq 0 ] && log "OK: ${#srcs[@]} sources compiled for gfx942, $total kernels, launchers defined"
exit "$fail"

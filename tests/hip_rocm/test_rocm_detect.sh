#!/usr/bin/env bash
# test_rocm_detect.sh SOURCE_DIR WORK_DIR TOOLCHAIN_DIR
#
# The HIP plugin built through CMake's ROCm-detection path (cmake/KmuxHipToolchain.cmake) against
# a fake ROCm tree: a temporary /opt/rocm-like prefix whose llvm/bin/amdclang++ is kmux's
# compile-only toolchain (clang-19 + the ROCm device libraries of TOOLCHAIN_DIR), whose
# lib/cmake/hip/hip-config.cmake is minimal and whose .info/version names a ROCm version. kmux is
# configured with ROCM_PATH pointing there and the compile-only toolchain hidden
# (KMUX_HIP_TOOLCHAIN_DIR=/nonexistent), so only the detection can find a compiler. Checks: the
# configure line names that ROCm, its version and amdclang++; the plugin built carries a code
# object for the target; and HIP_PATH alone finds the same tree.
# Exit 77 (skipped) when the compile-only toolchain is not set up (nothing to stand in for ROCm).
set -euo pipefail
src=$1 work=$2 tc=$3
log() { echo "test_rocm_detect: $*" >&2; }
env_file=$tc/toolchain.env
[ -f "$env_file" ] || { log "SKIP: no compile-only toolchain at $tc (scripts/setup-hip-toolchain.sh)"; exit 77; }
get() { sed -n "s/^$1=//p" "$env_file"; }
clang=$(get KMUX_HIP_CLANG) llvm_bin=$(get KMUX_HIP_LLVM_BIN) hip_root=$(get KMUX_HIP_ROOT)
bc=$(get KMUX_HIP_FLAGS | grep -oE -- '--rocm-device-lib-path=[^ ]+' | cut -d= -f2)
[ -x "$clang" ] && [ -d "$bc" ] || { log "FAIL: toolchain.env names no usable compiler/device libraries"; exit 1; }

rm -rf "$work"
rocm=$work/opt/rocm-6.2.0
mkdir -p "$rocm/llvm/bin" "$rocm/amdgcn" "$rocm/lib/cmake/hip" "$rocm/.info"
# amdclang++: the compile-only clang; --rocm-path (CMake passes it) finds the device libraries in
# amdgcn/bitcode and the headers in include/, as in a real ROCm tree.
cat >"$rocm/llvm/bin/amdclang++" <<EOF
#!/bin/sh
exec "$clang" -mcode-object-version=5 "\$@"
EOF
chmod +x "$rocm/llvm/bin/amdclang++"
for t in clang-offload-bundler llvm-objcopy llvm-readelf; do ln -s "$llvm_bin/$t" "$rocm/llvm/bin/$t"; done
ln -s "$bc" "$rocm/amdgcn/bitcode"
ln -s "$hip_root/include" "$rocm/include"
# clang takes a ROCm tree for one only with a HIP version file (then it adds the HIP include path
# and the runtime wrapper header): the one of the headers linked above
mkdir -p "$rocm/share"
ln -s "$hip_root/share/hip" "$rocm/share/hip"
echo "6.2.0-99999" >"$rocm/.info/version"
cat >"$rocm/lib/cmake/hip/hip-config.cmake" <<'EOF'
# minimal hip-config.cmake of a fake ROCm tree (tests/hip_rocm/test_rocm_detect.sh)
set(hip_FOUND TRUE)
EOF
cat >"$rocm/lib/cmake/hip/hip-config-version.cmake" <<'EOF'
set(PACKAGE_VERSION "6.2.41134")
set(PACKAGE_VERSION_COMPATIBLE TRUE)
EOF

configure() { # configure <build dir> <env...>: only the HIP plugin, one target
  local b=$1
  shift
  env "$@" cmake -S "$src" -B "$b" -G Ninja -DCMAKE_BUILD_TYPE=Release -DKMUX_WITH_HIP=ON \
    -DKMUX_WITH_CUDA=OFF -DKMUX_WITH_OPENBLAS=OFF -DKMUX_WITH_ONEDNN=OFF -DKMUX_BUILD_TESTS=OFF \
    -DKMUX_BUILD_BENCH=OFF -DKMUX_HIP_TOOLCHAIN_DIR=/nonexistent -DKMUX_HIP_ARCHS=gfx942 >"$b.log" 2>&1 ||
    { cat "$b.log"; log "FAIL: configure ($*)"; exit 1; }
  grep -E 'kmux: HIP backend' "$b.log"
}

real=$(cd "$rocm" && pwd -P)
line=$(configure "$work/b-rocm" -u HIP_PATH ROCM_PATH="$rocm")
echo "$line"
for want in "ROCm 6.2.41134 (hip-config.cmake) at $real" "compiler $real/llvm/bin/amdclang++" "code objects for gfx942"; do
  echo "$line" | grep -qF "$want" || { log "FAIL: the configure line does not say '$want'"; exit 1; }
done
cmake --build "$work/b-rocm" --target kmux-hip >"$work/b-rocm.build.log" 2>&1 ||
  { tail -30 "$work/b-rocm.build.log"; log "FAIL: build of kmux-hip through ROCm"; exit 1; }
plugin=$work/b-rocm/lib/libkmux-hip.so
"$llvm_bin/llvm-objcopy" --dump-section=.kmux_hip_co.gemm="$work/gemm.b" "$plugin" "$work/copy"
head -c -1 "$work/gemm.b" >"$work/gemm.bundle"
list=$("$llvm_bin/clang-offload-bundler" --list --type=o --input="$work/gemm.bundle")
echo "$list" | grep -qE 'amdgcn-amd-amdhsa-+gfx942$' ||
  { log "FAIL: the plugin built through ROCm carries no gfx942 code object ($list)"; exit 1; }

# HIP_PATH alone (no ROCM_PATH) finds the same tree; without either, and with the toolchain
# hidden, the plugin is refused with a reason that names where it looked.
line=$(configure "$work/b-hippath" -u ROCM_PATH HIP_PATH="$rocm")
echo "$line" | grep -qF "ROCm 6.2.41134 (hip-config.cmake) at $real" ||
  { log "FAIL: HIP_PATH=$rocm was not used: $line"; exit 1; }
rm -f "$rocm/lib/cmake/hip/hip-config-version.cmake" "$rocm/lib/cmake/hip/hip-config.cmake"
line=$(configure "$work/b-info" -u HIP_PATH ROCM_PATH="$rocm")
echo "$line" | grep -qF "ROCm 6.2.0-99999 (.info/version) at $real" ||
  { log "FAIL: without hip-config.cmake the version comes from .info/version: $line"; exit 1; }
if env -u HIP_PATH -u ROCM_PATH cmake -S "$src" -B "$work/b-none" -G Ninja -DKMUX_WITH_HIP=ON \
  -DKMUX_WITH_CUDA=OFF -DKMUX_BUILD_TESTS=OFF -DKMUX_BUILD_BENCH=OFF -DKMUX_HIP_USE_ROCM=OFF \
  -DKMUX_HIP_TOOLCHAIN_DIR=/nonexistent >"$work/b-none.log" 2>&1; then
  log "FAIL: KMUX_WITH_HIP=ON without any compiler configured"
  exit 1
fi
grep -qF "no compile-only toolchain at /nonexistent" "$work/b-none.log" ||
  { cat "$work/b-none.log"; log "FAIL: no reason given"; exit 1; }
log "OK: ROCm found by ROCM_PATH and HIP_PATH, version read, gfx942 code object built with its amdclang++"
rm -rf "$work"

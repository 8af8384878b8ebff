#!/usr/bin/env bash
# tests/gpu/dry_run.sh - tests/gpu/run.sh end to end on a machine without a GPU, with only what
# the GPU machine has: a fake nvidia-smi (an "H200", sm_90) on PATH, cuda:0 on the fake CUDA
# driver with the computing fake cuBLASLt and cuDNN of a CI build (tests/fake_cuda), no
# pkg-config and no system Criterion/jansson (CMake's pkg-config pointed at nothing, the /usr and
# / prefixes ignored: KMUX_GPU_CMAKE_ARGS), Criterion and jansson only from the bundle of
# tests/gpu/bundle_deps.sh, and a few small problems (the emulated GPU is slow) instead of
# cases.batch. Not a ctest (it builds the CUDA plugin and the GPU tests: minutes); run it after a
# change to run.sh, bundle_deps.sh or the build's dependencies.
#   1. run.sh --build-only (the build timed alone: this machine has fewer cores than the GPU
#      machine's 16);
#   2. run.sh on the same build folder with the real budget (KMUX_GPU_BUDGET_S, default 570):
#      it must reach its table (kmux's side; no PyTorch here) and its summary within the budget.
# Exit status 0 when both held, 1 otherwise.
#
#   tests/gpu/dry_run.sh CI_BUILD_DIR [SCRATCH]
#     CI_BUILD_DIR  a build with the fakes (tests/fake_cuda/{lt,dnn,driver}), e.g. ./build
#     SCRATCH       folder for the dry run's build, bundle and logs (default /tmp/kmux-gpu-dry)
set -u -o pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ci=$(cd "${1:?usage: dry_run.sh CI_BUILD_DIR [SCRATCH]}" && pwd)
dir=${2:-/tmp/kmux-gpu-dry}
fakes="$ci/tests/fake_cuda"
for f in lt/libcublasLt.so.13 dnn/libcudnn.so.9 driver/libcuda.so.1; do
    [ -f "$fakes/$f" ] || { echo "dry_run.sh: no $fakes/$f (build the CI build's kmux-fake-cuda)"; exit 1; }
done
mkdir -p "$dir/fakebin" "$dir/empty"
cat >"$dir/fakebin/nvidia-smi" <<'SMI'
#!/bin/sh
# a fake nvidia-smi for tests/gpu/dry_run.sh: what run.sh asks
case "$*" in
*-L*) echo "GPU 0: NVIDIA H200 (fake driver, tests/fake_cuda) (UUID: GPU-00000000-0000-0000-0000-000000000000)" ;;
*compute_cap*) echo "9.0" ;;
*driver_version*) echo "580.00" ;;
*clocks.max.sm*) echo "1980" ;;
*clocks.max.mem*) echo "3201" ;;
*clocks*) echo "1980" ;;
*name*) echo "NVIDIA H200 (fake)" ;;
*) echo "fake nvidia-smi" ;;
esac
SMI
chmod +x "$dir/fakebin/nvidia-smi"
cat >"$dir/small.batch" <<'BATCH'
# tests/gpu/dry_run.sh: small problems for the emulated cuda:0
--dt=f32 --compute=f32 64x48:48x32n"f32_64x32x48"
--reset --dt=f16:f16:f16 --compute=f32 64x64:64x64n"f16_64"
--reset --dt=f32 --compute=tf32 --dir=FWD mb2ic8ih10oc8oh10kh3ph1n"conv_tf32"
--reset --dt=f16 --compute=f32 --layout=nhwc --dir=ALL mb2ic8ih10oc8oh10kh3ph1n"conv_f16_nhwc"
BATCH
"$here/bundle_deps.sh" "$dir/deps" || exit 1
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
nvcc_dir=$(dirname "$nvcc")
export PATH="$dir/fakebin:$nvcc_dir:$PATH"
export PKG_CONFIG_LIBDIR="$dir/empty" PKG_CONFIG_PATH=""
export KMUX_GPU_CMAKE_ARGS="-DPKG_CONFIG_EXECUTABLE=$dir/no-pkg-config -DCMAKE_IGNORE_PREFIX_PATH=/usr;/"
export KMUX_GPU_DEPS="$dir/deps" KMUX_GPU_BATCH="$dir/small.batch" KMUX_GPU_MIN_TIME=0.02
export KMUX_CUDA_LIB_PATH="$fakes/lt:$fakes/dnn:$fakes/driver"
export OUT="$dir/out"
t0=$(date +%s)
"$here/run.sh" --build-only "$dir/build" >"$dir/build-only.log" 2>&1
rc=$?
t1=$(date +%s)
tail -n 5 "$dir/build-only.log"
echo "dry_run.sh: configure + build: $((t1 - t0)) s on $(nproc) cores (exit $rc)"
[ $rc -eq 0 ] || { echo "dry_run.sh: FAIL: the build did not complete (log: $dir/build-only.log)"; exit 1; }
budget=${KMUX_GPU_BUDGET_S:-570}
KMUX_GPU_BUDGET_S=$budget timeout $((budget + 30)) "$here/run.sh" "$dir/build" >"$dir/run.log" 2>&1
rc=$?
t2=$(date +%s)
cat "$dir/run.log"
echo "dry_run.sh: the run: $((t2 - t1)) s of a ${budget}-s budget (exit $rc; log: $dir/run.log)"
grep -q "the side-by-side table" "$dir/run.log" && grep -q "run.sh summary" "$dir/run.log" &&
    [ $((t2 - t1)) -le "$budget" ] ||
    { echo "dry_run.sh: FAIL: run.sh did not reach its table and summary within its budget"; exit 1; }
echo "dry_run.sh: PASS: run.sh built with the bundle and no pkg-config, and reached its table and summary"

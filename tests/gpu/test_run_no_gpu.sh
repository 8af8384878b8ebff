#!/bin/sh
# ctest cuda_run_sh_no_gpu: the exits of tests/gpu/run.sh that come before any build, checked on
# a machine without a GPU (skipped, 77, where a GPU is present: there run.sh does the real run):
#   1. no GPU: exit status 2, "NO GPU", nothing configured;
#   2. a GPU (a fake nvidia-smi on PATH) but neither pkg-config nor Criterion/jansson (hidden as on
#      the GPU machine: KMUX_GPU_CMAKE_ARGS points CMake's pkg-config at nothing and ignores the
#      /usr and / prefixes; no bundle in KMUX_GPU_DEPS): exit status 6 after configure, naming
#      the missing dependency and bundle_deps.sh, nothing built;
#   3. the same with the bundle of tests/gpu/bundle_deps.sh (made here, where pkg-config has
#      both) and --configure-only: configure finds both in the bundle without pkg-config.
# $1: a scratch folder; $2: the nvcc the build uses (its folder goes on PATH for step 2).
here=$(cd "$(dirname "$0")" && pwd)
dir=${1:-${TMPDIR:-/tmp}/kmux-run-sh-dry}
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU [0-9]'; then
    echo "a GPU is present: run tests/gpu/run.sh itself"
    exit 77
fi
rm -rf "$dir"
mkdir -p "$dir/fakebin" "$dir/empty"

out=$("$here/run.sh" "$dir/build" 2>&1)
rc=$?
echo "$out"
[ "$rc" -eq 2 ] || { echo "FAIL: no GPU: exit status $rc, want 2"; exit 1; }
echo "$out" | grep -q "NO GPU" || { echo "FAIL: no 'NO GPU' line"; exit 1; }
[ ! -e "$dir/build/CMakeCache.txt" ] || { echo "FAIL: run.sh configured a build without a GPU"; exit 1; }

cat >"$dir/fakebin/nvidia-smi" <<'SMI'
#!/bin/sh
case "$*" in
*-L*) echo "GPU 0: Fake H200 (UUID: GPU-00000000-0000-0000-0000-000000000000)" ;;
*compute_cap*) echo "9.0" ;;
*) echo "fake nvidia-smi" ;;
esac
SMI
chmod +x "$dir/fakebin/nvidia-smi"
nvcc_dir=$(dirname "${2:-/usr/local/cuda/bin/nvcc}")
hide="-DPKG_CONFIG_EXECUTABLE=$dir/no-pkg-config -DCMAKE_IGNORE_PREFIX_PATH=/usr;/"
out=$(PATH="$dir/fakebin:$nvcc_dir:$PATH" PKG_CONFIG_LIBDIR="$dir/empty" PKG_CONFIG_PATH='' \
    KMUX_GPU_CMAKE_ARGS="$hide" KMUX_GPU_DEPS="$dir/empty" "$here/run.sh" "$dir/build" 2>&1)
rc=$?
echo "$out"
[ "$rc" -eq 6 ] || { echo "FAIL: missing Criterion: exit status $rc, want 6"; exit 1; }
echo "$out" | grep -q "criterion NOT FOUND" || { echo "FAIL: no 'criterion NOT FOUND' line"; exit 1; }
echo "$out" | grep -q "bundle_deps.sh" || { echo "FAIL: the message does not name bundle_deps.sh"; exit 1; }
[ ! -e "$dir/build/bin" ] || { echo "FAIL: run.sh built with a dependency missing"; exit 1; }

"$here/bundle_deps.sh" "$dir/deps" || { echo "FAIL: bundle_deps.sh could not bundle Criterion and jansson here"; exit 1; }
rm -rf "$dir/build"
out=$(PATH="$dir/fakebin:$nvcc_dir:$PATH" PKG_CONFIG_LIBDIR="$dir/empty" PKG_CONFIG_PATH='' \
    KMUX_GPU_CMAKE_ARGS="$hide" KMUX_GPU_DEPS="$dir/deps" "$here/run.sh" --configure-only "$dir/build" 2>&1)
rc=$?
echo "$out"
[ "$rc" -eq 0 ] || { echo "FAIL: configure with the bundle and no pkg-config: exit status $rc, want 0"; exit 1; }
for dep in criterion jansson; do
    echo "$out" | grep -q "kmux: $dep $dir/deps/$dep/lib/lib$dep.so" ||
        { echo "FAIL: configure did not take $dep from the bundle"; exit 1; }
done
echo "PASS: run.sh stops at the 'NO GPU' exit without a GPU and at exit 6 without Criterion, and configures with the bundle and no pkg-config"

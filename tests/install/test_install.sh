#!/usr/bin/env bash
# Installs the build into a temporary prefix and builds examples/first_gemm_conv.c as an outside
# project would: once through find_package(kmux) (kmux::kmux), once through pkg-config kmux. Both
# programs must compute their GEMM and convolution on "ref", and the installed kmux-info must
# find the installed plugins in <libdir>/kmux.
# Usage: test_install.sh <source-dir> <build-dir>
set -euo pipefail
src=$1 build=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
libdir=$(find "$tmp/prefix" -name 'libkmux.so' -printf '%h\n' | head -n1)

echo "-- find_package(kmux)"
cmake -S "$src/examples/consumer" -B "$tmp/consumer" -G Ninja -DCMAKE_PREFIX_PATH="$tmp/prefix" >/dev/null
cmake --build "$tmp/consumer" >/dev/null
LD_LIBRARY_PATH="$libdir" "$tmp/consumer/consumer" ref

echo "-- pkg-config kmux"
export PKG_CONFIG_PATH="$libdir/pkgconfig"
cc -std=c11 -o "$tmp/pc_consumer" "$src/examples/first_gemm_conv.c" $(pkg-config --cflags --libs kmux)
LD_LIBRARY_PATH="$libdir" "$tmp/pc_consumer" ref

echo "-- installed plugins"
out=$(LD_LIBRARY_PATH="$libdir" KMUX_BACKEND_PATH= "$tmp/prefix/bin/kmux-info")
echo "$out" | sed -n '1,12p'
for so in "$libdir"/kmux/libkmux-*.so; do
  [ -e "$so" ] || continue
  name=$(basename "$so" .so); name=${name#libkmux-}
  echo "$out" | grep -q "\[$so\]" || { echo "installed plugin $so not listed by kmux-info"; exit 1; }
done
echo "install test passed"

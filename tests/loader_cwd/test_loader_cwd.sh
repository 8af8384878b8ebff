#!/usr/bin/env bash
# libkmux loaded through a relative LD_LIBRARY_PATH ("lib", from the build folder), then the
# program changes directory into a folder with its own lib/libkmux-cwdplant.so before creating a
# context: the plant must not be opened (the plugin folder is made absolute when libkmux loads).
# Usage: test_loader_cwd.sh <build-dir> <loader_cwd program> <a plugin to plant>
set -euo pipefail
build=$1 prog=$2 plugin=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/lib"
cp "$plugin" "$tmp/lib/libkmux-cwdplant.so"
cd "$build"
LD_LIBRARY_PATH=lib KMUX_BACKEND_PATH= "$prog" "$tmp"
echo "no plugin was loaded from the new working folder"

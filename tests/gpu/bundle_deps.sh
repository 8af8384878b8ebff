#!/usr/bin/env bash
# tests/gpu/bundle_deps.sh - copies this machine's Criterion (the test framework) and jansson
# (kmux-bench's JSON library) - headers, shared libraries and the shared libraries they need
# beyond glibc - into <repo>/.gpu-deps/{criterion,jansson}, for GPU machines that have a CUDA
# toolkit but neither and cannot install packages. tests/gpu/run.sh picks the folders up by
# itself. The folder ignores itself (.gpu-deps/.gitignore), so it is never committed; give it to a
# remote run explicitly (e.g. the device tool's carry: [".gpu-deps"]). Exit status 1 when a
# dependency is not installed here (the others are still bundled).
#
#   tests/gpu/bundle_deps.sh [DEST]      (default <repo>/.gpu-deps)
set -eu -o pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
dest=${1:-$(cd "$here/../.." && pwd)/.gpu-deps}
mkdir -p "$dest"
printf '*\n' >"$dest/.gitignore"
rc=0

# bundle PKG LIB HEADERS...: pkg-config module PKG, library libLIB.so*, headers (files or folders
# relative to its includedir)
bundle() {
    local pkg=$1 lib=$2
    shift 2
    local inc libdir version
    inc=$(pkg-config --variable=includedir "$pkg" 2>/dev/null || true)
    libdir=$(pkg-config --variable=libdir "$pkg" 2>/dev/null || true)
    version=$(pkg-config --modversion "$pkg" 2>/dev/null || true)
    if [ -z "$inc" ] || ! ls "$libdir/lib$lib.so"* >/dev/null 2>&1; then
        echo "bundle_deps.sh: $pkg not installed here (pkg-config $pkg)"
        rc=1
        return
    fi
    local out="$dest/$pkg"
    rm -rf "$out"
    mkdir -p "$out/include" "$out/lib/pkgconfig"
    for h in "$@"; do
        cp -r "$inc/$h" "$out/include/"
    done
    cp -a "$libdir/lib$lib.so"* "$out/lib/"
    # every library it pulls in, except the C library and the dynamic loader
    ldd "$libdir/lib$lib.so" | awk '/=> \// { print $3 }' | while read -r l; do
        case "$(basename "$l")" in
        libc.so.* | libm.so.* | libpthread.so.* | libdl.so.* | librt.so.* | libresolv.so.* | ld-linux*) ;;
        *) cp -L "$l" "$out/lib/" ;;
        esac
    done
    cat >"$out/lib/pkgconfig/$pkg.pc" <<PC
prefix=\${pcfiledir}/../..
includedir=\${prefix}/include
libdir=\${prefix}/lib

Name: $pkg
Description: $pkg, carried by kmux tests/gpu/bundle_deps.sh
Version: $version
Libs: -L\${libdir} -Wl,-rpath,\${libdir} -l$lib
Cflags: -I\${includedir}
PC
    echo "bundle_deps.sh: $pkg $version: $(du -sh "$out" | cut -f1) in $out"
}

bundle criterion criterion criterion
bundle jansson jansson jansson.h jansson_config.h
exit $rc

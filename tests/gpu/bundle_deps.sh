#!/usr/bin/env bash
# tests/gpu/bundle_deps.sh - copies this machine's Criterion (headers, libcriterion.so and the
# shared libraries it needs beyond glibc) into <repo>/.gpu-deps/criterion, for GPU machines that
# have a CUDA toolkit but no Criterion and cannot install packages. tests/gpu/run.sh picks the
# folder up by itself. The folder ignores itself (.gpu-deps/.gitignore), so it is never committed;
# give it to a remote run explicitly (e.g. the device tool's carry: [".gpu-deps"]).
#
#   tests/gpu/bundle_deps.sh [DEST]      (default <repo>/.gpu-deps)
set -eu -o pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
dest=${1:-$(cd "$here/../.." && pwd)/.gpu-deps}
pc=$(pkg-config --variable=pcfiledir criterion 2>/dev/null)/criterion.pc || true
inc=$(pkg-config --variable=includedir criterion 2>/dev/null || true)
libdir=$(pkg-config --variable=libdir criterion 2>/dev/null || true)
if [ -z "$inc" ] || [ ! -e "$libdir/libcriterion.so" ]; then
    echo "bundle_deps.sh: Criterion not installed here (pkg-config criterion)"
    exit 1
fi
out="$dest/criterion"
rm -rf "$out"
mkdir -p "$out/include" "$out/lib/pkgconfig"
printf '*\n' >"$dest/.gitignore"
cp -r "$inc/criterion" "$out/include/"
cp -a "$libdir"/libcriterion.so* "$out/lib/"
# every library libcriterion pulls in, except the C library and the dynamic loader
ldd "$libdir/libcriterion.so" | awk '/=> \// { print $3 }' | while read -r lib; do
    case "$(basename "$lib")" in
    libc.so.* | libm.so.* | libpthread.so.* | libdl.so.* | librt.so.* | libresolv.so.* | ld-linux*) ;;
    *) cp -L "$lib" "$out/lib/" ;;
    esac
done
cat >"$out/lib/pkgconfig/criterion.pc" <<'EOF'
prefix=${pcfiledir}/../..
includedir=${prefix}/include
libdir=${prefix}/lib

Name: criterion
Description: Criterion, carried by kmux tests/gpu/bundle_deps.sh
Version: 2.4
Libs: -L${libdir} -Wl,-rpath,${libdir} -lcriterion
Cflags: -I${includedir}
EOF
echo "bundle_deps.sh: $(du -sh "$out" | cut -f1) in $out (from $pc)"

#!/usr/bin/env bash
# The Debian packages as an operator installs them: `cpack -G DEB` from the build folder (into a
# scratch folder), then checks that
#   - there are three packages, libkmux<major>, libkmux-dev and kmux-tools, each holding what
#     its part holds (the plugins in the runtime, the headers and CMake package in -dev, the
#     tools in -tools) and nothing of another part;
#   - the dependencies were computed (dpkg-deb -I): the runtime pulls in OpenBLAS and oneDNN when
#     their plugins were built, libc always; -dev and -tools depend on the exact runtime version;
#     the tools on jansson; the GPU plugins add no dependency (they link only libc);
#   - unpacked into a scratch root (dpkg -x), the installed kmux-info lists every plugin of that
#     root as loaded from it, and kmux-check prints its report, with a clean environment.
# Usage: test_deb.sh <build-dir>
set -euo pipefail
build=$(cd "$1" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for t in cpack dpkg-deb dpkg-shlibdeps readelf; do
  command -v "$t" >/dev/null || { echo "SKIP: $t not found (Debian: apt install dpkg-dev binutils)"; exit 77; }
done

(cd "$tmp" && cpack -G DEB --config "$build/CPackConfig.cmake" -B "$tmp/out" >"$tmp/cpack.log" 2>&1) ||
  { cat "$tmp/cpack.log"; echo "cpack -G DEB failed"; exit 1; }
ver=$(sed -n 's/^set(CPACK_PACKAGE_VERSION "\(.*\)")$/\1/p' "$build/CPackConfig.cmake")
major=${ver%%.*}
runtime=libkmux$major
find "$tmp/out" -maxdepth 1 -name '*.deb' -printf '%f\n' | sort
deb() { # the one package file of a package name
  local f
  f=$(find "$tmp/out" -maxdepth 1 -name "${1}_${ver}_*.deb")
  [ -n "$f" ] && [ "$(echo "$f" | wc -l)" = 1 ] || { echo "no single package file for $1"; exit 1; }
  echo "$f"
}
field() { dpkg-deb -f "$(deb "$1")" "$2"; }
fail() { echo "FAIL: $*"; exit 1; }

for p in "$runtime" libkmux-dev kmux-tools; do
  echo "-- $p: $(field "$p" Depends)"
done

# ---- contents: each part in its package, nothing twice
contents() { dpkg-deb -c "$(deb "$1")" | awk '{print $6}' | sed 's|^\./|/|'; }
contents "$runtime" >"$tmp/runtime.txt"
contents libkmux-dev >"$tmp/dev.txt"
contents kmux-tools >"$tmp/tools.txt"
grep -Eq '/libkmux\.so\.'"$major"'$' "$tmp/runtime.txt" || fail "$runtime lacks libkmux.so.$major"
grep -Eq '/libkmux\.so$' "$tmp/runtime.txt" && fail "$runtime holds the libkmux.so link of -dev"
grep -Eq '/include/kmux\.h$' "$tmp/dev.txt" || fail "libkmux-dev lacks kmux.h"
grep -Eq '/libkmux\.so$' "$tmp/dev.txt" || fail "libkmux-dev lacks libkmux.so"
grep -Eq '/cmake/kmux/kmuxConfig\.cmake$' "$tmp/dev.txt" || fail "libkmux-dev lacks kmuxConfig.cmake"
grep -Eq '/pkgconfig/kmux\.pc$' "$tmp/dev.txt" || fail "libkmux-dev lacks kmux.pc"
for t in kmux-info kmux-check; do
  grep -Eq "^/usr/bin/$t\$" "$tmp/tools.txt" || fail "kmux-tools lacks /usr/bin/$t"
done
grep -Eq '^/usr/bin/' "$tmp/runtime.txt" "$tmp/dev.txt" && fail "a program outside kmux-tools"
grep -Eq '/include/' "$tmp/runtime.txt" "$tmp/tools.txt" && fail "a header outside libkmux-dev"
plugins=$(cd "$build/lib" && ls libkmux-*.so 2>/dev/null || true)
for so in $plugins; do
  grep -Eq "/lib[^ ]*/kmux/$so\$" "$tmp/runtime.txt" || fail "$runtime lacks the plugin $so"
done

# ---- computed dependencies
rdep=$(field "$runtime" Depends)
echo "$rdep" | grep -q 'libc6' || fail "$runtime: no computed libc6 dependency: $rdep"
for so in $plugins; do
  need=$(readelf -d "$build/lib/$so" | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p' | tr '\n' ' ')
  case "$so" in
    libkmux-openblas.so) echo "$rdep" | grep -q 'openblas' || fail "$runtime: OpenBLAS plugin, no openblas dependency: $rdep" ;;
    libkmux-onednn.so) echo "$rdep" | grep -q 'libdnnl' || fail "$runtime: oneDNN plugin, no libdnnl dependency: $rdep" ;;
    libkmux-cuda.so | libkmux-hip.so)
      # opened at run time: the plugin links nothing but the C library, so adds no dependency
      for n in $need; do
        case "$n" in libc.so.6 | libm.so.6 | libdl.so.2 | libpthread.so.0 | ld-linux*) ;;
          *) fail "$so links $n; a GPU plugin must open its vendor libraries at run time" ;; esac
      done
      echo "$rdep" | grep -Eqi 'cuda|cublas|cudnn|amdhip|rocm|rocblas|hip' &&
        fail "$runtime depends on a GPU vendor package: $rdep" ;;
  esac
done
for p in libkmux-dev kmux-tools; do
  field "$p" Depends | grep -q "$runtime (= $ver)" || fail "$p does not depend on $runtime (= $ver)"
done
if grep -q '/bin/kmux-bench$' "$tmp/tools.txt"; then
  field kmux-tools Depends | grep -q 'libjansson' || fail "kmux-tools: no computed jansson dependency"
fi

# ---- unpacked into a scratch root, run from there with a clean environment
root=$tmp/root
for p in "$runtime" libkmux-dev kmux-tools; do dpkg -x "$(deb "$p")" "$root"; done
run() { env -i PATH=/usr/bin:/bin HOME="$tmp" XDG_CACHE_HOME="$tmp/cache" KMUX_BACKEND_PATH= "$@"; }
info=$(run "$root/usr/bin/kmux-info") || fail "the unpacked kmux-info failed"
echo "$info" | sed -n '1,12p'
for so in $plugins; do
  line=$(echo "$info" | grep -F "[$root/usr/" | grep -F "/kmux/$so]") ||
    fail "kmux-info does not list $so as loaded from the unpacked root"
  case "$line" in
    *"cannot load "* | *"rejected"* | *"does not export"* | *"plugin ABI"* | *"init failed"*)
      fail "the unpacked $so did not load: $line" ;;
  esac
done
set +e
run "$root/usr/bin/kmux-check" --backend=cpu --quick >"$tmp/check.txt" 2>&1
rc=$?
set -e
sed -n '1,40p' "$tmp/check.txt"
# 0: nothing failed; 1: a check failed on this machine (a busy CI machine's speed, say), which is
# the report working. Anything else (a crash, a usage error, a library not found) is not.
[ "$rc" = 0 ] || [ "$rc" = 1 ] || fail "the unpacked kmux-check exited $rc"
grep -Eq '(PASS|WARN|FAIL|SKIP)' "$tmp/check.txt" || fail "the unpacked kmux-check printed no report"
echo "Debian packages test passed"

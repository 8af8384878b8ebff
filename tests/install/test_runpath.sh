#!/usr/bin/env bash
# Every kmux tool starts where it is installed, and nothing loads from the current directory:
#  1. no RUNPATH/RPATH of an ELF file of the build tree (bin/, lib/, tests/, examples/) has an
#     empty element (the loader reads it as the current directory: CMake's build-tree RUNPATH of
#     a target rewritten at install ends in ':') or a relative one (relative to the current
#     directory, not to the file); only absolute paths and $ORIGIN-based ones pass;
#  2. the same over a temporary install prefix, where every installed executable must find the
#     prefix's libraries (libkmux.so.0) through its own $ORIGIN RUNPATH, and every installed tool
#     must start in a clean environment (no LD_LIBRARY_PATH) in a cheap mode;
#  3. the build tree's tools, started from a folder that holds a hostile libjansson.so.4 (whose
#     constructor writes a marker file), must not load it.
# Usage: test_runpath.sh <build-dir>
set -euo pipefail
build=$(cd "$1" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

is_elf() { [ -f "$1" ] && [ "$(LC_ALL=C head -c 4 "$1" 2>/dev/null)" = $'\177ELF' ]; }

# rpath_of FILE: the file's RUNPATH and RPATH entries, one "TAG VALUE" a line
rpath_of() {
  LC_ALL=C readelf -d "$1" 2>/dev/null |
    sed -n 's/^.*(\(RUNPATH\|RPATH\)).*: \[\(.*\)\]$/\1 \2/p'
}

# check_elements FILE: prints one line for each empty or relative RUNPATH/RPATH element
check_elements() {
  local f=$1 tag value
  while read -r tag value; do
    awk -F: -v f="$f" -v tag="$tag" -v v="$value" 'BEGIN {
      n = split(v, e, ":")
      if (v == "") n = 1
      for (i = 1; i <= n; i++) {
        if (e[i] == "")
          printf "%s: %s [%s] has an empty element %d (the current directory)\n", f, tag, v, i
        else if (e[i] !~ /^\// && e[i] !~ /^\$ORIGIN(\/|$)/ && e[i] !~ /^\$\{ORIGIN\}(\/|$)/)
          printf "%s: %s [%s] has a relative element \"%s\"\n", f, tag, v, e[i]
      }
    }'
  done < <(rpath_of "$f")
}

# scan_tree LABEL DIR...: checks every ELF file (objects aside) under the folders
scan_tree() {
  local label=$1 n=0 bad f
  shift
  while IFS= read -r -d '' f; do
    is_elf "$f" || continue
    n=$((n + 1))
    bad=$(check_elements "$f")
    if [ -n "$bad" ]; then
      echo "FAIL $bad"
      fail=1
    fi
  done < <(find "$@" -type f ! -name '*.o' ! -path '*/CMakeFiles/*' -print0 2>/dev/null)
  echo "-- $label: $n ELF files checked"
  [ "$n" -gt 0 ] || { echo "FAIL $label: no ELF file found under $*"; fail=1; }
}

echo "-- 1. build tree"
dirs=()
for d in bin lib tests examples; do [ -d "$build/$d" ] && dirs+=("$build/$d"); done
scan_tree "build tree" "${dirs[@]}"

echo "-- 2. install tree"
prefix=$tmp/prefix
cmake --install "$build" --prefix "$prefix" >/dev/null
scan_tree "install tree" "$prefix"
tools=()
for f in "$prefix"/bin/*; do is_elf "$f" && tools+=("$f"); done
[ "${#tools[@]}" -gt 0 ] || { echo "FAIL no executable installed in $prefix/bin"; fail=1; }
for exe in "${tools[@]}"; do
  name=$(basename "$exe")
  # Each library of the prefix it needs (libkmux.so.0) lies in a folder of its own RUNPATH,
  # given relative to the executable ($ORIGIN), so that a moved prefix still runs.
  runpath=$(rpath_of "$exe" | sed -n 's/^RUNPATH //p')
  [ -n "$runpath" ] || { echo "FAIL $exe: no RUNPATH"; fail=1; }
  while [ -n "$runpath" ] && read -r needed; do
    lib=$(find "$prefix" -name "$needed" -print -quit)
    [ -n "$lib" ] || continue # a system library
    found=""
    IFS=: read -ra elems <<<"$runpath"
    for e in "${elems[@]}"; do
      # shellcheck disable=SC2016 # the literal loader token, not a shell variable
      case "$e" in
        '$ORIGIN'* | '${ORIGIN}'*) ;;
        *) continue ;;
      esac
      e=${e/#\$\{ORIGIN\}/$prefix/bin}
      e=${e/#\$ORIGIN/$prefix/bin}
      if [ -e "$e/$needed" ]; then found=$e; fi
    done
    if [ -z "$found" ]; then
      echo "FAIL $exe: RUNPATH [$runpath] does not lead to $needed (${lib#"$prefix"/})"
      fail=1
    fi
  done < <(LC_ALL=C readelf -d "$exe" | sed -n 's/^.*(NEEDED).*: \[\(.*\)\]$/\1/p')

  # Started in a clean environment: no LD_LIBRARY_PATH, no KMUX_* variable. --help starts any
  # tool; the known ones also run a cheap mode that must succeed.
  case "$name" in
    kmux-info) modes=("" "--help") ;;
    kmux-bench) modes=("--version" "--help") ;;
    kmux-check) modes=("--help") ;;
    kmux-support-matrix) modes=("--devices=ref" "--help") ;;
    *) modes=("--help") ;;
  esac
  for mode in "${modes[@]}"; do
    rc=0
    (cd "$tmp" && env -i PATH=/usr/bin:/bin HOME="$tmp" "$exe" ${mode:+"$mode"} >"$tmp/out" 2>"$tmp/err") ||
      rc=$?
    if [ "$rc" -eq 127 ] || grep -qE "error while loading shared libraries|cannot open shared object|symbol lookup error" "$tmp/err"; then
      echo "FAIL installed $name $mode: exit $rc: $(head -c 600 "$tmp/err")"
      fail=1
    elif [ "$rc" -ne 0 ] && [ "$mode" != "--help" ]; then
      echo "FAIL installed $name $mode: exit $rc: $(head -c 600 "$tmp/err")"
      fail=1
    else
      echo "-- installed $name ${mode:-(no arguments)}: exit $rc"
    fi
  done
done

echo "-- 3. build-tree tools started next to a hostile libjansson.so.4"
hostile=$tmp/hostile
mkdir -p "$hostile"
cat >"$tmp/hostile.c" <<'EOF'
#include <fcntl.h>
#include <unistd.h>
/* Loaded from the current directory: says so in a file there and stops the program. */
__attribute__((constructor)) static void kmux_test_hostile_jansson(void) {
  int fd = open("HOSTILE_LOADED", O_WRONLY | O_CREAT, 0644);
  if (fd >= 0) close(fd);
  _exit(99);
}
EOF
cc -shared -fPIC -Wl,-soname,libjansson.so.4 -o "$hostile/libjansson.so.4" "$tmp/hostile.c"
cp "$hostile/libjansson.so.4" "$hostile/libkmux.so.0"
ran=0
for exe in "$build"/bin/kmux-*; do
  is_elf "$exe" || continue
  LC_ALL=C readelf -d "$exe" | grep -q '(NEEDED).*\[libjansson\.so\.4\]' || continue
  ran=$((ran + 1))
  rm -f "$hostile/HOSTILE_LOADED"
  rc=0
  (cd "$hostile" && "$exe" --help >/dev/null 2>"$tmp/err") || rc=$?
  if [ -e "$hostile/HOSTILE_LOADED" ] || grep -q "$hostile" "$tmp/err"; then
    echo "FAIL $exe loaded $hostile/libjansson.so.4 from the current directory (exit $rc)"
    fail=1
  else
    echo "-- $(basename "$exe") --help from $hostile: exit $rc, nothing loaded from there"
  fi
done
[ "$ran" -gt 0 ] || { echo "FAIL no build-tree tool under $build/bin needs libjansson.so.4"; fail=1; }

if [ "$fail" -ne 0 ]; then
  echo "runpath test FAILED"
  exit 1
fi
echo "runpath test passed"

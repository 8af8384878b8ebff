#!/usr/bin/env bash
# test_hip_bundle.sh PLUGIN NAMES_PROGRAM LLVM_BIN "TARGETS" [NO_CODE_OBJECTS_REASON]
#
# The HIP plugin carries its kernels as offload bundles in sections .kmux_hip_co.<source>. For
# each section and each target of TARGETS (the configure step's list, e.g. "gfx90a;gfx942;gfx1100"):
# clang-offload-bundler --list must show a code object for that target; it must be an AMDGPU ELF
# for that processor and, over all sections, define a kernel (<name>.kd) for every name the
# plugin launches (NAMES_PROGRAM prints them). It prints the list of code objects it found.
# Exit 77 (ctest: skipped) with the reason only when the plugin was built without code objects;
# a build that carries code objects and lacks the tools to read them fails.
set -euo pipefail
plugin=$1 names=$2 llvm_bin=$3 targets=$4 reason=${5:-}
log() { echo "test_hip_bundle: $*" >&2; }
if [ -n "$reason" ]; then log "SKIP: the plugin was built without code objects: $reason"; exit 77; fi
bundler=$llvm_bin/clang-offload-bundler objcopy=$llvm_bin/llvm-objcopy readelf=$llvm_bin/llvm-readelf
for t in "$bundler" "$objcopy" "$readelf"; do
  [ -x "$t" ] || { log "FAIL: $t not found, though the plugin carries code objects"; exit 1; }
done
targets=${targets//;/ }
[ -n "$targets" ] || { log "FAIL: no target list, though the plugin carries code objects"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sections=$("$readelf" --section-headers "$plugin" | grep -oE '\.kmux_hip_co\.[a-z0-9_]+' | sort -u)
[ -n "$sections" ] || { log "FAIL: no .kmux_hip_co.* section in $plugin"; exit 1; }
fail=0
for sec in $sections; do
  "$objcopy" --dump-section="$sec=$tmp/b" "$plugin" "$tmp/copy"
  # the section ends with one padding byte after the bundle (the end label)
  head -c -1 "$tmp/b" >"$tmp/bundle"
  list=$("$bundler" --list --type=o --input="$tmp/bundle")
  log "$sec: $(echo "$list" | tr '\n' ' ')"
  for arch in $targets; do
    proc=${arch%%:*}
    # the bundle entry names the full target id (hipv4-amdgcn-amd-amdhsa--gfx942[:features])
    entry=$(echo "$list" | grep -E "amdgcn-amd-amdhsa-+${arch}\$" | head -1 || true)
    [ -n "$entry" ] || { log "FAIL: $sec carries no code object for $arch"; fail=1; continue; }
    "$bundler" --unbundle --type=o --targets="$entry" --input="$tmp/bundle" --output="$tmp/co"
    "$readelf" --file-header "$tmp/co" | grep -E 'Flags:' | grep -q "$proc" ||
      { log "FAIL: $sec: the $arch entry is not a $proc ELF"; fail=1; continue; }
    "$readelf" --symbols "$tmp/co" | awk '$NF ~ /\.kd$/ {sub(/\.kd$/, "", $NF); print $NF}' >>"$tmp/kds.$proc"
    echo "$sec $entry $(stat -c %s "$tmp/co") bytes" >>"$tmp/objects"
  done
done
n=0
while read -r k; do
  n=$((n + 1))
  for arch in $targets; do
    proc=${arch%%:*}
    grep -qxF "$k" "$tmp/kds.$proc" 2>/dev/null ||
      { log "FAIL: kernel $k is launched by the plugin but not in the $arch code objects"; fail=1; }
  done
done < <("$names")
[ "$n" -gt 0 ] || { log "FAIL: the plugin names no kernel"; exit 1; }
echo "code objects carried by $(basename "$plugin"):"
cat "$tmp/objects"
[ "$fail" -eq 0 ] && log "OK: $targets in every bundle; all $n kernel names the plugin launches are defined for each"
exit "$fail"

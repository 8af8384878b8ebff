#!/usr/bin/env bash
# test_hip_bundle.sh PLUGIN NAMES_PROGRAM [NO_CODE_OBJECTS_REASON]
#
# The HIP plugin carries its kernels as offload bundles in sections .kmux_hip_co.<source>. For
# each: clang-offload-bundler --list must show a gfx942 code object; that code object must be an
# AMDGPU ELF for gfx942 and, over all sections, define a kernel (<name>.kd) for every name the
# plugin launches (NAMES_PROGRAM prints them). Exit 77 (ctest: skipped) with the reason when the
# plugin was built without code objects or the LLVM tools are missing.
set -euo pipefail
plugin=$1 names=$2 reason=${3:-}
log() { echo "test_hip_bundle: $*" >&2; }
if [ -n "$reason" ]; then log "SKIP: the plugin was built without code objects: $reason"; exit 77; fi
bundler=/usr/lib/llvm-19/bin/clang-offload-bundler
for t in "$bundler" llvm-objcopy-19 llvm-readelf-19; do
  command -v "$t" >/dev/null || { log "SKIP: $t not found (the gfx942 toolchain is not installed)"; exit 77; }
done
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
sections=$(llvm-readelf-19 --section-headers "$plugin" | grep -oE '\.kmux_hip_co\.[a-z0-9_]+' | sort -u)
[ -n "$sections" ] || { log "FAIL: no .kmux_hip_co.* section in $plugin"; exit 1; }
: >"$tmp/kds"
for sec in $sections; do
  llvm-objcopy-19 --dump-section="$sec=$tmp/b" "$plugin" "$tmp/copy"
  # the section ends with one padding byte after the bundle (the end label)
  head -c -1 "$tmp/b" >"$tmp/bundle"
  list=$("$bundler" --list --type=o --input="$tmp/bundle")
  log "$sec: $(echo "$list" | tr '\n' ' ')"
  target=$(echo "$list" | grep -E 'amdgcn-amd-amdhsa-+gfx942$' | head -1 || true)
  [ -n "$target" ] || { log "FAIL: $sec carries no gfx942 code object"; exit 1; }
  "$bundler" --unbundle --type=o --targets="$target" --input="$tmp/bundle" --output="$tmp/co"
  llvm-readelf-19 --file-header "$tmp/co" | grep -E 'Flags:' | grep -q gfx942 ||
    { log "FAIL: $sec: the gfx942 entry is not a gfx942 ELF"; exit 1; }
  llvm-readelf-19 --symbols "$tmp/co" | awk '$NF ~ /\.kd$/ {sub(/\.kd$/, "", $NF); print $NF}' >>"$tmp/kds"
done
missing=0 n=0
while read -r k; do
  n=$((n + 1))
  grep -qxF "$k" "$tmp/kds" || { log "FAIL: kernel $k is launched by the plugin but not in the gfx942 code objects"; missing=1; }
done < <("$names")
[ "$n" -gt 0 ] || { log "FAIL: the plugin names no kernel"; exit 1; }
[ "$missing" -eq 0 ] && log "OK: gfx942 in every bundle; all $n kernel names the plugin launches are defined"
exit "$missing"

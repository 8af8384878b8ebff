#!/bin/sh
# Installs the build into a temporary prefix and runs prefix/bin/kmux-info (text and --json) and
# prefix/bin/kmux-bench WITHOUT LD_LIBRARY_PATH: the installed binaries' relative RPATH
# ($ORIGIN/../lib) must find libkmux, and libkmux its plugins. Also: an unknown flag is an error.
# Usage: info_installed.sh <build-dir>
set -eu
build=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
# relocated: the prefix is moved after installation
mv "$tmp/prefix" "$tmp/moved"
unset LD_LIBRARY_PATH
info=$tmp/moved/bin/kmux-info
out=$(KMUX_BACKEND_PATH= "$info") || { echo "installed kmux-info failed"; exit 1; }
echo "$out" | sed -n '1,14p'
echo "$out" | grep -q "^Host CPU" || { echo "no host section"; exit 1; }
echo "$out" | grep -q "family [0-9]" || { echo "no family/model"; exit 1; }
echo "$out" | grep -q "^ref" || { echo "no ref device"; exit 1; }
for so in "$tmp"/moved/lib*/kmux/libkmux-*.so; do
  [ -e "$so" ] || continue
  name=$(basename "$so")
  # Loaded from the prefix: available, or unavailable for a reason of its machine (no GPU, no
  # vendor runtime), never a plugin file that could not be loaded or was rejected.
  line=$(echo "$out" | grep "/kmux/$name\]") || { echo "installed plugin $name not listed"; exit 1; }
  case "$line" in
    *"cannot load "*|*"rejected"*|*"does not export"*|*"plugin ABI"*|*"init failed"*)
      echo "installed plugin $name did not load: $line"; exit 1 ;;
    *"available "*|*"unavailable: "*) ;;
    *) echo "installed plugin $name not listed as available or unavailable: $line"; exit 1 ;;
  esac
done
KMUX_BACKEND_PATH= "$info" --json > "$tmp/info.json"
python3 - "$tmp/info.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["host"]["usable_cores"] >= 1 and d["host"]["family"] >= 0, d["host"]
assert any(dev["id"] == "ref" for dev in d["devices"]), d["devices"]
print("kmux-info --json: %d backends, %d devices, host %s (%s)" % (
    len(d["backends"]), len(d["devices"]), d["host"]["name"], d["host"]["uarch"]))
PY
if "$info" --frobnicate >/dev/null 2>"$tmp/err"; then echo "unknown flag accepted"; exit 1; fi
grep -q "unknown argument '--frobnicate'" "$tmp/err" || { cat "$tmp/err"; exit 1; }
if [ -x "$tmp/moved/bin/kmux-bench" ]; then
  "$tmp/moved/bin/kmux-bench" --version || { echo "installed kmux-bench failed"; exit 1; }
fi
echo "installed tools run from the prefix"

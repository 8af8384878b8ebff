#!/bin/sh
# Wrong library versions (issue 51): for each function a fake vendor library exports, a copy of
# the library without it (the name patched in its dynamic string table, so dlsym no longer finds
# it: an older or a partial library), and alloc_fault_program --missing=SYMBOL run on DEVICE
# against that copy. Each must end in one of: the device unavailable with a reason that names
# the symbol (refused at probe), a call refused with a status that names it (refused at first
# use), or the whole workload done (an optional symbol, or one this workload never needs).
# Never a crash, a symbol lookup error of the dynamic linker, or an error that does not name it.
#   missing_symbol_sweep.sh PROGRAM DEVICE VAR LIBRARY [FILE]
# VAR=LIBRARY is how the plugin finds the library; with FILE, VAR is a folder list and the copy
# is put first under the name FILE (KMUX_CUDA_LIB_PATH ... libcuda.so.1).
set -u
prog=$1 device=$2 var=$3 lib=$4 file=${5:-}
command -v python3 >/dev/null && command -v nm >/dev/null || { echo "SKIP: needs python3 and nm"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
symbols=$(nm -D --defined-only "$lib" | awk '$2 ~ /^[TW]$/ {print $3}' | grep -v '^kmux_\|^_')
[ -n "$symbols" ] || { echo "FAIL: no exported function in $lib"; exit 1; }
tried=0 probe=0 use=0 done_=0 bad=0
for sym in $symbols; do
    tried=$((tried + 1))
    mkdir -p "$tmp/lib"
    copy=$tmp/lib/${file:-$(basename "$lib")}
    python3 - "$lib" "$copy" "$sym" <<'PY' || { echo "FAIL: could not patch $sym"; exit 1; }
import sys
src, dst, name = sys.argv[1], sys.argv[2], sys.argv[3].encode()
data = bytearray(open(src, "rb").read())
old = b"\0" + name + b"\0"
new = b"\0" + name[:-1] + (b"_" if name[-1:] != b"_" else b"Q") + b"\0"
n = data.count(old)
if n == 0:
    sys.exit(f"{name.decode()} not found as a whole string")
data = data.replace(old, new)
open(dst, "wb").write(data)
PY
    if [ -n "$file" ]; then
        old=$(printenv "$var")
        val="$tmp/lib${old:+:$old}"
    else
        val=$copy
    fi
    env "$var=$val" "$prog" --missing="$sym" "$device" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    if [ "$rc" -ge 126 ] || grep -q "symbol lookup error\|AddressSanitizer\|runtime error:" "$tmp/err"; then
        bad=$((bad + 1))
        echo "CRASH without $sym (exit $rc):"
        tail -n 5 "$tmp/err"
    elif [ "$rc" != 0 ]; then
        bad=$((bad + 1))
        echo "UNCLEAN without $sym: $(grep -m1 UNCLEAN "$tmp/err")"
    elif grep -q "^unavailable: " "$tmp/out"; then
        if grep "^unavailable: " "$tmp/out" | grep -q "$sym"; then
            probe=$((probe + 1))
            echo "$sym: refused at probe: $(grep -m1 '^unavailable: ' "$tmp/out" | cut -c1-200)"
        else
            bad=$((bad + 1))
            echo "UNNAMED without $sym: $(grep -m1 '^unavailable: ' "$tmp/out" | cut -c1-200)"
        fi
    elif grep -q "^refused: " "$tmp/err"; then
        use=$((use + 1))
        echo "$sym: refused at first use: $(grep -m1 '^refused: ' "$tmp/err" | cut -c1-200)"
    elif grep -q "^ran on $device\$" "$tmp/out"; then
        done_=$((done_ + 1))
    else
        bad=$((bad + 1))
        echo "UNCLEAN without $sym: the device neither ran nor said why"
        cat "$tmp/out" "$tmp/err" | tail -n 5
    fi
done
echo "$(basename "$lib"): $tried functions hidden: refused at probe $probe, refused at first use $use, workload completed without it (an optional function, or a library kmux then runs without) $done_, crashed or unclean $bad"
[ "$bad" = 0 ] || exit 1
echo PASS

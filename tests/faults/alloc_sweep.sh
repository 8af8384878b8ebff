#!/bin/sh
# The allocation-failure sweep (issue 51, as SQLite's): runs PROGRAM (alloc_fault_program) with
# KMUX_FAULT_ALLOC = 1, 2, 3, ... (the N-th host allocation of the core and its plugins fails)
# until a run no longer reaches N. At every N the run must be clean: exit 0 (every kmux call
# returned KMUX_OK or KMUX_ERR_OUT_OF_MEMORY with a message, the call made again then succeeded,
# every result right, every device of a run without faults used), no crash, and under ASan no
# leak (LeakSanitizer's report). Prints the
# figures: allocation sites reached / failed cleanly / unclean / crashed / leaked.
#   alloc_sweep.sh PROGRAM [DEVICE...]
set -u
prog=${1:?usage: $0 PROGRAM [DEVICE...]}
shift
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$prog" "$@" >"$tmp/out" 2>"$tmp/err" || { cat "$tmp/err"; echo "FAIL: the program fails without faults"; exit 1; }
devices=$(grep -c '^ran on ' "$tmp/out")
[ "$devices" -gt 0 ] || { echo "FAIL: none of the devices asked for is here (${*:-the defaults})"; exit 1; }
echo "without faults: $(grep '^ran on ' "$tmp/out" | cut -c8- | paste -sd' ' -)"
n=0 reached=0 clean=0 unclean=0 crashed=0 leaked=0
while :; do
    n=$((n + 1))
    KMUX_FAULT_ALLOC=$n "$prog" "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    if ! grep -q "KMUX_FAULT_ALLOC=$n: allocation $n fails" "$tmp/err"; then
        [ "$rc" = 0 ] || { cat "$tmp/err"; echo "FAIL: the run without a failing allocation exited $rc"; exit 1; }
        break
    fi
    reached=$((reached + 1))
    site=$(grep -m1 '^oom: ' "$tmp/err" | cut -c1-150)
    if grep -q "LeakSanitizer" "$tmp/err"; then
        leaked=$((leaked + 1))
        echo "LEAK at allocation $n (${site:-no call said out of memory}):"
        grep -A12 "LeakSanitizer" "$tmp/err" | head -n 14
    elif [ "$rc" -ge 128 ] || grep -q "ERROR: AddressSanitizer\|runtime error:" "$tmp/err"; then
        crashed=$((crashed + 1))
        echo "CRASH at allocation $n (exit $rc, ${site:-no call said out of memory}):"
        tail -n 12 "$tmp/err"
    elif [ "$rc" != 0 ]; then
        unclean=$((unclean + 1))
        echo "UNCLEAN at allocation $n: $(grep -m1 'UNCLEAN' "$tmp/err")"
    elif [ "$(grep -c '^ran on ' "$tmp/out")" != "$devices" ]; then
        unclean=$((unclean + 1)) # a device quietly left out: the memory it lacked is lost to it
        echo "UNCLEAN at allocation $n: ran on $(grep '^ran on ' "$tmp/out" | cut -c8- | paste -sd' ' -) only (${site:-no call said out of memory})"
    else
        clean=$((clean + 1))
    fi
    [ "$n" -lt 20000 ] || { echo "FAIL: still reaching allocation $n"; exit 1; }
done
echo "allocation sites reached $reached: failed cleanly $clean, unclean $unclean, crashed $crashed, leaked $leaked"
[ "$reached" -gt 0 ] || { echo "FAIL: no allocation was counted (is KMUX_FAULT_ALLOC wired?)"; exit 1; }
[ $((unclean + crashed + leaked)) = 0 ] || exit 1
echo PASS

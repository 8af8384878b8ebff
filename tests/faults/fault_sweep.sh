#!/bin/sh
# The fault sweeps (issue 51, as SQLite's), one run of PROGRAM (alloc_fault_program) per fault:
#   alloc:  KMUX_FAULT_ALLOC = 1, 2, 3, ... (the N-th host allocation of the core and its plugins
#           fails) until a run no longer reaches N;
#   vendor: KMUX_FAKE_FAIL_CALL = 1, 2, 3, ... (the N-th counted call of the fake GPU runtime or
#           driver fails with its "unknown error", fake_gpu_core.h) until a run no longer reaches N;
#   alloc-cmd: as alloc, for any kmux program (PROGRAM ARGS..., e.g. kmux-bench on two
#           problems): clean when it exits 0, or exits 1 or 2 having printed every kmux status it
#           met with its message (no "KMUX_ERR_...:" line that ends there).
# At every N the run must be clean: exit 0 (every kmux call returned KMUX_OK or the injected
# failure as a status with a message, the call made again then succeeded, every result right;
# alloc: every device of a run without faults used), no crash, and under ASan no leak
# (LeakSanitizer's report). Prints the figures: fault points reached / failed cleanly / unclean
# / crashed / leaked.
#   fault_sweep.sh alloc|vendor PROGRAM [DEVICE...]   fault_sweep.sh alloc-cmd PROGRAM [ARG...]
# FAULT_SWEEP_VALGRIND=1 runs each fault under valgrind's memcheck (tests/valgrind/run.sh): an
# invalid access or a definite leak on any fault path counts as leaked.
set -u
mode=${1:?usage: $0 alloc|vendor|alloc-cmd PROGRAM [ARG...]}
prog=${2:?usage: $0 alloc|vendor|alloc-cmd PROGRAM [ARG...]}
shift 2
case $mode in
alloc | alloc-cmd) var=KMUX_FAULT_ALLOC what=allocation flag= ;;
vendor) var=KMUX_FAKE_FAIL_CALL what="vendor call" flag=--vendor ;;
*) echo "usage: $0 alloc|vendor|alloc-cmd PROGRAM [ARG...]"; exit 2 ;;
esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
vg=
if [ "${FAULT_SWEEP_VALGRIND:-0}" = 1 ]; then
    vg="valgrind --tool=memcheck --error-exitcode=99 --leak-check=full --show-leak-kinds=definite
        --errors-for-leak-kinds=definite --num-callers=30 --log-file=$tmp/memcheck.log"
fi
$vg "$prog" $flag "$@" >"$tmp/out" 2>"$tmp/err" || { cat "$tmp/err"; echo "FAIL: the program fails without faults"; exit 1; }
devices=$(grep -c '^ran on ' "$tmp/out")
if [ "$mode" != alloc-cmd ]; then
    [ "$devices" -gt 0 ] || { echo "FAIL: none of the devices asked for is here (${*:-the defaults})"; exit 1; }
    echo "without faults: $(grep '^ran on ' "$tmp/out" | cut -c8- | paste -sd' ' -)"
fi
n=0 reached=0 clean=0 unclean=0 crashed=0 leaked=0 absorbed=0
while :; do
    n=$((n + 1))
    # shellcheck disable=SC2086
    env "$var=$n" $vg "$prog" $flag "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    if [ "$rc" = 99 ] && [ -n "$vg" ]; then # memcheck: its report in place of the LSan one
        echo "LeakSanitizer-equivalent (memcheck):" >>"$tmp/err"
        grep -A14 "Invalid\|uninitialised\|definitely lost in" "$tmp/memcheck.log" | head -n 30 >>"$tmp/err"
    fi
    if ! grep -q "$var=$n: " "$tmp/err"; then
        [ "$rc" = 0 ] || { cat "$tmp/err"; echo "FAIL: the run without a failing $what exited $rc"; exit 1; }
        break
    fi
    reached=$((reached + 1))
    site=$(grep -m1 '^oom: \|^failed: \|fails$' "$tmp/err" | cut -c1-150)
    if grep -q "LeakSanitizer" "$tmp/err"; then
        leaked=$((leaked + 1))
        echo "LEAK (or, under memcheck, an invalid access) at $what $n (${site:-no call said so}):"
        grep -A30 "LeakSanitizer" "$tmp/err" | head -n 32
    elif [ "$rc" -ge 128 ] || grep -q "ERROR: AddressSanitizer\|runtime error:" "$tmp/err"; then
        crashed=$((crashed + 1))
        echo "CRASH at $what $n (exit $rc, ${site:-no call said so}):"
        tail -n 12 "$tmp/err"
    elif [ "$mode" = alloc-cmd ] && { [ "$rc" -gt 2 ] || grep -q 'KMUX_[A-Z_]*:[[:space:]]*$' "$tmp/err"; }; then
        unclean=$((unclean + 1))
        echo "UNCLEAN at $what $n: exit $rc: $(grep -v "$var=" "$tmp/err" | head -n 2 | tr '\n' ' ')"
    elif [ "$mode" = alloc-cmd ]; then
        clean=$((clean + 1))
    elif [ "$rc" != 0 ]; then
        unclean=$((unclean + 1))
        echo "UNCLEAN at $what $n: $(grep -m1 'UNCLEAN' "$tmp/err")"
    elif [ "$mode" = alloc ] && [ "$(grep -c '^ran on ' "$tmp/out")" != "$devices" ]; then
        unclean=$((unclean + 1)) # a device quietly left out: the memory it lacked is lost to it
        echo "UNCLEAN at $what $n: ran on $(grep '^ran on ' "$tmp/out" | cut -c8- | paste -sd' ' -) only (${site:-no call said so})"
    else
        clean=$((clean + 1))
        if [ "$mode" = vendor ] && ! grep -q '^failed: ' "$tmp/err"; then
            absorbed=$((absorbed + 1)) # no kmux call reported it: kmux handled it (or ignored it)
            echo "absorbed: $(grep -m1 "$var=$n: " "$tmp/err" | sed 's/.*: //')"
        fi
    fi
    [ "$n" -lt 20000 ] || { echo "FAIL: still reaching $what $n"; exit 1; }
done
echo "$what failure points reached $reached: failed cleanly $clean, unclean $unclean, crashed $crashed, leaked $leaked"
[ "$mode" != vendor ] || echo "  of the clean ones, $absorbed absorbed: no kmux call returned the failure (listed above)"
[ "$reached" -gt 0 ] || { echo "FAIL: no $what was counted (is $var wired?)"; exit 1; }
[ $((unclean + crashed + leaked)) = 0 ] || exit 1
echo PASS

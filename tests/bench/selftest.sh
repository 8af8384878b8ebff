#!/bin/sh
# The checker catches what it claims to: a wrong output element, a write past the output, and
# data so trivial that the result proves nothing -- on every device, with no speed recorded.
. "$(dirname "$0")/common.sh"

devs=ref${DEVICES:+,$DEVICES}
probs='96x80:80x72 mb2ic8ih12oc16kh3ph1n"c"'
for fault in corrupt-output corrupt-guard zero-data; do
    # shellcheck disable=SC2086
    "$BENCH" --backend="$devs" --dir=ALL --min-time=0.01 --self-test=$fault --out="$TMP/$fault.jsonl" \
        96x80:80x72 'mb2ic8ih12oc16kh3ph1n"c"' >"$TMP/$fault.txt" 2>&1
    rc=$?
    [ $rc -eq 1 ] || fail "$fault: exit status $rc, want 1: $(cat "$TMP/$fault.txt")"
    case $fault in
        zero-data) want=MISTRUSTED msg='of the checked outputs are zero' ;;
        corrupt-guard) want=FAILED msg='guard band around the output was overwritten' ;;
        *) want=FAILED msg='first mismatch at output element' ;;
    esac
    rows=$(grep -Ec " $want( |\$)" "$TMP/$fault.txt")
    ndev=$(echo "$devs" | tr ',' '\n' | wc -l)
    [ "$rows" -eq $((4 * ndev)) ] || fail "$fault: want $((4 * ndev)) $want rows, got $rows: $(cat "$TMP/$fault.txt")"
    grep -q "$msg" "$TMP/$fault.txt" || fail "$fault: message '$msg' missing"
    grep -q ' PASSED' "$TMP/$fault.txt" && fail "$fault: a result passed"
    # no speed for a result that did not pass
    grep -q '"timing":{' "$TMP/$fault.jsonl" && fail "$fault: a record carries a timing"
    [ "$(grep -c '"timing":null,"performance":null' "$TMP/$fault.jsonl")" -eq $((4 * ndev)) ] ||
        fail "$fault: records without null timing/performance"
done
# the same problems without a fault pass (so the failures above come from the faults)
"$BENCH" --backend="$devs" --dir=ALL --min-time=0.01 96x80:80x72 'mb2ic8ih12oc16kh3ph1n"c"' \
    >"$TMP/clean.txt" 2>&1 || fail "clean run: $(cat "$TMP/clean.txt")"
check_passed "$TMP/clean.txt"
echo "PASS ($devs)"

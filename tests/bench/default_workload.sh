#!/bin/sh
# kmux-bench with no arguments: the default workload on every available device, all verified.
. "$(dirname "$0")/common.sh"

[ -n "$DEVICES" ] || skip "no device besides ref (build the openblas/onednn plugins)"
start=$(date +%s)
(cd "$TMP" && "$BENCH" --out="$TMP/default.jsonl") >"$TMP/out.txt" 2>"$TMP/err.txt"
rc=$?
cat "$TMP/out.txt"
[ $rc -eq 0 ] || fail "exit status $rc: $(tail -5 "$TMP/err.txt")"
check_passed "$TMP/out.txt"
ndev=$(echo "$DEVICES" | tr ',' '\n' | wc -l)
# 5 GEMMs + 5 convolutions x 3 directions, on every device
[ "$(grep -c ' PASSED' "$TMP/out.txt")" -eq $((20 * ndev)) ] || fail "want $((20 * ndev)) passed rows"
[ "$(wc -l <"$TMP/default.jsonl")" -eq $((20 * ndev)) ] || fail "want $((20 * ndev)) records"
grep -q 'Model view: resnet50' "$TMP/out.txt" || fail "no model view"
echo "PASS in $(($(date +%s) - start)) s on $DEVICES"

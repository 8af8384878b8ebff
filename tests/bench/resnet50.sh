#!/bin/sh
# ResNet-50 convolutions in every direction on the CPU backends, verified, with the model view.
. "$(dirname "$0")/common.sh"

devs=$(echo "$DEVICES" | tr ',' '\n' | grep -E '^cpu:(onednn|openblas)$' | paste -sd, -)
[ -n "$devs" ] || skip "neither cpu:onednn nor cpu:openblas is available"
# conv1 (7x7 s2), res2a_branch1 (1x1), res2a_branch2a, res2a_branch2b (3x3), res2b_branch2a
"$BENCH" --backend="$devs" --workload=resnet50 --limit=5 --min-time=0.1 --out="$TMP/r.jsonl" \
    >"$TMP/out.txt" 2>"$TMP/err.txt"
rc=$?
cat "$TMP/out.txt"
[ $rc -eq 0 ] || fail "exit status $rc: $(tail -5 "$TMP/err.txt")"
check_passed "$TMP/out.txt"
ndev=$(echo "$devs" | tr ',' '\n' | wc -l)
[ "$(grep -c ' PASSED' "$TMP/out.txt")" -eq $((15 * ndev)) ] || fail "want 5 layers x 3 directions"
for d in FWD BWD_D BWD_W; do
    grep -q "\"direction\":\"$d\"" "$TMP/r.jsonl" || fail "no $d record"
done
grep -q 'Model view: resnet50, one training step' "$TMP/out.txt" || fail "no model view"
for d in $(echo "$devs" | tr ',' ' '); do
    grep -Eq "^  $d +[0-9.]+ +[0-9.]+  15/15 problems" "$TMP/out.txt" || fail "no step time for $d"
done
grep -q 'a subset of the network' "$TMP/out.txt" || fail "partial network not flagged"
echo "PASS on $devs"

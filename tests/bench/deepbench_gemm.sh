#!/bin/sh
# DeepBench training GEMMs (column-major, every transpose combination, square, skinny and
# large-N shapes) on the CPU backends, every one verified against ref.
. "$(dirname "$0")/common.sh"

devs=$(echo "$DEVICES" | tr ',' '\n' | grep -E '^cpu:(onednn|openblas)$' | paste -sd, -)
[ -n "$devs" ] || skip "neither cpu:onednn nor cpu:openblas is available"
# rows: NN 1760x16, TN 1760x7000, NT 1760x7133, NN 35x8457x1760, NN 1024x700x512, NN/NT 512x16x512
"$BENCH" --backend="$devs" --workload=deepbench-gemm-train --match=':(0|24|40|45|86|128|138):' \
    --min-time=0.1 --out="$TMP/gemm.jsonl" >"$TMP/out.txt" 2>"$TMP/err.txt"
rc=$?
cat "$TMP/out.txt"
[ $rc -eq 0 ] || fail "exit status $rc: $(tail -5 "$TMP/err.txt")"
check_passed "$TMP/out.txt"
ndev=$(echo "$devs" | tr ',' '\n' | wc -l)
[ "$(grep -c ' PASSED' "$TMP/out.txt")" -eq $((7 * ndev)) ] || fail "want $((7 * ndev)) passed rows"
# the large ones were checked on a sample, and say so
grep -q '"sampled":true' "$TMP/gemm.jsonl" || fail "no sampled verification recorded"

# --limit: the first rows of the workload, as the issue asks
"$BENCH" --backend="$devs" --workload=deepbench-gemm-train --limit=3 --min-time=0.05 \
    >"$TMP/limit.txt" 2>&1 || fail "--limit=3: $(tail -5 "$TMP/limit.txt")"
check_passed "$TMP/limit.txt"
[ "$(grep -c ' PASSED' "$TMP/limit.txt")" -eq $((3 * ndev)) ] || fail "--limit=3"
echo "PASS on $devs"

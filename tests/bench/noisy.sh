#!/bin/sh
# A CPU hog on the other core (a busy loop, bounded to 20 s and killed when done): kmux-bench
# marks the rows NOISY, says so in the summary, and its ResNet-50 model view refuses to rank.
. "$(dirname "$0")/common.sh"
[ -n "$DEVICES" ] || skip "no device besides ref"
timeout 20 sh -c 'while :; do :; done' &
HOG=$!
trap 'kill $HOG 2>/dev/null' EXIT
"$BENCH" --workload=resnet50 --match=conv1 --dir=FWD --min-time=0.3 --max-reps=10 \
    --backend="$DEVICES" >"$TMP/out.txt" 2>"$TMP/err.txt" || { cat "$TMP/out.txt" "$TMP/err.txt"; fail "kmux-bench failed"; }
kill $HOG 2>/dev/null
cat "$TMP/out.txt"
grep -q "NOISY(load[a-z,]*)" "$TMP/out.txt" || fail "no row marked NOISY while a CPU hog ran"
grep -q "timings are NOISY: measured while the machine was busy" "$TMP/out.txt" || fail "no NOISY summary"
grep -q "not ranked:" "$TMP/out.txt" || fail "the model view ranked noisy data"
grep -q "fastest:" "$TMP/out.txt" && fail "the model view ranked noisy data"
echo "PASS: noisy run marked, model view not ranked"

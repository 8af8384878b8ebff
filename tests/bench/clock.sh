#!/bin/sh
# The clock re-check: with the re-measured clock injected 96% below the run's clock
# (KMUX_BENCH_RECHECK_CLOCK_MHZ), the rows from the re-check on (here the last problem's: the
# clock is re-checked at the end of a short run) are NOISY(clock) in the table and the record;
# the problem before it is not. Without the injection a quiet machine's rows stay unmarked.
. "$(dirname "$0")/common.sh"
[ -n "$DEVICES" ] || skip "no CPU device besides ref"
dev=$(echo "$DEVICES" | cut -d, -f1)
KMUX_BENCH_RECHECK_CLOCK_MHZ=100 "$BENCH" --backend="$dev" --min-time=0.01 --out="$TMP/r.jsonl" \
    32x16:16x8 16x16:16x16 >"$TMP/out.txt" 2>&1 || { cat "$TMP/out.txt"; fail "kmux-bench failed"; }
cat "$TMP/out.txt"
grep '^16x16:16x16' "$TMP/out.txt" | grep -q 'NOISY(clock)' || fail "last problem not marked NOISY(clock)"
grep '^32x16:16x8' "$TMP/out.txt" | grep -q 'NOISY(clock)' && fail "a row before the re-check was marked"
grep -q 'clock: [0-9]* MHz at the start, 100 MHz now' "$TMP/out.txt" || fail "no clock reason in the summary"
[ "$(grep -c '"clock_mhz":100' "$TMP/r.jsonl")" -eq 1 ] || fail "record of the last problem lacks clock_mhz 100"
grep '"clock_mhz":100' "$TMP/r.jsonl" | grep -q '"noisy":true' || fail "record not noisy"
echo "PASS: moved clock marks the rows after the re-check"

#!/bin/sh
# The clock re-check: with the re-measured clock injected 96% below the run's clock
# (KMUX_BENCH_RECHECK_CLOCK_MHZ), the first re-check (here at the end of a short run) finds it
# moved. The clock may have moved at any time since the run's start (the last good check), so
# the rows of both problems are NOISY(clock): the last problem's in its table row, the first
# problem's (printed before the re-check) in the list of re-marked rows after the table, and
# both records (written once their window is checked). A re-check that finds the run's own clock
# marks nothing.
. "$(dirname "$0")/common.sh"
[ -n "$DEVICES" ] || skip "no CPU device besides ref"
dev=$(echo "$DEVICES" | cut -d, -f1)
KMUX_BENCH_RECHECK_CLOCK_MHZ=100 "$BENCH" --backend="$dev" --min-time=0.01 --out="$TMP/r.jsonl" \
    32x16:16x8 16x16:16x16 >"$TMP/out.txt" 2>&1 || { cat "$TMP/out.txt"; fail "kmux-bench failed"; }
cat "$TMP/out.txt"
grep '^16x16:16x16' "$TMP/out.txt" | grep -q 'NOISY([a-z,]*clock)' || fail "last problem not marked NOISY(clock)"
[ "$(grep -c ' PASSED' "$TMP/out.txt")" -eq 2 ] || fail "want 2 table rows, each printed once"
grep -q '^NOISY(clock) too: 1 rows printed above' "$TMP/out.txt" || fail "no re-marked list"
sed -n '/^NOISY(clock) too:/,/^$/p' "$TMP/out.txt" | grep -q "^  32x16:16x8 on $dev\$" ||
    fail "the re-marked list does not name the row printed before the re-check"
grep -q 'clock: [0-9]* MHz at the start, 100 MHz now' "$TMP/out.txt" || fail "no clock reason in the summary"
grep -q '^2 timings are NOISY' "$TMP/out.txt" || fail "the summary does not count both rows NOISY"
[ "$(grep -c '"clock_mhz":100' "$TMP/r.jsonl")" -eq 2 ] || fail "records lack clock_mhz 100"
[ "$(grep -c '"noisy":true' "$TMP/r.jsonl")" -eq 2 ] || fail "records not both noisy"

# the re-check finding the clock where it was (the run's own clock injected): nothing marked
mhz=$(sed -n 's/.*measured \([0-9]*\) MHz.*/\1/p' "$TMP/out.txt" | head -1)
[ -n "$mhz" ] || fail "no measured clock in the header"
KMUX_BENCH_RECHECK_CLOCK_MHZ=$mhz "$BENCH" --backend="$dev" --min-time=0.01 32x16:16x8 16x16:16x16 \
    >"$TMP/quiet.txt" 2>&1 || { cat "$TMP/quiet.txt"; fail "kmux-bench failed"; }
grep -q 'NOISY([a-z,]*clock)' "$TMP/quiet.txt" && fail "a row was marked NOISY(clock) with the clock unmoved"
grep -q 'NOISY(clock) too' "$TMP/quiet.txt" && fail "rows re-marked with the clock unmoved"
echo "PASS: moved clock marks the rows since the last good re-check"

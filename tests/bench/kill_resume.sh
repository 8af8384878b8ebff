#!/bin/sh
# kmux-bench killed at random moments (issue 51): the record file it leaves holds whole lines
# that all parse, and --resume completes it (every problem x device of an uninterrupted run once,
# no more); a last line cut short is ignored by `report` with a warning and removed before a
# resumed run appends. Prints "kill points tried / files intact".
. "$(dirname "$0")/common.sh"
[ -n "$DEVICES" ] || skip "no device besides ref"
command -v python3 >/dev/null || skip "python3 not found"
PROBS="96x96:96x96 128x64:64x128 160x96:96x80 192x128:128x64 64x256:256x64 200x72:72x136
       224x96:96x112 256x64:64x256 72x300:300x40 320x48:48x96 120x120:120x120 136x88:88x152"
run() { # run OUT [options]: the problems on every device, records appended to OUT
    out=$1
    shift
    # shellcheck disable=SC2086
    "$BENCH" --backend="$DEVICES" --min-time=0.05 --max-reps=50 --quiet --out="$out" "$@" $PROBS
}
# keys FILE: "problem options | device" of each record, sorted; fails on a line that does not parse
keys() {
    python3 - "$1" <<'PY'
import json, sys
keys = []
with open(sys.argv[1], "rb") as f:
    data = f.read()
if data and not data.endswith(b"\n"):
    sys.exit(f"{sys.argv[1]}: the last line has no newline")
for n, line in enumerate(data.decode().splitlines(), 1):
    try:
        r = json.loads(line)
        keys.append(f'{r["problem"]["descriptor"]} {r["problem"]["options"]} | {r["device"]["id"]}')
    except Exception as e:
        sys.exit(f"{sys.argv[1]}:{n}: does not parse: {e}")
print("\n".join(sorted(keys)))
PY
}

t0=$(date +%s)
run "$TMP/full.jsonl" >"$TMP/full.txt" 2>&1 || { cat "$TMP/full.txt"; fail "the uninterrupted run failed"; }
span=$(( $(date +%s) - t0 ))
keys "$TMP/full.jsonl" >"$TMP/want.txt" || fail "the uninterrupted run's records"
[ -s "$TMP/want.txt" ] || fail "the uninterrupted run wrote no records"
[ "$(sort -u "$TMP/want.txt" | wc -l)" = "$(wc -l <"$TMP/want.txt")" ] || fail "duplicate records"
echo "uninterrupted: $(wc -l <"$TMP/want.txt") records in about $span s"

# kill points: random moments across the run's span (awk's generator seeded by the clock)
points=$(awk -v s="$(date +%N)" -v span="$span" 'BEGIN { srand(s); for (i = 0; i < 6; i++)
    printf "%.2f ", 0.3 + rand() * (span > 1 ? span : 1) }')
tried=0
intact=0
for p in $points; do
    f="$TMP/killed$tried.jsonl"
    # the program itself in the background (not a subshell around it), so that the kill hits it
    # shellcheck disable=SC2086
    "$BENCH" --backend="$DEVICES" --min-time=0.05 --max-reps=50 --quiet --out="$f" $PROBS \
        >"$TMP/killed$tried.txt" 2>&1 &
    pid=$!
    sleep "$p"
    kill -9 "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    tried=$((tried + 1))
    [ -f "$f" ] || : >"$f"
    before=$(wc -l <"$f")
    keys "$f" >/dev/null || fail "killed after $p s: the record file is not whole lines"
    intact=$((intact + 1))
    run "$f" --resume >"$TMP/resumed$tried.txt" 2>&1 || { cat "$TMP/resumed$tried.txt"; fail "--resume after a kill at $p s failed"; }
    grep -q "^--resume: $before\|^--resume: [0-9]* of" "$TMP/resumed$tried.txt" || fail "--resume said nothing"
    keys "$f" >"$TMP/got.txt" || fail "resumed after a kill at $p s: the file does not parse"
    cmp -s "$TMP/got.txt" "$TMP/want.txt" || { diff "$TMP/want.txt" "$TMP/got.txt" | head; fail "killed at $p s ($before records), resumed: not every problem x device once"; }
    echo "killed at $p s with $before records; resumed: $(grep '^--resume:' "$TMP/resumed$tried.txt")"
done

# a last line cut short (a kill inside a write): report warns and ignores it; --resume removes it
# and, everything being recorded, runs nothing
cp "$TMP/full.jsonl" "$TMP/cut.jsonl"
head -n 1 "$TMP/full.jsonl" | head -c 300 >>"$TMP/cut.jsonl"
"$BENCH" report "$TMP/cut.jsonl" >"$TMP/report.txt" 2>"$TMP/report.err" || { cat "$TMP/report.err"; fail "report refused a file with a cut-short last line"; }
grep -q "warning: .*cut short" "$TMP/report.err" || fail "report did not warn about the cut-short line"
run "$TMP/cut.jsonl" --resume >"$TMP/cut.txt" 2>&1 || { cat "$TMP/cut.txt"; fail "--resume on a cut-short file"; }
grep -q "warning: .*cut short.*removed" "$TMP/cut.txt" || fail "--resume did not say it removed the cut-short line"
cmp -s "$TMP/cut.jsonl" "$TMP/full.jsonl" || fail "--resume did not restore the file to its whole lines"
echo "PASS: kill points tried $tried, files intact $intact; cut-short last line ignored by report and removed by --resume"

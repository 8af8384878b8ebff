#!/bin/sh
# `kmux-bench report` merges two runs ("machines") into one comparison: terminal table with a
# column per machine/device and cost figures, and an HTML page whose SVG charts a headless
# Chromium renders.
. "$(dirname "$0")/common.sh"

# two runs with different labels (and devices, when there are two)
first=$(echo "ref${DEVICES:+,$DEVICES}" | tr ',' '\n' | tail -1)
second=$(echo "ref${DEVICES:+,$DEVICES}" | tr ',' '\n' | tail -2 | head -1)
"$BENCH" --label=machine-A --backend="$first" --dir=ALL --min-time=0.05 --out="$TMP/A.jsonl" \
    256x128:128x64n"gemm-a" 64x512:512x48n"gemm-b" 'mb2ic16ih14oc32kh3ph1n"conv-a"' \
    >"$TMP/a.txt" 2>&1 || fail "run A: $(cat "$TMP/a.txt")"
"$BENCH" --label=machine-B --backend="$second" --dir=ALL --min-time=0.05 --out="$TMP/B.jsonl" \
    256x128:128x64n"gemm-a" 64x512:512x48n"gemm-b" 'mb2ic16ih14oc32kh3ph1n"conv-a"' \
    >"$TMP/b.txt" 2>&1 || fail "run B: $(cat "$TMP/b.txt")"

"$BENCH" report "$TMP/A.jsonl" "$TMP/B.jsonl" --html="$TMP/report.html" \
    --cost="$TMP/A.jsonl:2.5" --cost="$TMP/B.jsonl:1.25" >"$TMP/report.txt" 2>&1 ||
    fail "report: $(cat "$TMP/report.txt")"
cat "$TMP/report.txt"
grep -q "machine-A $first" "$TMP/report.txt" || fail "no column for machine-A"
grep -q "machine-B $second" "$TMP/report.txt" || fail "no column for machine-B"
grep -q '5 problems, 2 machine/device columns' "$TMP/report.txt" || fail "problems not merged"
grep -q 'geomean GFLOP/s per unit of cost' "$TMP/report.txt" || fail "no cost line"
"$BENCH" report "$TMP/A.jsonl" --cost=nosuch.jsonl:1 >/dev/null 2>&1 && fail "bad --cost accepted"
if grep -o 'https\?://[^" )]*' "$TMP/report.html" | grep -v '^http://www.w3.org/2000/svg$' | grep -q .; then
    fail "the page references external resources"
fi
grep -Eq '<script|<link |@import|src="http' "$TMP/report.html" && fail "the page is not self-contained"

CHROMIUM=
for c in chromium chromium-browser google-chrome; do
    if command -v "$c" >/dev/null 2>&1; then
        CHROMIUM=$c
        break
    fi
done
[ -n "$CHROMIUM" ] || skip "report text checked; chromium not installed (Debian: apt install chromium), HTML rendering not checked"
flags="--headless --no-sandbox --disable-gpu --disable-background-networking --disable-component-update --disable-sync --no-first-run --disable-dev-shm-usage"
# shellcheck disable=SC2086
timeout 120 "$CHROMIUM" $flags --user-data-dir="$TMP/profile1" --dump-dom "file://$TMP/report.html" \
    >"$TMP/dom.html" 2>"$TMP/chromium.log" || fail "chromium --dump-dom: $(tail -5 "$TMP/chromium.log")"
for id in chart-summary chart-speed chart-peak chart-cost chart-cost-summary; do
    grep -q "<svg id=\"$id\"" "$TMP/dom.html" || fail "chart $id missing from the rendered DOM"
done
# bars per chart in the rendered DOM: 5 problems x 2 columns, 2 in each summary
count_bars() {
    awk -v id="$1" 'BEGIN { RS = "<svg id=\"" } index($0, id "\"") == 1 { n = gsub(/class="bar"/, "") }
                    END { print n + 0 }' "$TMP/dom.html"
}
for c in chart-speed:10 chart-cost:10 chart-summary:2 chart-cost-summary:2; do
    got=$(count_bars "${c%%:*}")
    [ "$got" -eq "${c##*:}" ] || fail "${c%%:*}: $got bars rendered, want ${c##*:}"
done
bars=$(grep -o 'class="bar"' "$TMP/dom.html" | wc -l)
# shellcheck disable=SC2086
timeout 120 "$CHROMIUM" $flags --user-data-dir="$TMP/profile2" --hide-scrollbars --window-size=1200,1600 \
    --screenshot="$TMP/report.png" "file://$TMP/report.html" >"$TMP/chromium2.log" 2>&1 ||
    fail "chromium --screenshot: $(tail -5 "$TMP/chromium2.log")"
size=$(wc -c <"$TMP/report.png")
[ "$size" -gt 30000 ] || fail "screenshot is only $size bytes: the page did not render"
echo "PASS: $bars bars, screenshot $size bytes ($TMP/report.png)"

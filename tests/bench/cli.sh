#!/bin/sh
# kmux-bench command line: help, errors, descriptor defaults, batch files, filters, directions.
. "$(dirname "$0")/common.sh"

"$BENCH" --help >"$TMP/help.txt" || fail "--help exited with $?"
grep -q 'The default workload:' "$TMP/help.txt" || fail "--help does not show the default workload"
grep -q 'deepbench-gemm-train:' "$TMP/help.txt" || fail "--help does not list the default problems"
[ "$("$BENCH" --list-workloads | wc -l)" -eq 5 ] || fail "--list-workloads should list 5 workloads"
"$BENCH" --version | grep -q '^kmux-bench (kmux ' || fail "--version"
# a workload folder whose CSV never ends (/dev/zero) is refused, not read until memory runs out
mkdir -p "$TMP/zero-wl" && ln -sf /dev/zero "$TMP/zero-wl/resnet50_conv.csv"
"$BENCH" --workload-dir="$TMP/zero-wl" --backend=ref --workload=resnet50 >"$TMP/o" 2>&1
[ $? -eq 2 ] && grep -q 'resnet50_conv.csv is larger than 64 MiB' "$TMP/o" || fail "endless workload CSV: $(cat "$TMP/o")"
# an unavailable backend's version and reason are separated (they ran together: "9.19.0no CUDA")
"$BENCH" --list-devices >"$TMP/o" || fail "--list-devices exited with $?"
if grep -E '^  [a-z]+ +unavailable +[^ ]*[0-9][a-z]' "$TMP/o" | grep -v '; ' | grep -q .; then
    fail "--list-devices runs a version into its reason: $(grep unavailable "$TMP/o")"
fi

# usage errors exit with 2 and say what was wrong
"$BENCH" --no-such-option >"$TMP/o" 2>&1
[ $? -eq 2 ] && grep -q 'unknown option --no-such-option' "$TMP/o" || fail "unknown option"
"$BENCH" --backend=ref 'mb2ic3oc4n"x"' >"$TMP/o" 2>&1
[ $? -eq 2 ] && grep -q 'no spatial sizes' "$TMP/o" || fail "descriptor without sizes"
"$BENCH" --backend=ref 64x32:31x8 >"$TMP/o" 2>&1
[ $? -eq 2 ] && grep -q 'K of A (32) and B (31) differ' "$TMP/o" || fail "matmul K mismatch"
for r in 0 17 x; do
    "$BENCH" --backend=ref --rounds=$r 64x32:32x8 >"$TMP/o" 2>&1
    [ $? -eq 2 ] && grep -q "rounds=$r: want a count from 1 to 16" "$TMP/o" || fail "--rounds=$r accepted"
done
grep -q -- '--rounds=N' "$TMP/help.txt" || fail "--help does not document --rounds"
"$BENCH" --backend=ref --dt=f33 64x32:32x8 >"$TMP/o" 2>&1
[ $? -eq 2 ] || fail "bad --dt accepted"
"$BENCH" --backend=no:such 64x32:32x8 >"$TMP/o" 2>&1
[ $? -eq 2 ] && grep -q 'no:such' "$TMP/o" || fail "unknown device accepted"

# negative padding / output sizes are errors, not "not given"; sizes that would overflow too
"$BENCH" --backend=ref 'mb2ic8ih10oc8kh3ph-1' >"$TMP/o" 2>&1
[ $? -eq 2 ] && grep -q 'ph-1: a negative value is not allowed' "$TMP/o" || fail "ph-1 accepted: $(cat "$TMP/o")"
"$BENCH" --backend=ref 'mb2ic8ih10oc8oh-1kh3' >"$TMP/o" 2>&1
[ $? -eq 2 ] && grep -q 'oh-1: a negative value' "$TMP/o" || fail "oh-1 accepted: $(cat "$TMP/o")"
"$BENCH" --backend=ref 'mb2ic8ih10oc8kh3dh9223372036854775807' >"$TMP/o" 2>&1
[ $? -eq 2 ] && grep -q 'dh: value above' "$TMP/o" || fail "huge dilation accepted: $(cat "$TMP/o")"
# a problem that does not fit in memory is an error row (checked before allocating); the run goes on
"$BENCH" --backend=ref --mode=C 1000000x100000:100000x2 8x8:8x8 >"$TMP/o" 2>&1
rc=$?
[ $rc -eq 1 ] || fail "out-of-memory problem: exit $rc (want 1: an error row): $(cat "$TMP/o")"
grep -q 'not run: needs .* GiB of host memory' "$TMP/o" || fail "no memory message: $(cat "$TMP/o")"
grep -q '^8x8:8x8 .* PASSED' "$TMP/o" || fail "the run stopped at the problem that did not fit"
# a problem that takes more than a second reports progress with an estimate while it runs
"$BENCH" --backend=ref --min-time=1.6 64x64:64x64 >"$TMP/o" 2>"$TMP/e" || fail "long problem: $(cat "$TMP/e")"
grep -q '\[1/1\] 64x64:64x64 running: [0-9]* s (estimate [0-9]* s)' "$TMP/e" || fail "no progress: $(cat "$TMP/e")"
# short reductions (K = 1: one input channel, 1x1 kernel) are verified, not MISTRUSTED
"$BENCH" --backend=ref --mode=C 'mb2ic1ih8oc4kh1' 64x1:1x64 'g4mb2ic4ih6oc4kh1' >"$TMP/o" 2>&1 ||
    fail "short reductions: $(cat "$TMP/o")"
[ "$(grep -c ' PASSED' "$TMP/o")" -eq 3 ] || fail "short reductions not all PASSED: $(cat "$TMP/o")"
# --impl=REGEX picks an implementation by name (walking kmux_plan_next_impl), --all-impls runs each
"$BENCH" --backend=ref --mode=C --impl='^ref:dir' 'mb2ic8ih10oc8kh3' >"$TMP/o" 2>&1 || fail "--impl: $(cat "$TMP/o")"
grep -q ' ref:direct  *f64  *PASSED' "$TMP/o" || fail "--impl=^ref:dir: $(cat "$TMP/o")"
"$BENCH" --backend=ref --mode=C --impl=nomatch 'mb2ic8ih10oc8kh3' >"$TMP/o" 2>&1
grep -q 'UNSUPPORTED' "$TMP/o" && grep -q 'no implementation on ref matches --impl=nomatch (it has: ref:direct)' "$TMP/o" ||
    fail "--impl without a match: $(cat "$TMP/o")"
"$BENCH" --backend=ref --impl='(' 8x8:8x8 >"$TMP/o" 2>&1
[ $? -eq 2 ] && grep -q 'not a POSIX extended regular expression' "$TMP/o" || fail "bad --impl regex accepted"
if echo ",$DEVICES," | grep -q ',cpu:onednn,'; then
  "$BENCH" --backend=cpu:onednn --mode=C --all-impls 'mb2ic8ih10oc8kh3' >"$TMP/o" 2>&1 || fail "--all-impls: $(cat "$TMP/o")"
  [ "$(grep -c '^mb2.* PASSED' "$TMP/o")" -ge 2 ] || fail "--all-impls: want every oneDNN implementation: $(cat "$TMP/o")"
fi
# report: an empty input is an error
: >"$TMP/empty.jsonl"
"$BENCH" report "$TMP/empty.jsonl" >"$TMP/o" 2>&1
[ $? -eq 2 ] && grep -q 'no records in' "$TMP/o" || fail "empty report input accepted: $(cat "$TMP/o")"

# benchdnn defaults, through the records: iw = ih, kw = kh, oh from padding, mb 2, dilation 0
"$BENCH" --backend=ref --mode=C --out="$TMP/d.jsonl" 'ic3ih9oc4kh3ph1dh1n"dil"' >"$TMP/o" 2>&1 ||
    fail "dilated conv: $(cat "$TMP/o")"
grep -q '"shape":{"g":1,"mb":2,"ic":3,"ih":9,"iw":9,"oc":4,"oh":7,"ow":7,"kh":3,"kw":3,"sh":1,"sw":1,"ph":1,"pw":1,"dh":1,"dw":1}' "$TMP/d.jsonl" ||
    fail "benchdnn defaults not applied: $(cat "$TMP/d.jsonl")"

# batch file: comments, options that apply to the lines after them, several directions
cat >"$TMP/batch.txt" <<'EOF'
# a comment line
--dir=ALL mb2ic4ih6oc5kh3ph1n"c1"   # trailing comment
--dir=BWD_W --layout=nhwc
mb3ic6ih7iw5oc4kh3kw1sh2n"c2"
--reset 16x24:24x8n"m1"
--stag=ba --dtag=ba 2x16x24:2x24x8
EOF
"$BENCH" --backend=ref --mode=C --batch="$TMP/batch.txt" >"$TMP/o" 2>&1 || fail "batch: $(cat "$TMP/o")"
[ "$(grep -c ' PASSED ' "$TMP/o")" -eq 6 ] || fail "batch file: want 6 passed rows: $(cat "$TMP/o")"
grep -q '^c2  *BWD_W ' "$TMP/o" || fail "batch file: --dir=BWD_W not applied"

# --match and --limit on a workload; --dir=ALL expands each conv into 3 problems
"$BENCH" --backend=ref --mode=C --workload=resnet50 --match='res4' --limit=2 --mb=1 --ref-budget=0.05 \
    >"$TMP/o" 2>&1 || fail "resnet50 subset: $(cat "$TMP/o")"
[ "$(grep -c ' PASSED' "$TMP/o")" -eq 6 ] || fail "--match/--limit: want 2 layers x 3 directions: $(cat "$TMP/o")"
grep -v '^resnet_50_v1_5:res4' "$TMP/o" | grep -q ' PASSED' && fail "--match let other layers through"

# DeepBench GEMM rows keep DeepBench's column-major transposes
"$BENCH" --backend=ref --mode=C --workload=deepbench-gemm-train --match=':13[89]:' \
    --out="$TMP/g.jsonl" >"$TMP/o" 2>&1 || fail "deepbench rows: $(cat "$TMP/o")"
grep -q '"tags":{"src":"ba","wei":"ab","dst":"ba"}' "$TMP/g.jsonl" ||
    fail "DeepBench N,T should be stag=ba wtag=ab dtag=ba"
echo "PASS"

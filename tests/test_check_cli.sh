#!/bin/sh
# kmux-check on this machine: the CPU checks run for real, every GPU backend without a device
# gives a SKIP line with its reason, --quick is quick, --json validates against
# bench/schema/kmux-check-report.schema.json (Ajv, as tests/bench/schema.sh), and the exit
# status is 0 exactly when no line FAILed.
set -u
CHECK=${1:?usage: $0 path/to/kmux-check}
SRC=$(cd "$(dirname "$0")/.." && pwd)
TMP=${KMUX_CHECK_TEST_TMP:-${TMPDIR:-/tmp}/kmux-check-test}
rm -rf "$TMP/run" && mkdir -p "$TMP/run"
skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }

# --- text, --quick: under 30 s here ---
start=$(date +%s)
"$CHECK" --quick >"$TMP/run/text" 2>"$TMP/run/err"
rc=$?
secs=$(( $(date +%s) - start ))
cat "$TMP/run/text"
[ -s "$TMP/run/err" ] && fail "kmux-check wrote to stderr: $(cat "$TMP/run/err")"
[ "$secs" -le 30 ] || fail "--quick took $secs s (limit 30)"
grep -Eq '^summary: [0-9]+ checks: ' "$TMP/run/text" || fail "no summary line"
nfail=$(grep -Ec '^  FAIL ' "$TMP/run/text")
if [ "$nfail" -gt 0 ]; then [ $rc -eq 1 ] || fail "FAIL lines but exit status $rc"; else
    [ $rc -eq 0 ] || fail "no FAIL line but exit status $rc"; fi
# every line is one verdict
grep -E '^  [A-Z]{4} ' "$TMP/run/text" | grep -Ev '^  (PASS|WARN|FAIL|SKIP) ' && fail "bad status"
# the CPU checks measured something (a GEMM rate in GFLOP/s, a STREAM bandwidth)
grep -Eq ' cpu:(openblas|onednn) +gemm f32 n=[0-9]+ +[0-9.]+ GFLOP/s' "$TMP/run/text" ||
    fail "no CPU GEMM measurement"
grep -Eq ' host +stream_triad +[0-9.]+ GB/s' "$TMP/run/text" || fail "no STREAM measurement"
grep -Eq '^  PASS  cpu:(openblas|onednn) +matmul f32:f32:f32/f32 ' "$TMP/run/text" ||
    fail "no CPU matmul checked against ref"
# GPU backends without a device: SKIP with the reason, never a FAIL under the default selection
if ! ls /dev/nvidia0 >/dev/null 2>&1; then
    grep -Eq '^  SKIP  cuda +plugin +(unavailable: |no plugin: ).+' "$TMP/run/text" ||
        fail "no SKIP line with a reason for cuda"
fi
if ! ls /dev/kfd >/dev/null 2>&1; then
    grep -Eq '^  SKIP  hip +plugin +(unavailable: |no plugin: ).+' "$TMP/run/text" ||
        fail "no SKIP line with a reason for hip"
fi

# --- an ISA override is a WARN, an unknown option and a bad target file are usage errors ---
OPENBLAS_CORETYPE=Prescott "$CHECK" --quick --backend=cpu >"$TMP/run/ov" 2>&1
grep -Eq '^  WARN  env +OPENBLAS_CORETYPE ' "$TMP/run/ov" || fail "OPENBLAS_CORETYPE not a WARN"
grep -Eq '^  WARN  cpu:openblas +cpu_kernels .*fell back to sse' "$TMP/run/ov" ||
    echo "note: OpenBLAS ignores OPENBLAS_CORETYPE here (no DYNAMIC_ARCH build?)"
"$CHECK" --frobnicate >/dev/null 2>&1; [ $? -eq 2 ] || fail "unknown option: not exit status 2"
echo "gemm_pass_frac=2" >"$TMP/run/bad.targets"
"$CHECK" --target-file="$TMP/run/bad.targets" >/dev/null 2>"$TMP/run/bad.err"
[ $? -eq 2 ] && grep -q "gemm_pass_frac=2" "$TMP/run/bad.err" || fail "bad target file accepted"

# --- a target file changes the verdict: an impossible CPU GEMM target FAILs, exit status 1 ---
printf 'cpu_gemm_pass_frac=1\ncpu_gemm_fail_frac=1\n' >"$TMP/run/strict.targets"
"$CHECK" --quick --backend=cpu --target-file="$TMP/run/strict.targets" >"$TMP/run/strict" 2>&1
rc=$?
if ! grep -q "the host was busy" "$TMP/run/strict"; then
    grep -Eq '^  FAIL  cpu:(openblas|onednn) +gemm f32' "$TMP/run/strict" || fail "strict target did not FAIL"
    [ $rc -eq 1 ] || fail "a FAIL line but exit status $rc"
fi

# --- JSON against the schema ---
"$CHECK" --quick --json >"$TMP/run/report.json" 2>"$TMP/run/err"
[ "$(wc -l <"$TMP/run/report.json")" -eq 1 ] || fail "--json is not one line"
# Ajv comes from scripts/setup-debian.sh (KMUX_NODE_DIR); the tests download nothing.
command -v node >/dev/null 2>&1 || fail "node is not installed: run scripts/setup-debian.sh"
NODE_DIR=${KMUX_NODE_DIR:-/var/cache/kmux/node}
for m in ajv ajv-formats; do
    [ -f "$NODE_DIR/node_modules/$m/package.json" ] ||
        fail "$m is not installed in $NODE_DIR/node_modules (KMUX_NODE_DIR): run scripts/setup-debian.sh"
done
SCHEMA=$SRC/bench/schema/kmux-check-report.schema.json
NODE_PATH=$NODE_DIR/node_modules node "$SRC/tests/bench/validate_records.cjs" "$SCHEMA" \
    "$TMP/run/report.json" || fail "the report does not validate"
# the validator is not vacuous: a PASS with a hint, an unknown status are rejected
sed 's/"status":"PASS","measured"/"status":"MAYBE","measured"/' "$TMP/run/report.json" >"$TMP/run/bad1.json"
if NODE_PATH=$NODE_DIR/node_modules node "$SRC/tests/bench/validate_records.cjs" "$SCHEMA" \
    "$TMP/run/bad1.json" >/dev/null 2>&1; then fail "a broken report validated"; fi
echo "PASS: text and JSON reports (${secs} s)"

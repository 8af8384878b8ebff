#!/bin/sh
# Real kmux-bench records (passed, failed, mistrusted, unverified, matmul and every conv
# direction) validate against bench/schema/kmux-bench-record.schema.json (Ajv, JSON Schema 2020-12),
# and the validator rejects a broken record.
. "$(dirname "$0")/common.sh"

# Ajv is installed by scripts/setup-debian.sh (Debian 12 has only Ajv 6, no draft 2020-12, and no
# ajv-formats): never downloaded here. Its absence is a setup bug, not a reason to skip.
NODE_DIR=${KMUX_NODE_DIR:-/var/cache/kmux/node}
command -v node >/dev/null 2>&1 || fail "node is not installed: run scripts/setup-debian.sh"
for m in ajv ajv-formats; do
    [ -f "$NODE_DIR/node_modules/$m/package.json" ] ||
        fail "$m is not installed in $NODE_DIR/node_modules (KMUX_NODE_DIR): run scripts/setup-debian.sh"
done

devs=ref${DEVICES:+,$DEVICES}
J=$TMP/records.jsonl
"$BENCH" --backend="$devs" --dir=ALL --min-time=0.01 --out="$J" 64x48:48x40 \
    '2x32x16:1x16x24n"bcast"' 'mb2ic8ih10oc6kh3ph1n"conv"' >"$TMP/o" 2>&1 || fail "run: $(cat "$TMP/o")"
"$BENCH" --backend="$devs" --mode=P --min-time=0.01 --layout=nhwc --out="$J" 'mb1ic4ih8oc4kh3sh2' \
    >"$TMP/o" 2>&1 || fail "--mode=P: $(cat "$TMP/o")"
"$BENCH" --backend="$devs" --mode=C --dt=bf16:bf16:f32 --out="$J" 32x64:64x16 >"$TMP/o" 2>&1
# i8 and f64 are refused by some CPU backends: UNSUPPORTED records (no implementation)
"$BENCH" --backend="$devs" --mode=C --dt=i8 --out="$J" 32x64:64x16 >"$TMP/o" 2>&1
"$BENCH" --backend="$devs" --mode=C --dt=f64 --out="$J" 32x64:64x16 >"$TMP/o" 2>&1
"$BENCH" --backend=ref --self-test=corrupt-output --out="$J" 32x16:16x8 >"$TMP/o" 2>&1
# a 3-D convolution (benchdnn's 3-D notation, depth 2): an UNSUPPORTED conv3d record, not run
"$BENCH" --backend="$devs" --mode=C --out="$J" 'mb2ic16id3ih1oc16kd2kh1dd1n"d2"' >"$TMP/o" 2>&1 ||
    fail "3-D: $(cat "$TMP/o")"
grep -q '"op":"conv3d"' "$J" || fail "no conv3d record to validate"
"$BENCH" --backend=ref --self-test=zero-data --out="$J" 32x16:16x8 >"$TMP/o" 2>&1
grep -q '"result":"failed"' "$J" || fail "no failed record to validate"
grep -q '"result":"mistrusted"' "$J" || fail "no mistrusted record to validate"
grep -q '"result":"not_run"' "$J" || fail "no unverified record to validate"
grep -q '"rounds":3,"round_median_ms":\[[0-9.e+-]*,[0-9.e+-]*,[0-9.e+-]*\]' "$J" ||
    fail "no timed record with its 3 round medians"
if [ -n "$DEVICES" ]; then
    grep -q '"interleaved":true' "$J" || fail "ref and $DEVICES were not interleaved"
fi

NODE_PATH=$NODE_DIR/node_modules node "$SRC/tests/bench/validate_records.cjs" \
    "$SRC/bench/schema/kmux-bench-record.schema.json" "$J" || fail "records do not validate"

# a broken record must be rejected (the check is not vacuous)
head -1 "$J" | sed 's/"machine":{/"machine":{"surprise":1,/; s/"flops":[0-9.e+]*/"flops":-1/' >"$TMP/bad.jsonl"
if NODE_PATH=$NODE_DIR/node_modules node "$SRC/tests/bench/validate_records.cjs" \
    "$SRC/bench/schema/kmux-bench-record.schema.json" "$TMP/bad.jsonl" >"$TMP/bad.txt" 2>&1; then
    fail "a broken record validated"
fi
echo "PASS: $(wc -l <"$J") records valid"

#!/bin/sh
# benchdnn's own input files run: a batch file with lines in 3-D notation (an excerpt of oneDNN's
# tests/benchdnn/inputs/conv/shapes_dilated). A depth of 1 runs as the 2-D problem it is; a real
# depth is one UNSUPPORTED row (with the reason) and record, and the batch goes on; the exit
# status is 0 (no failure), as benchdnn's; benchdnn's summary line counts it; the records parse.
# A line that does not parse stops the batch before anything runs (exit 2, file:line: token).
. "$(dirname "$0")/common.sh"

# one CPU device (the first of the default ones; ref when there is none) keeps it to seconds
dev=${DEVICES%%,*}
dev=${dev:-ref}
B=$SRC/tests/bench/shapes_dilated_excerpt
J=$TMP/r.jsonl
"$BENCH" --backend="$dev" --min-time=0.01 --rounds=1 --batch="$B" --out="$J" >"$TMP/o" 2>&1
rc=$?
[ $rc -eq 0 ] || fail "exit status $rc, want 0 (3 passed, 1 unsupported): $(cat "$TMP/o")"
for n in 1 28 2; do
    grep -Eq "^dilated_conv:$n +FWD +$dev .* PASSED " "$TMP/o" ||
        fail "dilated_conv:$n did not run and pass on $dev: $(cat "$TMP/o")"
done
grep -Eq "^dilated_conv:26 +FWD +$dev .* UNSUPPORTED" "$TMP/o" ||
    fail "dilated_conv:26 (depth 2) is not an UNSUPPORTED row: $(cat "$TMP/o")"
grep -A1 '^dilated_conv:26 ' "$TMP/o" | tail -1 | grep -q '3-D convolution (id2 kd2 od1) is not supported' ||
    fail "the UNSUPPORTED row does not give the reason: $(cat "$TMP/o")"
[ "$(grep -Ec '^dilated_conv:[0-9]+ ' "$TMP/o")" -eq 4 ] || fail "want 4 rows: $(cat "$TMP/o")"
grep -q '^tests:4 passed:3 skipped:1 mistrusted:0 unimplemented:0 failed:0$' "$TMP/o" ||
    fail "no benchdnn summary 'tests:4 passed:3 skipped:1 ... failed:0': $(cat "$TMP/o")"
# the depth-1 line ran as its 2-D problem (depth dropped from the record)
grep '"name":"dilated_conv:28"' "$J" | grep -q '"descriptor":"mb2ic16ih2iw1oc16oh1ow1kh2kw1sh1sw1ph0pw0dh1dw0n' ||
    fail "depth 1 did not become the 2-D problem: $(grep '"dilated_conv:28"' "$J")"

# records: 4, they parse (kmux-bench report reads them back; python's json when there), and
# the unsupported one says so in the record schema's terms
[ "$(wc -l <"$J")" -eq 4 ] || fail "want 4 records: $(cat "$J")"
"$BENCH" report "$J" >"$TMP/rep" 2>&1 || fail "report cannot read the records: $(cat "$TMP/rep")"
if command -v python3 >/dev/null 2>&1; then
    python3 -c 'import json, sys
[json.loads(l) for l in open(sys.argv[1])]' "$J" || fail "records are not JSON lines"
fi
u=$(grep '"name":"dilated_conv:26"' "$J")
for want in '"op":"conv3d"' '"id":2' '"kd":2' '"od":1' '"dd":1' '"code":"KMUX_ERR_UNSUPPORTED"' \
    '"result":"not_run"' '"timing":null' 'mb2ic16id2ih1iw1oc16od1oh1ow1kd2kh1kw1sd1sh1sw1pd0ph0pw0dd1dh0dw0'; do
    case $u in *"$want"*) ;; *) fail "unsupported record lacks $want: $u" ;; esac
done
# and validate against the record schema where Ajv is installed (schema.sh insists on it)
NODE_DIR=${KMUX_NODE_DIR:-/var/cache/kmux/node}
if command -v node >/dev/null 2>&1 && [ -f "$NODE_DIR/node_modules/ajv-formats/package.json" ]; then
    NODE_PATH=$NODE_DIR/node_modules node "$SRC/tests/bench/validate_records.cjs" \
        "$SRC/bench/schema/kmux-bench-record.schema.json" "$J" || fail "records do not validate"
fi

# depth 1 spelled every way benchdnn allows: sd, pd, dd (dd1 with kd1 is still depth 1), '_'
"$BENCH" --backend=ref --mode=C \
    'mb2_ic4id1ih6oc4od1oh6_kd1kh3_sd1sh1_pd0ph1_dd1dh0n"d1"' 'mb1ic4id1ih5oc4kd1kh3sd2n"d1b"' \
    >"$TMP/o" 2>&1 || fail "depth-1 descriptors: $(cat "$TMP/o")"
[ "$(grep -Ec '^d1b? +FWD +ref .* PASSED' "$TMP/o")" -eq 2 ] || fail "depth 1 did not run: $(cat "$TMP/o")"
# a depth of 1 with a depth padding is a real depth (od3): UNSUPPORTED
"$BENCH" --backend=ref --mode=C 'mb1ic4id1ih5oc4kd1kh3pd1n"pd1"' >"$TMP/o" 2>&1 ||
    fail "exit status $? for an unsupported problem: $(cat "$TMP/o")"
grep -Eq '^pd1 +FWD +ref .* UNSUPPORTED' "$TMP/o" || fail "pd1 is not UNSUPPORTED: $(cat "$TMP/o")"

# a line that does not parse stops the batch before anything runs: file, line and token named
printf 'mb2ic4ih6oc5kh3\n\nmb2ic16id2ih1oc16kd2kh1\nmb2ic4ih6oc5kh3xx7\n' >"$TMP/bad.txt"
"$BENCH" --backend=ref --mode=C --batch="$TMP/bad.txt" >"$TMP/o" 2>&1
rc=$?
[ $rc -eq 2 ] || fail "a syntax error: exit status $rc, want 2: $(cat "$TMP/o")"
grep -q "$TMP/bad.txt:4: unknown field 'xx'" "$TMP/o" || fail "error does not name file:line and token: $(cat "$TMP/o")"
grep -q ' PASSED ' "$TMP/o" && fail "problems ran after a syntax error: $(cat "$TMP/o")"
echo "PASS"

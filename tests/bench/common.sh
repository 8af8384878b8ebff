# Sourced by the kmux-bench script tests: $1 is the kmux-bench binary.
# Provides BENCH, SRC (source root), TMP (a fresh folder for this test), DEVICES (available
# devices except ref, comma-separated; "" when there are none), skip, fail and check_passed.
set -u
BENCH=${1:?usage: $0 path/to/kmux-bench}
SRC=$(cd "$(dirname "$0")/../.." && pwd)
TEST=$(basename "$0" .sh)
TMP=${KMUX_BENCH_TEST_TMP:-${TMPDIR:-/tmp}/kmux-bench-test}/$TEST
rm -rf "$TMP"
mkdir -p "$TMP"

skip() {
    echo "SKIP: $*"
    exit 77
}

fail() {
    echo "FAIL: $*"
    exit 1
}

# Every device kmux-bench would run by default (all available devices but ref).
DEVICES=$("$BENCH" --list-devices | awk '/^devices:/ {d = 1; next} d && $1 != "ref" {print $1}' |
          paste -sd, -)

# check_passed OUTPUT_FILE: every result row of a kmux-bench table passed verification.
check_passed() {
    if grep -Eq ' (FAILED|MISTRUSTED|ERROR)( |$)' "$1"; then
        grep -E -A1 ' (FAILED|MISTRUSTED|ERROR)( |$)' "$1"
        fail "some results did not pass (see above)"
    fi
    grep -q '[0-9]* results: ' "$1" || fail "no summary line in the output"
}

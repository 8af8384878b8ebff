#!/usr/bin/env bash
# The Fashion-MNIST trainer as a user builds it: kmux installed into a temporary prefix, the
# example folder COPIED out of the tree and built against it through find_package(kmux) (and once
# through the pkg-config one-liner of its README), then short trainings on a fixed seeded subset
# (3200 training images = 50 steps of 64, 1000 test images):
#   - f32 on cpu:onednn and cpu:openblas: the loss falls (last 10 steps < 0.6 x first 10), the
#     test accuracy is >= 60% (chance: 10%), and the two backends' losses agree step by step:
#     step 0 (the same weights, forward only) within 1e-5 relative, steps 1-49 within 1e-4.
#     Why: both accumulate in f32 and differ only in summation order; measured on this network
#     the gap is 0 at step 0 and <= 3.1e-7 over the first 50 steps (1 or 2 threads; 2 vs 1
#     oneDNN threads: 7.7e-8), so 1e-4 leaves 300x margin, while a wrong gradient, initialisation or data order
#     moves the loss by > 1e-3 within a few steps. (Later steps diverge exponentially, about 10x
#     per 10 steps from step 60 on with this learning rate: they are not compared.)
#   - bf16 on cpu:onednn: the loss falls, accuracy >= 60%.
#   - --stage-through-host (the code path of GPUs: host copies and kmux_memcpy) on cpu:openblas
#     gives bitwise the losses of the plain cpu:openblas run.
#   - f16 on cpu:onednn with an initial loss scale of 2^24: at least one step is skipped for
#     overflow (kmux_unscale_check_finite finds Inf), and the run still converges as above; the
#     skipped steps the device counted are the ones the loss log shows, and the same run without
#     the log (no read-back in a step) ends with the same loss, accuracy, count and scale.
#   - a training step does not synchronise with the host: the KMUX_VERBOSE=1 trace's sync lines
#     (kmux_stream_synchronize and co) of an f16 run through host copies (the GPU code path) are
#     as many for 10 steps as for 20 (the epoch's end and the evaluation read back, a step not).
#   - a missing, truncated or corrupt data file fails with a message naming the file and
#     Debian's package dataset-fashion-mnist.
# One thread per run: results do not depend on the core count, and a busy CI machine does not
# stall OpenMP barriers (2 threads on 2 loaded cores ran oneDNN 30x slower).
# Skipped (exit 77) when the data set or a CPU plugin is not installed.
# Usage: test_train_fashion_mnist.sh <source-dir> <build-dir>
set -euo pipefail
src=$1 build=$2
data=${FASHION_MNIST_DIR:-/usr/share/datasets/fashion-mnist}
if [ ! -d "$data" ]; then
  echo "SKIP: $data not found (Debian package dataset-fashion-mnist; scripts/setup-debian.sh installs it)"
  exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
libdir=$(find "$tmp/prefix" -name 'libkmux.so' -printf '%h\n' | head -n1)
for p in onednn openblas; do
  if [ ! -e "$libdir/kmux/libkmux-$p.so" ]; then
    echo "SKIP: plugin $p not built (needs both CPU backends for the comparison)"
    exit 77
  fi
done

echo "-- build the copied example with find_package(kmux)"
cp -r "$src/examples/train_fashion_mnist" "$tmp/example"
cmake -S "$tmp/example" -B "$tmp/ex-build" -G Ninja -DCMAKE_PREFIX_PATH="$tmp/prefix" \
  -DCMAKE_C_FLAGS="-Wall -Wextra -Wpedantic -Werror" >/dev/null
cmake --build "$tmp/ex-build" >/dev/null
exe="$tmp/ex-build/train_fashion_mnist"

echo "-- build it with the pkg-config one-liner"
(cd "$tmp/example" && cc -std=c11 -D_POSIX_C_SOURCE=200809L -O2 -o "$tmp/pc_train" *.c \
  $(PKG_CONFIG_PATH="$libdir/pkgconfig" pkg-config --cflags --libs kmux zlib) -lm -Wl,-rpath,"$libdir")
"$tmp/pc_train" --help >/dev/null

fail() { echo "FAIL: $*"; exit 1; }
val() { sed -n "s/^$2=//p" "$1"; }

run() { # name, then options
  local name=$1; shift
  echo "-- $name: $*"
  "$exe" --data="$data" --train-limit=3200 --test-limit=1000 --seed=7 --threads=1 --no-progress \
    --summary="$tmp/$name.sum" --loss-log="$tmp/$name.log" "$@"
}

converged() { # summary file
  local f=$1
  awk -v a="$(val "$f" loss_first)" -v b="$(val "$f" loss_last)" 'BEGIN { exit !(b < 0.6 * a) }' ||
    fail "$f: the loss did not fall: first 10 steps $(val "$f" loss_first), last 10 $(val "$f" loss_last)"
  awk -v acc="$(val "$f" test_acc)" 'BEGIN { exit !(acc >= 0.60) }' ||
    fail "$f: test accuracy $(val "$f" test_acc) < 0.60 (chance is 0.10)"
}

run onednn --device=cpu:onednn --precision=f32
run openblas --device=cpu:openblas --precision=f32
run bf16 --device=cpu:onednn --precision=bf16
run f16 --device=cpu:onednn --precision=f16 --loss-scale=16777216
run staged --device=cpu:openblas --precision=f32 --stage-through-host
cmp -s "$tmp/openblas.log" "$tmp/staged.log" || fail "--stage-through-host changed the losses"
for r in onednn openblas bf16 f16; do converged "$tmp/$r.sum"; done

paste "$tmp/onednn.log" "$tmp/openblas.log" | awk '
  { rel = ($3 - $7) / $3; if (rel < 0) rel = -rel
    tol = $2 == 0 ? 1e-5 : 1e-4
    if ($2 < 50 && rel > tol) { printf "step %d: onednn %s, openblas %s: relative gap %.3g > %g\n", $2, $3, $7, rel, tol; bad = 1 }
    if ($2 < 50 && rel > worst) worst = rel }
  END { printf "onednn vs openblas: largest relative loss gap over 50 steps %.3g\n", worst; exit bad }' ||
  fail "cpu:onednn and cpu:openblas disagree"

skipped=$(val "$tmp/f16.sum" skipped)
[ "$skipped" -ge 1 ] || fail "f16 with an initial loss scale of 2^24 skipped no step"
echo "f16: $skipped steps skipped for overflow, final loss scale $(val "$tmp/f16.sum" loss_scale)"
# the count kept on the device (kmux_binary ADD of the found-inf flags) is the log's, step by step
logged=$(awk '{ s += $4 } END { print s }' "$tmp/f16.log")
[ "$logged" = "$skipped" ] || fail "f16: $skipped steps skipped by the device's count, $logged in the log"
# without --loss-log a step reads nothing back (SGD): the same training, decided on the device
"$exe" --data="$data" --train-limit=3200 --test-limit=1000 --seed=7 --threads=1 --no-progress \
  --summary="$tmp/f16q.sum" --device=cpu:onednn --precision=f16 --loss-scale=16777216 >/dev/null
for k in loss_last test_acc skipped loss_scale; do
  [ "$(val "$tmp/f16.sum" $k)" = "$(val "$tmp/f16q.sum" $k)" ] ||
    fail "f16 without the loss log: $k = $(val "$tmp/f16q.sum" $k), with it $(val "$tmp/f16.sum" $k)"
done

echo "-- host synchronisations: per epoch, not per step (the KMUX_VERBOSE=1 trace's sync lines)"
syncs() { # training images; the GPU code path (host copies) with f16 loss scaling
  KMUX_VERBOSE=1 "$exe" --data="$data" --train-limit="$1" --test-limit=1000 --seed=7 --threads=1 \
    --no-progress --device=cpu:openblas --precision=f16 --stage-through-host 2>&1 >/dev/null |
    grep -c ',sync,'
}
s10=$(syncs 640) s20=$(syncs 1280)
echo "10 steps: $s10 synchronisations, 20 steps: $s20"
[ "$s10" -ge 1 ] || fail "the trace shows no synchronisation at all (the count would prove nothing)"
[ "$s10" = "$s20" ] || fail "synchronisations grow with the steps: $s10 for 10 steps, $s20 for 20"

echo "-- bad data files"
bad_data() { # what, file, how to spoil it (a command on the copy), expected words
  local what=$1 file=$2 spoil=$3 expect=$4 d="$tmp/data-$1"
  mkdir -p "$d"
  for f in "$data"/*.gz; do ln -s "$f" "$d/"; done
  rm "$d/$file"
  eval "$spoil"
  if "$exe" --data="$d" --no-progress >"$tmp/out" 2>"$tmp/err"; then fail "$what $file: accepted"; fi
  grep -q "$d/$file" "$tmp/err" || fail "$what $file: the message does not name the file: $(cat "$tmp/err")"
  grep -q "dataset-fashion-mnist" "$tmp/err" || fail "$what $file: the message does not name the package"
  grep -qi "$expect" "$tmp/err" || fail "$what $file: the message does not say '$expect': $(cat "$tmp/err")"
  [ ! -s "$tmp/out" ] || fail "$what $file: printed on stdout"
  echo "$what: $(cat "$tmp/err")"
}
bad_data missing train-labels-idx1-ubyte.gz ':' "cannot open"
bad_data truncated train-labels-idx1-ubyte.gz 'head -c 20000 "$data/$file" > "$d/$file"' "truncated"
# a byte inverted in the middle of the compressed stream: deflate or CRC-32 error
flip='b=$(od -An -tu1 -j15000 -N1 "$d/$file"); printf "\\$(printf %03o $((255 - b)))" |
  dd of="$d/$file" bs=1 seek=15000 conv=notrunc 2>/dev/null'
bad_data corrupt train-labels-idx1-ubyte.gz 'cp "$data/$file" "$d/$file"; '"$flip" "corrupt"
bad_data wrong-magic t10k-labels-idx1-ubyte.gz 'cp "$data/t10k-images-idx3-ubyte.gz" "$d/$file"' "magic"
echo "train_fashion_mnist test passed"

#!/usr/bin/env bash
# One command for the side-by-side measurement: trains one epoch (by default) of the full data
# set with kmux on cpu:onednn and cpu:openblas in f32, bf16 and f16, then the same network with
# PyTorch in f32 and bf16 (autocast) when python3 has torch, and prints one table. With
# --repeat=N every configuration runs N times, interleaved, and the fastest epoch counts (the
# accuracy is that run's; it is the same each time for a given backend and thread count).
#
#   ./compare.sh [--trainer=PATH] [--repeat=N] [--threads=N] [any train_fashion_mnist option]
#
# PATH defaults to ./build/train_fashion_mnist beside this script (cmake -S . -B build). The
# remaining options (--epochs, --batch, --seed, --optimizer, --lr, --train-limit, ...) go to both
# trainers. PyTorch: $PYTHON, else the first of python3 and /usr/bin/python3 that imports torch.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
trainer=$here/build/train_fashion_mnist
repeat=1
common=()
for a in "$@"; do
  case $a in
    --trainer=*) trainer=${a#*=} ;;
    --repeat=*) repeat=${a#*=} ;;
    *) common+=("$a") ;;
  esac
done
[ -x "$trainer" ] || { echo "compare.sh: $trainer not found: build the example first (see README.md)" >&2; exit 1; }
python=""
for p in ${PYTHON:-} python3 /usr/bin/python3; do
  if command -v "$p" >/dev/null 2>&1 && "$p" -c "import torch" 2>/dev/null; then python=$p; break; fi
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

configs=()
for dev in cpu:onednn cpu:openblas; do
  for prec in f32 bf16 f16; do configs+=("kmux $dev $prec"); done
done
if [ -n "$python" ]; then
  configs+=("pytorch - f32" "pytorch - bf16")
else
  echo "compare.sh: no python3 with torch (Debian: apt-get install python3-torch): PyTorch rows skipped"
fi

key() { echo "$1_$2_$3" | tr ':' '_'; }
val() { sed -n "s/^$2=//p" "$1"; }

for ((r = 1; r <= repeat; r++)); do
  for c in "${configs[@]}"; do
    read -r who dev prec <<<"$c"
    out="$tmp/$(key "$who" "$dev" "$prec").$r"
    if [ "$who" = kmux ]; then
      "$trainer" --device="$dev" --precision="$prec" --no-progress --summary="$out" "${common[@]}" >"$out.log" 2>&1 ||
        { echo "FAILED: $c (run $r):"; tail -n 5 "$out.log"; continue; }
    else
      "$python" "$here/compare_pytorch.py" --precision="$prec" --summary="$out" "${common[@]}" >"$out.log" 2>&1 ||
        { echo "FAILED: $c (run $r):"; tail -n 5 "$out.log"; continue; }
    fi
    echo "run $r: $c: $(grep '^epoch [0-9]*:' "$out.log" | tail -n 1)"
  done
done

echo
echo "machine: $(lscpu | sed -n 's/^Model name: *//p' | head -n1), $(nproc) cores; load average $(cut -d' ' -f1-3 /proc/loadavg)"
printf "%-8s %-13s %-5s %9s %10s %9s %8s %9s\n" framework device prec "s/epoch" "images/s" "test acc" skipped "vs torch"
ref=""
best() { # fastest summary of a configuration
  local k=$1 b="" bs=""
  for f in "$tmp/$k".[0-9]*; do
    case $f in *.log) continue ;; esac
    [ -s "$f" ] || continue
    s=$(val "$f" epoch_seconds)
    if [ -z "$b" ] || awk -v a="$s" -v b="$bs" 'BEGIN { exit !(a < b) }'; then b=$f bs=$s; fi
  done
  echo "$b"
}
[ -n "$python" ] && ref=$(best "$(key pytorch - f32)")
for c in "${configs[@]}"; do
  read -r who dev prec <<<"$c"
  f=$(best "$(key "$who" "$dev" "$prec")")
  [ -n "$f" ] || { printf "%-8s %-13s %-5s %9s\n" "$who" "$dev" "$prec" failed; continue; }
  ips=$(val "$f" images_per_second)
  rel="-"
  [ -n "$ref" ] && rel=$(awk -v a="$ips" -v b="$(val "$ref" images_per_second)" 'BEGIN { printf "%.2fx", a / b }')
  skipped=$(val "$f" skipped)
  printf "%-8s %-13s %-5s %9.2f %10.0f %8.2f%% %8s %9s\n" "$who" "$dev" "$prec" "$(val "$f" epoch_seconds)" \
    "$ips" "$(awk -v a="$(val "$f" test_acc)" 'BEGIN { print 100 * a }')" "${skipped:--}" "$rel"
done

#!/usr/bin/env python3
"""auto_vs_best.py - the device "auto" against the best single backend, from kmux-bench records.

Usage:
  KMUX_TUNE_CACHE=$(mktemp) kmux-bench --workload=resnet50 \\
      --backend=auto,cpu:onednn,cpu:openblas --out=r50.jsonl
  bench/auto_vs_best.py r50.jsonl [--others=cpu:onednn,cpu:openblas] [--floor=0.95]

For each problem (name and direction) timed on "auto" and on the other devices, the ratio
best / auto (above 1: auto is faster than the best single backend) is taken round by round
(kmux-bench times every device once per round, the first one rotating, so a round's devices ran
side by side) and its median over the rounds is the problem's ratio. Printed: every problem below
--floor with its rounds and the implementations each device ran, the geometric mean and the
minimum over all problems, the count below the floor, how many records kmux-bench marked noisy,
and the plan-creation time of "auto" (its tuning included: with an empty KMUX_TUNE_CACHE, the
first-run cost). Exit status 0; the numbers are the verdict, not the status.
"""
import argparse
import collections
import json
import math
import statistics


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("records", nargs="+", help="kmux-bench --out files (JSON lines)")
    ap.add_argument("--others", default="cpu:onednn,cpu:openblas",
                    help="the single backends to compare with (comma-separated device ids)")
    ap.add_argument("--floor", type=float, default=0.95, help="list the problems below this")
    a = ap.parse_args()
    others = a.others.split(",")
    rounds = collections.defaultdict(dict)
    impls = collections.defaultdict(dict)
    plan_ms, noisy, total = [], 0, 0
    for path in a.records:
        with open(path) as f:
            for line in f:
                r = json.loads(line)
                total += 1
                noisy += bool((r.get("noise") or {}).get("noisy"))
                t = r.get("timing") or {}
                if not t.get("round_median_ms"):
                    continue
                p = r["problem"]
                key = (p.get("name") or p["descriptor"], p.get("direction") or "-")
                dev = r["device"]["id"]
                rounds[key][dev] = t["round_median_ms"]
                impls[key][dev] = r["implementation"]["name"]
                if dev == "auto":
                    plan_ms.append(r["implementation"]["plan_create_ms"])
    ratios, low = [], []
    for key, d in sorted(rounds.items()):
        have = [o for o in others if o in d]
        if "auto" not in d or not have:
            continue
        n = min(len(d[o]) for o in have + ["auto"])
        per = [min(d[o][i] for o in have) / d["auto"][i] for i in range(n)]
        ratio = statistics.median(per)
        ratios.append(ratio)
        if ratio < a.floor:
            low.append((key, ratio, per))
    if not ratios:
        print("no problem timed on auto and on one of", a.others)
        return 0
    for key, ratio, per in low:
        print(f"{key[0]} {key[1]}: best/auto {ratio:.3f} (rounds "
              f"{', '.join(f'{x:.2f}' for x in per)}); "
              + "; ".join(f"{k}: {v}" for k, v in sorted(impls[key].items())))
    g = math.exp(sum(math.log(x) for x in ratios) / len(ratios))
    print(f"{len(ratios)} problems: best/auto geometric mean {g:.3f}, minimum {min(ratios):.3f}, "
          f"{len(low)} below {a.floor}; {noisy} of {total} records marked noisy by kmux-bench")
    if plan_ms:
        s = sorted(plan_ms)
        print(f"auto plan creation (tuning included): {sum(s) / 1000:.1f} s over {len(s)} plans, "
              f"median {s[len(s) // 2]:.0f} ms, max {s[-1]:.0f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

#!/usr/bin/env python3
"""torch_bench.py - PyTorch's time for the cases of tests/gpu/cases.csv, measured the way
kmux-gpu-bench measures kmux (CUDA events around batches of back-to-back calls after two warm-up
calls, each batch at least --min-ms long, median of three batches; random inputs in [-1, 1]).

    python3 torch_bench.py --cases cases.csv [--out torch.csv] [--min-ms 100]

Precision settings follow each case, so both sides compute the same thing: TF32 only where the
case says tf32 (torch.backends.{cuda.matmul,cudnn}.allow_tf32), no reduced-precision reductions
for f16/bf16 GEMMs, cuDNN heuristics without autotuning (cudnn.benchmark = False, as kmux uses the
heuristics' first choice). The layouts are the same too: column-major GEMM operands become
transposed views of row-major tensors; NHWC convolutions use channels_last tensors.

Output: name,torch_ms,torch_tflops,note (for "overhead" cases torch_ms is microseconds per call).
"""
import argparse
import csv
import sys
import time

try:
    import torch
    import torch.nn.functional as F
except Exception as e:  # pragma: no cover - reported by run.sh
    print(f"torch_bench: PyTorch not importable: {e}", file=sys.stderr)
    sys.exit(3)

DT = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16, "f64": torch.float64}


def time_ms(fn, min_ms):
    fn()
    fn()
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    e0.record()
    fn()
    e1.record()
    e1.synchronize()
    one = e0.elapsed_time(e1)
    reps = max(3, min(1000, int(min_ms / one) + 1 if one > 0 else 1000))
    per = []
    for _ in range(3):
        e0.record()
        for _ in range(reps):
            fn()
        e1.record()
        e1.synchronize()
        per.append(e0.elapsed_time(e1) / reps)
    return sorted(per)[1]


def colmajor(rows, cols, dtype, dev):
    """A column-major rows x cols matrix: the transpose view of a row-major (cols, rows) tensor."""
    return (torch.rand(cols, rows, device=dev, dtype=torch.float32) * 2 - 1).to(dtype).t()


def run_gemm(f, min_ms, dev):
    ab, ct, comp = f[2], f[3], f[4]
    m, n, k = int(f[5]), int(f[6]), int(f[7])
    ta, tb = f[8], f[9]
    torch.backends.cuda.matmul.allow_tf32 = comp == "tf32"
    gflop = 2.0 * m * n * k / 1e9
    if ab in ("e4m3", "e5m2"):
        if not hasattr(torch, "_scaled_mm"):
            return None, "no torch._scaled_mm"
        if (ta, tb) != ("T", "N"):
            return None, "torch._scaled_mm needs the TN layout"
        f8 = torch.float8_e4m3fn if ab == "e4m3" else torch.float8_e5m2
        # op(A) = A^T with A stored K x M column-major: a row-major M x K tensor
        a = (torch.rand(m, k, device=dev) * 2 - 1).to(f8)
        # B stored K x N column-major: the transpose view of a row-major N x K tensor
        b = (torch.rand(n, k, device=dev) * 2 - 1).to(f8).t()
        one = torch.ones((), device=dev)
        out_dtype = DT[ct]
        fn = lambda: torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=out_dtype)
        return time_ms(fn, min_ms), "torch._scaled_mm"
    if ab not in DT:
        return None, f"type {ab} not timed"
    A = colmajor(m, k, DT[ab], dev) if ta == "N" else colmajor(k, m, DT[ab], dev).t()
    B = colmajor(k, n, DT[ab], dev) if tb == "N" else colmajor(n, k, DT[ab], dev).t()
    if ct != ab:
        return None, f"output {ct} differs from input {ab}: torch.matmul cannot"
    fn = lambda: torch.matmul(A, B)
    return time_ms(fn, min_ms), "torch.matmul"


def run_conv(f, min_ms, dev):
    dt, comp, direction, layout = f[2], f[4], f[5], f[6]
    N, C, H, W, K, R, S, st, pad = (int(x) for x in f[7:16])
    torch.backends.cudnn.allow_tf32 = comp == "tf32"
    fmt = torch.channels_last if layout == "NHWC" else torch.contiguous_format
    x = (torch.rand(N, C, H, W, device=dev) * 2 - 1).to(DT[dt]).contiguous(memory_format=fmt)
    w = (torch.rand(K, C, R, S, device=dev) * 2 - 1).to(DT[dt]).contiguous(memory_format=fmt)
    y = F.conv2d(x, w, stride=st, padding=pad)
    dy = (torch.rand_like(y) * 2 - 1).contiguous(memory_format=fmt)
    P, Q = y.shape[2], y.shape[3]
    gflop = 2.0 * N * K * P * Q * C * R * S / 1e9
    if direction == "fwd":
        fn = lambda: F.conv2d(x, w, stride=st, padding=pad)
    elif direction == "bwd_data":
        fn = lambda: torch.nn.grad.conv2d_input(x.shape, w, dy, stride=st, padding=pad)
    else:
        fn = lambda: torch.nn.grad.conv2d_weight(x, w.shape, dy, stride=st, padding=pad)
    return time_ms(fn, min_ms), f"cudnn {direction}"


def run_overhead(f, dev):
    m, n, k = int(f[5]), int(f[6]), int(f[7])
    torch.backends.cuda.matmul.allow_tf32 = False
    a = colmajor(m, k, torch.float32, dev)
    b = colmajor(k, n, torch.float32, dev)
    c = torch.empty(n, m, device=dev).t()
    for _ in range(100):
        torch.mm(a, b, out=c)
    torch.cuda.synchronize()
    calls = 2000
    t0 = time.perf_counter()
    for _ in range(calls):
        torch.mm(a, b, out=c)
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) / calls * 1e6, "torch.mm(out=)"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", required=True)
    ap.add_argument("--out")
    ap.add_argument("--min-ms", type=float, default=100.0)
    args = ap.parse_args()
    if not torch.cuda.is_available():
        print("torch_bench: torch sees no CUDA device", file=sys.stderr)
        sys.exit(2)
    dev = torch.device("cuda:0")
    torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = False
    torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = False
    torch.backends.cudnn.benchmark = False
    print(f"torch_bench: torch {torch.__version__}, cuDNN {torch.backends.cudnn.version()}, "
          f"{torch.cuda.get_device_name(0)}", file=sys.stderr)
    rows = []
    with open(args.cases) as fh:
        for line in fh:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            f = line.split(",")
            kind, name = f[0], f[1]
            try:
                if kind == "gemm":
                    ms, note = run_gemm(f, args.min_ms, dev)
                    gflop = 2.0 * int(f[5]) * int(f[6]) * int(f[7]) / 1e9
                elif kind == "conv":
                    ms, note = run_conv(f, args.min_ms, dev)
                    N, C, H, W, K, R, S, st, pad = (int(x) for x in f[7:16])
                    P = (H + 2 * pad - R) // st + 1
                    Q = (W + 2 * pad - S) // st + 1
                    gflop = 2.0 * N * K * P * Q * C * R * S / 1e9
                elif kind == "overhead":
                    ms, note = run_overhead(f, dev)
                    gflop = 0.0
                else:
                    continue
            except Exception as e:  # one case failing must not hide the others
                ms, note, gflop = None, f"error: {type(e).__name__}: {e}".replace(",", ";")[:120], 0.0
            tf = f"{gflop / ms:.2f}" if ms and gflop else ""
            row = [name, f"{ms:.4f}" if ms else "", tf, note]
            rows.append(row)
            print(",".join(row), flush=True)
            torch.cuda.empty_cache()
    if args.out:
        with open(args.out, "w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(["name", "torch_ms", "torch_tflops", "note"])
            w.writerows(rows)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""PyTorch side of bench_eltwise: one op per stdin line, one median time in ms per stdout line
(0 when PyTorch has no such op), on KMUX_BENCH_THREADS threads. Lines:  <alg> <fwd|bwd|bwd_dst> <f32|bf16|f16> <n> <reps>
The ops are PyTorch's own CPU kernels: the forward functions of torch.nn.functional and the
backward functions of torch.ops.aten (relu: threshold_backward; gelu: gelu_backward; sigmoid and
tanh: sigmoid_backward / tanh_backward from the output; silu: silu_backward), out of place."""
import os
import sys
import time

import torch
import torch.nn.functional as F


def timed(fn, reps):
    fn()
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    ts.sort()
    return ts[len(ts) // 2] * 1e3


def op(alg, direction, x, dd):
    aten = torch.ops.aten
    if direction == "fwd":
        return {
            "relu": lambda: F.relu(x),
            "gelu_tanh": lambda: F.gelu(x, approximate="tanh"),
            "gelu_erf": lambda: F.gelu(x),
            "sigmoid": lambda: torch.sigmoid(x),
            "tanh": lambda: torch.tanh(x),
            "linear": lambda: torch.add(torch.mul(x, 1.5), 0.25),
            "reciprocal": lambda: torch.reciprocal(x),
            "silu": lambda: F.silu(x),
        }.get(alg)
    if direction == "bwd":
        return {
            "relu": lambda: aten.threshold_backward(dd, x, 0),
            "gelu_tanh": lambda: aten.gelu_backward(dd, x, approximate="tanh"),
            "gelu_erf": lambda: aten.gelu_backward(dd, x),
            "silu": lambda: aten.silu_backward(dd, x),
        }.get(alg)
    return {  # from the output
        "relu": lambda: aten.threshold_backward(dd, x, 0),
        "sigmoid": lambda: aten.sigmoid_backward(dd, x),
        "tanh": lambda: aten.tanh_backward(dd, x),
    }.get(alg)


def main():
    torch.set_grad_enabled(False)
    threads = int(os.environ.get("KMUX_BENCH_THREADS", "0"))
    if threads > 0:  # the threads kmux's kernels use, for a fair comparison
        torch.set_num_threads(threads)
    dtypes = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16}
    for line in sys.stdin:
        f = line.split()
        if len(f) != 5:
            continue
        alg, direction, dt, n, reps = f[0], f[1], dtypes[f[2]], int(f[3]), int(f[4])
        x = torch.randn(n).to(dt)
        dd = torch.randn(n).to(dt)
        fn = op(alg, direction, x, dd)
        print("%.6f" % (timed(fn, reps) if fn else 0.0), flush=True)


if __name__ == "__main__":
    main()

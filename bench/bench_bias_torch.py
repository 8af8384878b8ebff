#!/usr/bin/env python3
"""PyTorch's CPU bias-add and bias gradient on the tensors of bench_bias.c (median of rounds, ms):
x + b over NCHW (b of shape (C, 1, 1)) and NHWC (b of shape (C,)), and the gradient
x.sum over every axis but the channel (float32 result, as bench_bias's f32 dst).
Usage: bench_bias_torch.py [N] [rounds]"""
import statistics
import sys
import time

import torch

n = int(sys.argv[1]) if len(sys.argv) > 1 else 64
rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 7
C, HW = 256, 56 * 56
torch.set_num_threads(torch.get_num_threads())
for dt, name in ((torch.float32, "f32"), (torch.bfloat16, "bf16")):
    for layout in ("nchw", "nhwc"):
        shape = (n, C, HW) if layout == "nchw" else (n, HW, C)
        x = torch.zeros(shape, dtype=dt)
        b = torch.zeros((C, 1) if layout == "nchw" else (C,), dtype=dt)
        dims = (0, 2) if layout == "nchw" else (0, 1)
        for op, fn in (("bias_add", lambda: torch.add(x, b)),
                       ("bias_grad", lambda: x.sum(dim=dims, dtype=torch.float32))):
            fn()
            t = []
            for _ in range(rounds):
                t0 = time.perf_counter()
                fn()
                t.append((time.perf_counter() - t0) * 1e3)
            print(f"{op:<10} {name:<5} {layout:<5} torch {statistics.median(t):9.3f} ms")

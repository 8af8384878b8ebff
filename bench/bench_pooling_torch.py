#!/usr/bin/env python3
"""PyTorch's CPU pooling on the tensors of bench_pooling.c (median of rounds, ms): max_pool2d
3x3/2 padding 1 and avg_pool2d 2x2/2 over N x 64 x 112 x 112, forward and backward (the input's
gradient through autograd, backward timed alone), NCHW and NHWC (channels_last), f32 and bf16.
Usage: bench_pooling_torch.py [N] [rounds]"""
import statistics
import sys
import time

import torch
import torch.nn.functional as F

n = int(sys.argv[1]) if len(sys.argv) > 1 else 16
rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 5


def timed(fn):
    fn()
    t = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        fn()
        t.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(t)


for op, pool in (("max 3x3/2 pad 1", lambda x: F.max_pool2d(x, 3, 2, 1)),
                 ("avg 2x2/2", lambda x: F.avg_pool2d(x, 2, 2))):
    for dt, name in ((torch.float32, "f32"), (torch.bfloat16, "bf16")):
        for layout in ("nchw", "nhwc"):
            x = torch.randint(0, 1000, (n, 64, 112, 112)).to(dt)
            if layout == "nhwc":
                x = x.contiguous(memory_format=torch.channels_last)
            fwd = timed(lambda: pool(x))
            xg = x.clone().requires_grad_(True)
            y = pool(xg)
            dy = torch.ones_like(y)

            def bwd():
                xg.grad = None
                y.backward(dy, retain_graph=True)

            print(f"{op:<16} fwd {name:<5} {layout:<5} torch {fwd:9.3f} ms")
            print(f"{op:<16} bwd {name:<5} {layout:<5} torch {timed(bwd):9.3f} ms")

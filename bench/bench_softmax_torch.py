#!/usr/bin/env python3
"""PyTorch's CPU softmax ops on the tensors of bench_softmax.c (median of rounds, ms): softmax
and log_softmax along the rows of rows x cols, forward and backward (the input's gradient
through autograd, backward timed alone), and cross_entropy with integer labels (forward and
backward together: kmux's op is one fused pass that writes both), f32 and bf16.
Usage: bench_softmax_torch.py [rows] [cols] [rounds]"""
import statistics
import sys
import time

import torch
import torch.nn.functional as F

rows = int(sys.argv[1]) if len(sys.argv) > 1 else 8192
cols = int(sys.argv[2]) if len(sys.argv) > 2 else 2048
rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 5


def timed(fn):
    fn()
    t = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        fn()
        t.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(t)


labels = torch.arange(rows) * 7 % cols
for op, f in (("softmax", lambda x: torch.softmax(x, 1)),
              ("log_softmax", lambda x: torch.log_softmax(x, 1))):
    for dt, name in ((torch.float32, "f32"), (torch.bfloat16, "bf16")):
        x = (torch.rand(rows, cols) * 8 - 4).to(dt)
        print(f"{op:<14} fwd {name:<5} torch {timed(lambda: f(x)):9.3f} ms")
        xg = x.clone().requires_grad_(True)
        y = f(xg)
        dy = torch.rand_like(y)

        def bwd():
            xg.grad = None
            y.backward(dy, retain_graph=True)

        print(f"{op:<14} bwd {name:<5} torch {timed(bwd):9.3f} ms")
for dt, name in ((torch.float32, "f32"), (torch.bfloat16, "bf16")):
    x = (torch.rand(rows, cols) * 8 - 4).to(dt).requires_grad_(True)

    def xent():
        x.grad = None
        F.cross_entropy(x, labels).backward()

    print(f"{'cross_entropy':<14} fwd {name:<5} torch {timed(xent):9.3f} ms (with its backward)")

#!/usr/bin/env python3
"""PyTorch side of bench_cpu_direct: one problem per stdin line, one median time in ms per stdout
line (interleaving within PyTorch only). Lines:
  gemm <f32|bf16|i8> M N K transA transB
  conv <nchw|nhwc> mb ic ih oc kh stride pad
i8 GEMM has no CPU matmul in PyTorch: printed as 0 (left out)."""
import sys
import time

import torch


def timed(fn, reps):
    fn()
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    ts.sort()
    return ts[len(ts) // 2] * 1e3


def main():
    torch.set_grad_enabled(False)
    for line in sys.stdin:
        f = line.split()
        if not f:
            continue
        if f[0] == "gemm":
            dt = {"f32": torch.float32, "bf16": torch.bfloat16}.get(f[1])
            m, n, k, ta, tb = (int(x) for x in f[2:7])
            if dt is None:
                print(0)
                continue
            a = torch.randn(k, m).t() if ta else torch.randn(m, k)
            b = torch.randn(n, k).t() if tb else torch.randn(k, n)
            a, b = a.to(dt), b.to(dt)
            print(timed(lambda: torch.mm(a, b), 7))
        else:
            layout = f[1]
            mb, ic, ih, oc, kh, st, pad = (int(x) for x in f[2:9])
            x = torch.randn(mb, ic, ih, ih)
            w = torch.randn(oc, ic, kh, kh)
            if layout == "nhwc":
                x = x.to(memory_format=torch.channels_last)
                w = w.to(memory_format=torch.channels_last)
            print(timed(lambda: torch.nn.functional.conv2d(x, w, stride=st, padding=pad), 7))
        sys.stdout.flush()


if __name__ == "__main__":
    main()

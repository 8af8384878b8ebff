#!/usr/bin/env python3
"""The network of train_fashion_mnist in PyTorch, for a side-by-side measurement.

Same network, initial weights (SplitMix64, as rng.h), data order, batch size, optimiser and
hyper-parameters as the C trainer given the same options, so that in f32 both follow the same
loss curve up to rounding. Prints one line per epoch in the C trainer's format and writes the
same --summary keys. Exits 77 (and says so) when torch is not installed.

  compare_pytorch.py [--precision=f32|bf16] [--epochs=1] [--batch=64] [--seed=1] [--threads=0]
                     [--optimizer=sgd|adam] [--lr=X] [--momentum=0.9] [--data=DIR]
                     [--train-limit=N] [--test-limit=N] [--summary=FILE]
"""
import argparse
import gzip
import math
import os
import struct
import sys
import time

try:
    import numpy as np
    import torch
    import torch.nn.functional as F
except ImportError as e:  # the comparison is optional: skip, and say why
    print(f"compare_pytorch.py: skipped: {e} (Debian: apt-get install python3-torch)")
    sys.exit(77)

MASK = (1 << 64) - 1


class SplitMix64:
    """rng.h, bit for bit."""

    def __init__(self, seed):
        self.s = seed & MASK

    def next(self):
        self.s = (self.s + 0x9E3779B97F4A7C15) & MASK
        z = self.s
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        return z ^ (z >> 31)

    def uniform(self, n, bound):
        return [(2.0 * ((self.next() >> 11) * 2.0**-53) - 1.0) * bound for _ in range(n)]

    def shuffle(self, idx, n):
        for i in range(n - 1, 0, -1):
            j = self.next() % (i + 1)
            idx[i], idx[j] = idx[j], idx[i]


def load_idx(path, ndim):
    with gzip.open(path, "rb") as f:
        data = f.read()
    magic = struct.unpack(">I", data[:4])[0]
    if magic != 0x0800 | ndim:
        sys.exit(f"{path}: magic 0x{magic:08x}, expected 0x{0x0800 | ndim:08x}")
    dims = struct.unpack(">" + "I" * ndim, data[4 : 4 + 4 * ndim])
    return np.frombuffer(data, np.uint8, offset=4 + 4 * ndim).reshape(dims)


def pixels(u8):
    """load_batch of train.c, operation by operation in f32."""
    f32 = lambda v: torch.tensor(v, dtype=torch.float32)
    x = torch.from_numpy(u8.copy()).float().mul_(f32(1.0 / 255.0))
    return x.sub_(f32(0.2860)).mul_(f32(1.0 / 0.3530)).unsqueeze(1)


class Net(torch.nn.Module):
    def __init__(self, seed):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(1, 16, 3, stride=2, padding=1)
        self.conv2 = torch.nn.Conv2d(16, 32, 3, stride=2, padding=1)
        self.fc = torch.nn.Linear(32 * 7 * 7, 10)
        rng = SplitMix64(seed)  # the draw order of net.c's init_weights
        with torch.no_grad():
            for layer in (self.conv1, self.conv2, self.fc):
                fan_in = layer.weight[0].numel()
                bound = 1.0 / math.sqrt(fan_in)
                for p in (layer.weight, layer.bias):
                    vals = rng.uniform(p.numel(), bound)
                    p.copy_(torch.tensor(vals, dtype=torch.float32).reshape(p.shape))

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = F.relu(self.conv2(x))
        return self.fc(x.flatten(1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--precision", default="f32", choices=["f32", "bf16"])
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--optimizer", default="sgd", choices=["sgd", "adam"])
    ap.add_argument("--lr", type=float, default=None)
    ap.add_argument("--momentum", type=float, default=0.9)
    ap.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    ap.add_argument("--train-limit", type=int, default=60000)
    ap.add_argument("--test-limit", type=int, default=10000)
    ap.add_argument("--summary")
    a = ap.parse_args()
    lr = a.lr if a.lr is not None else (0.02 if a.optimizer == "sgd" else 0.001)
    # kmux's CPU backends use every core unless told otherwise; so does this script
    torch.set_num_threads(a.threads if a.threads > 0 else os.cpu_count())
    d = a.data
    xtr = load_idx(f"{d}/train-images-idx3-ubyte.gz", 3)
    ytr = load_idx(f"{d}/train-labels-idx1-ubyte.gz", 1)
    xte = load_idx(f"{d}/t10k-images-idx3-ubyte.gz", 3)
    yte = load_idx(f"{d}/t10k-labels-idx1-ubyte.gz", 1)
    Xtr, Xte = pixels(xtr), pixels(xte)
    Ytr = torch.from_numpy(ytr.astype(np.int64))
    Yte = torch.from_numpy(yte.astype(np.int64))

    data_rng = SplitMix64(a.seed ^ 0x5EEDDA7A)
    train_idx, test_idx = list(range(60000)), list(range(10000))
    if a.train_limit < 60000:
        data_rng.shuffle(train_idx, 60000)
    if a.test_limit < 10000:
        data_rng.shuffle(test_idx, 10000)
    test_sel = torch.tensor(test_idx[: a.test_limit])

    net = Net(a.seed)
    if a.optimizer == "sgd":
        opt = torch.optim.SGD(net.parameters(), lr=lr, momentum=a.momentum)
    else:
        opt = torch.optim.Adam(net.parameters(), lr=lr)
    bf16 = a.precision == "bf16"
    print(f"PyTorch {torch.__version__}, {torch.get_num_threads()} threads, {a.precision}, "
          f"{'SGD+momentum' if a.optimizer == 'sgd' else 'Adam'} lr {lr:g}, batch {a.batch}, "
          f"seed {a.seed}, {a.train_limit} train / {a.test_limit} test images")
    shuffle_rng = SplitMix64(a.seed)
    n, steps = a.train_limit, (a.train_limit + a.batch - 1) // a.batch
    for epoch in range(1, a.epochs + 1):
        shuffle_rng.shuffle(train_idx, n)
        order = torch.tensor(train_idx[:n])
        net.train()
        t0 = time.perf_counter()
        sum_loss, correct = 0.0, 0
        for step in range(steps):
            sel = order[step * a.batch : (step + 1) * a.batch]
            x, y = Xtr[sel], Ytr[sel]
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
                logits = net(x)
            loss = F.cross_entropy(logits.float(), y)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            sum_loss += loss.item() * len(sel)
            correct += (logits.argmax(1) == y).sum().item()
        epoch_s = time.perf_counter() - t0
        net.eval()
        tl, tc = 0.0, 0
        with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
            for i in range(0, a.test_limit, 1000):
                sel = test_sel[i : i + 1000]
                logits = net(Xte[sel]).float()
                tl += F.cross_entropy(logits, Yte[sel], reduction="sum").item()
                tc += (logits.argmax(1) == Yte[sel]).sum().item()
        test_loss, test_acc = tl / a.test_limit, tc / a.test_limit
        print(f"epoch {epoch}: train loss {sum_loss / n:.4f} acc {100 * correct / n:.2f}% | "
              f"test loss {test_loss:.4f} acc {100 * test_acc:.2f}% | {epoch_s:.2f} s, "
              f"{n / epoch_s:.0f} images/s", flush=True)
    if a.summary:
        with open(a.summary, "w") as f:
            f.write(f"device=pytorch\nprecision={a.precision}\nsteps={steps}\n"
                    f"test_loss={test_loss:.6f}\ntest_acc={test_acc:.6f}\n"
                    f"epoch_seconds={epoch_s:.3f}\nimages_per_second={n / epoch_s:.1f}\n")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""torch_bench.py - PyTorch's time for the problems of kmux-bench records, written as records in
kmux-bench's own schema (bench/schema/kmux-bench-record.schema.json), so that

    kmux-bench report kmux.jsonl torch.jsonl

puts kmux and PyTorch side by side (same problem key: descriptor + options; the device column
is "torch:cuda:0").

    python3 torch_bench.py --records kmux.jsonl --out torch.jsonl [--min-time 0.2] [--resume]

For every distinct problem in --records (kmux-bench's output, in its order) the script builds the
same tensors (same shape, dtypes, storage order / layout, direction), sets PyTorch's precision
switches to what the problem's compute type says (TF32 only for "tf32"; no reduced-precision
reductions for f16/bf16; cuDNN heuristics without autotuning, like kmux), and times calls the
way kmux-bench does: two warm-up calls, then every call between two CUDA events until
--min-time and at least 3 calls; min / median / p10 / p90. Inputs are random reals in [-1, 1].
Each record is appended and flushed as soon as it is measured, so a timeout loses nothing;
--resume skips problems already in --out.

What the records say about themselves: device.backend "pytorch" and the implementation name
("torch.matmul", "torch._scaled_mm", "torch conv2d (cudnn)") name the side; "tool" is
"kmux-bench" because the schema fixes it. PyTorch's results are not checked against kmux's ref
(verification.result "not_run", with that said in verification.message); machine, peaks and
roofline fields are copied from the kmux record of the same problem (same machine and GPU).
Problems PyTorch has no counterpart for (an output type torch.matmul cannot write, f16
accumulation, bf16x3) get a record with status KMUX_ERR_UNSUPPORTED and the reason.
Exit status: 0; 2 no CUDA device for torch; 3 torch not importable or bad arguments.
"""
import argparse
import datetime
import json
import statistics
import sys
import time

try:
    import torch
    import torch.nn.functional as F
except Exception as e:  # pragma: no cover - reported by run.sh
    print(f"torch_bench: PyTorch not importable: {e}", file=sys.stderr)
    sys.exit(3)

DT = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16, "f64": torch.float64}
FP8 = {"e4m3": "float8_e4m3fn", "e5m2": "float8_e5m2"}


class Unsupported(Exception):
    pass


def key_of(rec):
    p = rec["problem"]
    return f'{p["descriptor"]} {p["options"]}'


def rand(shape, dtype, dev):
    return (torch.rand(shape, device=dev, dtype=torch.float32) * 2 - 1).to(dtype)


def set_precision(compute):
    tf32 = compute == "tf32"
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.backends.cudnn.allow_tf32 = tf32
    if compute in ("bf16x3", "f16"):
        raise Unsupported(f"compute {compute}: PyTorch has no such accumulation mode")


def matmul_fn(p, dev):
    s, dt, compute, tags = p["shape"], p["dtypes"], p["compute"], p["tags"]
    m, n, k = s["m"], s["n"], s["k"]
    ba, bb = s["batch_a"], s["batch_b"]
    set_precision(compute)
    lead_a = (ba,) if ba > 1 or bb > 1 else ()
    lead_b = (bb,) if ba > 1 or bb > 1 else ()

    def operand(lead, rows, cols, tag, dtype):
        if tag == "ab":
            return rand(lead + (rows, cols), dtype, dev)
        return rand(lead + (cols, rows), dtype, dev).transpose(-1, -2)

    if dt["src"] in FP8 or dt["wei"] in FP8:
        if not hasattr(torch, "_scaled_mm"):
            raise Unsupported("this PyTorch has no torch._scaled_mm")
        if lead_a or tags["src"] != "ab" or tags["wei"] != "ba" or tags["dst"] != "ab":
            raise Unsupported("torch._scaled_mm runs row-major A, column-major B, one matrix")
        if dt["dst"] not in DT:
            raise Unsupported(f"torch._scaled_mm cannot write {dt['dst']}")
        a = rand((m, k), torch.float32, dev).to(getattr(torch, FP8[dt["src"]]))
        b = rand((n, k), torch.float32, dev).to(getattr(torch, FP8[dt["wei"]])).t()
        one = torch.ones((), device=dev)
        out = DT[dt["dst"]]
        return (lambda: torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=out)), \
            "torch._scaled_mm", compute
    if dt["src"] not in DT or dt["wei"] != dt["src"]:
        raise Unsupported(f"input types {dt['src']} x {dt['wei']}: no torch.matmul counterpart")
    if dt["dst"] != dt["src"]:
        raise Unsupported(f"torch.matmul writes {dt['src']}, not {dt['dst']}")
    a = operand(lead_a, m, k, tags["src"], DT[dt["src"]])
    b = operand(lead_b, k, n, tags["wei"], DT[dt["wei"]])
    if tags["dst"] == "ab":
        return (lambda: torch.matmul(a, b)), "torch.matmul", compute
    # column-major C: compute C^T = B^T A^T, which writes C's memory row-major
    bt, at = b.transpose(-1, -2), a.transpose(-1, -2)
    return (lambda: torch.matmul(bt, at)), "torch.matmul (C^T = B^T A^T)", compute


def conv_fn(p, dev):
    s, dt, compute = p["shape"], p["dtypes"], p["compute"]
    if dt["src"] not in DT:
        raise Unsupported(f"convolution in {dt['src']}: no cuDNN path in PyTorch")
    set_precision(compute)
    dtype = DT[dt["src"]]
    fmt = torch.channels_last if p["layout"] == "nhwc" else torch.contiguous_format
    g = s["g"]
    x = rand((s["mb"], s["ic"], s["ih"], s["iw"]), dtype, dev).contiguous(memory_format=fmt)
    w = rand((s["oc"], s["ic"] // g, s["kh"], s["kw"]), dtype, dev).contiguous(memory_format=fmt)
    stride, pad = (s["sh"], s["sw"]), (s["ph"], s["pw"])
    dil = (s["dh"] + 1, s["dw"] + 1)  # benchdnn: 0 = dense
    y = F.conv2d(x, w, stride=stride, padding=pad, dilation=dil, groups=g)
    if (y.shape[2], y.shape[3]) != (s["oh"], s["ow"]):
        raise Unsupported(f"PyTorch's output {tuple(y.shape)} differs from the problem's")
    dy = rand(y.shape, dtype, dev).contiguous(memory_format=fmt)
    d = p["direction"]
    if d == "FWD":
        return (lambda: F.conv2d(x, w, stride=stride, padding=pad, dilation=dil, groups=g)), \
            "torch conv2d (cudnn fwd)", compute
    if d == "BWD_D":
        return (lambda: torch.nn.grad.conv2d_input(x.shape, w, dy, stride=stride, padding=pad,
                                                   dilation=dil, groups=g)), \
            "torch conv2d_input (cudnn bwd_data)", compute
    return (lambda: torch.nn.grad.conv2d_weight(x, w.shape, dy, stride=stride, padding=pad,
                                                dilation=dil, groups=g)), \
        "torch conv2d_weight (cudnn bwd_filter)", compute


def time_calls(fn, min_time_s, min_reps=3, max_reps=100000):
    fn()
    fn()
    torch.cuda.synchronize()
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    t0 = time.perf_counter()
    while len(times) < max_reps and (len(times) < min_reps or sum(times) / 1e3 < min_time_s):
        e0.record()
        fn()
        e1.record()
        e1.synchronize()
        times.append(e0.elapsed_time(e1))
    total = time.perf_counter() - t0
    ts = sorted(times)

    def pct(q):
        return ts[min(len(ts) - 1, int(q * (len(ts) - 1) + 0.5))]

    med = statistics.median(ts)
    return {
        "clock": "kmux_event",  # device events (cudaEvent), as kmux's on CUDA
        "warmup": 2,
        "reps": len(ts),
        "rotating_buffers": 1,
        "min_ms": ts[0],
        "median_ms": med,
        "max_ms": ts[-1],
        "mean_ms": sum(ts) / len(ts),
        "p10_ms": pct(0.1),
        "p90_ms": pct(0.9),
        "spread": (pct(0.9) - pct(0.1)) / med if med > 0 else 0.0,
        "total_s": total,
        "min_time_s": min_time_s,
    }


def record_for(kmux_rec, dev_info, impl, effective, status, timing):
    p = kmux_rec["problem"]
    machine = json.loads(json.dumps(kmux_rec["machine"]))
    machine["backends"] = [b for b in machine["backends"] if b.get("name") != "pytorch"] + [{
        "name": "pytorch", "version": torch.__version__, "available": True, "devices": 1,
        "reason": ""}]
    perf = None
    if timing is not None:
        kp = kmux_rec.get("performance") or {}
        gf = p["flops"] / (timing["median_ms"] * 1e6)
        peak = kp.get("peak_gflops")
        perf = {
            "gflops": gf,
            "gflops_best": p["flops"] / (timing["min_ms"] * 1e6),
            "peak_gflops": peak,
            "peak_source": kp.get("peak_source", "none"),
            "pct_peak": 100.0 * gf / peak if peak else None,
            "bandwidth_gbps": kp.get("bandwidth_gbps"),
            "bandwidth_source": kp.get("bandwidth_source", "none"),
            "arithmetic_intensity": p["flops"] / p["min_bytes"],
            "ridge_point": kp.get("ridge_point"),
            "attainable_gflops": kp.get("attainable_gflops"),
            "bound": kp.get("bound"),
        }
    total = p["shape"].get("m", 0) * p["shape"].get("n", 0) if p["op"] == "matmul" else 0
    return {
        "schema_version": 1,
        "tool": "kmux-bench",
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "problem": p,
        "device": dev_info,
        "implementation": None if impl is None else {
            "name": impl, "effective_compute": effective, "deterministic": False,
            "plan_create_ms": 0.0},
        "status": status,
        "verification": {
            "result": "not_run", "oracle": "ref", "sampled": False, "sample": "",
            "checked": 0, "total": total, "mismatches": 0, "unwritten": 0,
            "max_abs_error": None, "max_rel_error": None, "tolerance_abs": 0.0,
            "tolerance_rel": 0.0, "zero_fraction": 0.0, "guard_ok": True,
            "inputs_unchanged": True, "oracle_ms": 0.0,
            "message": "PyTorch is timed only: its result is not checked against kmux's ref"},
        "timing": timing,
        "performance": perf,
        "machine": machine,
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", required=True, help="kmux-bench JSONL output")
    ap.add_argument("--out", required=True, help="JSONL file the records are appended to")
    ap.add_argument("--min-time", type=float, default=0.2)
    ap.add_argument("--resume", action="store_true")
    args = ap.parse_args()
    if not torch.cuda.is_available():
        print("torch_bench: torch sees no CUDA device", file=sys.stderr)
        sys.exit(2)
    dev = torch.device("cuda:0")
    torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = False
    torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = False
    torch.backends.cudnn.benchmark = False
    cc = torch.cuda.get_device_capability(0)
    dev_info = {
        "id": "torch:cuda:0", "backend": "pytorch", "name": torch.cuda.get_device_name(0),
        "arch": f"sm_{cc[0]}{cc[1]}",
        "library_version": f"torch {torch.__version__}, CUDA {torch.version.cuda}, "
                           f"cuDNN {torch.backends.cudnn.version()}"}
    print(f"torch_bench: {dev_info['library_version']}, {dev_info['name']}", file=sys.stderr)
    done = set()
    if args.resume:
        try:
            with open(args.out) as fh:
                done = {key_of(json.loads(l)) for l in fh if l.strip()}
        except FileNotFoundError:
            pass
    seen = []
    with open(args.records) as fh:
        for line in fh:
            if line.strip():
                rec = json.loads(line)
                if key_of(rec) not in done and key_of(rec) not in [key_of(r) for r in seen]:
                    seen.append(rec)
    with open(args.out, "a") as out:
        for rec in seen:
            p = rec["problem"]
            label = p["name"] or p["descriptor"]
            impl = effective = None
            timing = None
            status = {"code": "KMUX_OK", "message": ""}
            try:
                fn, impl, effective = (matmul_fn if p["op"] == "matmul" else conv_fn)(p, dev)
                timing = time_calls(fn, args.min_time)
            except Unsupported as e:
                status = {"code": "KMUX_ERR_UNSUPPORTED", "message": str(e)}
            except Exception as e:  # one problem failing must not hide the others
                status = {"code": "KMUX_ERR_DEVICE", "message": f"{type(e).__name__}: {e}"[:300]}
            out.write(json.dumps(record_for(rec, dev_info, impl, effective, status, timing)) + "\n")
            out.flush()
            speed = f"{p['flops'] / (timing['median_ms'] * 1e9):.1f} TFLOP/s" if timing else \
                status["message"]
            print(f"torch_bench: {label} {p['direction']}: {speed}", file=sys.stderr, flush=True)
            torch.cuda.empty_cache()


if __name__ == "__main__":
    main()

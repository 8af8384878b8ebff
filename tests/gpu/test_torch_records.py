#!/usr/bin/env python3
"""ctest cuda_torch_records: the records torch_bench.py writes validate against kmux-bench's
schema (argv[1]) and carry the kmux record's problem unchanged (so `kmux-bench report` puts them
in the same row), for a timed and an unsupported matmul and a timed convolution. A stub "torch"
module stands in for PyTorch (no GPU needed); the kmux records are synthetic but must validate
too. Exit 77 (skipped) without python3's jsonschema."""
import copy
import json
import os
import sys
import types

sys.dont_write_bytecode = True  # no __pycache__ in the source tree

try:
    import jsonschema
except ImportError:
    print("python3 jsonschema not installed (Debian: python3-jsonschema)")
    sys.exit(77)

# a stand-in for the few torch names torch_bench.py touches at import time and in record_for
stub = types.ModuleType("torch")
stub.__version__ = "0.0-stub"
stub.nn = types.ModuleType("torch.nn")
stub.nn.functional = types.ModuleType("torch.nn.functional")
for name in ("float32", "float16", "bfloat16", "float64"):
    setattr(stub, name, name)
sys.modules["torch"] = stub
sys.modules["torch.nn"] = stub.nn
sys.modules["torch.nn.functional"] = stub.nn.functional
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_bench  # noqa: E402

schema = json.load(open(sys.argv[1]))
validator = jsonschema.Draft202012Validator(schema)

MACHINE = {
    "label": "H200 test", "hostname": "h", "os": "Linux", "cpu_model": "cpu", "cores": 16,
    "threads": 16, "clock_mhz_measured": None, "triad_gbps_measured": None,
    "measurements_cached": False,
    "gpus": [{"id": "cuda:0", "name": "NVIDIA H200", "arch": "sm_90", "driver": "580.1",
              "library": "cuBLASLt 13.1.0", "memory_gb": 150.0}],
    "backends": [{"name": "cuda", "version": "CUDA runtime 13.0", "available": True,
                  "devices": 1, "reason": ""}],
    "kmux_version": "0.1.0 commit abc", "kmux_commit": "abc"}

VER_OK = {"result": "passed", "oracle": "ref", "sampled": True, "sample": "rows", "checked": 10,
          "total": 100, "mismatches": 0, "unwritten": 0, "max_abs_error": 0.0,
          "max_rel_error": 0.0, "tolerance_abs": 0.0, "tolerance_rel": 0.0,
          "zero_fraction": 0.1, "guard_ok": True, "inputs_unchanged": True, "oracle_ms": 1.0,
          "message": ""}
TIMING = {"clock": "kmux_event", "warmup": 2, "reps": 3, "rotating_buffers": 1, "min_ms": 1.0,
          "median_ms": 1.1, "max_ms": 1.2, "mean_ms": 1.1, "p10_ms": 1.0, "p90_ms": 1.2,
          "spread": 0.18, "total_s": 0.01, "min_time_s": 0.0}
PERF = {"gflops": 1000.0, "gflops_best": 1100.0, "peak_gflops": 989000.0,
        "peak_source": "datasheet", "pct_peak": 0.1, "bandwidth_gbps": 4800.0,
        "bandwidth_source": "datasheet", "arithmetic_intensity": 100.0, "ridge_point": 206.0,
        "attainable_gflops": 480000.0, "bound": "memory-bound"}


def kmux_record(problem):
    return {"schema_version": 1, "tool": "kmux-bench", "date": "2026-12-01T10:00:00Z",
            "problem": problem,
            "device": {"id": "cuda:0", "backend": "cuda", "name": "NVIDIA H200", "arch": "sm_90",
                       "library_version": "CUDA runtime 13.0"},
            "implementation": {"name": "cublasLt:algo=1", "effective_compute": "f32",
                               "deterministic": True, "plan_create_ms": 1.0},
            "status": {"code": "KMUX_OK", "message": ""}, "verification": VER_OK,
            "timing": TIMING, "performance": PERF, "machine": MACHINE}


MATMUL = {"descriptor": "64x32:32x16", "name": "m", "workload": "", "op": "matmul",
          "direction": "FWD", "options": "--dt=f32 --compute=f32", "reproducer": "kmux-bench x",
          "dtypes": {"src": "f32", "wei": "f32", "dst": "f32"}, "compute": "f32",
          "shape": {"batch_a": 1, "batch_b": 1, "m": 64, "n": 16, "k": 32},
          "flops": 65536.0, "min_bytes": 14336.0, "occurrences": 1, "layout": None,
          "tags": {"src": "ab", "wei": "ab", "dst": "ab"}}
CONV = {"descriptor": "mb2ic4ih8oc4kh3ph1", "name": "c", "workload": "", "op": "conv2d",
        "direction": "BWD_W", "options": "--dir=BWD_W", "reproducer": "kmux-bench y",
        "dtypes": {"src": "f16", "wei": "f16", "dst": "f16"}, "compute": "f32",
        "shape": {"g": 1, "mb": 2, "ic": 4, "ih": 8, "iw": 8, "oc": 4, "oh": 8, "ow": 8, "kh": 3,
                  "kw": 3, "sh": 1, "sw": 1, "ph": 1, "pw": 1, "dh": 0, "dw": 0},
        "flops": 36864.0, "min_bytes": 1000.0, "occurrences": 1, "layout": "nhwc", "tags": None}

DEV = {"id": "torch:cuda:0", "backend": "pytorch", "name": "NVIDIA H200", "arch": "sm_90",
       "library_version": "torch 0.0-stub"}
failures = 0


def check(what, rec, kmux, torch_side=True):
    global failures
    errs = sorted(validator.iter_errors(rec), key=lambda e: list(e.path))
    for e in errs:
        print(f"FAIL {what}: {list(e.path)}: {e.message}")
    if errs:
        failures += 1
    if torch_bench.key_of(rec) != torch_bench.key_of(kmux):
        print(f"FAIL {what}: problem key differs from the kmux record's")
        failures += 1
    if torch_side and not [b for b in rec["machine"]["backends"] if b["name"] == "pytorch"]:
        print(f"FAIL {what}: machine.backends lacks pytorch")
        failures += 1
    if not errs:
        print(f"PASS {what}")


for prob in (MATMUL, CONV):
    k = kmux_record(copy.deepcopy(prob))
    check(f"synthetic kmux record {prob['op']}", k, k, torch_side=False)  # the fixture itself must be valid
    t = copy.deepcopy(TIMING)
    r = torch_bench.record_for(k, DEV, "torch.matmul", prob["compute"],
                               {"code": "KMUX_OK", "message": ""}, t)
    check(f"timed torch record {prob['op']}", r, k)
    if abs(r["performance"]["gflops"] - prob["flops"] / (t["median_ms"] * 1e6)) > 1e-9:
        print("FAIL gflops at the median time")
        failures += 1
r = torch_bench.record_for(kmux_record(copy.deepcopy(MATMUL)), DEV, None, None,
                           {"code": "KMUX_ERR_UNSUPPORTED", "message": "no counterpart"}, None)
check("unsupported torch record", r, kmux_record(MATMUL))
if r["timing"] is not None or r["performance"] is not None:
    print("FAIL unsupported record has a speed")
    failures += 1
print(f"{failures} failure(s)")
sys.exit(1 if failures else 0)

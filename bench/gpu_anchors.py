#!/usr/bin/env python3
"""fleetprint's GPU figures against PyTorch's on the same GPU, in the same call.

    python3 bench/gpu_anchors.py KERNELS POWER-BURNIN.csv [OUTDIR]

KERNELS: fleetprint kernels runs with gemm and membw (store export's JSON
Lines, as ci/gpu-record.sh writes, or one run's --json), best measured just before;
POWER-BURNIN.csv: nvidia-smi during a fleetprint burn-in (timestamp, W, MHz, C).
Measures here, with torch on the first GPU:
  - torch.matmul TFLOP/s at fleetprint's shape (n = 8192) per type, on
    random inputs in [-1, 1) as fleetprint times them, CUDA events, best of 20;
  - copy (b.copy_(a)) and triad (a = b + s c) GB/s on 64 MiB arrays, bytes
    counted as STREAM counts them (fleetprint's membw), best of 50;
  - nvidia-smi power every 200 ms while a torch bf16 GEMM loop (n = 8192,
    random normal data) runs for 30 s, written to OUTDIR/power-torch.csv.
Prints a table of fleetprint / torch: fleetprint's figure is the median over
the runs of each run's best window. A ratio below 0.97 is marked FINDING.
Needs a GPU and torch: no test or CI job runs it.
"""
import json
import statistics
import subprocess
import sys
import time

import torch

N = 8192
ARRAY_BYTES = 64 << 20
HOLD_S = 30


def fleetprint_figures(path):
    """{test.metric: median over runs of the run's summary value}"""
    text = open(path).read()
    if text.startswith('{"kind"'):  # JSON Lines (store export)
        samples = [o for o in map(json.loads, text.splitlines()) if o["kind"] == "sample"]
    else:  # one run's JSON (run --json)
        samples = json.loads(text)["samples"]
    per = {}
    for o in samples:
        if o["iter"] == -1:
            per.setdefault(o["test"] + "." + o["metric"], []).append(o["value"])
    return {m: statistics.median(v) for m, v in per.items()}


def best_time(fn, reps):
    """Seconds of fn's fastest call, CUDA events, after 3 warm-up calls."""
    for _ in range(3):
        fn()
    best = float("inf")
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        best = min(best, a.elapsed_time(b) / 1e3)
    return best


def gemm_tflops(dtype, tf32=False):
    torch.backends.cuda.matmul.allow_tf32 = tf32
    x = torch.rand(N, N, device="cuda", dtype=torch.float64).mul_(2).sub_(1).to(dtype)
    y = torch.rand(N, N, device="cuda", dtype=torch.float64).mul_(2).sub_(1).to(dtype)
    out = torch.empty(N, N, device="cuda", dtype=dtype)
    t = best_time(lambda: torch.matmul(x, y, out=out), 20)
    torch.backends.cuda.matmul.allow_tf32 = False
    return 2.0 * N ** 3 / t / 1e12


def stream_gbs():
    n = ARRAY_BYTES // 8
    a, b, c = (torch.rand(n, device="cuda", dtype=torch.float64) for _ in range(3))
    copy = 2 * ARRAY_BYTES / best_time(lambda: b.copy_(a), 50) / 1e9
    triad = 3 * ARRAY_BYTES / best_time(lambda: torch.add(b, c, alpha=3.0, out=a), 50) / 1e9
    return copy, triad


def smi_watts(path):
    """Mean W and SM MHz past the first 10% of the samples (the ramp-up)."""
    rows = []
    for r in open(path):
        try:
            rows.append([float(x) for x in r.split(",")[1:3]])
        except ValueError:  # "[N/A]", a line cut short
            pass
    rows = rows[len(rows) // 10:]
    if not rows:
        sys.exit("gpu_anchors: no power readings in %s" % path)
    return (statistics.mean(r[0] for r in rows), statistics.mean(r[1] for r in rows),
            len(rows))


def torch_power(path):
    smi = subprocess.Popen(["nvidia-smi", "--query-gpu=timestamp,power.draw,clocks.sm,"
                            "temperature.gpu", "--format=csv,noheader,nounits", "-lms", "200"],
                           stdout=open(path, "w"))
    x = torch.randn(N, N, device="cuda", dtype=torch.bfloat16)
    y = torch.randn(N, N, device="cuda", dtype=torch.bfloat16)
    out = torch.empty(N, N, device="cuda", dtype=torch.bfloat16)
    end, n = time.time() + HOLD_S, 0
    while time.time() < end:
        for _ in range(20):
            torch.matmul(x, y, out=out)
        torch.cuda.synchronize()
        n += 20
    smi.terminate()
    smi.wait()
    return n * 2.0 * N ** 3 / HOLD_S / 1e12


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    kernels, burnin_csv = sys.argv[1], sys.argv[2]
    outdir = sys.argv[3] if len(sys.argv) > 3 else "."
    fp = fleetprint_figures(kernels)
    rows = []
    for name, dtype, tf32 in (("f64", torch.float64, False), ("f32", torch.float32, False),
                              ("tf32", torch.float32, True), ("f16", torch.float16, False),
                              ("bf16", torch.bfloat16, False)):
        if "gemm.%s_flops" % name in fp:  # a host-backend run has no tf32, f16, bf16
            rows.append(("GEMM %s n=%d" % (name, N), fp["gemm.%s_flops" % name] / 1e3,
                         gemm_tflops(dtype, tf32), "TFLOP/s"))
    copy, triad = stream_gbs()
    rows.append(("copy 64 MiB", fp["membw.copy_bw"], copy, "GB/s"))
    rows.append(("triad 64 MiB", fp["membw.triad_bw"], triad, "GB/s"))
    tflops = torch_power(outdir + "/power-torch.csv")
    fw, fmhz, fn = smi_watts(burnin_csv)
    tw, tmhz, tn = smi_watts(outdir + "/power-torch.csv")
    rows.append(("burn-in power (nvidia-smi)", fw, tw, "W"))
    print("%s, torch %s" % (torch.cuda.get_device_name(0), torch.__version__))
    print("| figure | fleetprint | torch | ratio | unit |")
    print("|---|---|---|---|---|")
    for name, a, b, unit in rows:
        mark = " FINDING" if a / b < 0.97 else ""
        print("| %s | %.1f | %.1f | %.3f%s | %s |" % (name, a, b, a / b, mark, unit))
    print("power: fleetprint burn-in %.0f W at %.0f MHz (%d samples); torch bf16 loop "
          "%.0f W at %.0f MHz (%d samples, %.0f TFLOP/s)" % (fw, fmhz, fn, tw, tmhz, tn, tflops))


if __name__ == "__main__":
    main()

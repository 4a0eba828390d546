"""PyTorch's figures for scripts/gpu-bench.sh, as JSON on stdout: cuBLAS
SGEMM and fp16 GEMM, torch.dot, torch.mv, and a launch round trip. Times are
CUDA-event medians over repeated calls after a warm-up (TF32 off)."""
import json
import statistics
import time

import torch

torch.backends.cuda.matmul.allow_tf32 = False


def timed(f, reps=30, batches=5):
    """Median over `batches` of the mean time of `reps` back-to-back calls, in seconds."""
    for _ in range(5):
        f()
    torch.cuda.synchronize()
    out = []
    for _ in range(batches):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        for _ in range(reps):
            f()
        e.record()
        torch.cuda.synchronize()
        out.append(s.elapsed_time(e) / reps / 1e3)
    return statistics.median(out)


result = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "cuda": torch.version.cuda}
gemm = []
for dt, name in ((torch.float32, "fp32"), (torch.float16, "fp16")):
    for n in (4096, 8192):
        a = torch.randn(n, n, device="cuda", dtype=dt)
        b = torch.randn(n, n, device="cuda", dtype=dt)
        t = timed(lambda: a @ b, reps=10)
        gemm.append({"dtype": name, "n": n, "tflops": 2 * n**3 / t / 1e12})
result["gemm"] = gemm
dot = []
for e in range(20, 29, 2):
    n = 1 << e
    x = torch.randn(n, device="cuda")
    y = torch.randn(n, device="cuda")
    t = timed(lambda: torch.dot(x, y))
    dot.append({"n": n, "us": t * 1e6, "gbps": 8 * n / t / 1e9})
    del x, y
result["dot"] = dot
mv = []
for n in (4096, 8192, 16384, 32768):
    a = torch.randn(n, n, device="cuda")
    v = torch.randn(n, device="cuda")
    t = timed(lambda: torch.mv(a, v))
    mv.append({"n": n, "us": t * 1e6, "gbps": 4 * (n * n + 2 * n) / t / 1e9})
    del a, v
result["mv"] = mv
# A launch round trip: one tiny kernel, then wait for it, host clock.
x = torch.zeros(1, device="cuda")
trips = []
for i in range(2010):
    t0 = time.perf_counter()
    x.add_(1)
    torch.cuda.synchronize()
    if i >= 10:
        trips.append(time.perf_counter() - t0)
result["launch_sync_us"] = statistics.median(trips) * 1e6
print(json.dumps(result, indent=1))

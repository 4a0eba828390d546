"""Prints scripts/gpu-bench.sh's table of ratios (markdown) from the sessions
and PyTorch figures in OUT_DIR: python3 bench_table.py OUT_DIR."""
import json
import os
import re
import sys

out = sys.argv[1]


def load(name):
    path = os.path.join(out, name)
    return json.load(open(path)) if os.path.exists(path) else None


def best(session, kernels, size_key, value="gflops"):
    """The best verified point per size among `kernels`: {size: (value, kernel, params)}."""
    res = {}
    for p in (session or {}).get("points", []):
        if p["status"] != "ok" or not any(re.fullmatch(k, p["kernel"]) for k in kernels):
            continue
        key = size_key(p["size"])
        if key not in res or p[value] > res[key][0]:
            res[key] = (p[value], p["kernel"], p["params"])
    return res


def params(p):
    return " ".join(f"{k}={v}" for k, v in sorted(p.items()) if k not in ("PREC", "TRANS", "OUT16", "RELU"))


torch = load("torch.json") or {}
rows = []
ratio = lambda a, b: f"{100 * a / b:.0f}%" if b else "-"

cublas = {(g["dtype"], g["n"]): g["tflops"] for g in torch.get("gemm", [])}
sgemm = best(load("sgemm.json"), [r"gemm\..*"], lambda s: s["m"])
# The shipped kernel file (shaders/kernel-files/sgemm_quadrants.comp) counts too: the best GLSL SGEMM.
for n, v in best(load("sgemm-file.json"), [r"user\..*"], lambda s: s["m"]).items():
    if n not in sgemm or v[0] > sgemm[n][0]:
        sgemm[n] = v
for n, (gf, k, p) in sorted(sgemm.items()):
    ref = cublas.get(("fp32", n), 0)
    rows.append((f"SGEMM {n}", f"{k} {gf / 1e3:.1f} TFLOP/s", f"cuBLAS fp32 {ref:.1f}", ratio(gf / 1e3, ref), "≥ 92%"))

peaks = load("peaks.json")
ceiling = 0
for r in (peaks or {}).get("device", {}).get("peaks", {}).get("results", []):
    if r["id"] == "coopmat_16x16x16_f16_f32":
        ceiling = r["value"] / 1e3
coop = best(load("coopmat.json"), [r"gemm\.coopmat.*"], lambda s: s["m"])
for n, (gf, k, p) in sorted(coop.items()):
    ref = cublas.get(("fp16", n), 0)
    target = 400 if n >= 8192 else 350
    rows.append((f"tensor-core GEMM {n}", f"{k} {gf / 1e3:.0f} TFLOP/s ({params(p)})",
                 f"cuBLAS fp16 {ref:.0f}; NV coopmat peak {ceiling:.0f}",
                 f"{ratio(gf / 1e3, ref)} of cuBLAS, {ratio(gf / 1e3, ceiling)} of the peak", f"≥ {target} TFLOP/s"))

torch_dot = {d["n"]: d["gbps"] for d in torch.get("dot", [])}
dot = best(load("dot.json"), [r"dot\..*"], lambda s: s["n"], "gbps")
for n, (gb, k, p) in sorted(dot.items()):
    ref = torch_dot.get(n, 0)
    rows.append((f"dot 2^{n.bit_length() - 1}", f"{k} {gb:.0f} GB/s ({params(p)})", f"torch.dot {ref:.0f}",
                 ratio(gb, ref), "≥ 100%"))

torch_mv = {d["n"]: d["gbps"] for d in torch.get("mv", [])}
gemv = best(load("gemv.json"), [r"gemv\..*"], lambda s: s["m"], "gbps")
for n, (gb, k, p) in sorted(gemv.items()):
    ref = torch_mv.get(n, 0)
    rows.append((f"gemv {n}²", f"{k} {gb:.0f} GB/s", f"torch.mv {ref:.0f}", ratio(gb, ref), "≥ 100%"))

overhead = os.path.join(out, "overhead.txt")
if os.path.exists(overhead):
    m = re.search(r"fastest round trip: (\w+) wait, ([\d.]+) (\S+) per", open(overhead).read())
    if m:
        us = float(m.group(2)) * {"ns": 1e-3, "us": 1, "µs": 1, "ms": 1e3}.get(m.group(3), 1)
        ref = torch.get("launch_sync_us", 0)
        rows.append(("dispatch round trip", f"{us:.1f} µs ({m.group(1)} wait)", f"torch launch + sync {ref:.1f} µs",
                     f"{ref / us:.2f}x as fast" if ref else "-", "≤ 20 µs"))

print(f"device: {torch.get('device', '?')}, PyTorch {torch.get('torch', '-')} (CUDA {torch.get('cuda', '-')})\n")
print("| work | kernelscope | reference | ratio | target |")
print("|---|---|---|---|---|")
for r in rows:
    print("| " + " | ".join(r) + " |")

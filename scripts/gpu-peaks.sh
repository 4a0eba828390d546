#!/usr/bin/env bash
# Measured peaks, a roofline sweep and the input-rotation effect on a GPU
# server (docs/PERFORMANCE.md, "Peaks and the roofline"), with the bundle from
# scripts/make-bundle.sh:
#   bash scripts/gpu-peaks.sh [OUT_DIR]
# Writes OUT_DIR/peaks.json, roofline.json (gemm + gemv + dot with peaks, inputs
# rotated), dot-cached.json (the same dot sweep without rotation) and, where
# PyTorch is installed, torch-peaks.txt (copy bandwidth and matmul rates from
# the same GPU for comparison).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cli="${KS_CLI:-$here/out/bundle/kernelscope-cli}"
out="${1:-$here/out/gpu-peaks}"
mkdir -p "$out"
export OPENBLAS_CORETYPE="${OPENBLAS_CORETYPE:-SkylakeX}"
"$cli" peaks -o "$out/peaks.json"
"$cli" run --peaks --kernels gemm.warptile --param BK=16 --param WM=64 --param WN=32 --param WNITER=1 \
  --param TM=8 --param TN=8 --sizes 1024,4096 --reps 10 -o "$out/roofline-gemm.json" --quiet
"$cli" run --peaks --kernels 'gemm.coopmat' --sizes 1024,4096 --reps 10 -o "$out/roofline-coopmat.json" --quiet
"$cli" run --peaks --kernels 'dot.two_pass_subgroup_add,dot.one_pass_atomic,gemv.tiled_shared,gemv.subgroup' \
  --sizes 65536:16777216:x4 --mnk 1024x1024,4096x4096,8192x8192 --reps 20 -o "$out/roofline-bw.json" --quiet
"$cli" run --kernels 'dot.two_pass_subgroup_add' --sizes 65536:16777216:x4 --reps 20 --no-rotate \
  -o "$out/dot-cached.json" --quiet
"$cli" compare "$out/dot-cached.json" "$out/roofline-bw.json" || true
if python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
  python3 - > "$out/torch-peaks.txt" <<'PY'
import torch
def timed(fn, reps=20):
    for _ in range(3): fn()
    torch.cuda.synchronize()
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record()
    for _ in range(reps): fn()
    e.record(); torch.cuda.synchronize()
    return s.elapsed_time(e) / reps / 1e3
n = 1 << 28  # 1 GiB of floats
a = torch.empty(n, device="cuda"); b = torch.empty(n, device="cuda")
t = timed(lambda: b.copy_(a))
print(f"torch copy 1 GiB: {2 * 4 * n / t / 1e9:.0f} GB/s (read + write)")
torch.backends.cuda.matmul.allow_tf32 = False
for dt in (torch.float32, torch.float16):
    m = 8192
    x = torch.randn(m, m, device="cuda", dtype=dt); y = torch.randn(m, m, device="cuda", dtype=dt)
    t = timed(lambda: x @ y, 10)
    print(f"torch matmul {m} {dt}: {2 * m**3 / t / 1e12:.1f} TFLOP/s")
PY
  cat "$out/torch-peaks.txt"
fi

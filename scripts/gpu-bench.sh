#!/usr/bin/env bash
# The GPU benchmark of docs/PERFORMANCE.md, runnable on any GPU server with
# the bundle from scripts/make-bundle.sh:
#   bash scripts/make-bundle.sh                 # on a Debian 12 machine
#   bash scripts/gpu-bench.sh [OUT_DIR]         # on the GPU server (copy the repo or just scripts/ + out/bundle)
# Writes OUT_DIR/gemm-ladder.json (every gemm kernel, tuned tunables for the
# upper ladder and the tensor-core kernel) and, where PyTorch is installed,
# OUT_DIR/cublas.txt with cuBLAS figures from the same GPU for comparison.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cli="${KS_CLI:-$here/out/bundle/kernelscope-cli}"
out="${1:-$here/out/gpu-bench}"
mkdir -p "$out"
# A fair CPU reference: OpenBLAS falls back to a generic core on some servers.
export OPENBLAS_CORETYPE="${OPENBLAS_CORETYPE:-SkylakeX}"
"$cli" devices
sizes=1024,2048,4096,8192
"$cli" run --kernels 'gemm.naive,gemm.naive_coalesced,gemm.tiled_shared,gemm.tiled_shared_unroll,gemm.reg4x4,gemm.reg8x4,gemm.block_tiling' \
  --sizes "$sizes" --reps 10 --warmup 3 -o "$out/gemm-ladder-lower.json" --quiet
"$cli" run --kernels 'gemm.tile2d,gemm.tile2d_padded,gemm.tile2d_dbuf' --param BK=16 \
  --sizes "$sizes" --reps 10 --warmup 3 -o "$out/gemm-ladder-upper.json" --quiet
# Warp tiling with the configuration that led a 104-point sweep at 4096 on an H200.
"$cli" run --kernels gemm.warptile --param BK=16 --param WM=64 --param WN=32 --param WNITER=1 --param TM=8 --param TN=8 \
  --sizes "$sizes" --reps 10 --warmup 3 -o "$out/gemm-warptile.json" --quiet
"$cli" run --kernels gemm.coopmat --param OUT16=0,1 \
  --sizes "$sizes" --reps 10 --warmup 3 -o "$out/gemm-coopmat.json" --quiet
if python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
  python3 - > "$out/cublas.txt" <<'PY'
import torch
torch.backends.cuda.matmul.allow_tf32 = False
for dt in (torch.float32, torch.float16):
    for n in (1024, 2048, 4096, 8192):
        a = torch.randn(n, n, device="cuda", dtype=dt); b = torch.randn(n, n, device="cuda", dtype=dt)
        for _ in range(3): a @ b
        torch.cuda.synchronize()
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        for _ in range(20): a @ b
        e.record(); torch.cuda.synchronize()
        t = s.elapsed_time(e) / 20 / 1e3
        print(f"cuBLAS {str(dt).split('.')[-1]} {n} {2 * n**3 / t / 1e12:.1f} TFLOP/s")
PY
  cat "$out/cublas.txt"
fi
echo "sessions in $out (open them with kernelscope or kernelscope-cli show)"

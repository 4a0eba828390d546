#!/usr/bin/env bash
# Bandwidth kernels at their default tunables against PyTorch on the same GPU
# (issue 13: dot from 2^20 to 2^28 elements, gemv from 4096^2 to 32768^2):
#   bash scripts/gpu-bandwidth.sh [OUT_DIR]     (on the GPU server, with out/bundle)
# Writes OUT_DIR/dot.json, OUT_DIR/gemv.json, OUT_DIR/torch.txt and prints the
# best kernelscope variant per size beside torch.dot / torch.mv.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cli="${KS_CLI:-$here/out/bundle/kernelscope-cli}"
out="${1:-$here/out/gpu-bandwidth}"
mkdir -p "$out"
export OPENBLAS_CORETYPE="${OPENBLAS_CORETYPE:-SkylakeX}"
"$cli" run --kernels 'dot.two_pass_*,dot.one_pass_*' --sizes 1048576,16777216,67108864,268435456 \
  --reps 20 -o "$out/dot.json" --quiet
"$cli" run --kernels 'gemv.tiled_shared,gemv.subgroup' --sizes 4096,16384,32768 --reps 20 -o "$out/gemv.json" --quiet
if python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
  python3 - > "$out/torch.txt" <<'PY'
import torch
def timed(f, reps=50):
    for _ in range(5): f()
    torch.cuda.synchronize()
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record()
    for _ in range(reps): f()
    e.record(); torch.cuda.synchronize()
    return s.elapsed_time(e) / reps / 1e3
for n in (1 << 20, 1 << 24, 1 << 26, 1 << 28):
    x = torch.randn(n, device="cuda"); y = torch.randn(n, device="cuda")
    t = timed(lambda: torch.dot(x, y))
    print(f"torch.dot {n} {t * 1e6:.1f} us {8 * n / t / 1e9:.0f} GB/s")
for n in (4096, 16384, 32768):
    a = torch.randn(n, n, device="cuda"); v = torch.randn(n, device="cuda")
    t = timed(lambda: torch.mv(a, v))
    print(f"torch.mv {n} {t * 1e6:.1f} us {4 * (n * n + 2 * n) / t / 1e9:.0f} GB/s")
PY
  cat "$out/torch.txt"
fi
for s in dot gemv; do "$cli" show "$out/$s.json" | sed -n '/^kernel /,/^[0-9]* points/p'; done

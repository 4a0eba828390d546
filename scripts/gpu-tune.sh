#!/usr/bin/env bash
# The autotuner on a GPU server (issue 12), with the bundle (out/bundle):
#   bash scripts/gpu-tune.sh [OUT_DIR]
# 1. gemm.warptile at 4096: the exhaustive grid (every valid configuration),
#    then random, anneal and genetic replayed on it within 25% of the evaluations;
# 2. seed 001's block-tiling table: gemm.block_tiling at 2048, BK x BN at 16x16 and 8x8;
# 3. the dot GROUPS of dot.one_pass_atomic and dot.two_pass_shared at 2^24;
# 4. one live anneal run on the warptile cache: every evaluation comes from it.
# Sessions, the cache and the printed tables go to OUT_DIR (default out/gpu-tune).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cli="${KS_CLI:-$here/out/bundle/kernelscope-cli}"
out="${1:-$here/out/gpu-tune}"
mkdir -p "$out/cache"
export OPENBLAS_CORETYPE="${OPENBLAS_CORETYPE:-SkylakeX}" XDG_CACHE_HOME="$out/cache"
"$cli" tune --kernel gemm.warptile --size 4096 --strategy grid --time-budget "${KS_TUNE_BUDGET:-6m}" --quiet \
  -o "$out/warptile-4096-grid.json" | tee "$out/warptile-4096-grid.txt"
"$cli" tune-replay "$out/warptile-4096-grid.json" --fraction 25% --seeds 10 | tee "$out/warptile-4096-replay.txt" || true
"$cli" tune --kernel gemm.warptile --size 4096 --strategy anneal --seed 1 --top 0 --quiet \
  -o "$out/warptile-4096-anneal.json" | tail -4 | tee "$out/warptile-4096-anneal.txt"
"$cli" tune --kernel gemm.block_tiling --size 2048 --strategy grid --wg 16x16,8x8 --reps 10 --quiet \
  -o "$out/block-tiling-2048-grid.json" | tee "$out/block-tiling-2048-grid.txt"
for k in dot.one_pass_atomic dot.two_pass_shared; do
  "$cli" tune --kernel "$k" --size 16777216 --strategy grid --param PREC=32 --wg 128,256,512,1024 --quiet \
    -o "$out/$k-2e24-grid.json" | tee "$out/$k-2e24-grid.txt"
done

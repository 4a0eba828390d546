#!/usr/bin/env bash
# Transfer costs and CPU/GPU interleaving on a GPU server (issue 14), with the
# bundle (out/bundle, from scripts/make-bundle.sh):
#   bash scripts/gpu-transfers.sh [OUT_DIR]
# 1. the transfer family from 4 KiB to 1 GiB: staging copies each way
#    (vkCmdCopyBuffer, GPU timestamps), the host writing and reading
#    device-local host-visible memory (resizable BAR, host clock), the GPU
#    reading host memory (a copy shader, GPU timestamps);
# 2. seed 002's conclusion: gemv up to N = 12288 kernel-only and end to end
#    (--with-transfers), next to OpenBLAS on the host;
# 3. seed 000's experiment 5: the CPU and the GPU taking turns on one buffer
#    in each memory placement the device offers, 4 MiB and 64 MiB.
# Sessions (transfers.json, gemv-transfers.json, interleave.json) and the
# printed tables (*.txt) go to OUT_DIR (default out/gpu-transfers); the app
# draws their charts afterwards (see docs/PERFORMANCE.md).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cli="${KS_CLI:-$here/out/bundle/kernelscope-cli}"
out="${1:-$here/out/gpu-transfers}"
mkdir -p "$out"
export OPENBLAS_CORETYPE="${OPENBLAS_CORETYPE:-SkylakeX}"
"$cli" devices | tee "$out/devices.txt"
# The CPU reads device-local host-visible memory at about 10 MB/s on an H200
# (uncached reads through the BAR): that path stops at 16 MiB, or it alone
# would take an hour.
"$cli" run --kernels 'transfer.upload_staging,transfer.download_staging,transfer.upload_mapped,transfer.gpu_reads_host' \
  --sizes 4096:1073741824:x4 --reps 20 --quiet -o "$out/transfers.json" | tee "$out/transfers.txt"
"$cli" run --kernels transfer.download_mapped --sizes 4096:16777216:x4 --reps 5 --quiet \
  -o "$out/transfers-download-mapped.json" | tee "$out/transfers-download-mapped.txt"
"$cli" run --kernels gemv.tiled_shared,gemv.uncached,gemv.subgroup,cpu.gemv.openblas --sizes 1024:8192:x2,12288 \
  --reps 20 --with-transfers --quiet -o "$out/gemv-transfers.json" | tee "$out/gemv-transfers.txt"
"$cli" run --kernels 'interleave.*' --sizes 1048576,16777216 --reps 20 --quiet -o "$out/interleave.json" |
  tee "$out/interleave.txt"

#!/usr/bin/env bash
# Issue 13's benchmark: every performance target of docs/PERFORMANCE.md beside
# PyTorch (cuBLAS, torch.dot, torch.mv, a launch round trip) in the same call,
# on any GPU server with the bundle from scripts/make-bundle.sh:
#   bash scripts/make-bundle.sh                 # on a Debian 12 machine
#   bash scripts/gpu-bench.sh [OUT_DIR]         # on the GPU server (scripts/ + out/bundle)
# Writes the sessions (sgemm, sgemm-file, coopmat, dot, gemv, peaks), overhead.txt,
# clocks.csv, gemv-16384-processes.txt,
# torch.json (where PyTorch with CUDA is installed) and table.md: one table of
# ratios, printed at the end. Every tunable is at its default for the device
# except SGEMM's (the warp-tiling configuration tuned on an H200).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cli="${KS_CLI:-$here/out/bundle/kernelscope-cli}"
out="${1:-$here/out/gpu-bench}"
mkdir -p "$out"
# A fair CPU reference: OpenBLAS falls back to a generic core on some servers.
export OPENBLAS_CORETYPE="${OPENBLAS_CORETYPE:-SkylakeX}"
"$cli" --version
# The GPU's clocks, power and load every 200 ms (clocks.csv), where nvidia-smi
# is installed: a slow point can then be matched with the clocks it ran at.
smi_pid=
if command -v nvidia-smi >/dev/null; then
  nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,utilization.gpu \
    --format=csv -lms 200 >"$out/clocks.csv" 2>/dev/null &
  smi_pid=$!
  trap '[ -n "$smi_pid" ] && kill "$smi_pid" 2>/dev/null' EXIT
fi
"$cli" devices | tee "$out/devices.txt"
"$cli" overhead --reps 2000 | tee "$out/overhead.txt"
"$cli" peaks -o "$out/peaks.json" >/dev/null
sizes=4096,8192
"$cli" run --kernels gemm.warptile --param BK=16 --param WM=64 --param WN=32 --param WNITER=1 --param TM=8 \
  --param TN=8 --sizes "$sizes" --reps 20 --warmup 3 -o "$out/sgemm.json" --quiet
"$cli" run --kernel-file "$here/shaders/kernel-files/sgemm_quadrants.comp" --kernels user.sgemm_quadrants \
  --sizes "$sizes" --reps 20 --warmup 3 -o "$out/sgemm-file.json" --quiet
"$cli" run --kernels gemm.coopmat,gemm.coopmat_pipelined --sizes "$sizes" --reps 20 --warmup 3 \
  -o "$out/coopmat.json" --quiet
"$cli" run --kernels 'dot.two_pass_*,dot.one_pass_*' --sizes 1048576:268435456:x4 --reps 20 \
  -o "$out/dot.json" --quiet
"$cli" run --kernels gemv.subgroup --sizes 4096,8192,16384,32768 --reps 20 -o "$out/gemv.json" --quiet
# gemv at 16384 in three more processes (fresh allocations): some H200
# machines ran it at 40% of the bandwidth in some processes (PERFORMANCE.md).
for i in 1 2 3; do
  "$cli" run --kernels gemv.subgroup --sizes 16384 --reps 20 --quiet 2>&1 | grep '^gemv' | sed "s/^/process $i: /"
done | tee "$out/gemv-16384-processes.txt"
if python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
  python3 "$here/scripts/torch_reference.py" > "$out/torch.json"
fi
python3 "$here/scripts/bench_table.py" "$out" | tee "$out/table.md"
echo "sessions in $out (open them with kernelscope or kernelscope-cli show)"

#!/usr/bin/env bash
# The drift study of docs/PERFORMANCE.md ("Drift"): N consecutive sweeps with
# default settings on an idle machine, each sweep's drift verdict, its largest
# move and what the threshold-only rule (before the CI rule) would have said.
#   bash scripts/drift-study.sh gpu [N] [OUT_DIR]      # gemm ladder 1024-4096 (a GPU server, bundle CLI)
#   bash scripts/drift-study.sh lavapipe [N] [OUT_DIR] # run.sh's gemm sweep (a Debian machine, build/ CLI)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
kind="${1:?gpu or lavapipe}"
n="${2:-10}"
out="${3:-$here/out/drift-$kind}"
mkdir -p "$out"
if [ "$kind" = gpu ]; then
  cli="${KS_CLI:-$here/out/bundle/kernelscope-cli}"
  export OPENBLAS_CORETYPE="${OPENBLAS_CORETYPE:-SkylakeX}"
  args=(--kernels 'gemm.*' --sizes 1024,2048,4096 --reps 10 --warmup 3)
else
  cli="${KS_CLI:-$here/build/app/kernelscope-cli}"
  args=(--kernels 'gemm.*,cpu.gemm.openblas' --sizes 128,256,512 --reps 10 --warmup 2 --peaks)  # as scripts/run.sh
fi
for i in $(seq 1 "$n"); do
  "$cli" run "${args[@]}" -o "$out/sweep-$i.json" --quiet "${@:4}" >"$out/sweep-$i.txt" 2>&1 || true
  grep 'drift check' "$out/sweep-$i.txt" | sed "s/^/sweep $i: /"
done
# Per sweep: checks, the largest move, and the threshold-only verdict on the same checks.
python3 - "$out" "$n" <<'PY'
import json, sys
out, n = sys.argv[1], int(sys.argv[2])
flagged = old = 0
for i in range(1, n + 1):
    d = json.load(open(f"{out}/sweep-{i}.json"))["drift"]
    first = d["checks"][0]["median_ns"]
    moves = [c["median_ns"] / first - 1 for c in d["checks"]]
    ci = [(c["ci_high_ns"] - c["ci_low_ns"]) / 2 / c["median_ns"] for c in d["checks"]]
    old_rule = max(abs(m) for m in moves) > d["threshold"]
    flagged += d["unstable"]; old += old_rule
    print(f"sweep {i}: {len(moves)} checks, median {first/1e6:.3f} ms, moves " +
          " ".join(f"{100*m:+.1f}%" for m in moves[1:]) +
          f"; CI half-widths up to {100*max(ci):.1f}%; unstable={d['unstable']} (threshold-only rule: {old_rule})")
print(f"{flagged} of {n} sweeps flagged; the threshold-only rule would flag {old}")
PY

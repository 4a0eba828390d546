#!/usr/bin/env bash
# Installs what is missing, builds, and starts kernelscope. With a display it
# opens the desktop app; without one (a server, CI) it runs the gemm ladder
# with the CLI on the default device and writes the session and its charts as
# PNG: out/demo-session.json (with the device's measured peaks), out/demo.csv,
# out/demo-gflops.png, out/demo-time.png, out/demo-roofline.png.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
ks_install_missing
ks_build
if [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ] && [ "${KS_HEADLESS:-0}" != 1 ]; then
  exec "$KS_BUILD/app/kernelscope" "$@"
fi
echo "==> no display: running the CLI and writing the charts as PNG"
cli="$KS_BUILD/app/kernelscope-cli"
out="$KS_ROOT/out"
mkdir -p "$out"
"$cli" devices
set +e
"$cli" run --kernels 'gemm.*,cpu.gemm.openblas' --sizes 128,256,512 --reps 10 --warmup 2 --peaks \
  -o "$out/demo-session.json" --csv "$out/demo.csv" "$@"
rc=$?
set -e
for chart in gflops time roofline; do
  QT_QPA_PLATFORM=offscreen "$KS_BUILD/app/kernelscope" --export-png "$out/demo-$chart.png" --chart "$chart" \
    --size 1600x900 --scale 2 "$out/demo-session.json"
done
echo "==> open it again with: $cli show $out/demo-session.json  (or $KS_BUILD/app/kernelscope $out/demo-session.json)"
exit $rc

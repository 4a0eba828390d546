#!/usr/bin/env bash
# Installs what is missing, builds, and runs kernelscope: the CLI lists the
# devices and kernels and runs the gemm ladder on the default device, writing
# out/demo-session.json and out/demo.csv.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
ks_install_missing
ks_build
cli="$KS_BUILD/app/kernelscope-cli"
mkdir -p "$KS_ROOT/out"
"$cli" devices
"$cli" kernels
set +e
"$cli" run --kernels 'gemm.*,cpu.gemm.openblas' --sizes 128,256,512 --reps 10 --warmup 2 \
  -o "$KS_ROOT/out/demo-session.json" --csv "$KS_ROOT/out/demo.csv" "$@"
rc=$?
echo "==> open the session again with: $cli show $KS_ROOT/out/demo-session.json"
exit $rc

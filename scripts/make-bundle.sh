#!/usr/bin/env bash
# Builds a self-contained kernelscope-cli bundle for GPU servers that lack the
# Debian packages: the stripped CLI (glslang linked in, libstdc++ static) plus
# the Vulkan loader, OpenBLAS and its Fortran runtime, muParser, and a launcher.
#   bash scripts/make-bundle.sh [OUT_DIR]      (default out/bundle)
#   OUT_DIR/kernelscope-cli devices            (on the GPU server)
# OUT_DIR/VERSION records the CLI's version and commit: run --remote copies the
# bundle to a server that has none of this version and commit.
# KS_BUNDLE_BINARY=PATH bundles an already built kernelscope-cli instead of
# building one (the tests do this with their build's CLI).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
out="${1:-$KS_ROOT/out/bundle}"
if [ -n "${KS_BUNDLE_BINARY:-}" ]; then
  binary="$KS_BUNDLE_BINARY"
else
  ks_install_missing
  build="$KS_ROOT/build-bundle"
  cmake -S "$KS_ROOT" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DKS_BUILD_TESTS=OFF -DKS_STATIC_BUNDLE=ON
  cmake --build "$build" --parallel --target kernelscope-cli
  binary="$build/app/kernelscope-cli"
fi
rm -rf "$out"
mkdir -p "$out/bin" "$out/lib"
cp "$binary" "$out/bin/kernelscope-cli"
strip "$out/bin/kernelscope-cli"
# Non-system libraries the binary needs (resolved through their symlinks).
for lib in libvulkan.so.1 libopenblas.so.0 libgfortran.so.5 libquadmath.so.0 libGLdispatch.so.0 libmuparser.so.2; do
  path=$(ldd "$out/bin/kernelscope-cli" | awk -v l="$lib" '$1 == l { print $3 }')
  [ -n "$path" ] || path=$(ldconfig -p | awk -v l="$lib" '$1 == l { print $NF; exit }')
  [ -n "$path" ] || { echo "missing $lib" >&2; exit 1; }
  cp -L "$path" "$out/lib/$lib"
done
cat > "$out/kernelscope-cli" <<'LAUNCH'
#!/bin/sh
# Launcher: use the bundled libraries (the Vulkan loader and libGLdispatch,
# which NVIDIA's driver needs, included); find the NVIDIA Vulkan driver where
# containers put it when the standard ICD folders have none.
here=$(cd "$(dirname "$0")" && pwd)
export LD_LIBRARY_PATH="$here/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
has_icd=no
for d in /usr/share/vulkan/icd.d /etc/vulkan/icd.d; do
  ls "$d"/*.json >/dev/null 2>&1 && has_icd=yes
done
if [ -z "${VK_DRIVER_FILES:-}${VK_ICD_FILENAMES:-}" ] && [ "$has_icd" = no ]; then
  for f in /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json /usr/local/share/vulkan/icd.d/nvidia_icd.json; do
    [ -f "$f" ] && { export VK_DRIVER_FILES="$f"; break; }
  done
fi
exec "$here/bin/kernelscope-cli" "$@"
LAUNCH
chmod +x "$out/kernelscope-cli"
"$out/kernelscope-cli" --version > "$out/VERSION"
du -sh "$out"
echo "bundle ready: $out/kernelscope-cli ($(cat "$out/VERSION"))"

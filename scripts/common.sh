# Shared by scripts/run.sh and scripts/test.sh: install what is missing from
# the Debian archive, then configure and build. Sourced, not run.
set -euo pipefail
KS_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
KS_BUILD="${KS_BUILD:-$KS_ROOT/build}"

KS_PACKAGES=(
  g++ cmake ninja-build pkg-config git
  libvulkan-dev mesa-vulkan-drivers
  glslang-dev glslang-tools spirv-tools
  libopenblas-dev nlohmann-json3-dev libmuparser-dev libqscintilla2-qt6-dev
  libgtest-dev vulkan-validationlayers openssh-client openssh-server
  qt6-base-dev qt6-charts-dev qt6-svg-dev libqt6opengl6-dev fonts-dejavu-core
)

ks_install_missing() {
  local missing=()
  for p in "${KS_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "==> installing: ${missing[*]}"
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
}

ks_build() {
  echo "==> building in $KS_BUILD"
  cmake -S "$KS_ROOT" -B "$KS_BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
  cmake --build "$KS_BUILD" --parallel
}

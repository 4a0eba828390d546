#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test (lavapipe is the Vulkan
# device where there is no GPU).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
ks_install_missing
ks_build
cd "$KS_BUILD"
ctest --output-on-failure --timeout 900 "$@"

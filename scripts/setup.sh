#!/usr/bin/env bash
# Installs what recorder needs (Debian 12 packages, only the missing ones, no prompts), then
# configures and builds it into build/.
#
#   ./scripts/setup.sh [cmake configure args...]     e.g. -DRECORDER_BUILD_BENCHMARKS=ON
#
# Installing needs root: run it as root, with sudo, or as a user with sudo rights (it asks
# only when something is missing). Environment: see scripts/lib.sh (RECORDER_BUILD_DIR, ...).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

recorder_install_deps
recorder_drop_root "$0" "$@"
recorder_configure "$@"
recorder_build

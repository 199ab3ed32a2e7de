#!/usr/bin/env bash
# Sets up recorder, builds the ResNet-18 example and runs it: it traces ResNet-18 and writes
# resnet18.dot, resnet18.svg, resnet18.json and resnet18.txt (the summary table) into <outdir>,
# and prints node, parameter and mult-add counts.
#
#   sudo ./scripts/demo.sh [outdir]      (or, as root, ./scripts/demo.sh [outdir])
#
# outdir defaults to recorder-out/ in the repository. Environment: see scripts/lib.sh.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

out="${1:-$RECORDER_ROOT/recorder-out}"
recorder_install_deps
recorder_drop_root "$0" "$out"

[[ -f "$RECORDER_ROOT/examples/CMakeLists.txt" ]] \
  || recorder_die "examples/CMakeLists.txt is missing: no resnet18_demo to build"
recorder_configure -DRECORDER_BUILD_EXAMPLES=ON
recorder_build resnet18_demo

demo="$RECORDER_BUILD_DIR/examples/resnet18_demo"
if [[ ! -x "$demo" ]]; then
  demo="$(find "$RECORDER_BUILD_DIR" -type f -name resnet18_demo -perm -u+x -print -quit)"
  [[ -n "$demo" ]] || recorder_die "built resnet18_demo but cannot find the program"
fi
mkdir -p "$out"
recorder_log "running $demo $out"
"$demo" "$out"
recorder_log "outputs in $out:"
ls -l "$out" >&2

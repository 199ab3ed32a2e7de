#!/usr/bin/env bash
# Checks the C++ sources against .clang-format, sets up recorder (with Debian's chromium, the
# pinned npm packages of the browser tests and the pinned virtual environment of
# scripts/requirements.txt), then runs the test suite on two libtorch legs:
#
#   1. Debian's libtorch (1.13 on Debian 12; the quick start's): builds everything (tests,
#      examples, benchmarks, the header self-containment checks) into build/ and runs every test
#      with CTest. Then, unless RECORDER_SANITIZE_STAGE=0, builds the torch-free tests with
#      ASan+UBSan (Debug, no libtorch) into build-sanitize/ and runs them, and the model tests
#      (fuzzer, faults, tracer, adapters, model pictures, capture) with ASan+UBSan against
#      libtorch into build-sanitize-models/.
#   2. PyTorch 2.13's libtorch (the CPU wheel's, from the venv): builds the same targets except the
#      torch-free tests into build-torch2/ and runs every libtorch-dependent test (CTest label
#      `torch`, plus the consumer and README checks). The torch-free tests and the sanitizer stage
#      run on leg 1 only: they include no libtorch header.
#
#   ./scripts/test.sh [cmake configure args...]     (given to both legs)
#
# Environment: see scripts/lib.sh; RECORDER_SANITIZE_STAGE=0 skips the sanitizer stage;
# RECORDER_LEGS=debian (or pip) runs one leg only.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# shellcheck disable=SC2046  # the package names are words
recorder_install_deps clang-format python3-jsonschema python3-venv $(recorder_browser_packages)
recorder_drop_root "$0" "$@"

start=$SECONDS
legs="${RECORDER_LEGS:-debian,pip}"
stage() { recorder_log "$1 ($(( SECONDS - start )) s so far)"; }

"$RECORDER_ROOT/scripts/check_format.sh"
recorder_npm_ci
recorder_venv
recorder_debian_venv
venv_python="$RECORDER_VENV/bin/python"
debian_python=/usr/bin/python3
common=(-DRECORDER_BUILD_TESTS=ON -DRECORDER_BUILD_EXAMPLES=ON -DRECORDER_BUILD_BENCHMARKS=ON
        -DRECORDER_VERIFY_HEADERS=ON -DRECORDER_SANITIZE=OFF
        -DRECORDER_PEERS_PYTHON="$venv_python"
        -DRECORDER_DEBIAN_PEERS_PYTHON="$RECORDER_DEBIAN_VENV/bin/python")

if [[ ",$legs," == *,debian,* ]]; then
  stage "leg 1: Debian's libtorch, into $RECORDER_BUILD_DIR"
  recorder_configure "${common[@]}" -DRECORDER_PYTHON3="$debian_python" \
    -DRECORDER_OTHER_PYTHON="$venv_python" "$@"
  recorder_build
  stage "leg 1: running the tests"
  ctest --test-dir "$RECORDER_BUILD_DIR" --output-on-failure -j "$(recorder_jobs)"

  if [[ "${RECORDER_SANITIZE_STAGE:-1}" != 0 ]]; then
    stage "sanitizer stage: torch-free tests with ASan+UBSan"
    RECORDER_BUILD_DIR="${RECORDER_BUILD_DIR}-sanitize" RECORDER_BUILD_TYPE=Debug recorder_configure \
      -DRECORDER_WITH_TORCH=OFF -DRECORDER_SANITIZE=ON -DRECORDER_BUILD_TESTS=ON \
      -DRECORDER_BUILD_EXAMPLES=OFF -DRECORDER_BUILD_BENCHMARKS=OFF -DRECORDER_VERIFY_HEADERS=OFF
    RECORDER_BUILD_DIR="${RECORDER_BUILD_DIR}-sanitize" recorder_build
    ctest --test-dir "${RECORDER_BUILD_DIR}-sanitize" --output-on-failure -j "$(recorder_jobs)" -L fast

    # The model tests too: real libtorch models traced, recorded, rendered, and .pt2 archives
    # read, run and damaged (libtorch itself is not instrumented; recorder's code and the tests
    # are). The venv's Python exports the archives.
    models=(fuzz_models faults tracer adapters model_pictures capture_models export_run)
    stage "sanitizer stage: model tests with ASan+UBSan (${models[*]})"
    RECORDER_BUILD_DIR="${RECORDER_BUILD_DIR}-sanitize-models" RECORDER_BUILD_TYPE=Debug \
      recorder_configure -DRECORDER_WITH_TORCH=ON -DRECORDER_SANITIZE=ON -DRECORDER_BUILD_TESTS=ON \
      -DRECORDER_BUILD_EXAMPLES=OFF -DRECORDER_BUILD_BENCHMARKS=OFF -DRECORDER_VERIFY_HEADERS=OFF \
      -DRECORDER_PYTHON3="$debian_python" -DRECORDER_OTHER_PYTHON="$venv_python"
    RECORDER_BUILD_DIR="${RECORDER_BUILD_DIR}-sanitize-models" recorder_build "${models[@]}"
    ctest --test-dir "${RECORDER_BUILD_DIR}-sanitize-models" --output-on-failure \
      -j "$(recorder_jobs)" -R "^($(IFS='|'; echo "${models[*]}"))\$"
  fi
fi

if [[ ",$legs," == *,pip,* ]]; then
  prefix="$(recorder_torch_prefix)"
  stage "leg 2: PyTorch $("$venv_python" -c 'import torch; print(torch.__version__)' 2>/dev/null)'s libtorch ($prefix), into ${RECORDER_BUILD_DIR}-torch2"
  RECORDER_BUILD_DIR="${RECORDER_BUILD_DIR}-torch2" recorder_configure "${common[@]}" \
    -DCMAKE_PREFIX_PATH="$prefix" -DRECORDER_TORCH_FREE_TESTS=OFF \
    -DRECORDER_PYTHON3="$venv_python" -DRECORDER_OTHER_PYTHON="$debian_python" "$@"
  RECORDER_BUILD_DIR="${RECORDER_BUILD_DIR}-torch2" recorder_build
  stage "leg 2: running the tests"
  ctest --test-dir "${RECORDER_BUILD_DIR}-torch2" --output-on-failure -j "$(recorder_jobs)"
fi
recorder_log "all tests passed in $(( SECONDS - start )) s (legs: $legs)"

#!/usr/bin/env bash
# Checks the C++ sources against .clang-format, sets up recorder (with Debian's chromium and the
# pinned npm packages of the browser tests), builds everything (tests, examples, benchmarks, the
# header self-containment checks) and runs the tests with CTest. Then, unless RECORDER_SANITIZE_STAGE=0, builds the
# torch-free tests with ASan+UBSan (Debug, no libtorch) into build-sanitize/ and runs them, and
# the model tests (fuzzer, faults, tracer, adapters, model pictures, capture) with ASan+UBSan
# against libtorch into build-sanitize-models/.
#
#   ./scripts/test.sh [cmake configure args...]
#
# Environment: see scripts/lib.sh; RECORDER_SANITIZE_STAGE=0 skips the sanitizer stage.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# shellcheck disable=SC2046  # the package names are words
recorder_install_deps clang-format python3-jsonschema $(recorder_browser_packages)
recorder_drop_root "$0" "$@"

start=$SECONDS
"$RECORDER_ROOT/scripts/check_format.sh"
recorder_npm_ci
recorder_configure -DRECORDER_BUILD_TESTS=ON -DRECORDER_BUILD_EXAMPLES=ON \
  -DRECORDER_BUILD_BENCHMARKS=ON -DRECORDER_VERIFY_HEADERS=ON -DRECORDER_SANITIZE=OFF "$@"
recorder_build
recorder_log "running the tests"
ctest --test-dir "$RECORDER_BUILD_DIR" --output-on-failure -j "$(recorder_jobs)"

if [[ "${RECORDER_SANITIZE_STAGE:-1}" != 0 ]]; then
  recorder_log "sanitizer stage: torch-free tests with ASan+UBSan"
  RECORDER_BUILD_DIR="${RECORDER_BUILD_DIR}-sanitize" RECORDER_BUILD_TYPE=Debug recorder_configure \
    -DRECORDER_WITH_TORCH=OFF -DRECORDER_SANITIZE=ON -DRECORDER_BUILD_TESTS=ON \
    -DRECORDER_BUILD_EXAMPLES=OFF -DRECORDER_BUILD_BENCHMARKS=OFF -DRECORDER_VERIFY_HEADERS=OFF
  RECORDER_BUILD_DIR="${RECORDER_BUILD_DIR}-sanitize" recorder_build
  ctest --test-dir "${RECORDER_BUILD_DIR}-sanitize" --output-on-failure -j "$(recorder_jobs)" -L fast

  # The model tests too: real libtorch models traced, recorded, rendered (libtorch itself is not
  # instrumented; recorder's code and the tests are).
  models=(fuzz_models faults tracer adapters model_pictures capture_models)
  recorder_log "sanitizer stage: model tests with ASan+UBSan (${models[*]})"
  RECORDER_BUILD_DIR="${RECORDER_BUILD_DIR}-sanitize-models" RECORDER_BUILD_TYPE=Debug \
    recorder_configure -DRECORDER_WITH_TORCH=ON -DRECORDER_SANITIZE=ON -DRECORDER_BUILD_TESTS=ON \
    -DRECORDER_BUILD_EXAMPLES=OFF -DRECORDER_BUILD_BENCHMARKS=OFF -DRECORDER_VERIFY_HEADERS=OFF
  RECORDER_BUILD_DIR="${RECORDER_BUILD_DIR}-sanitize-models" recorder_build "${models[@]}"
  ctest --test-dir "${RECORDER_BUILD_DIR}-sanitize-models" --output-on-failure \
    -j "$(recorder_jobs)" -R "^($(IFS='|'; echo "${models[*]}"))\$"
fi
recorder_log "all tests passed in $(( SECONDS - start )) s"

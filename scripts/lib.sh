# Shared by setup.sh, demo.sh and test.sh; sourced, not run.
#
# Environment (all optional):
#   RECORDER_BUILD_DIR    build tree (default: <repo>/build)
#   RECORDER_BUILD_TYPE   CMAKE_BUILD_TYPE (default: Release)
#   RECORDER_JOBS         parallel jobs (default: the cores, capped at one per 1.5 GB of free memory,
#                         since a libtorch translation unit takes ~1.2 GB)
#   RECORDER_SKIP_DEPS=1  do not check or install the Debian packages
#   RECORDER_VENV         the virtual environment of the 2.x leg and the peers (default <repo>/.venv)
#   RECORDER_DEBIAN_VENV  the peers beside Debian's torch and torchvision, for the zoo (default <repo>/.venv-debian)
#   RECORDER_TORCH_INDEX  the index of torch's CPU builds, used where pip would otherwise take a CUDA
#                         build (default https://download.pytorch.org/whl/cpu)

RECORDER_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
RECORDER_BUILD_DIR="${RECORDER_BUILD_DIR:-$RECORDER_ROOT/build}"
RECORDER_BUILD_TYPE="${RECORDER_BUILD_TYPE:-Release}"
RECORDER_VENV="${RECORDER_VENV:-$RECORDER_ROOT/.venv}"
RECORDER_DEBIAN_VENV="${RECORDER_DEBIAN_VENV:-$RECORDER_ROOT/.venv-debian}"

RECORDER_PACKAGES=(cmake g++ libtorch-dev libboost-dev libboost-test-dev
                   graphviz libgraphviz-dev libbenchmark-dev python3-torch
                   python3-torchvision libcli11-dev libgloo-dev nlohmann-json3-dev)

recorder_log() { printf '\033[1m[recorder]\033[0m %s\n' "$*" >&2; }
recorder_die() { printf '[recorder] error: %s\n' "$*" >&2; exit 1; }

# Default job count: the cores, but no more than one job per 1.5 GB of available memory.
recorder_jobs() {
  if [[ -n "${RECORDER_JOBS:-}" ]]; then echo "$RECORDER_JOBS"; return; fi
  local cores mem_kb jobs
  cores="$(nproc 2>/dev/null || echo 2)"
  mem_kb="$(awk '/^MemAvailable:/ {print $2}' /proc/meminfo 2>/dev/null || true)"
  jobs="$cores"
  if [[ -n "$mem_kb" ]]; then
    local by_mem=$(( mem_kb / 1500000 ))
    (( by_mem < 1 )) && by_mem=1
    (( by_mem < jobs )) && jobs="$by_mem"
  fi
  echo "$jobs"
}

# Installs the missing packages (only those), with apt-get, without prompts: RECORDER_PACKAGES
# and the extra packages named as arguments (test.sh adds clang-format).
recorder_install_deps() {
  [[ "${RECORDER_SKIP_DEPS:-0}" == 1 ]] && return 0
  local wanted=("${RECORDER_PACKAGES[@]}" "$@")
  if ! command -v dpkg-query >/dev/null 2>&1; then
    recorder_log "not a Debian-like system: make sure these are installed: ${wanted[*]}"
    return 0
  fi
  local missing=() p
  for p in "${wanted[@]}"; do
    [[ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)" == "install ok installed" ]] \
      || missing+=("$p")
  done
  if (( ${#missing[@]} == 0 )); then
    recorder_log "all packages present"
    return 0
  fi
  local sudo=()
  if (( EUID != 0 )); then
    command -v sudo >/dev/null 2>&1 \
      || recorder_die "missing packages: ${missing[*]}. Run as root (or install sudo), e.g.: sudo $0"
    sudo=(sudo)
  fi
  recorder_log "installing: ${missing[*]}"
  "${sudo[@]}" apt-get update
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y --no-install-recommends "${missing[@]}"
}

# The browser tests' tools (test.sh): Debian's chromium, and Node.js with npm unless some
# Node.js is already there (a nodesource `nodejs` carries its own npm: Debian's `npm` would
# conflict with it), then the pinned npm packages of tests/viewer (`npm ci`: exactly the lock
# file's versions; playwright-core downloads no browser).
recorder_browser_packages() {
  local extra=(chromium)
  command -v node >/dev/null 2>&1 || extra+=(nodejs)
  command -v npm >/dev/null 2>&1 || extra+=(npm)
  echo "${extra[@]}"
}
recorder_npm_ci() {
  recorder_log "installing the browser tests' npm packages (tests/viewer/package-lock.json)"
  (cd "$RECORDER_ROOT/tests/viewer" && npm ci --no-audit --no-fund --loglevel=error)
}

# Run through sudo by a user? After the packages are in, re-run the script as that user, so
# the build tree and outputs in the checkout belong to them and not to root.
recorder_drop_root() {
  if (( EUID == 0 )) && [[ -n "${SUDO_USER:-}" && "$SUDO_USER" != root ]]; then
    recorder_log "packages done; building as $SUDO_USER"
    exec sudo -u "$SUDO_USER" -- env RECORDER_SKIP_DEPS=1 \
      RECORDER_BUILD_DIR="$RECORDER_BUILD_DIR" RECORDER_BUILD_TYPE="$RECORDER_BUILD_TYPE" \
      ${RECORDER_JOBS:+RECORDER_JOBS="$RECORDER_JOBS"} \
      ${RECORDER_SANITIZE_STAGE:+RECORDER_SANITIZE_STAGE="$RECORDER_SANITIZE_STAGE"} \
      ${RECORDER_LEGS:+RECORDER_LEGS="$RECORDER_LEGS"} \
      ${RECORDER_VENV:+RECORDER_VENV="$RECORDER_VENV"} \
      ${RECORDER_DEBIAN_VENV:+RECORDER_DEBIAN_VENV="$RECORDER_DEBIAN_VENV"} \
      ${RECORDER_TORCH_INDEX:+RECORDER_TORCH_INDEX="$RECORDER_TORCH_INDEX"} \
      "$@"
  fi
}

# recorder_configure <extra cmake args...>
recorder_configure() {
  recorder_log "configuring $RECORDER_BUILD_DIR ($RECORDER_BUILD_TYPE)"
  cmake -S "$RECORDER_ROOT" -B "$RECORDER_BUILD_DIR" -DCMAKE_BUILD_TYPE="$RECORDER_BUILD_TYPE" "$@"
}

# recorder_build [target...]
recorder_build() {
  local jobs args=()
  jobs="$(recorder_jobs)"
  local t
  for t in "$@"; do args+=(--target "$t"); done
  recorder_log "building ${*:-everything} with $jobs jobs"
  cmake --build "$RECORDER_BUILD_DIR" -j "$jobs" "${args[@]}"
}

# ---- the second libtorch leg: PyTorch 2.13 (CPU) and the peers, from PyPI, in a venv ----------
# RECORDER_VENV (default <repo>/.venv) holds exactly scripts/requirements.txt: torch 2.13.0's
# CPU build (its libtorch under torch.utils.cmake_prefix_path is the libtorch users download),
# torchinfo and torchview. Created with Debian's python3 (python3-venv), reused while the
# requirements file is unchanged (a stamp of its hash), rebuilt when it changes.

# recorder_venv: creates or reuses the venv; prints nothing, dies with a clear message.
recorder_venv() {
  local req="$RECORDER_ROOT/scripts/requirements.txt" stamp="$RECORDER_VENV/.requirements.sha256"
  local want
  want="$(sha256sum "$req" | cut -d' ' -f1)"
  if [[ -x "$RECORDER_VENV/bin/python" && -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
    recorder_log "virtual environment $RECORDER_VENV is up to date"
    return 0
  fi
  local py=/usr/bin/python3
  [[ -x "$py" ]] || py="$(command -v python3 || true)"
  [[ -n "$py" ]] || recorder_die "python3 is missing (Debian's python3-venv installs it)"
  recorder_log "creating $RECORDER_VENV with $("$py" --version 2>&1) (scripts/requirements.txt)"
  rm -rf "$RECORDER_VENV"
  "$py" -m venv "$RECORDER_VENV" \
    || recorder_die "cannot create a virtual environment with $py (install python3-venv)"
  # torch must be a CPU build (`+cpu`): a CUDA build's CMake package needs the CUDA toolkit. Ask
  # pip which torch it would take (a dry run reads metadata only): where that is PyPI's CUDA
  # build (any Python but the one whose CPU wheel lies in pip's find-links, such as Debian 13's
  # 3.13), add the index of torch's CPU builds, RECORDER_TORCH_INDEX.
  local index=() picked
  picked="$("$RECORDER_VENV/bin/python" -m pip install --dry-run --quiet --no-deps --report - \
              "$(grep -E '^torch==' "$req")" 2>/dev/null \
            | "$RECORDER_VENV/bin/python" -c 'import json, sys; print(json.load(sys.stdin)["install"][0]["metadata"]["version"])' \
            2>/dev/null || true)"
  if [[ "$picked" != *+cpu ]]; then
    local cpu_index="${RECORDER_TORCH_INDEX:-https://download.pytorch.org/whl/cpu}"
    recorder_log "pip would take torch ${picked:-?}, not a CPU build: adding $cpu_index"
    index=(--extra-index-url "$cpu_index")
  fi
  "$RECORDER_VENV/bin/python" -m pip install --quiet --no-input "${index[@]}" -r "$req" \
    || recorder_die "pip could not install scripts/requirements.txt into $RECORDER_VENV"
  local cuda
  cuda="$("$RECORDER_VENV/bin/python" -c 'import torch; print(torch.version.cuda or "")' 2>/dev/null)" \
    || recorder_die "torch does not import in $RECORDER_VENV"
  [[ -z "$cuda" ]] || recorder_die "pip installed a CUDA build of torch (CUDA $cuda): its CMake \
package needs the CUDA toolkit. Set RECORDER_TORCH_INDEX to an index of torch's CPU builds"
  [[ -f "$(recorder_torch_prefix)/Torch/TorchConfig.cmake" ]] \
    || recorder_die "the torch wheel in $RECORDER_VENV has no TorchConfig.cmake (a wheel without libtorch's C++ files?)"
  echo "$want" >"$stamp"
}

# recorder_debian_venv: creates or reuses RECORDER_DEBIAN_VENV (`.venv-debian/`), a venv over
# Debian's python3 with its site packages (python3-torch, python3-torchvision) and the peers of
# scripts/requirements-debian.txt, so torchinfo and torchview run on torchvision's models (the
# zoo's; tests/zoo). Reused while that file's hash is unchanged.
recorder_debian_venv() {
  local req="$RECORDER_ROOT/scripts/requirements-debian.txt"
  local stamp="$RECORDER_DEBIAN_VENV/.requirements.sha256" want
  want="$(sha256sum "$req" | cut -d' ' -f1)"
  if [[ -x "$RECORDER_DEBIAN_VENV/bin/python" && -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
    recorder_log "virtual environment $RECORDER_DEBIAN_VENV is up to date"
    return 0
  fi
  recorder_log "creating $RECORDER_DEBIAN_VENV over Debian's python3 (scripts/requirements-debian.txt)"
  rm -rf "$RECORDER_DEBIAN_VENV"
  /usr/bin/python3 -m venv --system-site-packages "$RECORDER_DEBIAN_VENV" \
    || recorder_die "cannot create a virtual environment with /usr/bin/python3 (install python3-venv)"
  "$RECORDER_DEBIAN_VENV/bin/python" -m pip install --quiet --no-input --no-deps -r "$req" \
    || recorder_die "pip could not install scripts/requirements-debian.txt into $RECORDER_DEBIAN_VENV"
  "$RECORDER_DEBIAN_VENV/bin/python" -c 'import torch, torchvision, torchinfo, torchview' 2>/dev/null \
    || recorder_die "$RECORDER_DEBIAN_VENV cannot import torch, torchvision, torchinfo and torchview (install python3-torch and python3-torchvision)"
  echo "$want" >"$stamp"
}

# recorder_torch_prefix: the venv's torch.utils.cmake_prefix_path (for CMAKE_PREFIX_PATH).
recorder_torch_prefix() {
  "$RECORDER_VENV/bin/python" -c 'import torch.utils; print(torch.utils.cmake_prefix_path)' 2>/dev/null
}

#!/usr/bin/env bash
# What recorder costs a translation unit to compile: CPU seconds (user + sys) and peak memory of
# g++ with the flags of a Release build, the median of <runs> compilations.
#
#   ./scripts/compile_cost.sh [runs] [parts...]     (default: 3 runs, all parts)
#
# Parts (Markdown tables on standard output):
#   models    a user's model TU, on each libtorch leg: a small vision transformer and ResNet-18,
#             forward templated on the tensor type (benchmarks/compile/model_tu.cpp), compiled
#             untraced (forward on torch::Tensor), traced with record::Structure, and traced with
#             Structure plus an activation recording; ratios to the untraced TU, and
#             <torch/torch.h> alone for scale
#   cli       the command line's one TU (cli/main.cpp), on each leg: its peak memory
#   headers   <torch/torch.h>, <recorder/recorder.hpp> and <recorder/script.hpp> on Debian's
#             libtorch, then every torch-free header of include/recorder on its own
#
# Legs: RECORDER_LEGS (default debian,pip): Debian's libtorch (/usr/include), and the wheel's in
# the project's venv (scripts/lib.sh's RECORDER_VENV; scripts/test.sh creates it). CPU time, not
# wall time, so another job on the machine changes the numbers little; the TUs of one table are
# compiled in turn, run after run, so a drifting machine moves them alike and their ratios hold.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
root="$RECORDER_ROOT"
runs=3
if [[ "${1:-}" =~ ^[0-9]+$ ]]; then runs="$1"; shift; fi
parts=("$@")
(( ${#parts[@]} )) || parts=(models cli headers)
legs="${RECORDER_LEGS:-debian,pip}"
cxx="${CXX:-g++}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# leg_flags <leg>: the include flags of that libtorch.
leg_flags() {
  case "$1" in
    debian) echo "-isystem /usr/include/torch/csrc/api/include" ;;
    pip)
      local t
      t="$("$RECORDER_VENV/bin/python" -c 'import os, torch; print(os.path.dirname(torch.__file__))' 2>/dev/null)" \
        || recorder_die "no torch in $RECORDER_VENV (run scripts/test.sh once, or RECORDER_LEGS=debian)"
      echo "-isystem $t/include -isystem $t/include/torch/csrc/api/include" ;;
    *) recorder_die "unknown leg '$1' (debian or pip)" ;;
  esac
}
# leg_version <leg>: "1.13", "2.13".
leg_version() {
  local py=/usr/bin/python3
  [[ "$1" == pip ]] && py="$RECORDER_VENV/bin/python"
  "$py" -c 'import torch; print(".".join(torch.__version__.split(".")[:2]))'
}
base=(-std=c++20 -O3 -DNDEBUG -D_GLIBCXX_USE_CXX11_ABI=1 -I"$root/include" -c -o /dev/null)

# once <source> <flags...>: "<cpu s> <peak MB>" of one compilation.
once() {
  local src="$1" out u s k
  shift
  out="$( { /usr/bin/time -f '%U %S %M' "$cxx" "${base[@]}" "$@" "$src" >/dev/null; } 2>&1 | tail -1)"
  read -r u s k <<<"$out"
  [[ "$k" =~ ^[0-9]+$ ]] || recorder_die "compiling $src failed: $out"
  printf '%.2f %s\n' "$(echo "$u + $s" | bc)" "$((k / 1024))"
}
# median <file> <column>: the median of a column of "<cpu s> <peak MB>" lines.
median() { cut -d' ' -f"$2" "$1" | sort -n | sed -n "$(( ($(wc -l <"$1") + 1) / 2 ))p"; }
ratio() { echo "scale=2; $1 / $2" | bc | sed 's/^\./0./'; }

header_tu() { printf '#include <%s>\n' "$1" >"$work/$2.cpp"; echo "$work/$2.cpp"; }

models() {
  local leg flags tu="$root/benchmarks/compile/model_tu.cpp" i j
  echo "| libtorch | model | TU | CPU s | peak MB | vs untraced |"
  echo "|---|---|---|---:|---:|---:|"
  for leg in ${legs//,/ }; do
    read -r -a flags <<<"$(leg_flags "$leg")"
    local names=(torch.h vit0 vit1 vit2 resnet0 resnet1 resnet2)
    local args=("x" "-DMODEL_VIT -DMODE=0" "-DMODEL_VIT -DMODE=1" "-DMODEL_VIT -DMODE=2"
                "-DMODE=0" "-DMODE=1" "-DMODE=2")
    rm -f "$work"/m.*
    for ((i = 0; i < runs; ++i)); do
      once "$(header_tu torch/torch.h torch)" "${flags[@]}" >>"$work/m.0"
      for j in 1 2 3 4 5 6; do
        # shellcheck disable=SC2086  # the defines are words
        once "$tu" "${flags[@]}" -I"$root/benchmarks/compile" -I"$root/examples" ${args[$j]} >>"$work/m.$j"
      done
    done
    local version
    version="$(leg_version "$leg")"
    echo "| $version | — | \`<torch/torch.h>\` alone | $(median "$work/m.0" 1) | $(median "$work/m.0" 2) | |"
    local model m label
    for model in 0 1; do
      local name="vision transformer (4 blocks)" first=1
      (( model == 1 )) && { name="ResNet-18"; first=4; }
      local plain
      plain="$(median "$work/m.$first" 1)"
      for m in 0 1 2; do
        label=("untraced (\`forward(torch::Tensor)\`)" "traced, \`record::Structure\`" "traced, \`Structure\` + \`ForwardOutput<Mean>\`")
        local s mb
        s="$(median "$work/m.$((first + m))" 1)" mb="$(median "$work/m.$((first + m))" 2)"
        echo "| $version | $name | ${label[$m]} | $s | $mb | $(ratio "$s" "$plain") |"
      done
    done
  done
}

cli() {
  local leg flags gloo=()
  # As CMake builds it: TorchConfig's definitions, and the rank options where Gloo's headers are.
  local defs=(-DUSE_C10D_GLOO -DUSE_DISTRIBUTED -DUSE_RPC -DUSE_TENSORPIPE)
  # cli/CMakeLists.txt's settings for this TU: GCC's garbage collection, no copy relocations.
  defs+=(--param=ggc-min-expand=30 --param=ggc-min-heapsize=393216 -fPIC)
  [[ -f /usr/include/gloo/context.h ]] && gloo=(-DRECORDER_CLI_DISTRIBUTED)
  echo "| libtorch | TU | CPU s | peak MB |"
  echo "|---|---|---:|---:|"
  for leg in ${legs//,/ }; do
    read -r -a flags <<<"$(leg_flags "$leg")"
    rm -f "$work/c"
    for ((i = 0; i < runs; ++i)); do once "$root/cli/main.cpp" "${flags[@]}" "${defs[@]}" "${gloo[@]}" >>"$work/c"; done
    echo "| $(leg_version "$leg") | \`cli/main.cpp\` | $(median "$work/c" 1) | $(median "$work/c" 2) |"
  done
}

headers() {
  local flags i j
  read -r -a flags <<<"$(leg_flags debian)"
  local heavy=(torch/torch.h recorder/recorder.hpp recorder/script.hpp)
  rm -f "$work"/h.*
  for ((i = 0; i < runs; ++i)); do
    for j in 0 1 2; do once "$(header_tu "${heavy[$j]}" "h$j")" "${flags[@]}" >>"$work/h.$j"; done
  done
  local t
  t="$(median "$work/h.0" 1)"
  echo "| header | CPU s | peak MB | vs torch.h |"
  echo "|---|---:|---:|---:|"
  echo "| \`<torch/torch.h>\` alone | $t | $(median "$work/h.0" 2) | 1.00 |"
  echo "| \`<recorder/recorder.hpp>\` (includes torch.h) | $(median "$work/h.1" 1) | $(median "$work/h.1" 2) | $(ratio "$(median "$work/h.1" 1)" "$t") |"
  echo "| \`<recorder/script.hpp>\` (recorder.hpp + TorchScript) | $(median "$work/h.2" 1) | $(median "$work/h.2" 2) | $(ratio "$(median "$work/h.2" 1)" "$t") |"
  # The torch-free headers: those that include nothing of libtorch, directly or through others.
  local h deps
  cd "$root/include"
  for h in $(find recorder -name '*.hpp' | sort); do
    deps="$("$cxx" -std=c++20 -I"$root/include" "${flags[@]}" -M "$h" 2>/dev/null || true)"
    grep -qE '/(torch|ATen|c10|caffe2)/' <<<"$deps" && continue
    rm -f "$work/one"
    for ((i = 0; i < runs; ++i)); do once "$(header_tu "$h" one)" >>"$work/one"; done
    echo "| \`<$h>\` | $(median "$work/one" 1) | $(median "$work/one" 2) | |"
  done
}

for part in "${parts[@]}"; do
  case "$part" in
    models | cli | headers) "$part"; echo ;;
    *) recorder_die "unknown part '$part' (models, cli, headers)" ;;
  esac
done

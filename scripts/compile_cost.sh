#!/usr/bin/env bash
# What including recorder costs a translation unit: CPU seconds (user + sys) and peak memory of
# g++ compiling one TU that includes only the named header, with the flags of a Release build.
#
#   ./scripts/compile_cost.sh [runs]        (default 3 runs; the median is printed)
#
# Prints a Markdown table: <torch/torch.h> alone, the umbrella <recorder/recorder.hpp> (which
# includes torch.h) and <recorder/script.hpp> (the umbrella plus the TorchScript front end) with
# their ratios to torch.h alone, then every torch-free header of
# include/recorder (the `recorder::core` set: no libtorch include) on its own. CPU time, not wall
# time, so another job on the machine changes the numbers little. Needs libtorch-dev
# and libboost-dev (scripts/lib.sh installs them).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
runs="${1:-3}"
cxx="${CXX:-g++}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

torch_inc=(-isystem /usr/include/torch/csrc/api/include)
flags=(-std=c++20 -O3 -DNDEBUG -D_GLIBCXX_USE_CXX11_ABI=1 -I"$root/include" "${torch_inc[@]}" -c -o /dev/null)

# cost <header>: "<median cpu s> <median peak MB>" over $runs compilations of a TU including it.
cost() {
  local tu="$work/tu.cpp" t=() m=() i out
  printf '#include <%s>\n' "$1" > "$tu"
  for ((i = 0; i < runs; ++i)); do
    out="$( { /usr/bin/time -f '%U %S %M' "$cxx" "${flags[@]}" "$tu" >/dev/null; } 2>&1 | tail -1)"
    read -r u s k <<<"$out"
    t+=("$(printf '%.2f' "$(echo "$u + $s" | bc)")")
    m+=("$((k / 1024))")
  done
  printf '%s %s\n' "$(printf '%s\n' "${t[@]}" | sort -n | sed -n "$(( (runs + 1) / 2 ))p")" \
                   "$(printf '%s\n' "${m[@]}" | sort -n | sed -n "$(( (runs + 1) / 2 ))p")"
}

read -r torch_s torch_mb <<<"$(cost torch/torch.h)"
read -r umb_s umb_mb <<<"$(cost recorder/recorder.hpp)"
read -r scr_s scr_mb <<<"$(cost recorder/script.hpp)"
echo "| header | CPU s | peak MB | vs torch.h |"
echo "|---|---:|---:|---:|"
echo "| \`<torch/torch.h>\` alone | $torch_s | $torch_mb | 1.00 |"
echo "| \`<recorder/recorder.hpp>\` (includes torch.h) | $umb_s | $umb_mb | $(echo "scale=2; $umb_s / $torch_s" | bc) |"
echo "| \`<recorder/script.hpp>\` (recorder.hpp + TorchScript) | $scr_s | $scr_mb | $(echo "scale=2; $scr_s / $torch_s" | bc) |"
# The torch-free headers: those that include nothing of libtorch, directly or through others.
cd "$root/include"
for h in $(find recorder -name '*.hpp' | sort); do
  deps="$("$cxx" -std=c++20 -I"$root/include" "${torch_inc[@]}" -M "$h" 2>/dev/null || true)"
  if grep -qE '/(torch|ATen|c10|caffe2)/' <<<"$deps"; then
    continue
  fi
  read -r s mb <<<"$(cost "$h")"
  echo "| \`<$h>\` | $s | $mb | |"
done

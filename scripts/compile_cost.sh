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

# once <header>: "<cpu s> <peak MB>" of one compilation of a TU including it.
once() {
  local tu="$work/tu.cpp" out u s k
  printf '#include <%s>\n' "$1" > "$tu"
  out="$( { /usr/bin/time -f '%U %S %M' "$cxx" "${flags[@]}" "$tu" >/dev/null; } 2>&1 | tail -1)"
  read -r u s k <<<"$out"
  printf '%.2f %s\n' "$(echo "$u + $s" | bc)" "$((k / 1024))"
}
# median <file> <column>: the median of a column of "<cpu s> <peak MB>" lines.
median() { cut -d' ' -f"$2" "$1" | sort -n | sed -n "$(( ($(wc -l <"$1") + 1) / 2 ))p"; }
# cost <header>: "<median cpu s> <median peak MB>" over $runs compilations of a TU including it.
cost() {
  local i
  : >"$work/runs"
  for ((i = 0; i < runs; ++i)); do once "$1" >>"$work/runs"; done
  echo "$(median "$work/runs" 1) $(median "$work/runs" 2)"
}

# The three headers that include libtorch are compiled in turn, run after run, so a machine
# whose speed drifts (another VM, memory reclaim) moves all three alike and their ratios hold.
heavy=(torch/torch.h recorder/recorder.hpp recorder/script.hpp)
for ((i = 0; i < runs; ++i)); do
  for j in 0 1 2; do once "${heavy[$j]}" >>"$work/heavy$j"; done
done
torch_s="$(median "$work/heavy0" 1)" torch_mb="$(median "$work/heavy0" 2)"
umb_s="$(median "$work/heavy1" 1)" umb_mb="$(median "$work/heavy1" 2)"
scr_s="$(median "$work/heavy2" 1)" scr_mb="$(median "$work/heavy2" 2)"
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

#!/usr/bin/env bash
# Checks that the project's own C++ files (include/, tests/, examples/, benchmarks/, cli/) are
# formatted as .clang-format says; exits 1 naming the files that are not. `--fix` rewrites them
# instead (then copy the README's verbatim examples again: the readme_*_in_sync tests say which).
#   ./scripts/check_format.sh [--fix]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
command -v clang-format >/dev/null 2>&1 \
  || { echo "[recorder] error: clang-format is missing (scripts/test.sh installs it)" >&2; exit 1; }
if git -C "$root" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mapfile -t files < <(git ls-files -- include tests examples benchmarks cli \
                         | grep -E '\.(hpp|cpp)$' | grep -v '^tests/golden/')
else
  mapfile -t files < <(find include tests examples benchmarks cli -name '*.hpp' -o -name '*.cpp' \
                         | grep -v '^tests/golden/' | sort)
fi
if [[ "${1:-}" == --fix ]]; then
  clang-format -i "${files[@]}"
  exit 0
fi
bad=()
for f in "${files[@]}"; do
  clang-format --dry-run --Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done
if (( ${#bad[@]} )); then
  echo "[recorder] error: not formatted as .clang-format says ($(clang-format --version)):" >&2
  printf '  %s\n' "${bad[@]}" >&2
  echo "[recorder] run scripts/check_format.sh --fix" >&2
  exit 1
fi
echo "[recorder] ${#files[@]} C++ files formatted as .clang-format says" >&2

#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Lists the project's source files (C++, CUDA, CMake, shell, Python) whose
# first lines lack the licence's SPDX identifier, and fails if there is one.
#   scripts/check-spdx.sh [SOURCE_DIR]
set -euo pipefail
source_dir=${1:-$(dirname "$0")/..}
cd "$source_dir"
identifier='SPDX-License-Identifier: LGPL-2.1-or-later'

list_sources() {
  if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    # Tracked files and new ones not yet added, without ignored ones.
    git ls-files -z --cached --others --exclude-standard -- \
      '*.h' '*.cc' '*.cu' '*.cuh' '*.in' '*.cmake' '*CMakeLists.txt' \
      '*.sh' '*.py' '.ci/*'
  else
    find . \( -path './build*' -o -path ./install -o -path ./output \
      -o -path './.*' \) -prune -o -type f \( -name '*.h' -o -name '*.cc' -o -name '*.cu' \
      -o -name '*.cuh' -o -name '*.in' -o -name '*.cmake' \
      -o -name CMakeLists.txt -o -name '*.sh' -o -name '*.py' \) -print0
    find ./.ci -type f -print0 2>/dev/null || true
  fi
}

missing=()
while IFS= read -r -d '' file; do
  file=${file#./}
  [[ -f $file ]] || continue
  head -n 5 "$file" | grep -qF "$identifier" || missing+=("$file")
done < <(list_sources | sort -z -u)

if [[ ${#missing[@]} -gt 0 ]]; then
  printf '%s\n' "${missing[@]}"
  echo "error: ${#missing[@]} source files lack '$identifier' in their" \
    "first 5 lines (a '//' comment in C++ and CUDA, '#' in CMake, shell" \
    "and Python)." >&2
  exit 1
fi
echo "Every source file carries '$identifier'."

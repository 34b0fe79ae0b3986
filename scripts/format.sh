#!/usr/bin/env bash
# Formats the project's C++ with clang-format 14 and .clang-format; with
# --check, changes nothing and fails (listing the files) when any file differs.
# Generated code (build/) and test inputs written as data are left alone.
set -euo pipefail
cd "$(dirname "$0")/.."
files=$(git ls-files '*.h' '*.cpp' | grep -v -e '^test/Codegen/Inputs/' -e '^test/Execution/Inputs/')
if [ "${1:-}" = "--check" ]; then
  bad=()
  for f in $files; do
    clang-format-14 --dry-run --Werror "$f" >/dev/null 2>&1 || bad+=("$f")
  done
  if [ ${#bad[@]} -gt 0 ]; then
    echo "format.sh: ${#bad[@]} file(s) differ from .clang-format (run bash scripts/format.sh):" >&2
    printf '  %s\n' "${bad[@]}" >&2
    exit 1
  fi
  echo "format.sh: $(echo "$files" | wc -w) files formatted as .clang-format says"
else
  clang-format-14 -i $files
fi

#!/usr/bin/env bash
# Checks that every C++ file of the project (src, apps, tests) is formatted
# by clang-format with the repository's .clang-format. Lists the files that
# are not and exits non-zero; changes nothing.
#
#   scripts/check_format.sh          # check
#   scripts/check_format.sh --fix    # reformat the files in place
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

mapfile -t files < <(find src apps tests -type f \( -name '*.cpp' -o -name '*.hpp' \) | sort)
if [[ ${#files[@]} -eq 0 ]]; then
  echo "check_format.sh: no C++ files found" >&2
  exit 1
fi

if [[ "${1:-}" == "--fix" ]]; then
  clang-format -i "${files[@]}"
  echo "check_format.sh: reformatted ${#files[@]} files"
  exit 0
fi

bad=()
for f in "${files[@]}"; do
  clang-format --dry-run --Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done
if [[ ${#bad[@]} -gt 0 ]]; then
  echo "check_format.sh: ${#bad[@]} of ${#files[@]} files need clang-format:"
  printf '  %s\n' "${bad[@]}"
  echo "fix with: scripts/check_format.sh --fix (or clang-format -i FILE)"
  exit 1
fi
echo "check_format.sh: ${#files[@]} files formatted"

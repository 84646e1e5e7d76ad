#!/usr/bin/env bash
# The headline case in one command: installs what is missing
# (scripts/setup.sh), builds bipo (Release), runs the cyclic punch cases A, B
# and C (cases/punch_*.yaml), draws the figures when the figure script is
# present, and says where the results are.
#
#   scripts/run_headline.sh           # all three cases
#   scripts/run_headline.sh A C       # only some of them
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

cases=("$@")
[[ ${#cases[@]} -gt 0 ]] || cases=(A B C)

scripts/setup.sh
cmake --preset release
cmake --build --preset release --target bipo

completed() {
  python3 -c 'import json, sys; sys.exit(json.load(open(sys.argv[1]))["status"] != "completed")' \
    "results/punch_$1/summary.json" 2>/dev/null
}

# One bipo process for all the cases: they share the mesh and the set-up
# (one factorization). A failing case does not stop the others; each case's
# summary.json says how it ended (an earlier run's is removed first).
files=()
for c in "${cases[@]}"; do
  files+=("cases/punch_$c.yaml")
  rm -f "results/punch_$c/summary.json"
done
echo
echo "=== punch cases ${cases[*]} ==="
# Two or more at once (one thread per case, as many as the machine has
# processors), the slowest case (C) first so that the others share the rest.
ordered=()
for ((i = ${#files[@]} - 1; i >= 0; i--)); do ordered+=("${files[$i]}"); done
./build/release/bipo run --jobs auto "${ordered[@]}" || true
failed=()
for c in "${cases[@]}"; do
  completed "$c" || failed+=("$c")
done

# The figures compare the three cases: drawn when all three have completed.
if [[ -f scripts/punch_figures.py ]]; then
  echo
  if completed A && completed B && completed C; then
    echo "=== figures ==="
    # Debian's python3 (scripts/setup.sh installs numpy and matplotlib for it),
    # not whatever python3 comes first in PATH.
    py=/usr/bin/python3
    [[ -x "$py" ]] || py=python3
    "$py" scripts/punch_figures.py results || failed+=(figures)
  else
    echo "figures skipped: they need completed results of punch A, B and C"
  fi
fi

echo
echo "Results (open the .pvd files in ParaView; every file is described in docs/outputs.md):"
for c in "${cases[@]}"; do
  d="results/punch_$c"
  status="no summary"
  if [[ -f "$d/summary.json" ]]; then
    status=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["status"])' \
      "$d/summary.json" 2>/dev/null || echo "unreadable summary")
  fi
  echo "  $d/   ($status): summary.json, history.csv, cycles.csv, probes/, maps/, bipo.pvd, contact.pvd"
done
for f in results/index.html results/README.md; do
  if [[ -f "$f" ]]; then echo "  $f"; fi
done
if [[ -d results/figures ]]; then
  echo "  results/figures/   ($(find results/figures -type f | wc -l) files)"
fi

if [[ ${#failed[@]} -gt 0 ]]; then
  echo "run_headline.sh: failed: ${failed[*]}" >&2
  exit 1
fi

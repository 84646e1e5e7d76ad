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

failed=()
for c in "${cases[@]}"; do
  echo
  echo "=== punch case $c ==="
  if ! ./build/release/bipo run "cases/punch_$c.yaml"; then
    failed+=("$c")
  fi
done

if [[ -f scripts/punch_figures.py ]]; then
  echo
  echo "=== figures ==="
  python3 scripts/punch_figures.py results || failed+=(figures)
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
if compgen -G "results/*.png" >/dev/null || compgen -G "results/figures/*" >/dev/null; then
  echo "  figures: $(ls -d results/*.png results/figures 2>/dev/null | tr '\n' ' ')"
fi

if [[ ${#failed[@]} -gt 0 ]]; then
  echo "run_headline.sh: failed: ${failed[*]}" >&2
  exit 1
fi

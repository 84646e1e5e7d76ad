#!/usr/bin/env bash
# The headline case in one command: installs what is missing
# (scripts/setup.sh), builds bipo (Release), runs the cyclic punch cases A, B
# and C on the seed mesh (cases/punch_<X>.yaml, a few seconds) and on the
# converged mesh (cases/punch_<X>_converged.yaml: the quarter model on the
# graded level 32/16 of the mesh-convergence study, about a minute on two
# cores), draws the figures (seed and converged side by side), and says where
# the results are.
#
#   scripts/run_headline.sh           # all three cases, both meshes
#   scripts/run_headline.sh A C       # only some of them (no figures then)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

cases=("$@")
[[ ${#cases[@]} -gt 0 ]] || cases=(A B C)

scripts/setup.sh
cmake --preset release
cmake --build --preset release --target bipo

# completed NAME: results/punch_NAME/summary.json says "completed".
completed() {
  python3 -c 'import json, sys; sys.exit(json.load(open(sys.argv[1]))["status"] != "completed")' \
    "results/punch_$1/summary.json" 2>/dev/null
}

# Every run: the converged mesh's (NAME_converged), then the seed mesh's.
runs=()
for suffix in _converged ""; do
  for c in "${cases[@]}"; do runs+=("$c$suffix"); done
done

# One bipo process for all the cases: consecutive cases on one mesh share its
# set-up (one factorization). A failing case does not stop the others; each
# case's summary.json says how it ended (an earlier run's is removed first).
files=()
for r in "${runs[@]}"; do
  files+=("cases/punch_$r.yaml")
  rm -f "results/punch_$r/summary.json"
done
echo
echo "=== punch cases ${cases[*]}: converged mesh (quarter model, 32/16), then seed mesh ==="
# Two or more at once (one thread per case, as many as the machine has
# processors), on each mesh the slowest case (C) first so that the others
# share the rest.
ordered=()
n=${#cases[@]}
for ((m = 0; m < ${#files[@]}; m += n)); do
  for ((i = m + n - 1; i >= m; i--)); do ordered+=("${files[$i]}"); done
done
./build/release/bipo run --jobs auto "${ordered[@]}" || true
failed=()
for r in "${runs[@]}"; do
  completed "$r" || failed+=("$r")
done

# The figures compare the three cases on both meshes: drawn when all six
# runs have completed.
if [[ -f scripts/punch_figures.py ]]; then
  echo
  all=1
  for r in A B C A_converged B_converged C_converged; do completed "$r" || all=0; done
  if [[ $all == 1 ]]; then
    echo "=== figures ==="
    # Debian's python3 (scripts/setup.sh installs numpy and matplotlib for it),
    # not whatever python3 comes first in PATH.
    py=/usr/bin/python3
    [[ -x "$py" ]] || py=python3
    "$py" scripts/punch_figures.py results || failed+=(figures)
  else
    echo "figures skipped: they need completed results of punch A, B and C on both meshes"
  fi
fi

echo
echo "Results (open the .pvd files in ParaView; every file is described in docs/outputs.md):"
for r in "${runs[@]}"; do
  d="results/punch_$r"
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

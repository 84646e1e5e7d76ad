#!/bin/sh
# Regenerates the reference summaries of the punch cases
# (tests/regression/data/punch_{A,B,C}.csv) from a fresh run of the current
# build, after review. Usage: scripts/accept_regression.sh [build folder]
# (default build/release). Then look at `git diff tests/regression/data`,
# and write in tests/regression/data/README.md why the references changed.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-"$root/build/release"}
cmake --build "$build" --target bipo bipo_regression_tests
BIPO_ACCEPT_REGRESSION=1 "$build/tests/bipo_regression_tests" --gtest_filter='PunchRegression.*'
"$build/tests/bipo_regression_tests" --gtest_filter='PunchRegression.*'
echo
git -C "$root" diff --stat -- tests/regression/data
echo
echo "References rewritten. Review the diff above (git diff tests/regression/data),"
echo "then add a line to tests/regression/data/README.md ('History of acceptances')"
echo "saying WHY the references changed, and commit both together."

#!/usr/bin/env bash
# Installs what is missing (scripts/setup.sh), builds the Release preset and
# runs the default test suite. Exits non-zero on any failure.
#
#   scripts/build_and_test.sh                 # everything in the default suite
#   scripts/build_and_test.sh -L unit         # extra arguments go to ctest
#
# The default suite is every test except those labelled "study" (long
# parameter studies; run them with `ctest --preset release -L study`) and
# "scale" (the scale check of docs/performance.md, tens of minutes and
# several GB; `ctest --test-dir build/release -L scale`). A label filter given
# here replaces the preset's, so both are named. It takes a few minutes at
# most on 2 cores.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

scripts/setup.sh
cmake --preset release
cmake --build --preset release
ctest --preset release --label-exclude "study|scale" "$@"

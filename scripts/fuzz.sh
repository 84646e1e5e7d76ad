#!/usr/bin/env bash
# Builds the libFuzzer targets of bipo's two readers of untrusted files (the
# case-file reader and the .msh reader) with clang, ASan and UBSan (CMake
# preset `fuzz`), and fuzzes each from its seed corpus in tests/fuzz/corpus/.
# Installs clang and its fuzzer runtime with apt-get if they are missing.
#
#   scripts/fuzz.sh                 # 60 s per target (the ctest label `fuzz`)
#   scripts/fuzz.sh --seconds 600   # longer
#   scripts/fuzz.sh --runs 1000000  # a fixed number of executions per target
#
# A crash, a hang (an input over 10 s), or more than 2 GB of memory stops the
# target and leaves the input as build/fuzz/tests/fuzz/crash_<target>_*: add it
# to tests/fuzz/corpus/<target>/ once fixed, so that the default suite replays
# it (tests/unit/test_fuzz_corpus.cpp). Exits non-zero if any target failed.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

seconds=60
runs=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --seconds) seconds="$2"; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    *) echo "fuzz.sh: unknown option '$1' (use --seconds N or --runs N)" >&2; exit 2 ;;
  esac
done

scripts/setup.sh
scripts/setup.sh --fuzz
cmake --preset fuzz -DBIPO_FUZZ_SECONDS="$seconds"
cmake --build --preset fuzz

status=0
for target in case_file msh; do
  work="build/fuzz/tests/fuzz/corpus_${target}"
  mkdir -p "$work"
  limit=(-max_total_time="$seconds")
  [[ -n "$runs" ]] && limit=(-runs="$runs")
  echo "fuzz.sh: fuzzing the ${target} reader (${limit[*]})"
  if ! ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=print_stacktrace=1 \
      "build/fuzz/tests/fuzz/fuzz_${target}" "${limit[@]}" -timeout=10 -rss_limit_mb=2048 \
      -max_len=65536 -print_final_stats=1 \
      -artifact_prefix="build/fuzz/tests/fuzz/crash_${target}_" \
      "$work" "tests/fuzz/corpus/${target}" 2>"build/fuzz/fuzz_${target}.log"; then
    echo "fuzz.sh: the ${target} reader FAILED: see build/fuzz/fuzz_${target}.log" >&2
    tail -n 40 "build/fuzz/fuzz_${target}.log" >&2
    status=1
  fi
  grep -E '^stat::number_of_executed_units|^stat::peak_rss_mb' "build/fuzz/fuzz_${target}.log" |
    sed "s/^/fuzz.sh: ${target}: /" || true
done
exit "$status"

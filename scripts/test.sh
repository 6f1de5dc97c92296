#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The whole test suite: installs what is missing, builds, and runs every
# test. Tests that need a GPU report themselves skipped where none exists;
# with GPU_ASSEMBLY_REQUIRE_GPU=1 (for GPU hosts) they fail instead.
# Then the library and its unit tests once more in Debug mode, against
# deal.II's debug library, so that the Asserts of both run
# (${DEBUG_BUILD_DIR:-build-debug}; DEBUG_TESTS=0 leaves this out), and
# the fuzz test of the input readers under sanitizers (below). Every part
# runs even if an earlier one has failures; the exit status reports all.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${JOBS:-$(nproc)}

# Each stage's wall time, printed when it ends and again as a table at the
# end, so that a slow stage shows where CI's time limit goes.
stages=()
stage() { # stage NAME COMMAND...: runs COMMAND, records its time and status
  local name=$1 start rc=0
  shift
  start=$(date +%s)
  echo "=== stage: $name"
  "$@" || rc=$?
  local seconds=$(($(date +%s) - start))
  stages+=("$(printf '%-28s %5d s  %s' "$name" "$seconds" \
    "$([[ $rc -eq 0 ]] && echo ok || echo "failed ($rc)")")")
  echo "=== stage: $name: $seconds s, exit status $rc"
  return $rc
}
print_stages() {
  echo "=== stage times"
  printf '%s\n' "${stages[@]}"
}
trap print_stages EXIT

stage dependencies ./scripts/install-dependencies.sh

stage build ./scripts/build.sh
status=0
run_tests() { (cd "${BUILD_DIR:-build}" && ctest --output-on-failure -j "$jobs"); }
stage tests run_tests || status=1

# The mesh readers and the apps' parameter files, fuzzed under
# AddressSanitizer and UndefinedBehaviorSanitizer: a small build of their
# sources and the fuzz driver alone (${FUZZ_BUILD_DIR:-build-fuzz};
# FUZZ_TESTS=0 leaves it out).
if [[ ${FUZZ_TESTS:-1} != 0 ]]; then
  fuzz=${FUZZ_BUILD_DIR:-build-fuzz}
  fuzz_tests() {
    cmake -S tests/fuzz -B "$fuzz" -DCMAKE_BUILD_TYPE=Release &&
      cmake --build "$fuzz" -j "$jobs" &&
      (cd "$fuzz" && ctest --output-on-failure)
  }
  stage "fuzz build and tests" fuzz_tests || status=1
fi

if [[ ${DEBUG_TESTS:-1} != 0 ]]; then
  debug=${DEBUG_BUILD_DIR:-build-debug}
  stage "debug build" env BUILD_DIR="$debug" BUILD_TYPE=Debug \
    TARGETS=unit_tests ./scripts/build.sh
  # deal.II's configuration turns a Debug build into a Release one where it
  # has no debug library: that would run the unit tests without Asserts.
  if ! grep -qx 'CMAKE_BUILD_TYPE:STRING=Debug' "$debug/CMakeCache.txt"; then
    echo "error: deal.II has no debug library (libdeal.ii.g.so), so the unit" \
      "tests cannot run in Debug mode; DEBUG_TESTS=0 leaves them out." >&2
    exit 1
  fi
  debug_tests() { (cd "$debug" && ctest --output-on-failure -j "$jobs" -L unit); }
  stage "debug unit tests" debug_tests || status=1
fi
exit $status

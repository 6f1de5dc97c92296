#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The whole test suite: installs what is missing, builds, and runs every
# test. Tests that need a GPU report themselves skipped where none exists.
# Then the library and its unit tests once more in Debug mode, against
# deal.II's debug library, so that the Asserts of both run
# (${DEBUG_BUILD_DIR:-build-debug}; DEBUG_TESTS=0 leaves this out), and
# the fuzz test of the input readers under sanitizers (below). Every part
# runs even if an earlier one has failures; the exit status reports all.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${JOBS:-$(nproc)}
./scripts/install-dependencies.sh

./scripts/build.sh
status=0
(cd "${BUILD_DIR:-build}" && ctest --output-on-failure -j "$jobs") || status=1

# The mesh readers and the apps' parameter files, fuzzed under
# AddressSanitizer and UndefinedBehaviorSanitizer: a small build of their
# sources and the fuzz driver alone (${FUZZ_BUILD_DIR:-build-fuzz};
# FUZZ_TESTS=0 leaves it out).
if [[ ${FUZZ_TESTS:-1} != 0 ]]; then
  fuzz=${FUZZ_BUILD_DIR:-build-fuzz}
  { cmake -S tests/fuzz -B "$fuzz" -DCMAKE_BUILD_TYPE=Release &&
    cmake --build "$fuzz" -j "$jobs" &&
    (cd "$fuzz" && ctest --output-on-failure); } || status=1
fi

if [[ ${DEBUG_TESTS:-1} != 0 ]]; then
  debug=${DEBUG_BUILD_DIR:-build-debug}
  BUILD_DIR=$debug BUILD_TYPE=Debug TARGETS=unit_tests ./scripts/build.sh
  # deal.II's configuration turns a Debug build into a Release one where it
  # has no debug library: that would run the unit tests without Asserts.
  if ! grep -qx 'CMAKE_BUILD_TYPE:STRING=Debug' "$debug/CMakeCache.txt"; then
    echo "error: deal.II has no debug library (libdeal.ii.g.so), so the unit" \
      "tests cannot run in Debug mode; DEBUG_TESTS=0 leaves them out." >&2
    exit 1
  fi
  (cd "$debug" && ctest --output-on-failure -j "$jobs" -L unit) || status=1
fi
exit $status

#!/usr/bin/env bash
# The whole test suite: installs what is missing, builds, and runs every
# test. Tests that need a GPU report themselves skipped where none exists.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-dependencies.sh
./scripts/build.sh
cd "${BUILD_DIR:-build}"
ctest --output-on-failure -j "${JOBS:-$(nproc)}"

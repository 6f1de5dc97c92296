#!/usr/bin/env bash
# The main job: installs what is missing, builds, and runs the demo
# application on its built-in mesh (arguments are passed on to it, e.g. a
# parameter file). Output goes to ./output/.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-dependencies.sh
./scripts/build.sh
exec ./"${BUILD_DIR:-build}"/apps/assembly_demo/assembly_demo "$@"

#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The main job: installs what is missing, builds, and runs the hyperelastic
# app (real-time neo-Hookean elastodynamics, every stage on the GPU if there
# is one) on its built-in tetrahedral bar; arguments are passed on to it,
# e.g. a parameter file. Output goes to ./output/ (solid.pvd for ParaView).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-dependencies.sh
./scripts/build.sh
exec ./"${BUILD_DIR:-build}"/apps/hyperelastic/hyperelastic "$@"

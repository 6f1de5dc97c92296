#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Configures and builds the project into ${BUILD_DIR:-build} in
# ${BUILD_TYPE:-Release} mode; further arguments go to the configuration
# (e.g. -DGPU_ASSEMBLY_BUILD_APPS=OFF). CUDAARCHS chooses the CUDA
# architectures (e.g. CUDAARCHS=90-real: sm_90 machine code alone); without
# it, those of this machine's GPUs or, where there is none, a portable list.
# TARGETS builds only the named targets (e.g. TARGETS=gpu_assembly).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build}
jobs=${JOBS:-$(nproc)}
configure=(-DCMAKE_BUILD_TYPE="${BUILD_TYPE:-Release}")
if [[ -n ${CUDAARCHS:-} ]]; then
  configure+=(-DCMAKE_CUDA_ARCHITECTURES="$CUDAARCHS")
fi
cmake -S . -B "$build" "${configure[@]}" "$@"
targets=()
for target in ${TARGETS:-}; do targets+=(--target "$target"); done
cmake --build "$build" -j "$jobs" ${targets[@]+"${targets[@]}"}

#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Installs the plugin into a scratch prefix and builds two programs against
# it with find_package(GPUAssembly): examples/minimal (C++ only, host
# assembly) and examples/custom_kernel (an element kernel of its own in a .cu
# file, assembled on the GPU where there is one), and runs both; then
# examples/step-40-gpu, run on two MPI ranks (with CMake's MPI launcher,
# $MPIEXEC, which ctest sets; a missing launcher is a failure). Shows that
# another deal.II program links the installed plugin with one line and gets
# the flags its own CUDA code needs with it. Without a CUDA device the GPU
# parts are left out, unless GPU_ASSEMBLY_REQUIRE_GPU demands a GPU: then
# they fail.
#   install_and_link.sh BUILD_DIR SOURCE_DIR SCRATCH_DIR
set -euo pipefail
build=$1 source=$2 scratch=$3
[[ -n ${MPIEXEC:-} && -x ${MPIEXEC} ]] || {
  echo "error: the MPI launcher MPIEXEC='${MPIEXEC:-}' (CMake's MPIEXEC_EXECUTABLE) cannot be run" >&2
  exit 1
}
gpu_demanded=0
[[ -n ${GPU_ASSEMBLY_REQUIRE_GPU:-} && ${GPU_ASSEMBLY_REQUIRE_GPU} != 0 ]] && gpu_demanded=1
rm -rf "$scratch"
mkdir -p "$scratch"
cmake --install "$build" --prefix "$scratch/prefix" >"$scratch/install.log"

# One version everywhere: project()'s, in the installed header.
version=$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$build/CMakeCache.txt")
header=$scratch/prefix/include/gpu_assembly/base/version.h
if ! grep -q "GPU_ASSEMBLY_VERSION_STRING \"$version\"" "$header"; then
  echo "error: the installed $header does not state the project's version $version" >&2
  exit 1
fi

build_example() {
  local name=$1 log=$scratch/$1.log
  if ! { cmake -S "$source/examples/$name" -B "$scratch/$name" \
           -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$scratch/prefix" &&
         cmake --build "$scratch/$name" -j 2; } >"$log" 2>&1; then
    cat "$log"
    echo "error: examples/$name does not build against the installed package" >&2
    exit 1
  fi
}

build_example minimal
"$scratch/minimal/minimal_example"

build_example custom_kernel
"$scratch/custom_kernel/custom_kernel" | tee "$scratch/custom_kernel.out"
if ! grep -qx "GPUAssembly $version" "$scratch/custom_kernel.out"; then
  echo "error: examples/custom_kernel does not report the installed version $version" >&2
  exit 1
fi
if grep -q "the GPU part was skipped" "$scratch/custom_kernel.out"; then
  if [[ $gpu_demanded -eq 1 ]]; then
    echo "error: examples/custom_kernel found no CUDA device, but GPU_ASSEMBLY_REQUIRE_GPU demands one" >&2
    exit 1
  fi
  echo "(examples/custom_kernel: host path checked, no CUDA device for the GPU part)"
elif [[ $(grep -c ": relative difference to deal.II" "$scratch/custom_kernel.out") -lt 2 ]]; then
  echo "error: examples/custom_kernel found a CUDA device but checked no GPU method" >&2
  exit 1
fi

build_example step-40-gpu
(cd "$scratch/step-40-gpu" &&
  "$source/tests/mpirun.sh" "$MPIEXEC" 2 ./step-40-gpu --cycles 2 \
    --no-output) | tee "$scratch/step-40-gpu.out"
if [[ $(grep -c "Solution norms:" "$scratch/step-40-gpu.out") -ne 2 ]] ||
   ! grep -q "^Assembly: GPUAssembly" "$scratch/step-40-gpu.out"; then
  echo "error: examples/step-40-gpu did not assemble and solve two cycles with the plugin" >&2
  exit 1
fi
if [[ $gpu_demanded -eq 1 ]] &&
  ! grep -q "^Assembly: GPUAssembly, 2 of 2 ranks on a GPU" "$scratch/step-40-gpu.out"; then
  echo "error: examples/step-40-gpu did not assemble on the GPU, but GPU_ASSEMBLY_REQUIRE_GPU demands one" >&2
  exit 1
fi

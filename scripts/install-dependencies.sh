#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Installs what the build needs and is missing on a Debian 12 machine:
# deal.II 9.4 (libdeal.ii-dev, with p4est, Trilinos, PETSc, METIS, MPI),
# CMake and a C++ compiler. The CUDA toolkit (nvcc, cuSPARSE) must be
# present already: it is not a Debian package of the needed version.
set -euo pipefail

as_root() {
  if [[ $(id -u) -eq 0 ]]; then "$@"
  elif command -v sudo >/dev/null; then sudo "$@"
  else echo "error: installing packages needs root (or sudo): $*" >&2; exit 1; fi
}

missing=()
[[ -f /usr/share/cmake/deal.II/deal.IIConfig.cmake || -n ${DEAL_II_DIR:-} ]] || missing+=(libdeal.ii-dev)
command -v cmake >/dev/null || missing+=(cmake)
command -v g++ >/dev/null || missing+=(g++)
command -v make >/dev/null || missing+=(make)

if [[ ${#missing[@]} -gt 0 ]]; then
  echo "Installing missing packages: ${missing[*]} (a few minutes)"
  as_root apt-get update -q
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

if ! command -v nvcc >/dev/null && [[ ! -x /usr/local/cuda/bin/nvcc ]]; then
  echo "error: the CUDA toolkit (nvcc) was not found on PATH or in /usr/local/cuda." >&2
  echo "       Install CUDA 12 or newer from NVIDIA; a GPU is not needed to build." >&2
  exit 1
fi
echo "Dependencies present: deal.II, CMake, g++, nvcc."

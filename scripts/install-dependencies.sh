#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Installs what the build needs and is missing on a Debian 12 machine:
# deal.II 9.4 (libdeal.ii-dev, with p4est, Trilinos, PETSc, METIS, MPI),
# CMake and a C++ compiler. The CUDA toolkit (nvcc, cuSPARSE) must be
# present already: it is not a Debian package of the needed version.
# DEAL_II_DIR, where set, must name a deal.II installation; it then stands
# for libdeal.ii-dev.
set -euo pipefail

as_root() {
  if [[ $(id -u) -eq 0 ]]; then "$@"
  elif command -v sudo >/dev/null; then sudo "$@"
  else echo "error: installing packages needs root (or sudo): $*" >&2; exit 1; fi
}

# A deal.II of one's own: DEAL_II_DIR names its configuration folder or its
# installation prefix, as for CMake. A folder without deal.IIConfig.cmake is
# refused rather than taken for an installed deal.II.
if [[ -n ${DEAL_II_DIR:-} ]]; then
  found=
  for config in "$DEAL_II_DIR"/deal.IIConfig.cmake \
    "$DEAL_II_DIR"/{lib,lib64,share}/cmake/deal.II/deal.IIConfig.cmake \
    "$DEAL_II_DIR"/lib/*/cmake/deal.II/deal.IIConfig.cmake; do
    [[ -f $config ]] && found=$config && break
  done
  if [[ -z $found ]]; then
    echo "error: DEAL_II_DIR=$DEAL_II_DIR holds no deal.II configuration" \
      "(deal.IIConfig.cmake, in it or in lib/cmake/deal.II or share/cmake/deal.II" \
      "below it). Set it to a deal.II installation, or unset it to install" \
      "Debian's libdeal.ii-dev." >&2
    exit 1
  fi
  echo "deal.II: $found (DEAL_II_DIR)"
fi

missing=()
[[ -n ${DEAL_II_DIR:-} || -f /usr/share/cmake/deal.II/deal.IIConfig.cmake ]] || missing+=(libdeal.ii-dev)
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

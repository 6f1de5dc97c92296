#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Installs what the build needs and is missing on a Debian 12 machine:
# deal.II 9.4 (libdeal.ii-dev, with p4est, Trilinos, PETSc, METIS, MPI),
# CMake and a C++ compiler. The CUDA toolkit (nvcc, cuSPARSE) must be
# present already: it is not a Debian package of the needed version.
# NVIDIA cuDSS, for the device direct solver, is installed from PyPI
# (nvidia-cudss-cu13, or -cu12 for CUDA 12) with python3's pip where
# python3 and pip exist and it is missing: for all users where pip may
# install there, else for the current user (pip --user). Where that is not
# possible the script says so and goes on: the build then leaves the
# direct solver out and says so. CUDSS_DIR, where set, names a cuDSS
# installation of one's own, and nothing is installed.
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
# not taken for an installed deal.II: it is reported and Debian's deal.II is
# installed where missing (CMake, given a wrong hint, finds that one).
own_deal_ii=
if [[ -n ${DEAL_II_DIR:-} ]]; then
  for config in "$DEAL_II_DIR"/deal.IIConfig.cmake \
    "$DEAL_II_DIR"/{lib,lib64,share}/cmake/deal.II/deal.IIConfig.cmake \
    "$DEAL_II_DIR"/lib/*/cmake/deal.II/deal.IIConfig.cmake; do
    [[ -f $config ]] && own_deal_ii=$config && break
  done
  if [[ -n $own_deal_ii ]]; then
    echo "deal.II: $own_deal_ii (DEAL_II_DIR)"
  else
    echo "warning: DEAL_II_DIR=$DEAL_II_DIR holds no deal.II configuration" \
      "(deal.IIConfig.cmake, in it or in lib/cmake/deal.II or share/cmake/deal.II" \
      "below it); it is ignored, and Debian's libdeal.ii-dev is used." >&2
  fi
fi

missing=()
[[ -n $own_deal_ii || -f /usr/share/cmake/deal.II/deal.IIConfig.cmake ]] || missing+=(libdeal.ii-dev)
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

# cuDSS: the wheel's include/cudss.h is what CMake's FindCUDSS.cmake looks
# for through python3 (the namespace package nvidia.cu13 or nvidia.cu12).
cudss=absent
if [[ -n ${CUDSS_DIR:-} ]]; then
  cudss="CUDSS_DIR=$CUDSS_DIR"
elif command -v python3 >/dev/null; then
  nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
  cuda_major=$("$nvcc" --version | sed -n 's/.*release \([0-9]*\)\..*/\1/p')
  [[ ${cuda_major:-13} -ge 13 ]] && wheel=nvidia-cudss-cu13 module=nvidia.cu13 ||
    wheel=nvidia-cudss-cu12 module=nvidia.cu12
  has_cudss() {
    python3 -c "import importlib, os, sys; m = importlib.import_module('$module'); sys.exit(not any(os.path.isfile(os.path.join(p, 'include', 'cudss.h')) for p in m.__path__))" 2>/dev/null
  }
  if has_cudss; then
    cudss="$wheel (python3)"
  elif python3 -m pip --version >/dev/null 2>&1; then
    echo "Installing cuDSS for the device direct solver: pip install $wheel"
    if python3 -m pip install -q "$wheel" || python3 -m pip install -q --user "$wheel"; then
      has_cudss && cudss="$wheel (python3)"
    fi
  fi
fi
if [[ $cudss == absent ]]; then
  echo "warning: cuDSS is not installed and could not be (python3 with pip is needed" \
    "for pip install nvidia-cudss-cu13; or set CUDSS_DIR to a cuDSS installation):" \
    "the build leaves the device direct solver out." >&2
fi
echo "Dependencies present: deal.II, CMake, g++, nvcc; cuDSS: $cudss."

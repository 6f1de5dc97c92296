#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Runs a program on N MPI ranks: mpirun.sh MPIEXEC N PROGRAM [ARGUMENTS...].
# Open MPI refuses to start as root and to place more ranks than cores
# unless told; both are allowed here (test machines and containers often run
# as root on few cores). Other MPI implementations get -n N alone.
set -euo pipefail
mpiexec=$1 n=$2
shift 2
flags=()
if "$mpiexec" --version 2>/dev/null | grep -q "Open MPI\|OpenRTE"; then
  flags+=(--oversubscribe)
  if [[ $(id -u) -eq 0 ]]; then
    flags+=(--allow-run-as-root)
  fi
fi
exec "$mpiexec" "${flags[@]}" -n "$n" "$@"

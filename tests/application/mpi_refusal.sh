#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Started under mpirun on two processes, an app (or an app's mode, chosen
# by a parameter file) that runs as one process must refuse to run (each
# rank would run the whole problem and write the same files) with a clear
# message printed once, instead of running twice. The processes start
# through tests/mpirun.sh with the MPI launcher that CMake found ($MPIEXEC,
# which ctest sets); a missing launcher is a failure.
#   mpi_refusal.sh APP WORK_DIRECTORY [PARAMETER_FILE EXPECTED_MESSAGE]
set -uo pipefail
app=$1 work=$2 prm=${3:-}
expected=${4:-"runs as one process, but it was started on 2 MPI processes"}
mpirun=$(cd "$(dirname "$0")/.." && pwd)/mpirun.sh
[[ -n ${MPIEXEC:-} && -x ${MPIEXEC} ]] ||
  { echo "FAIL: the MPI launcher MPIEXEC='${MPIEXEC:-}' (CMake's MPIEXEC_EXECUTABLE) cannot be run"; exit 1; }
rm -rf "$work"; mkdir -p "$work"; cd "$work" || exit 1
output=$(timeout 300 "$mpirun" "$MPIEXEC" 2 "$app" ${prm:+"$prm"} 2>&1)
rc=$?
echo "$output"
[[ $rc -ne 0 ]] || { echo "FAIL: the app ran under mpirun -np 2"; exit 1; }
grep -q -F -- "$expected" <<<"$output" || { echo "FAIL: no '$expected' in the output"; exit 1; }
[[ $(grep -c -F -- "$expected" <<<"$output") -eq 1 ]] || { echo "FAIL: the message must be printed once"; exit 1; }
[[ -z $(ls) ]] || { echo "FAIL: files were written: $(ls)"; exit 1; }
echo "ok: refused under mpirun -np 2 with exit code $rc"

#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# examples/step-40-gpu on N MPI ranks, its assembly by the plugin against
# deal.II's. The program with --compare assembles every cycle both ways,
# solves both and refines from deal.II's solution, so that the two are
# compared on the same meshes (a last-bit difference of the plugin's
# solution cannot change the mesh): on every cycle the plugin's matrix and
# right-hand side must equal deal.II's to 1e-12 and its solution to 1e-9
# (relative; CG stops at a residual of 1e-12). The --compare run's own
# solutions must be step-40's: meshes and solution norms the same as those
# of a run with --dealii-assembly alone.
# Without --host in the plugin options the plugin must assemble on the GPU:
# where no rank finds one the test is skipped (exit code 77), or fails where
# GPU_ASSEMBLY_REQUIRE_GPU demands a GPU.
#   step_40_gpu.sh MPIRUN MPIEXEC N PROGRAM SCRATCH_DIR [PLUGIN OPTIONS...]
set -euo pipefail
mpirun=$1 mpiexec=$2 n=$3 program=$4 scratch=$5
shift 5
rm -rf "$scratch"
mkdir -p "$scratch"
cd "$scratch"
cycles=4

on_device=1
for option in "$@"; do [[ $option == --host ]] && on_device=0; done
if [[ $on_device -eq 1 ]]; then
  "$mpirun" "$mpiexec" "$n" "$program" --cycles 0 --no-output "$@" >probe.out
  if grep -q "^Assembly: GPUAssembly on the host" probe.out; then
    cat probe.out
    if [[ -n ${GPU_ASSEMBLY_REQUIRE_GPU:-} && ${GPU_ASSEMBLY_REQUIRE_GPU} != 0 ]]; then
      echo "error: the ranks found no CUDA device, but GPU_ASSEMBLY_REQUIRE_GPU demands one" >&2
      exit 1
    fi
    echo "SKIPPED: the ranks found no CUDA device; this test needs a GPU."
    exit 77
  fi
  if ! grep -q "^Assembly: GPUAssembly, $n of $n ranks on a GPU" probe.out; then
    cat probe.out
    echo "error: not every one of the $n ranks assembles on a GPU" >&2
    exit 1
  fi
fi

"$mpirun" "$mpiexec" "$n" "$program" --cycles $cycles --no-output \
  --dealii-assembly >dealii.out
"$mpirun" "$mpiexec" "$n" "$program" --cycles $cycles --no-output --compare \
  "$@" >plugin.out
cat plugin.out
grep -q "^Assembly: GPUAssembly" plugin.out || {
  echo "error: the plugin run does not report the plugin's assembly" >&2
  exit 1
}
for what in "Number of active cells" "Number of degrees of freedom" \
  "^   Solution norms:"; do
  if [[ $(grep -c -- "$what" dealii.out) -ne $cycles ]] ||
    ! diff <(grep -- "$what" dealii.out) <(grep -- "$what" plugin.out) >/dev/null; then
    echo "error: '$what' of the --compare run differs from step-40's (--dealii-assembly):" >&2
    diff <(grep -- "$what" dealii.out) <(grep -- "$what" plugin.out) >&2 || true
    exit 1
  fi
done
grep "Relative difference to deal.II's assembly:" plugin.out |
  sed 's/.*matrix \([^,]*\), right-hand side \([^,]*\), solution \(.*\)/\1 \2 \3/' |
  awk -v cycles=$cycles '
  function number(x) { return x ~ /^[0-9]\.[0-9]+e[-+][0-9]+$/ }
  NF == 3 && number($1) && number($2) && number($3) {
    if ($1 > matrix) matrix = $1;
    if ($2 > rhs) rhs = $2;
    if ($3 > solution) solution = $3;
    if (!($1 <= 1e-12 && $2 <= 1e-12 && $3 <= 1e-9)) bad = 1;
    ++n }
  END {
    printf "largest relative difference to deal.II over %d cycles on the same meshes: matrix %g, right-hand side %g, solution %g\n", n, matrix, rhs, solution;
    if (n != cycles || NR != cycles || bad) {
      print "error: the plugin differs from deal.II by more than rounding (1e-12 for matrix and right-hand side, 1e-9 for the solution)" > "/dev/stderr"; exit 1 } }'

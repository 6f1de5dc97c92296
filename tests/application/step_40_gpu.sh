#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# examples/step-40-gpu on N MPI ranks, its assembly by the plugin against the
# same program with deal.II's assembly (--dealii-assembly): the meshes of
# every cycle must be the same (cells and DoFs) and the solutions' norms
# equal to the solver's tolerance (relative 1e-9; CG stops at a residual of
# 1e-12).
#   step_40_gpu.sh MPIRUN MPIEXEC N PROGRAM SCRATCH_DIR [PLUGIN OPTIONS...]
set -euo pipefail
mpirun=$1 mpiexec=$2 n=$3 program=$4 scratch=$5
shift 5
rm -rf "$scratch"
mkdir -p "$scratch"
cd "$scratch"
cycles=4
"$mpirun" "$mpiexec" "$n" "$program" --cycles $cycles --no-output \
  --dealii-assembly >dealii.out
"$mpirun" "$mpiexec" "$n" "$program" --cycles $cycles --no-output "$@" \
  >plugin.out
cat plugin.out
grep -q "^Assembly: GPUAssembly" plugin.out || {
  echo "error: the plugin run does not report the plugin's assembly" >&2
  exit 1
}
for what in "Number of active cells" "Number of degrees of freedom"; do
  if ! diff <(grep "$what" dealii.out) <(grep "$what" plugin.out) >/dev/null; then
    echo "error: '$what' differs between deal.II's assembly and the plugin's:" >&2
    diff <(grep "$what" dealii.out) <(grep "$what" plugin.out) >&2 || true
    exit 1
  fi
done
norms() { grep "Solution norms:" "$1" | sed 's/.*norms: //; s/ ([a-z0-9]*),\{0,1\}//g'; }
if [[ $(norms dealii.out | wc -l) -ne $cycles ]]; then
  echo "error: deal.II's run did not print the solution of $cycles cycles" >&2
  exit 1
fi
paste <(norms dealii.out) <(norms plugin.out) | awk -v cycles=$cycles '
  { for (i = 1; i <= 3; ++i) {
      a = $i; b = $(i + 3); d = a - b; if (d < 0) d = -d;
      r = d / (a > 0 ? a : 1);
      if (r > worst) worst = r;
    }
    ++n }
  END {
    printf "largest relative difference of the solution norms to deal.II: %g (%d cycles)\n", worst, n;
    if (n != cycles || worst > 1e-9) { print "error: the solutions differ by more than the solver tolerance" > "/dev/stderr"; exit 1 } }'

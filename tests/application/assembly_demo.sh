#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Runs assembly_demo on a small clamped beam under its own weight and checks
# the tip deflection against Timoshenko beam theory,
#   w = q L^4 / (8 E I) + q L^2 / (2 kappa G A),  q = rho g A,
# within 10 %: the 3D solution differs from beam theory by the clamping's
# Poisson restraint and the coarse mesh's stiffness, both a few percent.
set -euo pipefail
demo=$1 workdir=$2
mkdir -p "$workdir" && cd "$workdir"
cat > beam.prm <<PRM
subsection Mesh
  set Subdivisions = 3
  set Cell type    = hexahedra
end
subsection Discretization
  set Degree = 2
end
set Output directory = beam_output
PRM
fail() { echo "FAIL: $*"; exit 1; }
output=$("$demo" beam.prm) || { echo "$output"; fail "assembly_demo failed on the beam"; }
echo "$output"
grep -q -E "No CUDA device found: the host \(CPU\) path runs|CUDA device 0:" <<<"$output" \
  || fail "the log must name the execution path"
grep -q -E "Assembled on the (host path|GPU with GlobalNZ)" <<<"$output" \
  || fail "the log must say where the system was assembled"
[[ -s beam_output/solution.vtu && -s beam_output/solution.pvd ]] \
  || fail "beam_output/solution.vtu and solution.pvd must be written"
grep -q "<VTKFile" beam_output/solution.vtu || fail "solution.vtu must be a VTK file"
w=$(sed -n 's/.*max |u| = \([0-9.e+-]*\) m.*/\1/p' <<<"$output")
[[ -n $w ]] || fail "no 'max |u| = ... m' in the output"
awk -v w="$w" 'BEGIN {
  E = 1e4; nu = 0.3; L = 4; q = 9.81; I = 1 / 12.; G = E / (2 * (1 + nu));
  theory = q * L^4 / (8 * E * I) + q * L^2 / (2 * 5 / 6. * G);
  ratio = w / theory;
  printf "tip deflection %.5f m, Timoshenko beam theory %.5f m, ratio %.4f\n", w, theory, ratio;
  if (!(ratio > 0.9 && ratio < 1.1)) {
    print "FAIL: the tip deflection must match Timoshenko beam theory within 10 %"; exit 1 } }'

#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Runs assembly_demo on a small clamped beam under its own weight and checks
# the tip deflection against Timoshenko beam theory,
#   w = q L^4 / (8 E I) + q L^2 / (2 kappa G A),  q = rho g A,
# within 10 %: the 3D solution differs from beam theory by the clamping's
# Poisson restraint and the coarse mesh's stiffness, both a few percent.
# With a third argument, 'Linear solver' = that; a device solver reports the
# test skipped (77) where there is no GPU.
#   assembly_demo.sh DEMO WORK_DIRECTORY [LINEAR_SOLVER]
set -euo pipefail
demo=$1 workdir=$2 solver=${3:-}
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
[[ -z $solver ]] || echo "set Linear solver = $solver" >> beam.prm
fail() { echo "FAIL: $*"; exit 1; }
if ! output=$("$demo" beam.prm 2>&1); then
  echo "$output"
  # deal.II wraps messages at 80 columns: searched with the lines joined.
  if [[ -n $solver ]] && tr -s ' \n' '  ' <<<"$output" | grep -q "runs on the GPU, but no CUDA device was found"; then
    if [[ -n ${GPU_ASSEMBLY_REQUIRE_GPU:-} ]]; then
      fail "'Linear solver' = $solver needs a GPU, and GPU_ASSEMBLY_REQUIRE_GPU demands one"
    fi
    echo "No CUDA device: 'Linear solver' = $solver skipped."
    exit 77
  fi
  fail "assembly_demo failed on the beam"
fi
echo "$output"
grep -q -E "No CUDA device found: the host \(CPU\) path runs|CUDA device 0:" <<<"$output" \
  || fail "the log must name the execution path"
grep -q -E "Assembled on the (host path|GPU with GlobalNZ)" <<<"$output" \
  || fail "the log must say where the system was assembled"
# Where it solved: the solver asked for, or auto's choice (a device solver
# where one can run, else the host CG).
case $solver in
  "" | auto) pattern="Solved on the GPU with [a-z-]+ \(auto\)|Host CG \(SSOR\) converged" ;;
  host-cg) pattern="Host CG \(SSOR\) converged" ;;
  *) pattern="Solved on the GPU with $solver[ ;,]" ;;
esac
grep -q -E "$pattern" <<<"$output" || fail "the log must say how it solved ($pattern)"
# The time of each stage, in the timer's table.
for stage in "Set-up (adapter arrays, plan)" "Assembly" "Output"; do
  grep -q -F "| $stage" <<<"$output" || fail "no time of the stage '$stage' in the log"
done
if grep -q "Solved on the GPU" <<<"$output"; then
  for stage in "Solver analysis / work space" "Solve on the GPU"; do
    grep -q -F "| $stage" <<<"$output" || fail "no time of the stage '$stage' in the log"
  done
  # A direct solver's factorization is a stage of its own.
  if grep -q "a direct solve" <<<"$output"; then
    grep -q -F "| Solver factorization" <<<"$output" || fail "no time of the factorization in the log"
  fi
else
  grep -q -F "| Solve (host CG + SSOR)" <<<"$output" || fail "no time of the host solve in the log"
fi
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

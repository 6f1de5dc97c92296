#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Runs the hyperelastic app as the README's main command does, on a short
# version of its default problem, and checks what a user relies on: the
# execution path is named, every step reports Newton and CG iterations and
# residuals, the run ends with steps per second and the stage summary, and
# the VTU files and the .pvd series are written with the expected fields.
# Then the physics: the energy balance of that run, and the tip deflection
# of a cantilever under a small load against beam theory.
set -euo pipefail
app=$1 workdir=$2
mkdir -p "$workdir" && cd "$workdir"
rm -rf output
cat > short.prm <<PRM
subsection Time
  set End time = 1
end
PRM
fail() { echo "FAIL: $*"; exit 1; }
output=$("$app" short.prm) || { echo "$output"; fail "the app failed on the default problem"; }
echo "$output"
grep -q -E "No CUDA device found|Execution: GPU" <<<"$output" \
  || fail "the log must name the execution path"
grep -q -F "Linear solver: cg-jacobi (auto: dynamic runs keep Jacobi-CG" <<<"$output" \
  || fail "the log must name the linear solver auto chose for a dynamic run, and why"
grep -q -E "^Step +5 +t = +1.0000 +Newton [0-9]+ +CG +[0-9]+ +\|r\|:" <<<"$output" \
  || fail "step 5 must report t, Newton and CG iterations and residuals"
grep -q "5 steps in" <<<"$output" || fail "the summary must give the steps run"
for stage in "Assembly" "Solve (Jacobi-CG)" "Update" "Output" "Transfers"; do
  grep -q -F "| $stage" <<<"$output" || fail "no stage $stage in the timer summary"
done
[[ -s output/solid.pvd && -s output/solid-00000.vtu && -s output/solid-00005.vtu ]] \
  || fail "output/solid.pvd, solid-00000.vtu and solid-00005.vtu must be written"
for field in displacement velocity J von_Mises_stress; do
  grep -q "Name=\"$field\"" output/solid-00005.vtu || fail "no field $field in the VTU"
done
[[ $(grep -c "<DataSet" output/solid.pvd) -eq 2 ]] || fail "the .pvd must list the 2 outputs"
parameters=$("$app" --print-parameters)
grep -q "set Shear modulus" <<<"$parameters" || fail "--print-parameters must document the material"

# "KINETIC STRAIN U_X U_Y U_Z" of the output line of file $1 in the log $2.
output_numbers() {
  sed -n "s|.*output $1: .*kinetic energy \([^,]*\), strain energy \([^,]*\), .*load region mean u (\([^,]*\), \([^,]*\), \([^)]*\)).*|\1 \2 \3 \4 \5|p" <<<"$2"
}

# Energy balance. The bar starts at rest and its load F = (0, 0, -0.05) is
# constant until t = 4, so the work done on it is F . u of the load
# region's mean displacement u, and the midpoint rule turns it into kinetic
# plus strain energy: per step their change is (F - f_int(u_mid)) . du plus
# the strain energy's change, which agree up to the third-order remainder
# of the strain energy along the step and the work of the Newton residual
# (|r| <= 1e-5, |du| ~ 1e-2 per step: 1e-7 against W ~ 2e-3). The log
# prints 5 significant digits, 1e-4 relative at most. Tolerance 1e-3: a
# load, mass or momentum update off by any factor breaks it by far more.
read -r kinetic strain _ _ u_z <<<"$(output_numbers output/solid-00005.vtu "$output")"
[[ -n $u_z ]] || fail "no energies and load region displacement in the output line of step 5"
awk -v K="$kinetic" -v S="$strain" -v u="$u_z" 'BEGIN {
  W = -0.05 * u; error = (K + S - W) / W;
  printf "t = 1: kinetic %.5g + strain %.5g = %.5g, work of the load %.5g, relative difference %.2e\n", K, S, K + S, W, error;
  if (!(W > 0 && error > -1e-3 && error < 1e-3)) {
    print "FAIL: kinetic plus strain energy must equal the work of the constant load within 1e-3"; exit 1 } }'

# Tip deflection of a cantilever under a small end load (quasi-static, a
# linear response: the deflection is 0.6 % of the length) against
# Timoshenko beam theory,
#   w = P L^3 / (3 E I) + P L / (kappa G A),  kappa = 5/6,
# with E = mu (3 lambda + 2 mu) / (lambda + mu), G = mu of the defaults.
# Trilinear hexahedra are too stiff in bending (parasitic shear), an error
# that falls as h^2; so the test runs two meshes, checks that the error
# falls, and compares the Richardson extrapolation with theory within 2 %:
# beam theory ignores the clamped face's Poisson restraint and the end
# regions, about a percent of the deflection at L / H = 4 (its shear term
# alone is 4 %).
beam_deflection() {
  cat > beam.prm <<PRM
subsection Solver
  set Linear solver = ${2:-auto}
end
subsection Geometry
  set Cell type    = hexahedra
  set Subdivisions = $1
end
subsection Boundary conditions
  set Load region        = 3.999, 0, 0, 4, 1, 1
  set Load               = 0, 0, -1e-3
  set Load time function = 1
end
subsection Time
  set Mode      = quasi-static
  set End time  = 1
  set Time step = 1
end
subsection Solver
  set Newton tolerance      = 1e-10
end
$([[ ${2:-} == direct ]] || printf 'subsection Solver\n  set CG relative tolerance = 1e-8\nend')
subsection Output
  set Directory       = beam
  set Output interval = 1
end
PRM
  local log
  log=$("$app" beam.prm) || { echo "$log FAIL: the beam run failed" >&2; exit 1; }
  [[ -z ${2:-} ]] || grep -q "^Linear solver: $2 " <<<"$log" \
    || { echo "$log FAIL: the log must name the linear solver $2" >&2; exit 1; }
  read -r _ _ _ _ w <<<"$(output_numbers beam/solid-00001.vtu "$log")"
  [[ -n $w ]] || { echo "FAIL: no load region displacement in the beam run's output" >&2; exit 1; }
  echo "$w"
}
w_coarse=$(beam_deflection "16, 4, 4")
w_fine=$(beam_deflection "32, 8, 8")
# The direct solver and Jacobi-CG (named: auto picks the direct solver on a
# GPU) give the coarse mesh's deflection to the 5 printed digits: CG's
# tolerance 1e-8 moves it far less than one unit of the last (<= 1e-4
# relative, 2e-4 where the two round to neighbours).
w_cg=$(beam_deflection "16, 4, 4" cg-jacobi)
w_direct=$(beam_deflection "16, 4, 4" direct)
awk -v cg="$w_cg" -v direct="$w_direct" 'BEGIN {
  difference = (direct - cg) / cg; if (difference < 0) difference = -difference;
  printf "tip deflection with the direct solver %.5g, with Jacobi-CG %.5g: relative difference %.2e\n", direct, cg, difference;
  if (!(cg < 0 && difference <= 2e-4)) { print "FAIL: the direct solver and Jacobi-CG must give the same deflection"; exit 1 } }'
awk -v coarse="$w_coarse" -v fine="$w_fine" 'BEGIN {
  mu = 5; lambda = 2; P = 1e-3; L = 4; A = 1; I = 1 / 12.;
  E = mu * (3 * lambda + 2 * mu) / (lambda + mu);
  theory = P * L^3 / (3 * E * I) + P * L / (5 / 6. * mu * A);
  coarse = -coarse; fine = -fine; extrapolated = fine + (fine - coarse) / 3;
  printf "tip deflection %.5g (16 x 4 x 4), %.5g (32 x 8 x 8), extrapolated %.5g; Timoshenko beam theory %.5g, ratio %.4f\n",
    coarse, fine, extrapolated, theory, extrapolated / theory;
  if (!(coarse > 0 && fine > coarse && fine < 1.02 * theory)) {
    print "FAIL: refining the mesh must move the tip deflection towards beam theory"; exit 1 }
  if (!(extrapolated > 0.98 * theory && extrapolated < 1.02 * theory)) {
    print "FAIL: the extrapolated tip deflection must match Timoshenko beam theory within 2 %"; exit 1 } }'
echo "ok: the app ran, reported, wrote its output, balanced its energy and bent as beam theory says"

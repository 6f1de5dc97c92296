#!/usr/bin/env bash
# Runs the hyperelastic app as the README's main command does, on a short
# version of its default problem, and checks what a user relies on: the
# execution path is named, every step reports Newton and CG iterations and
# residuals, the run ends with steps per second and the stage summary, and
# the VTU files and the .pvd series are written with the expected fields.
set -euo pipefail
app=$1 workdir=$2
mkdir -p "$workdir" && cd "$workdir"
rm -rf output
cat > short.prm <<PRM
subsection Time
  set End time = 1
end
PRM
output=$("$app" short.prm)
echo "$output"
grep -q -E "No CUDA device found|Execution: GPU" <<<"$output"
grep -q -E "^Step +5 +t = +1.0000 +Newton [0-9]+ +CG +[0-9]+ +\|r\|:" <<<"$output"
grep -q "5 steps in" <<<"$output"
for stage in "Assembly" "Solve (Jacobi-CG)" "Update" "Output" "Transfers"; do
  grep -q -F "| $stage" <<<"$output" || { echo "FAIL: no stage $stage"; exit 1; }
done
[[ -s output/solid.pvd && -s output/solid-00000.vtu && -s output/solid-00005.vtu ]]
for field in displacement velocity J von_Mises_stress; do
  grep -q "Name=\"$field\"" output/solid-00005.vtu || { echo "FAIL: no $field"; exit 1; }
done
[[ $(grep -c "<DataSet" output/solid.pvd) -eq 2 ]]
parameters=$("$app" --print-parameters)
grep -q "set Shear modulus" <<<"$parameters"
echo "ok: the app ran, reported and wrote its output"

#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Runs benchmarks/hyperelastic/truth_cube.prm on a 6^3 cube (host path):
# the cube, on rollers below and pressed 10 % from above, is in uniaxial
# compression, so the traced force must reach the incompressible
# neo-Hookean value mu (s - 1/s^2) A (s = 0.9, A = 0.08^2: 2.155 N) within
# 2 % (nu = 0.49 is not quite incompressible) and the centre node must move
# half the press (4 mm) within 1 %; the trace and the VTU series are
# written.
set -euo pipefail
app=$1 prm=$2 workdir=$3
mkdir -p "$workdir" && cd "$workdir"
rm -rf truth_cube
sed -e 's/set Subdivisions = 45, 45, 45/set Subdivisions = 6, 6, 6/' \
    -e 's/set Device    = auto/set Device    = host/' "$prm" > cube6.prm
grep -q "Subdivisions = 6, 6, 6" cube6.prm || { echo "FAIL: could not make the 6^3 file"; exit 1; }
fail() { echo "FAIL: $*"; exit 1; }
output=$("$app" cube6.prm) || { echo "$output"; fail "the app failed on the truth cube"; }
echo "$output"
grep -q "216 hexahedra" <<<"$output" || fail "the mesh must have 6^3 hexahedra"
grep -q "element updates/s" <<<"$output" || fail "the summary must give element updates per second"
[[ -s truth_cube/trace.csv && -s truth_cube/trace.png && -s truth_cube/solid.pvd ]] \
  || fail "trace.csv, trace.png and solid.pvd must be written"
last=$(tail -n 1 truth_cube/trace.csv)
awk -F', ' -v line="$last" 'BEGIN {
  split(line, v, ", ");
  fz = v[5]; uz = v[8];
  expected = 1006.711409 * (0.9 - 1 / 0.81) * 0.0064;
  ef = (fz - expected) / expected; if (ef < 0) ef = -ef;
  eu = (uz + 0.004) / 0.004; if (eu < 0) eu = -eu;
  printf "final force %.5g N (uniaxial neo-Hookean %.5g N, %.2f %%), centre u_z %.5g m (%.2f %%)\n", fz, expected, 100 * ef, uz, 100 * eu;
  if (ef > 0.02 || eu > 0.01) exit 1
}' || fail "the final force or the centre displacement is off"
echo "ok"

#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The P wave of apps/wave2d against elastic theory. A vertical tone burst
# on the top face of a steel plate sends a P wave straight down; two
# receivers on the source's axis record it. The delay of the deeper trace
# behind the shallower one (cross-correlation, refined parabolically, so
# that the source's own delay and shape cancel) must be the receivers'
# distance over the plane-strain P-wave speed
#   c_p = sqrt((lambda + 2 mu) / rho).
#
# Tolerance, from the mesh size h and the time step: linear elements with
# lumped mass give a phase-speed error of about (k h)^2 / 24 at the
# burst's wavenumber k = 2 pi f / c_p, and the burst's envelope travels at
# the group speed, whose error is three times that; the delay is resolved
# to dt / delay; the near field of a source two wavelengths away shifts
# the waveform by at most 0.5 %. The tolerance is the sum (about 2 % here),
# well below the 45 % by which the S wave is slower.
#   wave2d_arrival.sh WAVE2D WORK_DIRECTORY
set -euo pipefail
wave2d=$1; work=$2
rm -rf "$work"; mkdir -p "$work"; cd "$work"

E=210e9 nu=0.29 rho=7850 f=2e6 h=1.25e-4 source_x=0.015 source_y=0.02
cat > arrival.prm <<PRM
subsection Mesh
  set Plate width  = 0.03
  set Plate height = $source_y
  set Element size = $h
  set Defect       = none
end
subsection Materials
  set Materials = 0: $E, $nu, $rho, 0
end
subsection Source
  set Region    = 0.0145, $source_y, 0.0155, $source_y
  set Direction = 0, -1
  set Frequency = $f
  set Cycles    = 3
end
subsection Receivers
  set Points = $source_x, 0.014; $source_x, 0.006
end
subsection Time
  # Before the bottom face's echo reaches the deeper receiver.
  set End time = 4.3e-6
end
subsection Solver
  # The GPU where there is one: the check holds for both paths.
  set Device = auto
end
subsection Output
  set Directory         = out
  set Snapshot interval = 0
end
PRM
"$wave2d" arrival.prm > run.log || { cat run.log; echo "FAIL: wave2d did not run"; exit 1; }
[[ -s out/traces.csv ]] || { echo "FAIL: no out/traces.csv"; exit 1; }

awk -F, -v E="$E" -v nu="$nu" -v rho="$rho" -v f="$f" -v h="$h" \
    -v sx="$source_x" -v sy="$source_y" '
  /^# receiver/ {
    # "# receiver K: asked for (x, y), node at (x, y)"
    split($0, parts, "node at [(]"); split(parts[2], xy, "[,)]");
    d[n_receivers++] = sqrt((xy[1] - sx)^2 + (xy[2] - sy)^2); next }
  /^#/ || /^time/ { next }
  { t[n] = $1; a[n] = $3; b[n] = $5; ++n }
  END {
    pi = atan2(0, -1);
    lambda = E * nu / ((1 + nu) * (1 - 2 * nu)); mu = E / (2 * (1 + nu));
    c_p = sqrt((lambda + 2 * mu) / rho);
    dt = t[2] - t[1];
    best = 1; best_value = -1e300;
    for (lag = 0; lag < n; ++lag) {
      c[lag] = 0;
      for (i = 0; i + lag < n; ++i) c[lag] += a[i] * b[i + lag];
      if (lag > 0 && lag < n - 1 && c[lag] > best_value) { best = lag; best_value = c[lag]; }
    }
    if (best >= n - 2) { print "FAIL: no correlation maximum inside the record"; exit 1 }
    l = c[best - 1]; m = c[best]; r = c[best + 1];
    delay = (best + 0.5 * (l - r) / (l - 2 * m + r)) * dt;
    expected = (d[1] - d[0]) / c_p;
    k = 2 * pi * f / c_p;
    tolerance = 3 * (k * h)^2 / 24 + dt / expected + 0.005;
    error = delay / expected - 1;
    printf "P-wave delay %.4g s over %.4g m: speed %.1f m/s, theory c_p = %.1f m/s, relative error %.4f, tolerance %.4f\n",
      delay, d[1] - d[0], (d[1] - d[0]) / delay, c_p, error, tolerance;
    if (error < -tolerance || error > tolerance) {
      print "FAIL: the P wave must travel between the receivers at c_p = sqrt((lambda + 2 mu) / rho) within the tolerance";
      exit 1
    }
  }' out/traces.csv
echo "ok: the P wave travels at the plane-strain P-wave speed"

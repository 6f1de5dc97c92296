#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Runs the hyperelastic app under mpirun -np 2 on a short hexahedral bar
# with a local refinement step (p4est, hanging nodes) and on a short
# tetrahedral bar (parallel::fullydistributed), and checks what a user
# relies on: the log comes once (from rank 0) and names the ranks; every
# output writes one .vtu per rank and a .pvtu record naming them, and the
# .pvd series lists the records; the files are complete, hold the fields
# (displacement, velocity, J, von Mises stress, subdomain) and together
# hold every cell of the mesh once, and the boundary file's pieces every
# boundary face once; the energy balance of the run holds as
# on one process, and the one-process run prints the same numbers. Then a
# full disk for one rank's file, and an inverted element, stop every rank
# with a message naming the file or the element. The processes start
# through tests/mpirun.sh with the MPI launcher that CMake found ($MPIEXEC,
# which ctest sets); a missing launcher is a failure.
#   hyperelastic_mpi.sh APP WORK_DIRECTORY
set -uo pipefail
app=$1 work=$2
mpirun=$(cd "$(dirname "$0")/.." && pwd)/mpirun.sh
[[ -n ${MPIEXEC:-} && -x ${MPIEXEC} ]] ||
  { echo "FAIL: the MPI launcher MPIEXEC='${MPIEXEC:-}' (CMake's MPIEXEC_EXECUTABLE) cannot be run"; exit 1; }
rm -rf "$work"; mkdir -p "$work"; cd "$work" || exit 1
fail() { echo "FAIL: $*"; exit 1; }

# "KINETIC STRAIN U_X U_Y U_Z" of the output line of file $1 in the log $2.
output_numbers() {
  sed -n "s|.*output $1: .*kinetic energy \([^,]*\), strain energy \([^,]*\), .*load region mean u (\([^,]*\), \([^,]*\), \([^)]*\)).*|\1 \2 \3 \4 \5|p" <<<"$2"
}

# check_run NAME CELL_TYPE REFINEMENT_STEPS
check_run() {
  local name=$1 cells=$2 steps=$3
  cat > "$name.prm" <<PRM
subsection Geometry
  set Cell type              = $cells
  set Subdivisions           = 8, 2, 2
  set Local refinement steps = $steps
end
subsection Time
  set End time = 1
end
subsection Execution
  set Device = host
end
subsection Output
  set Directory = $name
end
PRM
  local log
  log=$(timeout 600 "$mpirun" "$MPIEXEC" 2 "$app" "$name.prm" 2>&1) \
    || { echo "$log"; fail "$name: the app failed under mpirun -np 2"; }
  echo "$log"
  [[ $(grep -c "^Running on 2 MPI ranks" <<<"$log") -eq 1 ]] \
    || fail "$name: the log must come once, from rank 0, and name the 2 ranks"
  grep -q -E "^Step +5 +t = +1.0000 +Newton [0-9]+ +CG +[0-9]+ +\|r\|:" <<<"$log" \
    || fail "$name: step 5 must report t, Newton and CG iterations and residuals"
  [[ $(grep -c "5 steps in" <<<"$log") -eq 1 ]] || fail "$name: the summary must come once"
  [[ $(grep -c -E "^Stages per step \(ms, slowest rank\): assembly [0-9.]+, solve [0-9.]+, update [0-9.]+; exchange between ranks [0-9.]+ " <<<"$log") -eq 1 ]] \
    || fail "$name: the stage split (assembly, solve, update, exchange per step) must come once"
  # The exchange's parts add up to it (each printed to 0.001 ms), and the
  # waited time is a part of the messages' time.
  local split
  split=$(sed -n -E 's/^Stages per step.*exchange between ranks ([0-9.]+) of assembly and solve \(ghost updates ([0-9.]+), assembly messages ([0-9.]+) of which waited ([0-9.]+), writes ([0-9.]+), staging copies ([0-9.]+), surface loads ([0-9.]+);.*/\1 \2 \3 \4 \5 \6 \7/p' <<<"$log")
  [[ -n $split ]] || fail "$name: the exchange's split into ghost updates, messages, waited, writes, staging copies and surface loads is missing"
  awk '{ sum = $2 + $3 + $5 + $6 + $7; d = sum - $1; if (d < 0) d = -d;
         exit !(d <= 0.006 && $4 <= $3 + 0.001 && $1 > 0) }' <<<"$split" \
    || fail "$name: the exchange's parts ($split) must add up to its total, with waited within messages and a total above 0 on 2 ranks"
  local n_cells
  n_cells=$(sed -n "s/^Mesh: \([0-9]*\) $cells.*/\1/p" <<<"$log")
  [[ -n $n_cells ]] || fail "$name: the log must give the mesh's cells"

  [[ -s $name/solid.pvd ]] || fail "$name: no $name/solid.pvd"
  [[ $(grep -c "<DataSet" "$name/solid.pvd") -eq 2 ]] || fail "$name: the .pvd must list the 2 outputs"
  grep -q "</VTKFile>" "$name/solid.pvd" || fail "$name: the .pvd is not complete"
  local record piece total
  for record in $(sed -n 's/.*file="\([^"]*\)".*/\1/p' "$name/solid.pvd"); do
    [[ $record == *.pvtu && -s $name/$record ]] || fail "$name: the .pvd names '$record', which is not a written .pvtu"
    grep -q "</VTKFile>" "$name/$record" || fail "$name: $record is not complete"
    [[ $(grep -c "<Piece" "$name/$record") -eq 2 ]] || fail "$name: $record must name one piece per rank"
    for field in displacement velocity J von_Mises_stress subdomain; do
      grep -q "Name=\"$field\"" "$name/$record" || fail "$name: no field $field in $record"
    done
    total=0
    for piece in $(sed -n 's/.*<Piece Source="\([^"]*\)".*/\1/p' "$name/$record"); do
      [[ -s $name/$piece ]] || fail "$name: $record names $piece, which was not written"
      head -c 100 "$name/$piece" | grep -q "<?xml" || fail "$name: $piece does not start as XML"
      grep -q "</VTKFile>" "$name/$piece" || fail "$name: $piece is not complete"
      for field in displacement velocity J von_Mises_stress subdomain; do
        grep -q "Name=\"$field\"" "$name/$piece" || fail "$name: no field $field in $piece"
      done
      total=$((total + $(sed -n 's/.*NumberOfCells="\([0-9]*\)".*/\1/p' "$name/$piece" | head -1)))
    done
    [[ $total -eq $n_cells ]] || fail "$name: the pieces of $record hold $total cells, the mesh $n_cells"
  done

  # The energy balance of hyperelastic.sh (there explained): kinetic plus
  # strain energy equal the work F . u of the constant load within 1e-3.
  # Not with hanging nodes: the kinetic energy sums p^2 / 2m over all DoFs,
  # and a hanging DoF's mass counts there besides its share on its line.
  local kinetic strain u_z
  read -r kinetic strain _ _ u_z <<<"$(output_numbers "$name/solid_00005.pvtu" "$log")"
  [[ -n $u_z ]] || fail "$name: no energies and load region displacement in the output line of step 5"
  [[ $steps -gt 0 ]] || awk -v K="$kinetic" -v S="$strain" -v u="$u_z" -v name="$name" 'BEGIN {
    W = -0.05 * u; error = (K + S - W) / W;
    printf "%s, t = 1: kinetic %.5g + strain %.5g = %.5g, work of the load %.5g, relative difference %.2e\n", name, K, S, K + S, W, error;
    if (!(W > 0 && error > -1e-3 && error < 1e-3)) {
      print "FAIL: kinetic plus strain energy must equal the work of the constant load within 1e-3"; exit 1 } }' || exit 1

  # One process (ImplicitSolid without a communicator) prints the same
  # numbers, to 1e-4 relative: they differ by where each CG stops (relative
  # tolerance 1e-6).
  local serial_log serial distributed
  sed -i "s|set Directory = $name|set Directory = $name-serial|" "$name.prm"
  serial_log=$("$app" "$name.prm" 2>&1) || { echo "$serial_log"; fail "$name: the one-process run failed"; }
  serial=$(output_numbers "$name-serial/solid-00005.vtu" "$serial_log")
  distributed=$(output_numbers "$name/solid_00005.pvtu" "$log")
  [[ -n $serial ]] || fail "$name: no output line of step 5 in the one-process run"
  awk -v a="$serial" -v b="$distributed" -v name="$name" 'BEGIN {
    n = split(a, x, " "); split(b, y, " ");
    for (i = 1; i <= n; ++i) {
      d = x[i] - y[i]; if (d < 0) d = -d;
      s = (x[i] < 0 ? -x[i] : x[i]);
      if (!(d <= 1e-4 * s + 1e-12)) {
        printf "FAIL: %s: 2 ranks print %s, one process %s (kinetic, strain, load region u)\n", name, b, a; exit 1 } }
    printf "%s: 2 ranks and one process agree: %s\n", name, b }' || exit 1

  # The boundary faces' file: one piece per rank with the traction and the
  # stress, a .pvtu naming them and the series; together the pieces hold
  # every boundary face of the one-process file once.
  local boundary=$name/solid-boundary_00005.pvtu faces serial_faces
  [[ -s $name/solid-boundary.pvd ]] || fail "$name: no $name/solid-boundary.pvd"
  [[ $(grep -c "<DataSet" "$name/solid-boundary.pvd") -eq 2 ]] \
    || fail "$name: the boundary .pvd must list the 2 outputs"
  [[ -s $boundary ]] || fail "$name: no $boundary"
  [[ $(grep -c "<Piece" "$boundary") -eq 2 ]] || fail "$name: $boundary must name one piece per rank"
  faces=0
  for piece in $(sed -n 's/.*<Piece Source="\([^"]*\)".*/\1/p' "$boundary"); do
    [[ -s $name/$piece ]] || fail "$name: $boundary names $piece, which was not written"
    grep -q "</VTKFile>" "$name/$piece" || fail "$name: $piece is not complete"
    for field in displacement first_Piola_traction Cauchy_stress; do
      grep -q "Name=\"$field\"" "$name/$piece" || fail "$name: no field $field in $piece"
    done
    faces=$((faces + $(sed -n 's/.*NumberOfCells="\([0-9]*\)".*/\1/p' "$name/$piece" | head -1)))
  done
  serial_faces=$(sed -n 's/.*NumberOfCells="\([0-9]*\)".*/\1/p' "$name-serial/solid-boundary-00005.vtu" | head -1)
  [[ -n $serial_faces && $faces -eq $serial_faces ]] \
    || fail "$name: the boundary pieces hold $faces faces, the one-process file ${serial_faces:-none}"
}

check_run hexahedra_hanging hexahedra 1
check_run tetrahedra tetrahedra 0

# A full disk for one rank's piece (its partial file a link to /dev/full)
# stops every rank with a message naming the file; the earlier piece stays.
sed "s|set Directory = hexahedra_hanging-serial|set Directory = hexahedra_hanging|" \
  hexahedra_hanging.prm > full.prm
piece=hexahedra_hanging/solid_00005.1.vtu
cp "$piece" earlier-piece
ln -s /dev/full "$piece.partial"
log=$(timeout 600 "$mpirun" "$MPIEXEC" 2 "$app" full.prm 2>&1) \
  && { echo "$log"; fail "the run must fail when $piece cannot be written"; }
echo "$log"
expected="Could not write $piece (writing: No space left on device)"
[[ $(tr -s " \n" "  " <<<"$log" | grep -o -F -- "$expected" | wc -l) -eq 2 ]] \
  || fail "each of the 2 ranks must report '$expected'"
cmp -s earlier-piece "$piece" || fail "the earlier $piece was changed or destroyed"
[[ ! -e $piece.partial ]] || fail "$piece.partial was left behind"

# A load that inverts an element in the first step stops every rank with
# the step and the element, after the last good state (step 0) was written.
cat > inverted.prm <<PRM
subsection Geometry
  set Cell type              = hexahedra
  set Subdivisions           = 8, 2, 2
  set Local refinement steps = 1
end
subsection Boundary conditions
  set Load = 0, 0, -50
end
subsection Execution
  set Device = host
end
subsection Output
  set Directory = inverted
end
PRM
log=$(timeout 600 "$mpirun" "$MPIEXEC" 2 "$app" inverted.prm 2>&1) \
  && { echo "$log"; fail "the run that inverts an element must fail"; }
echo "$log"
[[ $(grep -c "The simulation stopped: in step 1 " <<<"$log") -eq 2 ]] \
  || fail "each of the 2 ranks must say that the simulation stopped in step 1"
[[ $(grep -c -E "hyperelastic stopped with an error \(MPI rank [01] of 2\)" <<<"$log") -eq 2 ]] \
  || fail "each rank must name itself in the error"
grep -q "is inverted (J =" <<<"$log" || fail "the message must name the inverted element"
grep -q "Wrote the last good state (step 0, t = 0) to inverted/solid_00000.pvtu" <<<"$log" \
  || fail "the last good state must be written and named"
[[ -s inverted/solid_00000.pvtu && -s inverted/solid.pvd ]] || fail "no last good state in inverted/"
echo "ok: under mpirun -np 2 the app ran, logged once, wrote complete .vtu/.pvtu/.pvd files with every cell once, balanced its energy, matched one process, and stopped on every rank at a full disk and at an inverted element"

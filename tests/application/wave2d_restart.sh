#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Checkpoint and restart of apps/wave2d: a run interrupted after some steps
# ('Stop after steps', which writes a checkpoint as the periodic ones do)
# and restarted gives bitwise the same receiver traces and the same
# snapshot list as an uninterrupted run.
#   wave2d_restart.sh WAVE2D PARAMETER_FILE WORK_DIRECTORY
set -euo pipefail
wave2d=$1; prm=$2; work=$3
rm -rf "$work"; mkdir -p "$work"; cd "$work"
{ cat "$prm"; printf 'subsection Output\n  set Directory = whole\nend\n'; } > whole.prm
{ cat "$prm"; printf 'subsection Output\n  set Directory = parts\nend\nsubsection Checkpoint\n  set Stop after steps = 170\nend\n'; } > first.prm
{ cat "$prm"; printf 'subsection Output\n  set Directory = parts\nend\nsubsection Checkpoint\n  set Restart = true\nend\n'; } > second.prm
"$wave2d" whole.prm > whole.log || { cat whole.log; echo "FAIL: the uninterrupted run failed"; exit 1; }
"$wave2d" first.prm > first.log || { cat first.log; echo "FAIL: the interrupted run failed"; exit 1; }
grep -q "Stopped after step 170" first.log || { echo "FAIL: the first part did not stop at step 170"; cat first.log; exit 1; }
# A restart asked to stop at the step it resumes from is refused, and the
# checkpoint stays for the real restart below.
{ cat "$prm"; printf 'subsection Output\n  set Directory = parts\nend\nsubsection Checkpoint\n  set Restart = true\n  set Stop after steps = 170\nend\n'; } > again.prm
if "$wave2d" again.prm > again.log 2>&1; then
  cat again.log; echo "FAIL: a restart at step 170 asked to stop after step 170 ran"; exit 1
fi
# deal.II wraps an exception's message: compare with the lines joined.
tr -s ' \n' ' ' < again.log | grep -q "is not more than the step the checkpoint resumes from (170)" \
  || { cat again.log; echo "FAIL: the refusal does not name the step the checkpoint resumes from"; exit 1; }
"$wave2d" second.prm > second.log || { cat second.log; echo "FAIL: the restarted run failed"; exit 1; }
grep -q "Restarted from the checkpoint at step 170" second.log || { echo "FAIL: no restart"; cat second.log; exit 1; }
cmp whole/traces.csv parts/traces.csv || { echo "FAIL: traces differ"; exit 1; }
# deal.II stamps the .pvd with the time of writing: compare the rest.
diff <(grep -v generated whole/snapshots.pvd) <(grep -v generated parts/snapshots.pvd) \
  || { echo "FAIL: snapshot lists differ"; exit 1; }
rows=$(grep -vc '^#' whole/traces.csv)
[[ $rows -gt 100 ]] || { echo "FAIL: only $rows rows of traces"; exit 1; }
# The traces must not be all zero: the source reached the receivers.
awk -F, '!/^#/ && NR > 5 { for (i = 2; i <= NF; ++i) if ($i + 0 != 0) found = 1 } END { exit !found }' whole/traces.csv \
  || { echo "FAIL: the traces are zero"; exit 1; }
echo "ok: interrupted at step 170 and restarted, traces.csv ($rows rows) and snapshots.pvd identical to the uninterrupted run"

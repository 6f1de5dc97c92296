#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Runs apps/wave2d on a parameter file and checks its outputs exist and the
# receivers saw the wave; optional further arguments are strings the log
# must contain.
#   wave2d_run.sh WAVE2D PARAMETER_FILE WORK_DIRECTORY [expected text ...]
set -euo pipefail
wave2d=$1; prm=$2; work=$3; shift 3
rm -rf "$work"; mkdir -p "$work"; cd "$work"
"$wave2d" "$prm" | tee run.log || { echo "FAIL: wave2d failed on $prm"; exit 1; }
for file in traces.csv traces.png snapshots.pvd checkpoint.bin; do
  [[ -s out/$file ]] || { echo "FAIL: out/$file missing"; exit 1; }
done
head -c 8 out/traces.png | od -An -c | grep -q "P   N   G" || { echo "FAIL: traces.png is not a PNG"; exit 1; }
awk -F, '!/^#/ && NR > 5 { for (i = 2; i <= NF; ++i) if ($i + 0 != 0) found = 1 } END { exit !found }' out/traces.csv \
  || { echo "FAIL: the traces are zero"; exit 1; }
for text in "$@"; do
  grep -q -F -- "$text" run.log || { echo "FAIL: no '$text' in the log"; exit 1; }
done
echo "ok: outputs written, traces non-zero"

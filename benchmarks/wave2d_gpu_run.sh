#!/usr/bin/env bash
# Usage (on the GPU host, with the runtime bundle unpacked): copy
# wave2d_demo.prm and the three stripped programs into one folder with this
# script, then: bash FOLDER/wave2d_gpu_run.sh   (OUT: where logs go).
# The wave2d GPU session: GPU test, benchmark, the app on the GPU and on
# the host (traces compared). Logs and pictures go to $OUT.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
export LD_LIBRARY_PATH=/opt/gpu-runtime/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
nvidia-smi --query-gpu=name,memory.total,clocks.max.memory --format=csv | tee $OUT/wave2d_gpu_tests.txt
echo "=== gpu_explicit_stepper" | tee -a $OUT/wave2d_gpu_tests.txt
"$here/gpu_explicit_stepper" 2>&1 | tee -a $OUT/wave2d_gpu_tests.txt
echo "=== gpu_explicit_stepper: exit code ${PIPESTATUS[0]}" | tee -a $OUT/wave2d_gpu_tests.txt
echo "=== wave2d_benchmark" > $OUT/wave2d_benchmark.txt
timeout 330 "$here/wave2d_benchmark" 2>&1 | tee -a $OUT/wave2d_benchmark.txt
echo "=== wave2d_benchmark: exit code ${PIPESTATUS[0]}" | tee -a $OUT/wave2d_benchmark.txt
cd /tmp
{ echo "=== wave2d demo on the GPU"; timeout 120 "$here/wave2d" "$here/wave2d_demo.prm"; echo "exit code $?";
  printf 'subsection Solver\n  set Device = host\nend\nsubsection Output\n  set Directory = demo-host\n  set Snapshot interval = 0\n  set Snapshot images = false\nend\n' | cat "$here/wave2d_demo.prm" - > host.prm
  echo "=== the same on the host"; timeout 120 "$here/wave2d" host.prm | tail -25; echo "exit code $?";
  cmp demo/traces.csv demo-host/traces.csv && echo "GPU and host traces.csv are identical (byte for byte)"; } > $OUT/wave2d_demo_gpu.txt 2>&1
cp demo/traces.png demo/traces.csv $OUT/ 2>/dev/null
cp demo/snapshot-001300.png demo/snapshot-003900.png $OUT/ 2>/dev/null
ls demo | head -40 >> $OUT/wave2d_demo_gpu.txt

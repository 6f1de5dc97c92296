#!/usr/bin/env bash
# Runs the GPU-labelled test programs on a GPU host that has no deal.II,
# through the runtime bundle made by shared/tools/gpu-runtime-bundle:
#   tests/run_gpu_tests.sh .gpu-bundle/bin
# Each program prints its checks; exit code 77 means skipped (no device).
# Exits non-zero if any program failed or was skipped.
set -uo pipefail
bin=${1:?usage: run_gpu_tests.sh BUNDLE_BIN_DIR}
status=0
cd "$(dirname "$0")/data"
for exe in "$bin"/gpu_*; do
  name=$(basename "$exe")
  echo "=== $name"
  bash "$bin/run.sh" "$name"
  rc=$?
  case $rc in
    0) echo "=== $name: passed" ;;
    77) echo "=== $name: SKIPPED (no CUDA device)"; status=1 ;;
    *) echo "=== $name: FAILED (exit code $rc)"; status=1 ;;
  esac
done
exit $status

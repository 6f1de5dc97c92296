#!/usr/bin/env bash
# The hex8 GPU run of benchmarks/results/h100_hex8_*.txt, on a GPU host
# without deal.II, from the repository root, after the runtime bundle is
# unpacked. Packaging (on the build machine):
#   cmake --build build-gpu --target gpu_hex8_elasticity hex8_local_matrices
#   mkdir -p /tmp/p .gpu-bundle/hex8 && cp build-gpu/tests/gpu/gpu_hex8_elasticity \
#     build-gpu/benchmarks/hex8_local_matrices /tmp/p && strip /tmp/p/*
# (add gpu_assembly_methods and gpu_element_kernels to run those GPU tests
# too: the loop below runs whichever the bundle holds)
#   tar -C /tmp/p -cf - . | xz > .gpu-bundle/hex8/hex8.tar.xz
#   cp benchmarks/hex8_gpu_run.sh .gpu-bundle/hex8/run_all.sh
# call 1 (carry .gpu-bundle/a): bash .gpu-bundle/a/unpack
# call 2 (carry .gpu-bundle/b .gpu-bundle/hex8):
#   bash .gpu-bundle/b/unpack && bash .gpu-bundle/hex8/run_all.sh
# It runs the GPU tests, the resource report, the benchmark and an ncu
# summary of the shapeMap (G = 8) and standard (G = 8) kernels: the 1st and
# 6th launches of hex8_element_kernel in the benchmark's check.
set -uo pipefail
here=/tmp/hex8bin
mkdir -p $here && tar -C $here -xJf "$(dirname "$0")/hex8.tar.xz"
export LD_LIBRARY_PATH=/opt/gpu-runtime/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
out=${OUT:-/tmp}
nvidia-smi -L | tee $out/device.txt
cuobjdump --dump-resource-usage "$here/hex8_local_matrices" 2>&1 \
  | grep -A1 -E "hex8_element_kernel|global_nz_element_kernel" > $out/resources_raw.txt
{
  cd tests/data
  for t in gpu_hex8_elasticity gpu_element_kernels gpu_assembly_methods; do
    [ -x "$here/$t" ] || continue
    echo "=== $t"; timeout 200 "$here/$t"; echo "=== $t: exit code $?"
  done
} 2>&1 | tee $out/gpu_tests.txt | grep -E "===|FAIL|checks passed"
"$here/hex8_local_matrices" 2000376 7 2>&1 | tee $out/benchmark.txt
m=l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,l1tex__data_pipe_lsu_wavefronts.sum,smsp__inst_executed_op_shared_ld.sum,smsp__sass_thread_inst_executed_op_dfma_pred_on.sum,smsp__sass_thread_inst_executed_op_dmul_pred_on.sum,smsp__sass_thread_inst_executed_op_dadd_pred_on.sum,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,launch__occupancy_limit_registers,launch__occupancy_limit_shared_mem
for skip in 0 5; do
  timeout 120 ncu --clock-control none --kernel-name regex:hex8_element_kernel \
    --launch-skip $skip --launch-count 1 --section SpeedOfLight \
    --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis \
    --section Occupancy --metrics $m "$here/hex8_local_matrices" 110592 1 2>&1 \
    | grep -v "^hex8\|^ *[0-9]\+ \+[a-z]" | tail -120
done > $out/ncu.txt 2>&1
tail -5 $out/ncu.txt

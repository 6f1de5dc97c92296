// SPDX-License-Identifier: LGPL-2.1-or-later
#include <gpu_assembly/base/cuda_check.h>

#include "step_graph.cuh"

namespace Hyperelastic
{
  namespace internal
  {
    void
    StepGraph::release() noexcept
    {
      graph_exec.reset();
      graph.reset();
      built_key = StepGraphKey();
    }



    void
    StepGraph::launch(StepReport &step_report)
    {
      GPU_ASSEMBLY_CHECK_CUDA(cudaGraphLaunch(graph_exec.get(), stream()));
      GPU_ASSEMBLY_CHECK_CUDA(cudaMemcpyAsync(report_host.data(),
                                              report.data(),
                                              report.size() * sizeof(double),
                                              cudaMemcpyDeviceToHost,
                                              stream()));
      GPU_ASSEMBLY_CHECK_CUDA(cudaStreamSynchronize(stream()));

      const int status   = static_cast<int>(report_host[report_slot::status]);
      step_report.status = static_cast<StepStatus>(status);
      step_report.n_cg_iterations = report_host[report_slot::cg];
      const unsigned int last =
        static_cast<unsigned int>(report_host[report_slot::iteration]);
      // A CG breakdown ends the iteration before its residual.
      const unsigned int n_residuals =
        step_report.status == StepStatus::cg_breakdown ? last : last + 1;
      step_report.residuals.assign(report_host.begin() + report_slot::residuals,
                                   report_host.begin() +
                                     report_slot::residuals + n_residuals);
    }
  } // namespace internal
} // namespace Hyperelastic

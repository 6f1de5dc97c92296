// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef hyperelastic_step_graph_cuh
#define hyperelastic_step_graph_cuh

// A whole time step, Newton loop included, as one CUDA graph: captured
// once, launched once per step; the loop's tests run on the device, and
// only the step's report crosses to the host.

#include <gpu_assembly/base/cuda_handles.h>
#include <gpu_assembly/lac/device_vector.h>
#include <gpu_assembly/lac/graph_capture.cuh>

#include <cuda_runtime.h>

#include <utility>
#include <vector>

#include "device_step_report.h"
#include "integrator_backend.h"

namespace Hyperelastic
{
  namespace internal
  {
    /// What a step's graph was built for: everything its kernels take by
    /// value. The load amplitude is not among them (device memory).
    struct StepGraphKey
    {
      double       dt                = -1;
      double       body_force_factor = 0;
      double       tolerance         = 0;
      unsigned int max_iterations    = 0;
      double       divergence_limit  = 0;
      double       cg_tolerance      = 0;
      unsigned int max_cg_iterations = 0;

      bool
      operator==(const StepGraphKey &other) const
      {
        return dt == other.dt && body_force_factor == other.body_force_factor &&
               tolerance == other.tolerance &&
               max_iterations == other.max_iterations &&
               divergence_limit == other.divergence_limit &&
               cg_tolerance == other.cg_tolerance &&
               max_cg_iterations == other.max_cg_iterations;
      }
    };



    /**
     * The step's graph, the two streams it is captured from (the step's,
     * and a second one for the body of the Newton loop's conditional
     * "while" node), and the step report (device_step_report.h) the graph
     * leaves on the device.
     */
    class StepGraph
    {
    public:
      /// Creates the streams. Blocking streams: they stay ordered with the
      /// default stream, which the staged operations and the copies use.
      StepGraph() = default;

      /// The stream the graph is launched on.
      cudaStream_t
      stream() const
      {
        return step_stream.get();
      }

      /// Whether a graph is built, and built for @p key.
      bool
      built() const
      {
        return static_cast<bool>(graph_exec);
      }

      bool
      built_for(const StepGraphKey &key) const
      {
        return built() && key == built_key;
      }

      /// Note that a step asks for @p key; whether the step before asked
      /// for the same.
      bool
      repeats(const StepGraphKey &key)
      {
        const bool repeated = key == previous_key;
        previous_key        = key;
        return repeated;
      }

      /// Where the graph's kernels write the report.
      double *
      report_data()
      {
        return report.data();
      }

      /// Destroy the graph (the streams and the report stay).
      void
      release() noexcept;

      /**
       * Build the graph for @p key: @p head(stream, loop) enqueues the
       * work before the Newton loop and sets the loop's condition @p loop,
       * @p body(stream, loop) the loop's body, @p tail(stream) the work
       * after the loop. Memory must not be allocated while capturing:
       * whatever they use is sized before, the report here. Returns false,
       * with no graph, where the driver does not support conditional
       * nodes.
       */
      template <typename Head, typename Body, typename Tail>
      bool
      build(const StepGraphKey &key, Head &&head, Body &&body, Tail &&tail);

      /**
       * Launch the graph on stream(), after what is enqueued there, wait
       * for it and decode its report into @p step_report.
       */
      void
      launch(StepReport &step_report);

    private:
      GPUAssembly::CudaStream    step_stream;
      GPUAssembly::CudaStream    body_stream;
      GPUAssembly::CudaGraph     graph;
      GPUAssembly::CudaGraphExec graph_exec;
      StepGraphKey               built_key;
      /// The key of the last step that asked for a graph.
      StepGraphKey                      previous_key;
      GPUAssembly::DeviceVector<double> report;
      std::vector<double>               report_host;
    };



    template <typename Head, typename Body, typename Tail>
    bool
    StepGraph::build(const StepGraphKey &key,
                     Head              &&head,
                     Body              &&body,
                     Tail              &&tail)
    {
      report.reinit(report_slot::residuals + key.max_iterations + 1);
      report_host.resize(report.size());

      namespace capture = GPUAssembly;
      capture::StreamCapture     step_capture(stream());
      cudaGraphConditionalHandle loop;
      if (!capture::create_condition(capture::capturing_graph(stream()), loop))
        return false;
      head(stream(), loop);

      // The Newton loop: a conditional "while" node whose body is captured
      // from the second stream.
      const cudaGraph_t loop_body = capture::capture_while_node(stream(), loop);
      if (loop_body == nullptr)
        return false;
      {
        capture::StreamCapture body_capture(body_stream.get(), loop_body);
        body(body_stream.get(), loop);
        body_capture.end();
      }

      tail(stream());
      GPUAssembly::CudaGraph     captured = step_capture.end();
      GPUAssembly::CudaGraphExec instance(captured);
      graph      = std::move(captured);
      graph_exec = std::move(instance);
      built_key  = key;
      return true;
    }
  } // namespace internal
} // namespace Hyperelastic

#endif

// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_lac_graph_capture_cuh
#define gpu_assembly_lac_graph_capture_cuh

// Conditional nodes in a CUDA graph under construction by stream capture,
// for loops that run on the device: the Jacobi-CG iteration
// (DeviceJacobiCG::enqueue_solve()) and, around it, a whole Newton loop
// (the hyperelastic app's step graph), and the owner of a capture in
// progress. For .cu files only.

#include <gpu_assembly/base/cuda_check.h>
#include <gpu_assembly/base/cuda_handles.h>

#include <cuda_runtime.h>

namespace GPUAssembly
{
  /**
   * A stream capture in progress: begun by the constructor (thread-local
   * mode), ended by end(). A capture that an exception or an early return
   * abandons is ended by the destructor and its partial graph discarded,
   * so that the stream can be used again; the error that caused it is
   * cleared, the exception carries it.
   */
  class StreamCapture
  {
  public:
    /// Capture @p stream into a new graph.
    explicit StreamCapture(const cudaStream_t stream)
      : stream(stream)
      , into_existing_graph(false)
    {
      GPU_ASSEMBLY_CHECK_CUDA(
        cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
      active = true;
    }

    /**
     * Capture @p stream into @p graph, which someone else owns (the body
     * of a conditional node, say), after its existing nodes.
     */
    StreamCapture(const cudaStream_t stream, const cudaGraph_t graph)
      : stream(stream)
      , into_existing_graph(true)
    {
      GPU_ASSEMBLY_CHECK_CUDA(
        cudaStreamBeginCaptureToGraph(stream,
                                      graph,
                                      nullptr,
                                      nullptr,
                                      0,
                                      cudaStreamCaptureModeThreadLocal));
      active = true;
    }

    StreamCapture(const StreamCapture &) = delete;

    StreamCapture &
    operator=(const StreamCapture &) = delete;

    ~StreamCapture()
    {
      if (!active)
        return;
      cudaGraph_t discarded = nullptr;
      (void)cudaStreamEndCapture(stream, &discarded);
      const CudaGraph partial(into_existing_graph ? nullptr : discarded);
      (void)cudaGetLastError();
    }

    /**
     * End the capture. Returns the captured graph, or, for a capture
     * into an existing graph, an empty one.
     */
    CudaGraph
    end()
    {
      active            = false;
      cudaGraph_t graph = nullptr;
      GPU_ASSEMBLY_CHECK_CUDA(cudaStreamEndCapture(stream, &graph));
      return CudaGraph(into_existing_graph ? nullptr : graph);
    }

  private:
    const cudaStream_t stream;
    const bool         into_existing_graph;
    bool               active = false;
  };



  /// The graph @p stream is capturing into.
  inline cudaGraph_t
  capturing_graph(const cudaStream_t stream)
  {
    cudaStreamCaptureStatus status;
    cudaGraph_t             graph = nullptr;
    GPU_ASSEMBLY_CHECK_CUDA(cudaStreamGetCaptureInfo(stream,
                                                     &status,
                                                     nullptr,
                                                     &graph,
                                                     nullptr,
                                                     nullptr,
                                                     nullptr));
    return graph;
  }

  /**
   * A handle for the condition of a conditional node of @p graph, reset
   * to 0 at every launch: a kernel must set it before the node runs.
   * False where the driver does not support conditional nodes.
   */
  inline bool
  create_condition(const cudaGraph_t graph, cudaGraphConditionalHandle &handle)
  {
    if (cudaGraphConditionalHandleCreate(&handle,
                                         graph,
                                         0,
                                         cudaGraphCondAssignDefault) ==
        cudaSuccess)
      return true;
    (void)cudaGetLastError();
    return false;
  }

  /// The parameters of a "while" node on @p handle.
  inline cudaGraphNodeParams
  while_node_parameters(const cudaGraphConditionalHandle handle)
  {
    cudaGraphNodeParams parameters = {};
    parameters.type                = cudaGraphNodeTypeConditional;
    parameters.conditional.handle  = handle;
    parameters.conditional.type    = cudaGraphCondTypeWhile;
    parameters.conditional.size    = 1;
    return parameters;
  }

  /**
   * Add a "while" node on @p handle to the graph @p stream is capturing,
   * after everything captured so far, and continue the capture after it.
   * Returns the node's body graph, into which the loop's work goes (by
   * explicit nodes, or by a capture of its own on another stream);
   * nullptr where the driver refuses the node.
   */
  inline cudaGraph_t
  capture_while_node(const cudaStream_t               stream,
                     const cudaGraphConditionalHandle handle)
  {
    cudaStreamCaptureStatus status;
    cudaGraph_t             graph    = nullptr;
    const cudaGraphNode_t  *before   = nullptr;
    std::size_t             n_before = 0;
    GPU_ASSEMBLY_CHECK_CUDA(cudaStreamGetCaptureInfo(stream,
                                                     &status,
                                                     nullptr,
                                                     &graph,
                                                     &before,
                                                     nullptr,
                                                     &n_before));
    cudaGraphNodeParams parameters = while_node_parameters(handle);
    cudaGraphNode_t     node;
    if (cudaGraphAddNode(&node,
                         graph,
                         before,
                         nullptr,
                         n_before,
                         &parameters) != cudaSuccess)
      {
        (void)cudaGetLastError();
        return nullptr;
      }
    GPU_ASSEMBLY_CHECK_CUDA(
      cudaStreamUpdateCaptureDependencies(stream,
                                          &node,
                                          nullptr,
                                          1,
                                          cudaStreamSetCaptureDependencies));
    return parameters.conditional.phGraph_out[0];
  }
} // namespace GPUAssembly

#endif

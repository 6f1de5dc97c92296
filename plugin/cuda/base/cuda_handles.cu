// SPDX-License-Identifier: LGPL-2.1-or-later
#include <gpu_assembly/base/cuda_check.h>
#include <gpu_assembly/base/cuda_handles.h>

#include <cuda_runtime.h>

namespace GPUAssembly
{
  namespace internal
  {
    void
    destroy_cuda_handle(CUstream_st *stream) noexcept
    {
      GPU_ASSEMBLY_CHECK_CUDA_NOTHROW(cudaStreamDestroy(stream));
    }



    void
    destroy_cuda_handle(CUevent_st *event) noexcept
    {
      GPU_ASSEMBLY_CHECK_CUDA_NOTHROW(cudaEventDestroy(event));
    }



    void
    destroy_cuda_handle(CUgraph_st *graph) noexcept
    {
      GPU_ASSEMBLY_CHECK_CUDA_NOTHROW(cudaGraphDestroy(graph));
    }



    void
    destroy_cuda_handle(CUgraphExec_st *graph_exec) noexcept
    {
      GPU_ASSEMBLY_CHECK_CUDA_NOTHROW(cudaGraphExecDestroy(graph_exec));
    }
  } // namespace internal



  namespace
  {
    cudaStream_t
    create_stream()
    {
      cudaStream_t stream = nullptr;
      GPU_ASSEMBLY_CHECK_CUDA(cudaStreamCreate(&stream));
      return stream;
    }



    cudaEvent_t
    create_event()
    {
      cudaEvent_t event = nullptr;
      GPU_ASSEMBLY_CHECK_CUDA(cudaEventCreate(&event));
      return event;
    }



    cudaGraphExec_t
    instantiate(const cudaGraph_t graph)
    {
      cudaGraphExec_t graph_exec = nullptr;
      GPU_ASSEMBLY_CHECK_CUDA(cudaGraphInstantiate(&graph_exec, graph, 0));
      return graph_exec;
    }
  } // namespace



  CudaStream::CudaStream()
    : UniqueCudaHandle(create_stream())
  {}



  CudaEvent::CudaEvent()
    : UniqueCudaHandle(create_event())
  {}



  CudaGraphExec::CudaGraphExec(const CudaGraph &graph)
    : UniqueCudaHandle(instantiate(graph.get()))
  {}
} // namespace GPUAssembly

// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_base_cuda_handles_h
#define gpu_assembly_base_cuda_handles_h

// cudaStream_t, cudaEvent_t, cudaGraph_t and cudaGraphExec_t are pointers to
// these: the owners below need no CUDA header, so host code can hold them.
struct CUstream_st;
struct CUevent_st;
struct CUgraph_st;
struct CUgraphExec_st;

namespace GPUAssembly
{
  namespace internal
  {
    /// Destroy a CUDA object; a failure is reported, never thrown.
    void
    destroy_cuda_handle(CUstream_st *stream) noexcept;
    void
    destroy_cuda_handle(CUevent_st *event) noexcept;
    void
    destroy_cuda_handle(CUgraph_st *graph) noexcept;
    void
    destroy_cuda_handle(CUgraphExec_st *graph_exec) noexcept;

    /**
     * Sole owner of a CUDA runtime object (a stream, an event, a graph or
     * an executable graph): destroyed with its owner, moved but never
     * copied, so that no code path, a throwing one included, can leak it
     * or destroy it twice.
     */
    template <typename Object>
    class UniqueCudaHandle
    {
    public:
      UniqueCudaHandle() = default;

      /// Take ownership of @p handle (nullptr: own nothing).
      explicit UniqueCudaHandle(Object *handle) noexcept
        : handle(handle)
      {}

      UniqueCudaHandle(const UniqueCudaHandle &) = delete;

      UniqueCudaHandle &
      operator=(const UniqueCudaHandle &) = delete;

      UniqueCudaHandle(UniqueCudaHandle &&other) noexcept
        : handle(other.handle)
      {
        other.handle = nullptr;
      }

      UniqueCudaHandle &
      operator=(UniqueCudaHandle &&other) noexcept
      {
        if (this != &other)
          {
            reset();
            handle       = other.handle;
            other.handle = nullptr;
          }
        return *this;
      }

      ~UniqueCudaHandle()
      {
        reset();
      }

      /// The CUDA handle (cudaStream_t etc.), nullptr if none is owned.
      Object *
      get() const noexcept
      {
        return handle;
      }

      explicit operator bool() const noexcept
      {
        return handle != nullptr;
      }

      /// Destroy the object now, if any, and own nothing.
      void
      reset() noexcept
      {
        if (handle != nullptr)
          destroy_cuda_handle(handle);
        handle = nullptr;
      }

    private:
      Object *handle = nullptr;
    };
  } // namespace internal



  /**
   * A CUDA stream, created by cudaStreamCreate(): a blocking stream, so
   * that work on it stays ordered with the legacy default stream.
   */
  class CudaStream : public internal::UniqueCudaHandle<CUstream_st>
  {
  public:
    CudaStream();
  };



  /**
   * A CUDA event, created by cudaEventCreate() (with timing).
   */
  class CudaEvent : public internal::UniqueCudaHandle<CUevent_st>
  {
  public:
    CudaEvent();
  };



  /**
   * A CUDA graph: empty until it takes a graph over (from the end of a
   * stream capture, say).
   */
  class CudaGraph : public internal::UniqueCudaHandle<CUgraph_st>
  {
  public:
    using UniqueCudaHandle::UniqueCudaHandle;
  };



  /**
   * An executable CUDA graph: empty, or instantiated from a graph.
   */
  class CudaGraphExec : public internal::UniqueCudaHandle<CUgraphExec_st>
  {
  public:
    CudaGraphExec() = default;

    /// cudaGraphInstantiate(@p graph) with no flags.
    explicit CudaGraphExec(const CudaGraph &graph);
  };
} // namespace GPUAssembly

#endif

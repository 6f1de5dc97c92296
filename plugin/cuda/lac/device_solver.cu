// SPDX-License-Identifier: LGPL-2.1-or-later
#include <gpu_assembly/base/cuda_check.h>
#include <gpu_assembly/lac/block_sum.cuh>
#include <gpu_assembly/lac/device_solver.h>
#include <gpu_assembly/lac/graph_capture.cuh>

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <string>
#include <utility>

namespace GPUAssembly
{
  namespace
  {
    constexpr unsigned int block_size = DeviceReduction<double>::block_size;

    template <typename Number>
    __global__ void
    dot_kernel(const Number     *x,
               const Number     *y,
               const std::size_t n,
               double           *partial)
    {
      double sum[1] = {0.};
      for (std::size_t i = blockIdx.x * std::size_t(block_size) + threadIdx.x;
           i < n;
           i += std::size_t(gridDim.x) * block_size)
        sum[0] += double(x[i]) * double(y[i]);
      store_block_sums<block_size>(sum, partial);
    }



    // One block: sum over blocks of partial sum s into slot_0 (s = 0) or
    // slot_1 (s = 1).
    __global__ void
    finish_kernel(const double      *partial,
                  const unsigned int n_blocks,
                  const unsigned int n_sums,
                  double            *slots,
                  const unsigned int slot_0,
                  const unsigned int slot_1)
    {
      if (n_sums == 1)
        {
          double total[1];
          sum_partials<block_size>(partial, n_blocks, total);
          if (threadIdx.x == 0)
            slots[slot_0] = total[0];
        }
      else
        {
          double total[2];
          sum_partials<block_size>(partial, n_blocks, total);
          if (threadIdx.x == 0)
            {
              slots[slot_0] = total[0];
              slots[slot_1] = total[1];
            }
        }
    }



    // The iteration of preconditioned_cg.h with the Jacobi preconditioner.
    template <typename Number>
    using JacobiStart = CGStartStep<Number, PointJacobi<Number>>;
    template <typename Number>
    using JacobiUpdate = CGUpdateStep<Number, PointJacobi<Number>>;

    // The graph's loop condition, where the loop is a graph's "while" node
    // (handle 0: a host-driven loop, which reads CGScalars::go_on).
    __device__ void
    set_condition(const unsigned long long handle, const bool go_on)
    {
      if (handle != 0)
        cudaGraphSetConditional(handle, go_on ? 1u : 0u);
    }



    // CGStartStep; block sums of r.z and r.r.
    template <typename Number>
    __global__ void
    cg_start(const Number     *b,
             const Number     *inverse_diagonal,
             Number           *x,
             Number           *r,
             Number           *z,
             Number           *p,
             const std::size_t n,
             double           *partial)
    {
      const JacobiStart<Number> step{b,
                                     PointJacobi<Number>{inverse_diagonal},
                                     x,
                                     r,
                                     z,
                                     p};
      double                    sums[2] = {0., 0.};
      for (std::size_t i = blockIdx.x * std::size_t(block_size) + threadIdx.x;
           i < n;
           i += std::size_t(gridDim.x) * block_size)
        step(i, sums);
      store_block_sums<block_size>(sums, partial);
    }



    // One block: r.z and r.r of the start, the tolerance, and whether to
    // iterate at all.
    __global__ void
    cg_start_decision(const double            *partial,
                      const unsigned int       n_partials,
                      const CGControl          control,
                      const unsigned long long handle,
                      double                  *state)
    {
      double total[2];
      sum_partials<block_size>(partial, n_partials, total);
      if (threadIdx.x == 0)
        set_condition(handle,
                      CGScalars::start(state, total[0], total[1], control));
    }



    // q = A p for a CSR matrix, eight threads per row (an elasticity row
    // of linear tetrahedra has about 40 entries), plus the block sums of
    // p.q. The eight partial row sums are combined by a butterfly, which
    // gives every lane the same, order-independent value.
    constexpr unsigned int spmv_threads_per_row = 8;
    constexpr unsigned int spmv_rows_per_block =
      block_size / spmv_threads_per_row;

    template <typename Number>
    __global__ void
    cg_spmv(const int *__restrict__ row_offsets,
            const int *__restrict__ column_indices,
            const Number *__restrict__ values,
            const Number *__restrict__ p,
            Number            *q,
            const unsigned int n,
            double            *partial,
            double            *state)
    {
      // The last direction kernel's r.z becomes current: every block of
      // that kernel has read the old one by now, and cg_update, the next
      // reader, starts after this kernel.
      if (blockIdx.x == 0 && threadIdx.x == 0)
        CGScalars::next_iteration(state);
      const unsigned int lane  = threadIdx.x % spmv_threads_per_row;
      const unsigned int group = threadIdx.x / spmv_threads_per_row;
      double             pq[1] = {0.};
      for (unsigned int first = blockIdx.x * spmv_rows_per_block; first < n;
           first += gridDim.x * spmv_rows_per_block)
        {
          const unsigned int row = first + group;
          Number             sum = 0;
          if (row < n)
            for (int j = row_offsets[row] + lane; j < row_offsets[row + 1];
                 j += spmv_threads_per_row)
              sum += values[j] * p[column_indices[j]];
          for (unsigned int offset = spmv_threads_per_row / 2; offset > 0;
               offset /= 2)
            sum += __shfl_xor_sync(0xffffffffu, sum, offset);
          if (lane == 0 && row < n)
            {
              q[row] = sum;
              pq[0] += double(sum) * double(p[row]);
            }
        }
      store_block_sums<block_size>(pq, partial);
    }



    // alpha = r.z / p.q and CGUpdateStep; block sums of the new r.z and
    // r.r. On a breakdown no update, and the solve ends here.
    template <typename Number>
    __global__ void
    cg_update(const Number            *p,
              const Number            *q,
              const Number            *inverse_diagonal,
              Number                  *x,
              Number                  *r,
              Number                  *z,
              const std::size_t        n,
              const double            *spmv_partial,
              const unsigned int       n_spmv_partials,
              const unsigned long long handle,
              double                  *state,
              double                  *partial)
    {
      double pq[1];
      sum_partials<block_size>(spmv_partial, n_spmv_partials, pq);
      double     alpha   = 0;
      const bool proceed = CGScalars::step_length(state, pq[0], alpha);
      double     sums[2] = {0., 0.};
      if (proceed)
        {
          const JacobiUpdate<Number> step{Number(alpha),
                                          p,
                                          q,
                                          PointJacobi<Number>{inverse_diagonal},
                                          x,
                                          r,
                                          z};
          for (std::size_t i =
                 blockIdx.x * std::size_t(block_size) + threadIdx.x;
               i < n;
               i += std::size_t(gridDim.x) * block_size)
            step(i, sums);
        }
      else if (blockIdx.x == 0 && threadIdx.x == 0)
        {
          // Other blocks read only CGScalars::rz of the state.
          CGScalars::set_breakdown(state);
          set_condition(handle, false);
        }
      store_block_sums<block_size>(sums, partial);
    }



    // beta and CGDirectionStep; and, in one thread, the stopping decision.
    // The new r.z goes to a separate slot, which the next SpMV makes
    // current: other blocks may still be reading the old one. Every block
    // has the same sums, so one thread of any block can decide; deciding
    // here saves a kernel per iteration.
    template <typename Number>
    __global__ void
    cg_direction(const Number            *z,
                 Number                  *p,
                 const std::size_t        n,
                 const double            *partial,
                 const unsigned int       n_partials,
                 const unsigned int       max_iterations,
                 const unsigned long long handle,
                 double                  *state)
    {
      if (state[CGScalars::breakdown] != 0)
        return;
      double total[2];
      sum_partials<block_size>(partial, n_partials, total);
      const CGDirectionStep<Number>
        step{Number(CGScalars::direction_coefficient(state, total[0])), z, p};
      for (std::size_t i = blockIdx.x * std::size_t(block_size) + threadIdx.x;
           i < n;
           i += std::size_t(gridDim.x) * block_size)
        step(i);
      if (blockIdx.x == 0 && threadIdx.x == 0)
        set_condition(
          handle,
          CGScalars::end_iteration(state, total[0], total[1], max_iterations));
    }



    // Blocks of the SpMV: a function of n alone, so that the order of the
    // p.q sums, and so the result, does not depend on the device.
    unsigned int
    spmv_blocks(const std::size_t n)
    {
      const std::size_t blocks =
        (n + 4 * spmv_rows_per_block - 1) / (4 * spmv_rows_per_block);
      return static_cast<unsigned int>(
        std::clamp<std::size_t>(blocks, 1, 2048));
    }
  } // namespace



  template <typename Number>
  DeviceReduction<Number>::DeviceReduction()
    : partial(2 * max_blocks)
    , scalar_slots(n_slots)
  {}



  template <typename Number>
  unsigned int
  DeviceReduction<Number>::n_blocks(const std::size_t n)
  {
    // Four entries per thread at least: fewer, fuller blocks make the
    // second pass cheap; the count depends on n only (reproducibility).
    const std::size_t blocks = (n + 4 * block_size - 1) / (4 * block_size);
    return static_cast<unsigned int>(
      std::clamp<std::size_t>(blocks, 1, max_blocks));
  }



  template <typename Number>
  void
  DeviceReduction<Number>::finish(const unsigned int n_blocks,
                                  const unsigned int n_sums,
                                  const unsigned int slot_0,
                                  const unsigned int slot_1) const
  {
    finish_kernel<<<1, block_size>>>(partial.data(),
                                     n_blocks,
                                     n_sums,
                                     scalar_slots.data(),
                                     slot_0,
                                     slot_1);
    GPU_ASSEMBLY_CHECK_CUDA(cudaGetLastError());
  }



  template <typename Number>
  void
  DeviceReduction<Number>::dot_to_slot(const DeviceVector<Number> &x,
                                       const DeviceVector<Number> &y,
                                       const unsigned int          slot) const
  {
    const unsigned int blocks = n_blocks(x.size());
    dot_kernel<<<blocks, block_size>>>(x.data(),
                                       y.data(),
                                       x.size(),
                                       partial.data());
    GPU_ASSEMBLY_CHECK_CUDA(cudaGetLastError());
    finish(blocks, 1, slot, slot);
  }



  template <typename Number>
  void
  DeviceReduction<Number>::read_slots(const unsigned int first_slot,
                                      const unsigned int n,
                                      double            *values) const
  {
    GPU_ASSEMBLY_CHECK_CUDA(cudaMemcpy(values,
                                       scalar_slots.data() + first_slot,
                                       n * sizeof(double),
                                       cudaMemcpyDeviceToHost));
  }



  template <typename Number>
  double
  DeviceReduction<Number>::dot(const DeviceVector<Number> &x,
                               const DeviceVector<Number> &y) const
  {
    dot_to_slot(x, y, n_slots - 1);
    double result = 0;
    read_slots(n_slots - 1, 1, &result);
    return result;
  }



  template <typename Number>
  double
  DeviceReduction<Number>::l2_norm(const DeviceVector<Number> &x) const
  {
    return std::sqrt(dot(x, x));
  }



  template <typename Number>
  bool
  DeviceJacobiCG<Number>::GraphKey::operator==(const GraphKey &other) const
  {
    return std::equal(std::begin(pointers),
                      std::end(pointers),
                      std::begin(other.pointers)) &&
           n == other.n && relative_tolerance == other.relative_tolerance &&
           absolute_tolerance == other.absolute_tolerance &&
           max_iterations == other.max_iterations;
  }



  template <typename Number>
  DeviceJacobiCG<Number>::DeviceJacobiCG()
    : spmv_partial(2048)
    , partial(2 * DeviceReduction<Number>::max_blocks)
    , state(CGScalars::size)
  {}



  template <typename Number>
  DeviceJacobiCG<Number>::~DeviceJacobiCG()
  {
    release_graph();
  }



  template <typename Number>
  void
  DeviceJacobiCG<Number>::disable_graph()
  {
    release_graph();
    graph_supported = false;
  }



  template <typename Number>
  void
  DeviceJacobiCG<Number>::release_graph() const noexcept
  {
    graph_exec.reset();
    graph.reset();
    graph_key = GraphKey();
  }



  namespace
  {
    template <typename T>
    struct NonDeduced
    {
      using type = T;
    };

    // A sequence of kernel launches, run at once on a stream (captured, if
    // the stream is capturing) or, given a graph, added to it as a chain of
    // kernel nodes: the CG lists its kernels once and runs them either way.
    class KernelSequence
    {
    public:
      explicit KernelSequence(cudaGraph_t graph)
        : graph(graph)
        , stream(nullptr)
      {}

      explicit KernelSequence(cudaStream_t stream)
        : graph(nullptr)
        , stream(stream)
      {}

      // The arguments take the kernel's parameter types (converted here,
      // not deduced), since a launch copies them byte for byte.
      template <typename... Args>
      void
      operator()(void (*kernel)(Args...),
                 const unsigned int grid,
                 const unsigned int block,
                 const typename NonDeduced<Args>::type... arguments)
      {
        void *argument_pointers[] = {(void *)&arguments...};
        if (graph == nullptr)
          {
            GPU_ASSEMBLY_CHECK_CUDA(cudaLaunchKernel((const void *)kernel,
                                                     dim3(grid),
                                                     dim3(block),
                                                     argument_pointers,
                                                     0,
                                                     stream));
            return;
          }
        cudaKernelNodeParams parameters = {};
        parameters.func                 = (void *)kernel;
        parameters.gridDim              = dim3(grid);
        parameters.blockDim             = dim3(block);
        parameters.kernelParams         = argument_pointers;
        cudaGraphNode_t node;
        GPU_ASSEMBLY_CHECK_CUDA(
          cudaGraphAddKernelNode(&node,
                                 graph,
                                 last != nullptr ? &last : nullptr,
                                 last != nullptr ? 1 : 0,
                                 &parameters));
        last = node;
      }

    private:
      cudaGraph_t     graph;
      cudaStream_t    stream;
      cudaGraphNode_t last = nullptr;
    };



    // What the CG's kernels read and write, gathered once per solve.
    template <typename Number>
    struct CGArguments
    {
      const int    *row_offsets;
      const int    *column_indices;
      const Number *values;
      const Number *inverse_diagonal;
      const Number *b;
      Number       *x, *r, *z, *p, *q;
      double       *spmv_partial, *partial, *state;
      std::size_t   n;
      unsigned int  blocks, spmv_grid;
      CGControl     control;
      /// The graph's loop condition; 0 in a host-driven loop.
      unsigned long long handle;
    };

    // The initial residual and the decision whether to iterate at all.
    template <typename Number>
    void
    enqueue_start(KernelSequence &launch, const CGArguments<Number> &a)
    {
      launch(cg_start<Number>,
             a.blocks,
             block_size,
             a.b,
             a.inverse_diagonal,
             a.x,
             a.r,
             a.z,
             a.p,
             a.n,
             a.partial);
      launch(cg_start_decision,
             1u,
             block_size,
             a.partial,
             a.blocks,
             a.control,
             a.handle,
             a.state);
    }

    // One iteration and the decision whether to go on.
    template <typename Number>
    void
    enqueue_iteration(KernelSequence &launch, const CGArguments<Number> &a)
    {
      launch(cg_spmv<Number>,
             a.spmv_grid,
             block_size,
             a.row_offsets,
             a.column_indices,
             a.values,
             a.p,
             a.q,
             static_cast<unsigned int>(a.n),
             a.spmv_partial,
             a.state);
      launch(cg_update<Number>,
             a.blocks,
             block_size,
             a.p,
             a.q,
             a.inverse_diagonal,
             a.x,
             a.r,
             a.z,
             a.n,
             a.spmv_partial,
             a.spmv_grid,
             a.handle,
             a.state,
             a.partial);
      launch(cg_direction<Number>,
             a.blocks,
             block_size,
             a.z,
             a.p,
             a.n,
             a.partial,
             a.blocks,
             a.control.max_iterations,
             a.handle,
             a.state);
    }

    // The solve's loop as a "while" node of the graph @p stream captures,
    // after the start kernels: the whole solve. False where the driver
    // does not support conditional nodes (a partial graph is left, which
    // the caller discards).
    template <typename Number>
    bool
    capture_solve(CGArguments<Number> arguments, const cudaStream_t stream)
    {
      // The start's decision kernel sets the loop's condition: the handle
      // comes first.
      if (!create_condition(capturing_graph(stream), arguments.handle))
        return false;
      KernelSequence start(stream);
      enqueue_start(start, arguments);
      const cudaGraph_t body = capture_while_node(stream, arguments.handle);
      if (body == nullptr)
        return false;
      KernelSequence iteration(body);
      enqueue_iteration(iteration, arguments);
      return true;
    }

    // The whole solve as a graph of its own, captured from a private
    // stream. Returns false, with no graph left, where the driver does not
    // support conditional nodes.
    template <typename Number>
    bool
    build_cg_graph(const CGArguments<Number> &arguments,
                   CudaGraph                 &graph,
                   CudaGraphExec             &graph_exec)
    {
      const CudaStream stream;
      bool             supported = false;
      CudaGraph        captured;
      {
        StreamCapture capture(stream.get());
        supported = capture_solve(arguments, stream.get());
        captured  = capture.end();
      }
      if (!supported)
        return false;
      CudaGraphExec instance(captured);
      graph      = std::move(captured);
      graph_exec = std::move(instance);
      return true;
    }
  } // namespace



  template <typename Number>
  void
  DeviceJacobiCG<Number>::initialize(
    const DeviceCSRMatrix<Number> &A,
    const DeviceVector<Number>    &inverse_diagonal,
    DeviceVector<Number>          &x,
    const DeviceVector<Number>    &b) const
  {
    const std::size_t n = b.size();
    if (A.m() != n || inverse_diagonal.size() != n)
      internal::throw_error("DeviceJacobiCG: the matrix has " +
                            std::to_string(A.m()) +
                            " rows, the right-hand side " + std::to_string(n) +
                            " entries and the inverse diagonal " +
                            std::to_string(inverse_diagonal.size()) + ".");
    if (x.size() != n)
      x.reinit(n);
    for (DeviceVector<Number> *v : {&r, &z, &p, &q})
      if (v->size() != n)
        v->reinit(n);
  }



  namespace
  {
    template <typename Number>
    CGArguments<Number>
    make_arguments(const DeviceCSRMatrix<Number> &A,
                   const DeviceVector<Number>    &inverse_diagonal,
                   DeviceVector<Number>          &x,
                   const DeviceVector<Number>    &b,
                   DeviceVector<Number>          &r,
                   DeviceVector<Number>          &z,
                   DeviceVector<Number>          &p,
                   DeviceVector<Number>          &q,
                   DeviceVector<double>          &spmv_partial,
                   DeviceVector<double>          &partial,
                   DeviceVector<double>          &state,
                   const typename DeviceJacobiCG<Number>::Control &control)
    {
      const std::size_t n = b.size();
      return {A.get_row_offsets().data(),
              A.get_column_indices().data(),
              A.get_values().data(),
              inverse_diagonal.data(),
              b.data(),
              x.data(),
              r.data(),
              z.data(),
              p.data(),
              q.data(),
              spmv_partial.data(),
              partial.data(),
              state.data(),
              n,
              DeviceReduction<Number>::n_blocks(n),
              spmv_blocks(n),
              control,
              0};
    }
  } // namespace



  template <typename Number>
  void
  DeviceJacobiCG<Number>::enqueue_solve(
    const DeviceCSRMatrix<Number> &A,
    const DeviceVector<Number>    &inverse_diagonal,
    DeviceVector<Number>          &x,
    const DeviceVector<Number>    &b,
    const Control                 &control,
    CUstream_st                   *stream) const
  {
    initialize(A, inverse_diagonal, x, b);
    CGArguments<Number> arguments = make_arguments(A,
                                                   inverse_diagonal,
                                                   x,
                                                   b,
                                                   r,
                                                   z,
                                                   p,
                                                   q,
                                                   spmv_partial,
                                                   partial,
                                                   state,
                                                   control);

    cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    if (stream != nullptr)
      GPU_ASSEMBLY_CHECK_CUDA(cudaStreamIsCapturing(stream, &capture));
    if (capture == cudaStreamCaptureStatusActive)
      {
        // Into the caller's graph, which continues after the loop.
        if (!capture_solve(arguments, stream))
          internal::throw_error(
            "DeviceJacobiCG::enqueue_solve(): capturing a solve into a "
            "graph needs conditional graph nodes, which this driver does "
            "not support.");
        return;
      }

    GraphKey          key;
    const void *const pointers[] = {A.get_values().data(),
                                    A.get_row_offsets().data(),
                                    A.get_column_indices().data(),
                                    inverse_diagonal.data(),
                                    x.data(),
                                    b.data(),
                                    r.data(),
                                    p.data()};
    std::copy(std::begin(pointers), std::end(pointers), key.pointers);
    key.n                  = b.size();
    key.relative_tolerance = control.relative_tolerance;
    key.absolute_tolerance = control.absolute_tolerance;
    key.max_iterations     = control.max_iterations;

    if (graph_supported && !(graph_exec && key == graph_key))
      {
        release_graph();
        graph_supported = build_cg_graph(arguments, graph, graph_exec);
        if (graph_supported)
          graph_key = key;
      }

    if (graph_supported)
      GPU_ASSEMBLY_CHECK_CUDA(cudaGraphLaunch(graph_exec.get(), stream));
    else
      {
        const auto go_on = [&]() {
          double value = 0;
          GPU_ASSEMBLY_CHECK_CUDA(
            cudaMemcpyAsync(&value,
                            state.data() + CGScalars::go_on,
                            sizeof(double),
                            cudaMemcpyDeviceToHost,
                            stream));
          GPU_ASSEMBLY_CHECK_CUDA(cudaStreamSynchronize(stream));
          return value != 0;
        };
        KernelSequence launch(stream);
        enqueue_start(launch, arguments);
        while (go_on())
          enqueue_iteration(launch, arguments);
      }
  }



  template <typename Number>
  typename DeviceJacobiCG<Number>::Result
  DeviceJacobiCG<Number>::solve(const DeviceCSRMatrix<Number> &A,
                                const DeviceVector<Number>    &inverse_diagonal,
                                DeviceVector<Number>          &x,
                                const DeviceVector<Number>    &b,
                                const Control                 &control) const
  {
    enqueue_solve(A, inverse_diagonal, x, b, control, nullptr);
    double values[CGScalars::size];
    GPU_ASSEMBLY_CHECK_CUDA(
      cudaMemcpy(values, state.data(), sizeof(values), cudaMemcpyDeviceToHost));
    return CGScalars::result(values);
  }



  template class DeviceReduction<float>;
  template class DeviceReduction<double>;
  template class DeviceJacobiCG<float>;
  template class DeviceJacobiCG<double>;
} // namespace GPUAssembly

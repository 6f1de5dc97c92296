// SPDX-License-Identifier: LGPL-2.1-or-later
// The GPU TLED stepper: an element kernel (a thread per element, structure
// of arrays, coalesced element-force stores) and a node kernel (a thread
// per node: the fixed-order nodal sum, the central-difference update and the
// boundary conditions), a batch of steps captured into one CUDA graph.
// Compiled with -fmad=false (plugin/CMakeLists.txt) so that the arithmetic
// of tled_element.h rounds as on the host.

#include <gpu_assembly/base/cuda_check.h>
#include <gpu_assembly/base/cuda_handles.h>
#include <gpu_assembly/base/device.h>
#include <gpu_assembly/base/kernel_launch.cuh>
#include <gpu_assembly/lac/device_vector.h>
#include <gpu_assembly/tled/tled_element.h>
#include <gpu_assembly/tled/tled_stepper.h>

#include <cuda_runtime.h>

#include <array>
#include <cstdint>

namespace GPUAssembly
{
  namespace TLED
  {
    namespace
    {
      constexpr unsigned int element_block = 128;
      constexpr unsigned int node_block    = 256;

      /**
       * Forces of element e from the structure-of-arrays model; with @p
       * atomic added to the nodal forces (component i of node n at i *
       * node_stride + n), else stored at (3 a + i) * element_stride + e.
       */
      template <int npe, typename Number, bool atomic>
      __global__ void
      __launch_bounds__(element_block)
        element_kernel(const int *__restrict__ connectivity,
                       const Number *__restrict__ gradients,
                       const Number *__restrict__ volumes,
                       const Number *__restrict__ hourglass,
                       const Number *__restrict__ u,
                       Number *__restrict__ forces,
                       const int    n_elements,
                       const int    element_stride,
                       const int    node_stride,
                       const Number mu,
                       const Number lambda)
      {
        const int e = blockIdx.x * blockDim.x + threadIdx.x;
        if (e >= n_elements)
          return;
        int    nodes[npe];
        Number ue[npe][3], b[npe][3], c[4][3], k = 0, f[npe][3];
#pragma unroll
        for (int a = 0; a < npe; ++a)
          nodes[a] = __ldg(connectivity + a * element_stride + e);
#pragma unroll
        for (int a = 0; a < npe; ++a)
#pragma unroll
          for (int i = 0; i < 3; ++i)
            {
              ue[a][i] = __ldg(u + i * node_stride + nodes[a]);
              b[a][i]  = __ldg(gradients + (3 * a + i) * element_stride + e);
            }
#pragma unroll
        for (int alpha = 0; alpha < 4; ++alpha)
#pragma unroll
          for (int K = 0; K < 3; ++K)
            c[alpha][K] =
              npe == 8 ?
                __ldg(hourglass + (3 * alpha + K) * element_stride + e) :
                Number(0);
        if (npe == 8)
          k = __ldg(hourglass + 12 * element_stride + e);
        element_forces<npe>(ue, b, __ldg(volumes + e), c, k, mu, lambda, f);
#pragma unroll
        for (int a = 0; a < npe; ++a)
#pragma unroll
          for (int i = 0; i < 3; ++i)
            if (atomic)
              atomicAdd(forces + i * node_stride + nodes[a], f[a][i]);
            else
              forces[(3 * a + i) * element_stride + e] = f[a][i];
      }



      /**
       * Node n's sum of its element forces (in the plan's order, or the
       * atomically summed nodal forces, which it then zeroes for the next
       * step), the central-difference update and the boundary conditions.
       * The step number is read from the device (*step_counter +
       * step_offset), so that a captured graph serves every batch.
       * status[0]: the smallest node whose force or u_{n+1} is not finite,
       * status[1]: the step n that computed it (both the largest unsigned
       * int while every step was finite); the steps after it return at once,
       * so that u_{n-1} and u_n, the last finite state, stay in their
       * buffers.
       */
      template <typename Number, bool atomic>
      __global__ void
      __launch_bounds__(node_block)
        node_kernel(const int *__restrict__ node_offsets,
                    const int *__restrict__ node_entries,
                    Number *__restrict__ forces,
                    const Number *__restrict__ u_prev,
                    const Number *__restrict__ u_curr,
                    Number *__restrict__ u_next,
                    const Number *__restrict__ coefficient,
                    const std::uint8_t *__restrict__ flags,
                    const Number *__restrict__ prescribed,
                    const Number *__restrict__ external,
                    const Number        b,
                    const Number        c,
                    const int           n_nodes,
                    const int           node_stride,
                    const int           element_stride,
                    const unsigned int *step_counter,
                    const unsigned int  step_offset,
                    const double        dt,
                    const double        ramp_time,
                    unsigned int       *status)
      {
        const int n = blockIdx.x * blockDim.x + threadIdx.x;
        if (n >= n_nodes)
          return;
        const unsigned int step = *step_counter + step_offset;
        // An earlier step was not finite; the threads of that step itself
        // all go on, so that the smallest node is found whatever the order.
        if (status[1] < step)
          return;
        Number f[3];
        if (atomic)
          {
#pragma unroll
            for (int i = 0; i < 3; ++i)
              {
                f[i]                        = forces[i * node_stride + n];
                forces[i * node_stride + n] = Number(0);
              }
          }
        else
          {
            const int j0 = __ldg(node_offsets + n),
                      j1 = __ldg(node_offsets + n + 1);
            int p        = __ldg(node_entries + j0);
#pragma unroll
            for (int i = 0; i < 3; ++i)
              f[i] = forces[p + i * element_stride];
            for (int j = j0 + 1; j < j1; ++j)
              {
                p = __ldg(node_entries + j);
#pragma unroll
                for (int i = 0; i < 3; ++i)
                  f[i] = f[i] + forces[p + i * element_stride];
              }
          }
        const std::uint8_t flag = __ldg(flags + n);
        const Number       a    = __ldg(coefficient + n);
        Number             r_n = 0, r_next = 0;
        if (flag & 8)
          r_n = Number(smooth_ramp(double(step) * dt, ramp_time));
        if (flag & 7)
          r_next = Number(smooth_ramp(double(step + 1) * dt, ramp_time));
#pragma unroll
        for (int i = 0; i < 3; ++i)
          {
            const int k = i * node_stride + n;
            if (flag & (1u << i))
              u_next[k] = r_next * __ldg(prescribed + k);
            else
              u_next[k] =
                central_difference(a,
                                   b,
                                   c,
                                   (flag & 8) ? r_n * __ldg(external + k) :
                                                Number(0),
                                   f[i],
                                   u_curr[k],
                                   u_prev[k]);
            if (!isfinite(f[i]) || !isfinite(u_next[k]))
              {
                atomicMin(status, unsigned(n));
                status[1] = step;
              }
          }
      }



      __global__ void
      advance_counter_kernel(unsigned int      *step_counter,
                             const unsigned int n_steps)
      {
        *step_counter += n_steps;
      }
    } // namespace



    template <typename Number>
    struct DeviceStepper<Number>::Implementation
    {
      NodalSum     nodal_sum       = NodalSum::plan;
      unsigned int steps_per_graph = 300;

      ElementType element_type = ElementType::hexahedron;
      int         npe = 8, n_nodes = 0, n_elements = 0, element_stride = 0,
          node_stride = 0;
      Number mu = 0, lambda = 0, b = 0, c = 0;
      double dt = 0, ramp_time = 0;

      DeviceVector<int>    connectivity, node_offsets, node_entries;
      DeviceVector<Number> gradients, volumes, hourglass, coefficient,
        prescribed, external, forces;
      DeviceVector<std::uint8_t> flags;
      DeviceVector<int>          step_counter; // the step n, as unsigned
      // node_kernel's status (node, step), as unsigned
      DeviceVector<int>                   non_finite_status;
      DeviceVector<Number>                u[3];
      GPUAssembly::internal::StateBuffers states;

      CudaStream                   stream;
      std::array<CudaGraphExec, 3> graphs; // by the index of u_{n-1}

      void
      launch_step(const unsigned int step_offset);

      /// Every step finite (as the kernels see it).
      void
      reset_status()
      {
        non_finite_status.copy_from_host(std::vector<int>(2, -1));
      }

      GPUAssembly::internal::StateLayout
      state_layout() const
      {
        return {3, std::size_t(n_nodes), std::size_t(node_stride)};
      }
    };



    template <typename Number>
    void
    DeviceStepper<Number>::Implementation::launch_step(
      const unsigned int step_offset)
    {
      cudaStream_t  s         = stream.get();
      const bool    is_atomic = nodal_sum == NodalSum::atomic;
      const Number *u_c       = u[states.current].data();
      const auto    elements  = [&](const auto kernel) {
        GPUAssembly::internal::launch_kernel_over("TLED element_kernel",
                                                  kernel,
                                                  n_elements,
                                                  element_block,
                                                  s,
                                                  connectivity.data(),
                                                  gradients.data(),
                                                  volumes.data(),
                                                  hourglass.data(),
                                                  u_c,
                                                  forces.data(),
                                                  n_elements,
                                                  element_stride,
                                                  node_stride,
                                                  mu,
                                                  lambda);
      };
      if (npe == 8)
        {
          if (is_atomic)
            elements(element_kernel<8, Number, true>);
          else
            elements(element_kernel<8, Number, false>);
        }
      else
        {
          if (is_atomic)
            elements(element_kernel<4, Number, true>);
          else
            elements(element_kernel<4, Number, false>);
        }
      GPUAssembly::internal::launch_kernel_over(
        "TLED node_kernel",
        is_atomic ? node_kernel<Number, true> : node_kernel<Number, false>,
        n_nodes,
        node_block,
        s,
        node_offsets.data(),
        node_entries.data(),
        forces.data(),
        u[states.previous].data(),
        u_c,
        u[states.next].data(),
        coefficient.data(),
        flags.data(),
        prescribed.data(),
        external.data(),
        b,
        c,
        n_nodes,
        node_stride,
        element_stride,
        reinterpret_cast<const unsigned int *>(step_counter.data()),
        step_offset,
        dt,
        ramp_time,
        reinterpret_cast<unsigned int *>(non_finite_status.data()));
      states.rotate();
    }



    template <typename Number>
    DeviceStepper<Number>::DeviceStepper(const NodalSum     nodal_sum,
                                         const unsigned int steps_per_graph)
    {
      if (n_cuda_devices() == 0)
        GPUAssembly::internal::throw_error(
          "TLED::DeviceStepper needs a CUDA device, and none was found. "
          "Use the host stepper (TLED::HostStepper) instead.");
      implementation            = std::make_unique<Implementation>();
      implementation->nodal_sum = nodal_sum;
      implementation->steps_per_graph =
        steps_per_graph > 0 ? steps_per_graph : 1;
    }



    template <typename Number>
    DeviceStepper<Number>::~DeviceStepper() = default;



    template <typename Number>
    void
    DeviceStepper<Number>::reinit(const Model<Number>      &model,
                                  const BoundaryConditions &bc,
                                  const Integration        &integration)
    {
      Implementation           &d = *implementation;
      std::vector<Number>       coefficient, prescribed, external;
      std::vector<std::uint8_t> flags;
      internal::make_update_data(model,
                                 bc,
                                 integration,
                                 coefficient,
                                 flags,
                                 prescribed,
                                 external,
                                 d.b,
                                 d.c);
      d.element_type   = model.element_type;
      d.npe            = model.nodes_per_element;
      d.n_nodes        = model.n_nodes;
      d.n_elements     = model.n_elements;
      d.element_stride = model.element_stride;
      d.node_stride    = model.node_stride;
      d.mu             = model.mu;
      d.lambda         = model.lambda;
      d.dt             = integration.time_step;
      d.ramp_time      = bc.ramp_time;
      d.connectivity.copy_from_host(model.connectivity);
      d.node_offsets.copy_from_host(model.node_offsets);
      d.node_entries.copy_from_host(model.node_entries);
      d.gradients.copy_from_host(model.shape_gradients);
      d.volumes.copy_from_host(model.volumes);
      if (model.hourglass.empty())
        d.hourglass.reinit(1);
      else
        d.hourglass.copy_from_host(model.hourglass);
      d.coefficient.copy_from_host(coefficient);
      d.flags.copy_from_host(flags);
      d.prescribed.copy_from_host(prescribed);
      d.external.copy_from_host(external);
      d.forces.reinit(d.nodal_sum == NodalSum::atomic ?
                        3 * std::size_t(d.node_stride) :
                        3 * std::size_t(d.npe) * d.element_stride);
      d.step_counter.reinit(1);
      d.reset_status();
      this->first_non_finite_node = static_cast<unsigned int>(-1);
      for (auto &v : d.u)
        v.reinit(3 * std::size_t(d.node_stride));
      d.states = {};
      for (auto &g : d.graphs)
        g.reset();
      GPU_ASSEMBLY_CHECK_CUDA(cudaDeviceSynchronize());
      this->current_step = 0;
    }



    template <typename Number>
    void
    DeviceStepper<Number>::set_state(const unsigned int         step,
                                     const std::vector<double> &u_previous,
                                     const std::vector<double> &u_current)
    {
      Implementation &d = *implementation;
      d.state_layout().set_states(u_previous, u_current, d.states, d.u);
      d.step_counter.copy_from_host(std::vector<int>(1, int(step)));
      // After a step that was not finite the element kernel of the skipped
      // steps still added to the atomic nodal forces, which the node kernel
      // zeroes only in steps it takes.
      if (this->first_non_finite_node != static_cast<unsigned int>(-1) &&
          d.nodal_sum == NodalSum::atomic)
        d.forces.set_zero();
      d.reset_status();
      this->first_non_finite_node = static_cast<unsigned int>(-1);
      GPU_ASSEMBLY_CHECK_CUDA(cudaDeviceSynchronize());
      this->current_step = step;
    }



    template <typename Number>
    void
    DeviceStepper<Number>::get_state(std::vector<double> &u_previous,
                                     std::vector<double> &u_current) const
    {
      const Implementation &d = *implementation;
      GPU_ASSEMBLY_CHECK_CUDA(cudaStreamSynchronize(d.stream.get()));
      d.state_layout().get_states(d.states, d.u, u_previous, u_current);
    }



    template <typename Number>
    void
    DeviceStepper<Number>::advance(const unsigned int n_steps)
    {
      Implementation &d = *implementation;
      if (d.n_elements == 0)
        GPUAssembly::internal::throw_error(
          "TLED::DeviceStepper::advance() called before reinit().");
      if (this->first_non_finite_node != static_cast<unsigned int>(-1))
        return;
      // Copies made on the legacy stream (set_state()) are complete: the
      // stream is a blocking one.
      const GPUAssembly::internal::StateBuffers start_states = d.states;
      const unsigned int                        start_step = this->current_step;
      const unsigned int                        batch      = d.steps_per_graph;
      unsigned int                              done       = 0;
      while (n_steps - done >= batch)
        {
          CudaGraphExec &exec = d.graphs[d.states.previous];
          if (!exec)
            {
              const unsigned int start_previous = d.states.previous;
              GPU_ASSEMBLY_CHECK_CUDA(
                cudaStreamBeginCapture(d.stream.get(),
                                       cudaStreamCaptureModeThreadLocal));
              for (unsigned int k = 0; k < batch; ++k)
                d.launch_step(k);
              GPUAssembly::internal::launch_kernel(
                "TLED advance_counter_kernel",
                advance_counter_kernel,
                1,
                1,
                0,
                d.stream.get(),
                reinterpret_cast<unsigned int *>(d.step_counter.data()),
                batch);
              cudaGraph_t graph = nullptr;
              GPU_ASSEMBLY_CHECK_CUDA(
                cudaStreamEndCapture(d.stream.get(), &graph));
              const CudaGraph owned(graph);
              exec = CudaGraphExec(owned);
              // Capturing launched nothing: the states are where they were.
              while (d.states.previous != start_previous)
                d.states.rotate();
            }
          GPU_ASSEMBLY_CHECK_CUDA(cudaGraphLaunch(exec.get(), d.stream.get()));
          for (unsigned int k = 0; k < batch; ++k)
            d.states.rotate();
          done += batch;
        }
      for (unsigned int k = 0; done + k < n_steps; ++k)
        d.launch_step(k);
      if (done < n_steps)
        GPUAssembly::internal::launch_kernel("TLED advance_counter_kernel",
                                             advance_counter_kernel,
                                             1,
                                             1,
                                             0,
                                             d.stream.get(),
                                             reinterpret_cast<unsigned int *>(
                                               d.step_counter.data()),
                                             n_steps - done);
      GPU_ASSEMBLY_CHECK_CUDA(cudaStreamSynchronize(d.stream.get()));
      this->current_step += n_steps;

      std::vector<int> status;
      d.non_finite_status.copy_to_host(status);
      if (status[0] != -1)
        {
          // The steps from the failed one on did nothing: the state is that
          // of the failed step's start, in the buffers the rotation had
          // reached there.
          const unsigned int failed = static_cast<unsigned int>(status[1]);
          d.states                  = start_states;
          for (unsigned int k = start_step; k < failed; ++k)
            d.states.rotate();
          this->current_step          = failed;
          this->first_non_finite_node = static_cast<unsigned int>(status[0]);
          d.step_counter.copy_from_host(std::vector<int>(1, int(failed)));
        }
    }



    template <typename Number>
    std::size_t
    DeviceStepper<Number>::memory_consumption() const
    {
      const Implementation &d = *implementation;
      std::size_t           bytes =
        d.connectivity.memory_consumption() +
        d.node_offsets.memory_consumption() +
        d.node_entries.memory_consumption() + d.gradients.memory_consumption() +
        d.volumes.memory_consumption() + d.hourglass.memory_consumption() +
        d.coefficient.memory_consumption() + d.prescribed.memory_consumption() +
        d.external.memory_consumption() + d.forces.memory_consumption() +
        d.flags.memory_consumption();
      for (const auto &v : d.u)
        bytes += v.memory_consumption();
      return bytes;
    }



    template class DeviceStepper<double>;
    template class DeviceStepper<float>;
  } // namespace TLED
} // namespace GPUAssembly

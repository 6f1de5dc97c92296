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
#include <memory>
#include <string>
#include <type_traits>

namespace GPUAssembly
{
  namespace TLED
  {
    namespace
    {
      constexpr unsigned int element_block = 128;
      constexpr unsigned int node_block    = 256;
      // The largest node block of the fused sum (threads per block): the
      // element arithmetic of a hexahedron in double needs about 250
      // registers a thread.
      constexpr unsigned int max_nodes_per_block = 256;

      /// The structure-of-arrays element data of the model on the device.
      template <typename Number>
      struct ElementData
      {
        const int *__restrict__ connectivity;
        const Number *__restrict__ gradients;
        const Number *__restrict__ volumes;
        const Number *__restrict__ hourglass;
        int    element_stride;
        int    node_stride;
        Number mu;
        Number lambda;
      };

      /**
       * Loads of element data. With @p evict_first they are marked as the
       * first lines for L2 to evict (an L2 cache policy from sm_80 on,
       * ld.global.cs before): read once a step, they then do not push out
       * the element forces and the nodal state, which the node kernel reads
       * right after (DeviceStepper::Implementation::stream_element_data).
       */
      template <bool evict_first>
      struct ElementDataLoad
      {
        std::uint64_t policy = 0;

        __device__
        ElementDataLoad()
        {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
          if constexpr (evict_first)
            asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;"
                : "=l"(policy));
#endif
        }

        template <typename T>
        __device__ __forceinline__ T
        operator()(const T *address) const
        {
          if constexpr (!evict_first)
            return __ldg(address);
          else
            {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
              T value;
              if constexpr (std::is_same_v<T, double>)
                asm("ld.global.nc.L2::cache_hint.f64 %0, [%1], %2;"
                    : "=d"(value)
                    : "l"(address), "l"(policy));
              else if constexpr (std::is_same_v<T, float>)
                asm("ld.global.nc.L2::cache_hint.f32 %0, [%1], %2;"
                    : "=f"(value)
                    : "l"(address), "l"(policy));
              else
                {
                  static_assert(std::is_same_v<T, int>);
                  asm("ld.global.nc.L2::cache_hint.s32 %0, [%1], %2;"
                      : "=r"(value)
                      : "l"(address), "l"(policy));
                }
              return value;
#else
              return __ldcs(address);
#endif
            }
        }
      };

      /// Forces @p f of element @p e at displacements @p u, and its nodes.
      template <int npe, typename Number, bool evict_first = false>
      __device__ __forceinline__ void
      compute_element(const ElementData<Number> &d,
                      const Number *__restrict__ u,
                      const int e,
                      int (&nodes)[npe],
                      Number (&f)[npe][3])
      {
        const ElementDataLoad<evict_first> load;
        const int                          s = d.element_stride;
        Number ue[npe][3], b[npe][3], c[4][3], k = 0;
#pragma unroll
        for (int a = 0; a < npe; ++a)
          nodes[a] = load(d.connectivity + a * s + e);
#pragma unroll
        for (int a = 0; a < npe; ++a)
#pragma unroll
          for (int i = 0; i < 3; ++i)
            {
              ue[a][i] = __ldg(u + i * d.node_stride + nodes[a]);
              b[a][i]  = load(d.gradients + (3 * a + i) * s + e);
            }
#pragma unroll
        for (int alpha = 0; alpha < 4; ++alpha)
#pragma unroll
          for (int K = 0; K < 3; ++K)
            c[alpha][K] = npe == 8 ?
                            load(d.hourglass + (3 * alpha + K) * s + e) :
                            Number(0);
        if (npe == 8)
          k = load(d.hourglass + 12 * s + e);
        element_forces<npe>(ue,
                            b,
                            load(d.volumes + e),
                            c,
                            k,
                            d.mu,
                            d.lambda,
                            f);
      }



      /**
       * Forces of element e from the structure-of-arrays model; with @p
       * atomic added to the nodal forces (component i of node n at i *
       * node_stride + n), else stored at (3 a + i) * element_stride + e.
       * @p evict_first: ElementDataLoad.
       */
      template <int npe, typename Number, bool atomic, bool evict_first = false>
      __global__ void
      __launch_bounds__(element_block)
        element_kernel(const ElementData<Number> d,
                       const Number *__restrict__ u,
                       Number *__restrict__ forces,
                       const int n_elements)
      {
        const int e = blockIdx.x * blockDim.x + threadIdx.x;
        if (e >= n_elements)
          return;
        int    nodes[npe];
        Number f[npe][3];
        compute_element<npe, Number, evict_first>(d, u, e, nodes, f);
#pragma unroll
        for (int a = 0; a < npe; ++a)
#pragma unroll
          for (int i = 0; i < 3; ++i)
            if (atomic)
              atomicAdd(forces + i * d.node_stride + nodes[a], f[a][i]);
            else
              forces[(3 * a + i) * d.element_stride + e] = f[a][i];
      }



      /// The per-node data of the update and the step's ramp inputs.
      template <typename Number>
      struct NodeData
      {
        const Number *__restrict__ u_prev;
        const Number *__restrict__ u_curr;
        Number *__restrict__ u_next;
        const Number *__restrict__ coefficient;
        const std::uint8_t *__restrict__ flags;
        const Number *__restrict__ prescribed;
        const Number *__restrict__ external;
        // g_n of the StepForces, read at the nodes of flag bit 4.
        const Number *__restrict__ step_force;
        Number              b;
        Number              c;
        int                 node_stride;
        const unsigned int *step_counter;
        unsigned int        step_offset;
        double              dt;
        double              ramp_time;
        // status[0]: the smallest node whose force or u_{n+1} is not
        // finite, status[1]: the step n that computed it (both the largest
        // unsigned int while every step was finite).
        unsigned int *status;
      };

      /**
       * Whether an earlier step than this one was not finite: then the
       * kernels of later steps return at once, so that u_{n-1} and u_n, the
       * last finite state, stay in their buffers. The threads of the failing
       * step itself all go on, so that the smallest node is found whatever
       * the order. The same for every thread of a launch.
       */
      template <typename Number>
      __device__ __forceinline__ bool
      after_non_finite_step(const NodeData<Number> &d)
      {
        return d.status[1] < *d.step_counter + d.step_offset;
      }

      /**
       * Node n's central-difference update from its internal force f and
       * the boundary conditions. The step number is read from the device
       * (*step_counter + step_offset), so that a captured graph serves
       * every batch.
       */
      template <typename Number>
      __device__ __forceinline__ void
      update_node(const NodeData<Number> &d, const int n, const Number (&f)[3])
      {
        const unsigned int step = *d.step_counter + d.step_offset;
        const std::uint8_t flag = __ldg(d.flags + n);
        const Number       a    = __ldg(d.coefficient + n);
        Number             r_n = 0, r_next = 0;
        if (flag & 8)
          r_n = Number(smooth_ramp(double(step) * d.dt, d.ramp_time));
        if (flag & 7)
          r_next = Number(smooth_ramp(double(step + 1) * d.dt, d.ramp_time));
#pragma unroll
        for (int i = 0; i < 3; ++i)
          {
            const int k = i * d.node_stride + n;
            if (flag & (1u << i))
              d.u_next[k] = r_next * __ldg(d.prescribed + k);
            else
              d.u_next[k] = central_difference(a,
                                               d.b,
                                               d.c,
                                               external_force(unsigned(flag),
                                                              r_n,
                                                              d.external,
                                                              d.step_force,
                                                              k),
                                               f[i],
                                               d.u_curr[k],
                                               d.u_prev[k]);
            if (!isfinite(f[i]) || !isfinite(d.u_next[k]))
              {
                atomicMin(d.status, unsigned(n));
                d.status[1] = step;
              }
          }
      }



      /**
       * Node n's sum of its element forces (in the plan's order, or the
       * atomically summed nodal forces, which it then zeroes for the next
       * step), then its update.
       */
      template <typename Number, bool atomic>
      __global__ void
      __launch_bounds__(node_block)
        node_kernel(const int *__restrict__ node_offsets,
                    const int *__restrict__ node_entries,
                    Number *__restrict__ forces,
                    const NodeData<Number> d,
                    const int              n_nodes,
                    const int              element_stride)
      {
        const int n = blockIdx.x * blockDim.x + threadIdx.x;
        if (n >= n_nodes)
          return;
        if (after_non_finite_step(d))
          return;
        Number f[3];
        if (atomic)
          {
#pragma unroll
            for (int i = 0; i < 3; ++i)
              {
                f[i]                          = forces[i * d.node_stride + n];
                forces[i * d.node_stride + n] = Number(0);
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
        update_node(d, n, f);
      }



      /**
       * The fused nodal sum: thread block k owns the nodes of node block k
       * (NodeBlocks), a thread per node. Its threads compute the block's
       * elements (stored in the Morton order of NodeBlocks, so that the
       * loads of a warp are close together), in turns of blockDim.x, into
       * shared memory by slot (component i of local node a of slot q at
       * (3 a + i) max_elements + q); then each node adds its entries in the
       * order of its list, plan's order, and applies the update. No element
       * force reaches global memory.
       */
      template <int npe, typename Number>
      __global__ void
      __launch_bounds__(max_nodes_per_block)
        fused_kernel(const int *__restrict__ block_nodes,
                     const int *__restrict__ element_offsets,
                     const int *__restrict__ elements,
                     const int *__restrict__ slots,
                     const int *__restrict__ entry_offsets,
                     const int *__restrict__ entries,
                     const int                 max_elements,
                     const ElementData<Number> element_data,
                     const NodeData<Number>    node_data)
      {
        if (after_non_finite_step(node_data))
          return;
        extern __shared__ __align__(16) unsigned char shared_bytes[];
        Number   *shared_forces = reinterpret_cast<Number *>(shared_bytes);
        const int B = blockDim.x, t = threadIdx.x, k = blockIdx.x;
        const int e0 = __ldg(element_offsets + k),
                  e1 = __ldg(element_offsets + k + 1);
        for (int q = e0 + t; q < e1; q += B)
          {
            int       nodes[npe];
            Number    fe[npe][3];
            const int slot = __ldg(slots + q);
            compute_element<npe>(element_data,
                                 node_data.u_curr,
                                 __ldg(elements + q),
                                 nodes,
                                 fe);
#pragma unroll
            for (int a = 0; a < npe; ++a)
#pragma unroll
              for (int i = 0; i < 3; ++i)
                shared_forces[(3 * a + i) * max_elements + slot] = fe[a][i];
          }
        __syncthreads();
        const int node = __ldg(block_nodes + k * B + t);
        if (node < 0)
          return;
        const int r0     = __ldg(entry_offsets + k);
        const int n_rows = (__ldg(entry_offsets + k + 1) - r0) / B;
        // -0 + x = x for every x: the sum starts with the first entry as
        // plan's does.
        Number f[3] = {Number(-0.), Number(-0.), Number(-0.)};
        for (int j = 0; j < n_rows; ++j)
          {
            const int entry = __ldg(entries + r0 + j * B + t);
            if (entry < 0)
              break;
            const int q = entry >> 3, a = entry & 7;
#pragma unroll
            for (int i = 0; i < 3; ++i)
              f[i] = f[i] + shared_forces[(3 * a + i) * max_elements + q];
          }
        update_node(node_data, node, f);
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
      unsigned int nodes_per_block = default_nodes_per_block;
      unsigned int n_blocks        = 0;
      unsigned int max_elements    = 0;
      // The plan's element kernel of hexahedra (where it was measured)
      // reads the element data evict-first (ElementDataLoad) where the
      // element forces and the nodal state fit in L2 together: they then
      // stay there from the element kernel to the node kernel and to the
      // next step, while the element data, read once a step, stream
      // through. Where the forces and the state alone do not fit, and where
      // all of a step's data take less than half of L2, the hint costs a
      // little and the plain loads are kept.
      bool stream_element_data = false;

      ElementType element_type = ElementType::hexahedron;
      int         npe = 8, n_nodes = 0, n_elements = 0, element_stride = 0,
          node_stride = 0;
      Number mu = 0, lambda = 0, b = 0, c = 0;
      double dt = 0, ramp_time = 0;

      DeviceVector<int>    connectivity, node_offsets, node_entries;
      DeviceVector<Number> gradients, volumes, hourglass, coefficient,
        prescribed, external, forces;
      // g_n of the StepForces (one entry without them).
      DeviceVector<Number>                step_force;
      std::shared_ptr<StepForces<Number>> step_forces;
      DeviceVector<std::uint8_t>          flags;
      // The node blocks of the fused sum (internal::NodeBlocks).
      DeviceVector<int> block_nodes, block_element_offsets, block_elements,
        block_slots, block_entry_offsets, block_entries;
      DeviceVector<int> step_counter; // the step n, as unsigned
      // The node kernels' status (node, step), as unsigned (NodeData).
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
      cudaStream_t              s = stream.get();
      const ElementData<Number> element_data{connectivity.data(),
                                             gradients.data(),
                                             volumes.data(),
                                             hourglass.data(),
                                             element_stride,
                                             node_stride,
                                             mu,
                                             lambda};
      const NodeData<Number>    node_data{
        u[states.previous].data(),
        u[states.current].data(),
        u[states.next].data(),
        coefficient.data(),
        flags.data(),
        prescribed.data(),
        external.data(),
        step_force.data(),
        b,
        c,
        node_stride,
        reinterpret_cast<const unsigned int *>(step_counter.data()),
        step_offset,
        dt,
        ramp_time,
        reinterpret_cast<unsigned int *>(non_finite_status.data())};
      if (step_forces)
        step_forces->enqueue(s,
                             step_offset,
                             u[states.current].data(),
                             step_force.data());
      if (nodal_sum == NodalSum::fused)
        {
          const auto fused = [&](const auto kernel) {
            const std::size_t shared_bytes =
              std::size_t(3) * npe * max_elements * sizeof(Number);
            GPUAssembly::internal::launch_kernel("TLED fused_kernel",
                                                 kernel,
                                                 n_blocks,
                                                 nodes_per_block,
                                                 shared_bytes,
                                                 s,
                                                 block_nodes.data(),
                                                 block_element_offsets.data(),
                                                 block_elements.data(),
                                                 block_slots.data(),
                                                 block_entry_offsets.data(),
                                                 block_entries.data(),
                                                 int(max_elements),
                                                 element_data,
                                                 node_data);
          };
          if (npe == 8)
            fused(fused_kernel<8, Number>);
          else
            fused(fused_kernel<4, Number>);
          states.rotate();
          return;
        }

      const bool is_atomic = nodal_sum == NodalSum::atomic;
      const auto elements  = [&](const auto kernel) {
        GPUAssembly::internal::launch_kernel_over("TLED element_kernel",
                                                  kernel,
                                                  n_elements,
                                                  element_block,
                                                  s,
                                                  element_data,
                                                  u[states.current].data(),
                                                  forces.data(),
                                                  n_elements);
      };
      if (npe == 8)
        {
          if (is_atomic)
            elements(element_kernel<8, Number, true>);
          else if (stream_element_data)
            elements(element_kernel<8, Number, false, true>);
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
      GPUAssembly::internal::launch_kernel_over("TLED node_kernel",
                                                is_atomic ?
                                                  node_kernel<Number, true> :
                                                  node_kernel<Number, false>,
                                                n_nodes,
                                                node_block,
                                                s,
                                                node_offsets.data(),
                                                node_entries.data(),
                                                forces.data(),
                                                node_data,
                                                n_nodes,
                                                element_stride);
      states.rotate();
    }



    template <typename Number>
    DeviceStepper<Number>::DeviceStepper(const NodalSum     nodal_sum,
                                         const unsigned int steps_per_graph,
                                         const unsigned int nodes_per_block)
    {
      if (nodal_sum == NodalSum::fused &&
          (nodes_per_block == 0 || nodes_per_block % 32 != 0 ||
           nodes_per_block > max_nodes_per_block))
        GPUAssembly::internal::throw_error(
          "TLED::DeviceStepper: nodes_per_block = " +
          std::to_string(nodes_per_block) +
          " is not a multiple of 32 from 32 to " +
          std::to_string(max_nodes_per_block) + ".");
      if (n_cuda_devices() == 0)
        GPUAssembly::internal::throw_error(
          "TLED::DeviceStepper needs a CUDA device, and none was found. "
          "Use the host stepper (TLED::HostStepper) instead.");
      implementation            = std::make_unique<Implementation>();
      implementation->nodal_sum = nodal_sum;
      implementation->steps_per_graph =
        steps_per_graph > 0 ? steps_per_graph : 1;
      implementation->nodes_per_block = nodes_per_block;
    }



    template <typename Number>
    DeviceStepper<Number>::~DeviceStepper() = default;



    template <typename Number>
    bool
    DeviceStepper<Number>::streams_element_data() const
    {
      return implementation->stream_element_data;
    }



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
                                 d.c,
                                 this->step_forces.get());
      d.step_forces = this->step_forces;
      d.step_force.reinit(this->step_forces ?
                            3 * std::size_t(model.node_stride) :
                            std::size_t(1));
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
      int device_index = 0;
      GPU_ASSEMBLY_CHECK_CUDA(cudaGetDevice(&device_index));
      const DeviceInfo     device = get_device_info(device_index);
      internal::NodeBlocks blocks;
      if (d.nodal_sum == NodalSum::fused)
        {
          blocks = internal::make_node_blocks(model, d.nodes_per_block);
          const std::size_t shared_bytes =
            std::size_t(3) * d.npe * blocks.max_elements * sizeof(Number);
          const std::size_t limit = device.shared_memory_per_block_optin;
          if (shared_bytes > limit)
            GPUAssembly::internal::throw_error(
              "TLED::DeviceStepper: a node block of " +
              std::to_string(d.nodes_per_block) + " nodes touches " +
              std::to_string(blocks.max_elements) +
              " elements, whose forces need " + std::to_string(shared_bytes) +
              " bytes of shared memory, more than the device's " +
              std::to_string(limit) + ". Use fewer nodes per block.");
        }
      // The fused sum reads the element arrays in the blocks' order.
      const auto element_array = [&](const auto &array, const int n_rows) {
        if (d.nodal_sum != NodalSum::fused || array.empty())
          return array;
        std::decay_t<decltype(array)> permuted(array.size());
        const std::size_t             stride = model.element_stride;
        for (int r = 0; r < n_rows; ++r)
          for (unsigned int p = 0; p < model.n_elements; ++p)
            permuted[r * stride + p] =
              array[r * stride + blocks.element_permutation[p]];
        return permuted;
      };
      d.connectivity.copy_from_host(element_array(model.connectivity, d.npe));
      d.node_offsets.copy_from_host(model.node_offsets);
      d.node_entries.copy_from_host(model.node_entries);
      d.gradients.copy_from_host(
        element_array(model.shape_gradients, 3 * d.npe));
      d.volumes.copy_from_host(element_array(model.volumes, 1));
      if (model.hourglass.empty())
        d.hourglass.reinit(1);
      else
        d.hourglass.copy_from_host(element_array(model.hourglass, 13));
      d.coefficient.copy_from_host(coefficient);
      d.flags.copy_from_host(flags);
      d.prescribed.copy_from_host(prescribed);
      d.external.copy_from_host(external);
      if (d.nodal_sum == NodalSum::fused)
        {
          d.n_blocks     = blocks.n_blocks;
          d.max_elements = blocks.max_elements;
          d.block_nodes.copy_from_host(blocks.nodes);
          d.block_element_offsets.copy_from_host(blocks.element_offsets);
          d.block_elements.copy_from_host(blocks.elements);
          d.block_slots.copy_from_host(blocks.slots);
          d.block_entry_offsets.copy_from_host(blocks.entry_offsets);
          // A mesh of one node per block has no entry row beyond the first.
          if (blocks.entries.empty())
            d.block_entries.reinit(1);
          else
            d.block_entries.copy_from_host(blocks.entries);
          d.forces.reinit(1);
        }
      else
        d.forces.reinit(d.nodal_sum == NodalSum::atomic ?
                          3 * std::size_t(d.node_stride) :
                          3 * std::size_t(d.npe) * d.element_stride);
      {
        // A step's data: the byte floor (element data, displacements and
        // nodal state) and the element forces; all but the element data are
        // touched twice.
        const std::size_t l2_bytes = device.l2_cache_bytes;
        const std::size_t force_bytes =
          std::size_t(3) * d.npe * model.n_elements * sizeof(Number);
        const std::size_t step_bytes =
          model.minimum_bytes_per_step() + force_bytes;
        const std::size_t hot_bytes =
          step_bytes -
          std::size_t(model.n_elements) * model.bytes_per_element();
        d.stream_element_data = d.nodal_sum == NodalSum::plan && d.npe == 8 &&
                                hot_bytes <= l2_bytes &&
                                2 * step_bytes > l2_bytes;
      }
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
          if (d.step_forces)
            d.step_forces->prepare(d.stream.get(), start_step + done, batch);
          GPU_ASSEMBLY_CHECK_CUDA(cudaGraphLaunch(exec.get(), d.stream.get()));
          for (unsigned int k = 0; k < batch; ++k)
            d.states.rotate();
          done += batch;
        }
      if (d.step_forces && done < n_steps)
        d.step_forces->prepare(d.stream.get(),
                               start_step + done,
                               n_steps - done);
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
        d.external.memory_consumption() + d.step_force.memory_consumption() +
        d.forces.memory_consumption() + d.flags.memory_consumption() +
        d.block_nodes.memory_consumption() +
        d.block_element_offsets.memory_consumption() +
        d.block_elements.memory_consumption() +
        d.block_slots.memory_consumption() +
        d.block_entry_offsets.memory_consumption() +
        d.block_entries.memory_consumption();
      for (const auto &v : d.u)
        bytes += v.memory_consumption();
      return bytes;
    }



    template class DeviceStepper<double>;
    template class DeviceStepper<float>;
  } // namespace TLED
} // namespace GPUAssembly

// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_engine_global_nz_kernels_cuh
#define gpu_assembly_engine_global_nz_kernels_cuh

// GlobalNZ's device kernels and their launch (GlobalNZDeviceData::launch()),
// for .cu files: device_assembler.templates.cuh includes it.

#include <gpu_assembly/base/cuda_check.h>
#include <gpu_assembly/base/kernel_launch.cuh>
#include <gpu_assembly/element/element_stage.h>
#include <gpu_assembly/engine/element_specialization.cuh>
#include <gpu_assembly/engine/element_stage_traits.h>
#include <gpu_assembly/engine/global_nz/device_data.h>

#include <cuda_runtime.h>

#include <cstddef>
#include <string>
#include <type_traits>

namespace GPUAssembly
{
  namespace internal
  {
    // GlobalNZ kernel 1: a block per element cluster prefetches the
    // cluster's nodal data into shared memory; a thread per element writes
    // its element data coalesced (stride = block size). Specializations
    // for linear simplices: see compute_element(). Their registers are
    // capped at 96 in double (a few bytes of spills, and five blocks of 128
    // threads per multiprocessor instead of four) and 64 in float (none):
    // the kernel mostly waits on its global loads, and lower caps make it
    // wait on its spills.
    template <
      int dim,
      typename Number,
      class Kernel,
      bool                  symmetric,
      ElementSpecialization specialization = ElementSpecialization::general>
    __global__ void
    __maxnreg__(specialization != ElementSpecialization::general ?
                  (sizeof(Number) > 4 ? 96 : 64) :
                  255)
      global_nz_element_kernel(const Kernel                   kernel,
                               const ElementStageData<Number> data,
                               const int                     *block_element,
                               const int           *cluster_node_offsets,
                               const int           *cluster_nodes,
                               const int           *block_connectivity,
                               const Number        *block_supplemental,
                               const int           *block_location,
                               const unsigned char *block_has_constraints,
                               const unsigned int   n_supplemental,
                               const unsigned int   n_matrix_entries,
                               const unsigned int   n_entries,
                               const unsigned int   entry_group,
                               const Number        *nodal_data,
                               Number              *element_data)
    {
      extern __shared__ __align__(16) unsigned char shared_bytes[];
      Number *shared_nodal = reinterpret_cast<Number *>(shared_bytes);

      const unsigned int k = blockIdx.x;
      const unsigned int t = threadIdx.x;
      const unsigned int B = blockDim.x;

      if constexpr (kernel_reads_nodal_data<Kernel>::value)
        {
          const int first = cluster_node_offsets[k];
          const int n_cluster_values =
            (cluster_node_offsets[k + 1] - first) * data.n_fields;
          for (int i = t; i < n_cluster_values; i += B)
            {
              const int node  = i / data.n_fields;
              const int field = i - node * data.n_fields;
              shared_nodal[i] =
                nodal_data[cluster_nodes[first + node] * data.n_fields + field];
            }
          __syncthreads();
        }

      const std::size_t slot = static_cast<std::size_t>(k) * B + t;
      if (block_element[slot] < 0)
        return;

      // GlobalNZPlan::element_data_index()'s layout.
      Number *const matrix = element_data +
                             static_cast<std::size_t>(k) * n_entries * B +
                             t * entry_group;
      Number *const vector =
        element_data +
        (static_cast<std::size_t>(k) * n_entries + n_matrix_entries) * B +
        t * entry_group;
      using Output =
        std::conditional_t<symmetric,
                           SymmetricElementOutput<Number>,
                           ElementOutput<Number, Kernel::n_components>>;
      Output output{matrix, vector, data.n_dofs, B};
      if constexpr (!symmetric)
        output.grouped = entry_group > 1;
      compute_element<dim, Number, Kernel, Output, specialization>(
        kernel,
        data,
        block_supplemental + static_cast<std::size_t>(k) * n_supplemental * B +
          t,
        shared_nodal,
        block_connectivity + static_cast<std::size_t>(k) * data.n_nodes * B + t,
        B,
        output,
        block_has_constraints[slot] != 0,
        block_location + static_cast<std::size_t>(k) * data.n_dofs * B + t);
    }



    // Walks one lane of a packed reduction array (Algorithm 2): entries
    // > 0 are sources to add, < 0 targets to store the sum to, 0 padding.
    // The lane is read in chunks whose source loads are all issued before
    // any is added, so that a thread keeps several loads in flight instead
    // of waiting for each in turn; the sums are still taken in list order.
    template <typename Number, class Load, class Store>
    __device__ inline void
    walk_reduction_lane(const int *__restrict__ lane,
                        const int    n_columns,
                        const int    stride,
                        const Load  &load,
                        const Store &store)
    {
      constexpr int chunk = 8;
      Number        sum   = 0;
      for (int j = 0; j < n_columns; j += chunk)
        {
          int    index[chunk];
          Number value[chunk];
#pragma unroll
          for (int u = 0; u < chunk; ++u)
            index[u] = j + u < n_columns ? lane[(j + u) * stride] : 0;
#pragma unroll
          for (int u = 0; u < chunk; ++u)
            value[u] = index[u] > 0 ? load(index[u] - 1) : Number(0);
#pragma unroll
          for (int u = 0; u < chunk; ++u)
            {
              sum += value[u];
              if (index[u] < 0)
                {
                  store(-index[u] - 1, sum);
                  sum = 0;
                }
            }
        }
    }



    // GlobalNZ kernel 2, Algorithm 2 of the chapter: each thread walks one
    // lane of the block's packed reduction lists, summing sources and
    // storing each sum to its target in shared memory; the block's
    // contiguous run of targets is then written out coalesced. With
    // symmetric element data a target is a pair of transposed nonzeros
    // (GlobalNZPlan::upper_position): its sum is stored twice, the upper
    // member coalesced along the row, the mirror scattered.
    template <typename Number>
    __global__ void
    global_nz_reduction_kernel(
      const int *__restrict__ block_order,
      const int *__restrict__ reduction_target_begin,
      const unsigned long long *__restrict__ slice_offsets,
      const unsigned long long *__restrict__ source_base,
      const int *__restrict__ reduction_array,
      const Number *__restrict__ element_data,
      const int n_value_targets,
      const int *__restrict__ upper_position,
      const int *__restrict__ mirror_position,
      Number *values,
      Number *rhs)
    {
      extern __shared__ __align__(16) unsigned char shared_bytes[];
      Number *targets = reinterpret_cast<Number *>(shared_bytes);

      const unsigned int r =
        block_order != nullptr ? block_order[blockIdx.x] : blockIdx.x;
      const unsigned int T         = blockDim.x;
      const int          first     = reduction_target_begin[r];
      const int          n_targets = reduction_target_begin[r + 1] - first;

      const unsigned int  slice       = r * (T / 32) + threadIdx.x / 32;
      const std::size_t   first_entry = slice_offsets[slice];
      const Number *const sources     = element_data + source_base[r];
      walk_reduction_lane<Number>(
        reduction_array + first_entry + threadIdx.x % 32,
        static_cast<int>((slice_offsets[slice + 1] - first_entry) / 32),
        32,
        [&](const int i) {
          return __ldg(sources + i);
        },
        [&](const int target, const Number sum) {
          targets[target] = sum;
        });
      __syncthreads();

      if (first >= n_value_targets)
        for (int i = threadIdx.x; i < n_targets; i += T)
          rhs[first - n_value_targets + i] = targets[i];
      else if (upper_position != nullptr)
        for (int i = threadIdx.x; i < n_targets; i += T)
          {
            const Number sum                  = targets[i];
            values[upper_position[first + i]] = sum;
            if (const int m = mirror_position[first + i]; m >= 0)
              values[m] = sum;
          }
      else
        for (int i = threadIdx.x; i < n_targets; i += T)
          values[first + i] = targets[i];
    }
  } // namespace internal



  namespace internal
  {
    template <typename Number>
    template <int dim, class Kernel>
    void
    GlobalNZDeviceData<Number>::launch(const Kernel                   &kernel,
                                       const ElementStageData<Number> &data,
                                       const AssemblyLaunch<Number> &call) const
    {
      const std::size_t nodal_bytes =
        static_cast<std::size_t>(plan.max_cluster_nodes) * data.n_fields *
        sizeof(Number);
      if constexpr (!is_symmetric_kernel<Kernel>::value)
        if (plan.parameters.symmetric)
          throw_error("DeviceAssembler::assemble(): the GlobalNZ plan stores "
                      "symmetric element data, but the element kernel does not "
                      "declare is_symmetric = true.");
      if (uses_own_element_stage(kernel))
        {
          if constexpr (ElementStageTraits<Kernel>::has_global_nz_stage)
            {
              using Traits = ElementStageTraits<Kernel>;
              // The check may walk the whole mesh: once per reinit().
              if (arrays_checked_by != &Traits::check_global_nz_arrays)
                {
                  Traits::check_global_nz_arrays(*arrays);
                  arrays_checked_by = &Traits::check_global_nz_arrays;
                }
              const GlobalNZStageArguments<Number> arguments{
                block_element.data(),
                cluster_node_offsets.data(),
                cluster_nodes.data(),
                block_connectivity.data(),
                block_supplemental.data(),
                plan.n_supplemental,
                plan.parameters.elements_per_block,
                static_cast<std::size_t>(plan.n_element_blocks) *
                  plan.parameters.elements_per_block,
                plan.entry_group,
                call.nodal_data,
                element_data.data(),
                plan.parameters.symmetric,
                plan.n_matrix_entries,
                plan.n_entries,
                any_constrained_element,
                block_has_constraints.data(),
                block_location.data()};
              Traits::launch_global_nz_stage(kernel,
                                             data,
                                             arguments,
                                             call.stream);
            }
        }
      else
        with_element_specialization<dim, Kernel>(
          data,
          [&](const auto specialization) {
            constexpr ElementSpecialization s = decltype(specialization)::value;
            const auto                      element_kernel =
              plan.parameters.symmetric ?
                                     global_nz_element_kernel<dim, Number, Kernel, true, s> :
                                     global_nz_element_kernel<dim, Number, Kernel, false, s>;
            launch_kernel("global_nz_element_kernel",
                          element_kernel,
                          plan.n_element_blocks,
                          plan.parameters.elements_per_block,
                          nodal_bytes,
                          call.stream,
                          kernel,
                          data,
                          block_element.data(),
                          cluster_node_offsets.data(),
                          cluster_nodes.data(),
                          block_connectivity.data(),
                          block_supplemental.data(),
                          block_location.data(),
                          block_has_constraints.data(),
                          plan.n_supplemental,
                          plan.n_matrix_entries,
                          plan.n_entries,
                          plan.entry_group,
                          call.nodal_data,
                          element_data.data());
          });

      const std::size_t target_bytes =
        static_cast<std::size_t>(plan.parameters.targets_per_block) *
        sizeof(Number);
      launch_kernel("global_nz_reduction_kernel",
                    global_nz_reduction_kernel<Number>,
                    plan.n_reduction_blocks(),
                    plan.parameters.reduction_threads,
                    target_bytes,
                    call.stream,
                    plan.reduction_block_order.empty() ?
                      nullptr :
                      reduction_block_order.data(),
                    reduction_target_begin.data(),
                    reduction_slice_offsets.data(),
                    reduction_source_base.data(),
                    reduction_array.data(),
                    element_data.data(),
                    static_cast<int>(plan.n_value_targets),
                    plan.parameters.symmetric ? upper_position.data() : nullptr,
                    mirror_position.data(),
                    call.values,
                    call.rhs);
    }
  } // namespace internal
} // namespace GPUAssembly

#endif

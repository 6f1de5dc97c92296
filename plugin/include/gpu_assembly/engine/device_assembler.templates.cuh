#ifndef gpu_assembly_engine_device_assembler_templates_cuh
#define gpu_assembly_engine_device_assembler_templates_cuh

// Definitions of DeviceAssembler::assemble() and its kernels. Include this
// in a .cu file to instantiate assemble() for a kernel of your own:
//   template void GPUAssembly::DeviceAssembler<3, double>::assemble(
//     const MyKernel &, const DeviceVector<double> &,
//     DeviceCSRMatrix<double> &, DeviceVector<double> &) const;

#include <gpu_assembly/base/cuda_check.h>
#include <gpu_assembly/engine/device_assembler.h>
#include <gpu_assembly/engine/shared_nz_layout.h>
#include <gpu_assembly/kernels/element_stage.h>
#include <gpu_assembly/kernels/hex8_elasticity.cuh>

#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <type_traits>

namespace GPUAssembly
{
  namespace internal
  {
    // GlobalNZ kernel 1: a block per element cluster prefetches the
    // cluster's nodal data into shared memory; a thread per element writes
    // its element data coalesced (stride = block size). Specializations
    // for linear simplices: see compute_element(); with the edge-matrix
    // format, for the neo-Hookean kernel in double, 87
    // instead of 108 microseconds per assembly of 120 k tetrahedra (ncu),
    // from a stack-free kernel. Its registers are capped at 96 in double (12
    // bytes of spills; five blocks of 128 threads per multiprocessor instead
    // of four) and 64 in float (none); the cap made no measurable
    // difference to the hyperelastic step in double (0.623 ms at 96 and at
    // 128), and lower caps cost (80: 0.641 ms, 64: 0.702 ms; the kernel
    // then waits on its spills). The kernel mostly waits on its global
    // loads (63 % of its stalls, ncu):
    // benchmarks/results/h100_hyperelastic_register_caps.txt.
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
    global_nz_reduction_kernel(const int *__restrict__ block_order,
                               const int *__restrict__ reduction_target_begin,
                               const int *__restrict__ slice_offsets,
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

      const int slice       = r * (T / 32) + threadIdx.x / 32;
      const int first_entry = slice_offsets[slice];
      walk_reduction_lane<Number>(
        reduction_array + first_entry + threadIdx.x % 32,
        (slice_offsets[slice + 1] - first_entry) / 32,
        32,
        [&](const int i) {
          return __ldg(element_data + i);
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



    // A load issued where it is written: an asm volatile statement keeps
    // its place among the others (the prefetches, the barrier), and only
    // the first use of the value waits for it.
    __device__ inline std::uint16_t
    load_early(const std::uint16_t *address)
    {
      std::uint16_t value;
      asm volatile("ld.global.nc.u16 %0, [%1];" : "=h"(value) : "l"(address));
      return value;
    }

    __device__ inline int
    load_early(const int *address)
    {
      int value;
      asm volatile("ld.global.nc.s32 %0, [%1];" : "=r"(value) : "l"(address));
      return value;
    }

    // SharedNZLayout::load_chunk() issued where it stands (load_early()).
    __device__ inline SharedNZLayout::Chunk
    load_chunk_early(const std::uint16_t *address)
    {
      unsigned int x, y, z, w;
      asm volatile("ld.global.nc.v4.u32 {%0, %1, %2, %3}, [%4];"
                   : "=r"(x), "=r"(y), "=r"(z), "=r"(w)
                   : "l"(address));
      return {x | std::uint64_t(y) << 32, z | std::uint64_t(w) << 32};
    }

    // Copies 16 bytes from global to shared memory without passing through
    // a register (cp.async; both addresses 16-byte aligned): a thread can
    // have all its copies in flight at once. complete_copies() waits for
    // this thread's.
    __device__ inline void
    copy_async_16(void *shared, const void *global)
    {
      asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(
                     static_cast<unsigned int>(
                       __cvta_generic_to_shared(shared))),
                   "l"(global));
    }

    __device__ inline void
    complete_copies()
    {
      asm volatile("cp.async.wait_all;" ::: "memory");
    }

    __device__ inline void
    prefetch_l1(const void *address)
    {
      asm volatile("prefetch.global.L1 [%0];" ::"l"(address));
    }

    __device__ inline void
    prefetch_l2(const void *address)
    {
      asm volatile("prefetch.global.L2 [%0];" ::"l"(address));
    }

    // Asks for the targets of the row that a warp's lane @p l will close
    // next, from @p first on among the warp's @p n_targets, into L1: a
    // 128-byte line per lane, as many lanes as the longest row's targets
    // (SharedNZLayout::row_targets()) can touch lines. Loaded only where
    // the row closes, they held up the warp for a round trip to L2 or
    // memory at every close (9 % of SharedNZ's stall samples with node
    // pairs, ncu); asked for a row ahead, they wait in L1.
    template <unsigned int n_c>
    __device__ inline void
    prefetch_row_targets(const int         *targets,
                         const unsigned int first,
                         const unsigned int n_targets,
                         const unsigned int l)
    {
      constexpr unsigned int max_targets = SharedNZLayout::row_targets(
        {SharedNZLayout::row_width, SharedNZLayout::max_row_diagonal, 0},
        n_c);
      constexpr unsigned int n_lines =
        (max_targets * sizeof(int) + 127) / 128 + 1;
      if (l < n_lines && first + 32 * l < n_targets)
        prefetch_l1(targets + first + 32 * l);
    }



    // The device arrays of a SharedNZ plan (SharedNZPlan's, by the same
    // names).
    template <typename Number>
    struct SharedNZArguments
    {
      const int *__restrict__ halo_offsets;
      const int *__restrict__ halo_nodes;
      const int *__restrict__ element_offsets;
      const int *__restrict__ connectivity;
      const std::uint16_t *__restrict__ slots;
      const Number *__restrict__ supplemental;
      const int *__restrict__ supplemental_offsets;
      const int *__restrict__ location;
      const unsigned char *__restrict__ has_constraints;
      const int *__restrict__ n_free_elements;
      const int *__restrict__ slice_offsets;
      const std::uint16_t *__restrict__ sources;
      const int *__restrict__ target_offsets;
      const int *__restrict__ targets;
      unsigned int n_supplemental;
    };



    // SharedNZ (chapter Sec. 16.3.2): a block per node part fetches the
    // halo nodal data into shared memory, computes every element touching
    // the part with a thread per element, keeping in shared memory only the
    // rows the part owns (SharedNZLayout), and sums its node-pair lists
    // straight into the matrix and right-hand side. At most 128 registers:
    // the plan's default, two blocks of 256 threads per multiprocessor,
    // needs no more, and without the cap the neo-Hookean kernel takes 168
    // and would run one block at a time. With node_pairs
    // (SharedNZPlan::Parameters::node_pairs) the block stages S(e) of its
    // elements, and the Dirichlet data of those with constraints, and the
    // reduction computes their node pairs: no element is computed ahead of
    // it, and no thread holds up the block's barrier with an element and
    // its condensation.
    template <int dim,
              typename Number,
              class Kernel,
              ElementSpecialization specialization,
              bool                  node_pairs>
    __global__ void __maxnreg__(128)
      shared_nz_kernel(const Kernel                    kernel,
                       const ElementStageData<Number>  data,
                       const SharedNZArguments<Number> plan,
                       const Number *__restrict__ nodal_data,
                       Number *__restrict__ values,
                       Number *__restrict__ rhs)
    {
      extern __shared__ __align__(16) unsigned char shared_bytes[];
      constexpr unsigned int                        nc = Kernel::n_components;
      const unsigned int                            k  = blockIdx.x;
      const unsigned int                            t  = threadIdx.x;
      const unsigned int                            T  = blockDim.x;
      // The warp's row buffer (SharedNZLayout::row_buffer_bytes()), then
      // the block's layout.
      Number *const row_buffer =
        reinterpret_cast<Number *>(shared_bytes) + (t / 32) * 32 * nc;
      Number *const shared = reinterpret_cast<Number *>(
        shared_bytes + SharedNZLayout::row_buffer_bytes(T, nc, sizeof(Number)));

      // Every per-block number of the plan first, all loads in flight at
      // once (load_early()): as plain loads, which the compiler places next
      // to the computation that waits for them, each cost a round trip to
      // memory of its own (5 % of the kernel's warp samples, ncu).
      const int slice        = k * (T / 32) + t / 32;
      const int first_source = load_early(plan.slice_offsets + slice);
      const int end_source   = load_early(plan.slice_offsets + slice + 1);
      const int first_target = load_early(plan.target_offsets + slice);
      const int end_target   = load_early(plan.target_offsets + slice + 1);
      const int first_item   = load_early(plan.element_offsets + k);
      const int end_item     = load_early(plan.element_offsets + k + 1);
      // A node-pair block keeps no halo.
      const int first_halo = node_pairs ? 0 : load_early(plan.halo_offsets + k);
      const int end_halo =
        node_pairs ? 0 : load_early(plan.halo_offsets + k + 1);
      const int n_free = node_pairs ? load_early(plan.n_free_elements + k) : 0;
      const int first_supplemental =
        node_pairs ? load_early(plan.supplemental_offsets + k) : 0;
      const std::size_t  base = first_item;
      const unsigned int n_k  = end_item - first_item;

      // The first entries of this thread's lane go to registers, loaded
      // now so that they arrive while the block stages its data (left to
      // the compiler, a load is issued after the barrier), and the targets
      // of the warp's first row to L1 (prefetch_row_targets(); each later
      // row's follow a row ahead, in store_row). Where the elements are
      // computed ahead of the reduction, the whole streams are asked into
      // L2 meanwhile. With node pairs the reduction begins at once, and
      // those prefetches cost more than they brought: at 5 M tetrahedra on
      // an H200, in one run, 1.182 ms with them, 1.178 with the targets
      // also a row ahead, 1.179 without the targets' to L2, 1.150 with
      // both changes, and 1.148 without the sources' prefetch as well
      // (benchmarks/results/h200_sharednz_row_prefetch_sweep.txt).
      constexpr unsigned int chunk = SharedNZLayout::chunk;
      const std::uint16_t *lane = plan.sources + first_source + t % 32 * chunk;
      const unsigned int n_chunks = (end_source - first_source) / (32 * chunk);
      const SharedNZLayout::Chunk first_chunk =
        n_chunks > 0 ? load_chunk_early(lane) : SharedNZLayout::Chunk();
      const int         *targets   = plan.targets + first_target;
      const unsigned int n_targets = end_target - first_target;
      if constexpr (!node_pairs)
        {
          const char *sources =
            reinterpret_cast<const char *>(plan.sources + first_source);
          const int n_bytes = (end_source - first_source) * 2;
          for (int b = (t % 32) * 128; b < n_bytes; b += 32 * 128)
            prefetch_l2(sources + b);
          for (unsigned int b = (t % 32) * 32; b < n_targets; b += 32 * 32)
            prefetch_l2(targets + b);
        }
      prefetch_row_targets<nc>(targets, 0, n_targets, t % 32);
      using Sizes                = SpecializedSizes<dim, specialization>;
      constexpr bool     simplex = Sizes::linear_simplex;
      const unsigned int n_en    = Sizes::n_nodes(data);
      const unsigned int n_ed    = Sizes::n_dofs(data, Kernel::n_components);
      // A row's sums leave as whole runs: row c1 of every list's block goes
      // through the buffer, lane after lane, and thread t stores entries t,
      // t + 32, ... of it, which the plan's target layout
      // (SharedNZLayout::block_target()) puts next to each other in memory.
      // Every lane of the warp reaches the row's closing entry at the same
      // step, so that __syncwarp() finds them all. Its targets are loaded
      // first, all in flight at once. Targets and values are each touched
      // once, so both go through L2 evict-first (__ldcs, __stcs), leaving
      // L2 to the streams and S(e) that blocks still to come read: 1.229
      // against 1.250 ms at 5 M tetrahedra on an H200, in the same run.
      // The next row's targets are asked into L1 as soon as this row's
      // are loaded (prefetch_row_targets(), above).
      const auto store_row = [&](const Number(&sum)[nc][nc],
                                 const SharedNZLayout::RowClose row,
                                 const unsigned int             l,
                                 const unsigned int             first) {
        // Row c1's targets are the width entries from block_target(c1, 0,
        // 0), in lane-then-c2 order.
        const unsigned int width = nc * row.n_lists;
        int                target[nc][nc];
        for (unsigned int c1 = 0; c1 < nc; ++c1)
          for (unsigned int i = 0; i < nc; ++i)
            target[c1][i] =
              l + 32 * i < width ?
                __ldcs(targets + first +
                       SharedNZLayout::block_target(c1, 0, 0, row, nc) + l +
                       32 * i) :
                -1;
        prefetch_row_targets<nc>(targets,
                                 first + SharedNZLayout::row_targets(row, nc),
                                 n_targets,
                                 l);
        const SharedNZLayout::RowLane role = SharedNZLayout::row_lane(l, row);
        for (unsigned int c1 = 0; c1 < nc; ++c1)
          {
            __syncwarp();
            if (role.slot < row.n_lists && !role.second_half)
              for (unsigned int c2 = 0; c2 < nc; ++c2)
                row_buffer[role.slot * nc + c2] = sum[c1][c2];
            __syncwarp();
            for (unsigned int i = 0; i < nc; ++i)
              if (target[c1][i] >= 0)
                __stcs(values + target[c1][i], row_buffer[l + 32 * i]);
          }
      };
      const auto store_rhs =
        [&](const unsigned int i, const Number sum, const bool) {
          rhs[__ldg(targets + i)] = sum;
        };
      // A halved list's second half, in lane n_diagonal + slot, added to
      // its first by a shuffle: the row's shape is the warp's, so that
      // every lane takes part, and rows without halves skip it.
      const auto combine_halves = [](Number(&sum)[nc][nc],
                                     Number(&vector)[nc],
                                     const SharedNZLayout::RowClose row,
                                     const unsigned int             l) {
        if (row.n_halved == 0)
          return true;
        const auto add = [&](Number &value) {
          const Number other =
            __shfl_down_sync(0xffffffffu, value, row.n_diagonal);
          if (l < row.n_halved)
            value += other;
        };
        for (unsigned int c1 = 0; c1 < nc; ++c1)
          {
            add(vector[c1]);
            for (unsigned int c2 = 0; c2 < nc; ++c2)
              add(sum[c1][c2]);
          }
        return true;
      };
      const auto walk = [&](const auto &load, const auto &add_pair) {
        SharedNZLayout::walk_lane<Number, nc>(lane,
                                              n_chunks,
                                              32 * chunk,
                                              t % 32,
                                              n_en,
                                              n_ed,
                                              load,
                                              store_row,
                                              store_rhs,
                                              combine_halves,
                                              &first_chunk,
                                              add_pair);
      };

      if constexpr (node_pairs)
        {
          // S(e) copied asynchronously while the threads read the
          // constraints of the elements that have some. The plan's layout
          // of a block's S(e) is the shared one, padded and aligned to 16
          // bytes (SharedNZLayout::staged_size()), so the copy is one
          // coalesced sweep of 16-byte copies: with copies of one number, a
          // thread's 32 copies and their loop took a tenth of the kernel's
          // stall samples (ncu, 1.5 M tetrahedra).
          const SharedNZLayout::NodePairRegions<Number> regions =
            SharedNZLayout::node_pair_regions<Number>(
              reinterpret_cast<unsigned char *>(shared),
              n_k,
              n_free,
              plan.n_supplemental,
              n_ed);
          const Number *const block_supplemental =
            plan.supplemental + first_supplemental;
          constexpr unsigned int per_copy = 16 / sizeof(Number);
          const unsigned int     n_copies =
            SharedNZLayout::staged_size(n_k, plan.n_supplemental) / per_copy;
          for (unsigned int i = t; i < n_copies; i += T)
            copy_async_16(regions.staged + i * per_copy,
                          block_supplemental + i * per_copy);
          const unsigned int n_constrained = n_k - n_free;
          for (unsigned int c = t; c < n_constrained; c += T)
            SharedNZLayout::
              stage_constraints<dim, specialization, Kernel::n_components>(
                data,
                plan.location + base * n_ed + n_free + c,
                n_k,
                c,
                n_constrained,
                regions);
          complete_copies();
          __syncthreads();
          walk(
            [](const unsigned int) {
              return Number(0);
            },
            SharedNZLayout::staged_node_pairs<dim, specialization, true>(
              kernel,
              data,
              regions,
              n_k,
              n_free,
              n_en,
              plan.n_supplemental));
        }
      else
        {
          // Without node pairs every element is computed ahead of the
          // reduction: its inputs go to L1 now.
          if (t < n_k)
            {
              for (unsigned int i = 0; i < plan.n_supplemental; ++i)
                prefetch_l1(plan.supplemental +
                            (base * plan.n_supplemental + i * n_k + t));
              for (unsigned int a = 0; a < data.n_nodes; ++a)
                {
                  prefetch_l1(plan.connectivity + base * data.n_nodes +
                              a * n_k + t);
                  prefetch_l1(plan.slots + base * data.n_nodes + a * n_k + t);
                }
            }

          // The halo keeps its place in shared memory (the plan's layout) even
          // where a kernel reads no nodal data and it is not fetched.
          const int n_halo_data = (end_halo - first_halo) * data.n_fields;
          if constexpr (kernel_reads_nodal_data<Kernel>::value)
            {
              for (int i = t; i < n_halo_data; i += T)
                {
                  const int node  = i / data.n_fields;
                  const int field = i - node * data.n_fields;
                  shared[i] = nodal_data[plan.halo_nodes[first_halo + node] *
                                           data.n_fields +
                                         field];
                }
              __syncthreads();
            }

          Number *const sink = shared + n_halo_data;
          Number *const element_data =
            sink + SharedNZLayout::slot_size(Kernel::n_components, n_ed);
          for (unsigned int j = t; j < n_k; j += T)
            {
              // A simplex's slots are read once, packed into a register; the
              // output would otherwise read node a's slot again for every entry
              // of its rows.
              using Output =
                SharedNZLayout::OwnedRowsOutput<Number,
                                                Kernel::n_components,
                                                simplex ? dim + 1 : 0>;
              Output output{element_data,
                            sink,
                            plan.slots + base * n_en + j,
                            n_k,
                            n_ed};
              if constexpr (simplex)
                output.packed_slots = Output::pack_slots(output.slots, n_k);
              compute_element<dim, Number, Kernel, Output, specialization>(
                kernel,
                data,
                plan.supplemental + base * plan.n_supplemental + j,
                shared,
                plan.connectivity + base * n_en + j,
                n_k,
                output,
                plan.has_constraints[base + j] != 0,
                plan.location + base * n_ed + j);
            }
          __syncthreads();

          walk(
            [&](const unsigned int i) {
              return element_data[i];
            },
            SharedNZLayout::NoNodePairs());
        }
    }



    // LocalElem: a thread per element computes its element data into a
    // column-major scratch array (coalesced), then adds each entry to the
    // matrix through the nonzero map, atomically or, for one colour of a
    // colouring, plainly.
    template <int dim,
              typename Number,
              class Kernel,
              bool                  use_atomics,
              ElementSpecialization specialization>
    __global__ void
    local_elem_kernel(const Kernel                   kernel,
                      const ElementStageData<Number> data,
                      const unsigned int             first_element,
                      const unsigned int             n_elements_launch,
                      const unsigned int             n_elements,
                      const int                     *connectivity,
                      const Number                  *supplemental,
                      const int                     *location,
                      const int                     *nonzero_map,
                      const unsigned char           *has_constraints,
                      const Number                  *nodal_data,
                      Number                        *element_data,
                      Number                        *values,
                      Number                        *rhs)
    {
      const unsigned int local = blockIdx.x * blockDim.x + threadIdx.x;
      if (local >= n_elements_launch)
        return;
      const unsigned int e = first_element + local;

      const unsigned int n_ed =
        SpecializedSizes<dim, specialization>::n_dofs(data,
                                                      Kernel::n_components);
      using Output = ElementOutput<Number>;
      const Output output{element_data + e,
                          element_data +
                            static_cast<std::size_t>(n_ed) * n_ed * n_elements +
                            e,
                          n_ed,
                          n_elements};
      compute_element<dim, Number, Kernel, Output, specialization>(
        kernel,
        data,
        supplemental + e,
        nodal_data,
        connectivity + e,
        n_elements,
        output,
        has_constraints[e] != 0,
        location + e);

      for (unsigned int i = 0; i < n_ed * n_ed; ++i)
        {
          const int target =
            nonzero_map[static_cast<std::size_t>(i) * n_elements + e];
          if (target < 0)
            continue;
          const Number value =
            element_data[static_cast<std::size_t>(i) * n_elements + e];
          if constexpr (use_atomics)
            atomicAdd(values + target, value);
          else
            values[target] += value;
        }
      for (unsigned int d = 0; d < n_ed; ++d)
        {
          const int row =
            location[static_cast<std::size_t>(d) * n_elements + e];
          const Number value =
            element_data[(static_cast<std::size_t>(n_ed) * n_ed + d) *
                           n_elements +
                         e];
          if constexpr (use_atomics)
            atomicAdd(rhs + row, value);
          else
            rhs[row] += value;
        }
    }



    // Calls f(std::integral_constant<ElementSpecialization, s>()) with the
    // specialization s of compute_element() that fits the mesh. Hex8
    // kernels never see simplices: they get the general form only, which
    // also keeps their kernels from being compiled three times.
    template <int dim, class Kernel, typename Number, class Function>
    void
    with_element_specialization(const ElementStageData<Number> &data,
                                const bool                      specialize,
                                const Function                 &f)
    {
      using S = ElementSpecialization;
      if constexpr (!is_hex8_elasticity_kernel<Kernel>::value)
        switch (specialize ? element_specialization<dim>(data) : S::general)
          {
            case S::simplex_edge_matrix:
              f(std::integral_constant<S, S::simplex_edge_matrix>());
              return;
            case S::simplex_gradients:
              f(std::integral_constant<S, S::simplex_gradients>());
              return;
            case S::general:
              break;
          }
      f(std::integral_constant<S, S::general>());
    }
  } // namespace internal



  template <int dim, typename Number>
  template <class Kernel>
  void
  DeviceAssembler<dim, Number>::assemble(const Kernel               &kernel,
                                         const DeviceVector<Number> &nodal_data,
                                         DeviceCSRMatrix<Number>    &matrix,
                                         DeviceVector<Number>       &rhs,
                                         CUstream_st *const stream) const
  {
    if (arrays == nullptr)
      internal::throw_error("DeviceAssembler::assemble() before reinit().");
    if (Kernel::n_components != arrays->layout.n_components)
      internal::throw_error(
        "DeviceAssembler::assemble(): the element kernel works on " +
        std::to_string(Kernel::n_components) +
        " components per node, the finite element has " +
        std::to_string(arrays->layout.n_components) + ".");
    if (nodal_data.size() != static_cast<std::size_t>(arrays->n_nodes) *
                               additional_data.n_nodal_fields)
      internal::throw_error(
        "DeviceAssembler::assemble(): the nodal data has " +
        std::to_string(nodal_data.size()) + " values, expected " +
        std::to_string(arrays->n_nodes) + " nodes times " +
        std::to_string(additional_data.n_nodal_fields) + " fields.");
    if (matrix.n_nonzeros() != arrays->n_nonzeros() ||
        matrix.m() != arrays->n_dofs)
      internal::throw_error("DeviceAssembler::assemble(): the matrix was "
                            "not initialized with these mesh arrays.");
    if (rhs.size() != arrays->n_dofs)
      rhs.reinit(arrays->n_dofs);

    const ElementStageData<Number> data{
      arrays->layout.n_nodes,
      arrays->layout.n_q_points,
      arrays->layout.n_dofs,
      additional_data.n_nodal_fields,
      arrays->supplemental_format ==
          SupplementalDataFormat::inverse_edge_matrix ||
        arrays->supplemental_format ==
          SupplementalDataFormat::compressed_edge_matrix,
      arrays->supplemental_format ==
        SupplementalDataFormat::compressed_edge_matrix,
      shape_values.data(),
      quadrature_weights.data(),
      dof_is_constrained.data(),
      inhomogeneities.data(),
      additional_data.options.use_inhomogeneities_for_rhs};

    if (additional_data.method == AssemblyMethod::global_nz)
      {
        const GlobalNZPlan &plan = global_nz_plan;
        const std::size_t   nodal_bytes =
          static_cast<std::size_t>(plan.max_cluster_nodes) *
          additional_data.n_nodal_fields * sizeof(Number);
        if constexpr (!is_symmetric_kernel<Kernel>::value)
          if (plan.parameters.symmetric)
            internal::throw_error(
              "DeviceAssembler::assemble(): the GlobalNZ plan stores "
              "symmetric element data, but the element kernel does not "
              "declare is_symmetric = true.");
        if (additional_data.element_strategy !=
            ElementStrategy::thread_per_element)
          {
            if constexpr (is_hex8_elasticity_kernel<Kernel>::value && dim == 3)
              {
                if (kernel.per_element_material &&
                    arrays->n_supplemental < Hex8::material_offset + 2)
                  internal::throw_error(
                    "DeviceAssembler::assemble(): the kernel reads a "
                    "per-element material, but the mesh arrays have none "
                    "(append_element_material()).");
                const internal::Hex8KernelArguments<Number> arguments{
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
                  nodal_data.data(),
                  element_data.data()};
                internal::launch_hex8_element_kernel(
                  kernel,
                  additional_data.element_strategy,
                  plan.parameters.symmetric,
                  additional_data.hex8_elements_per_block,
                  arguments,
                  stream);
                if (any_constrained_element)
                  {
                    const unsigned int n_slots = arguments.n_slots;
                    const auto         condense =
                      plan.parameters.symmetric ?
                                internal::hex8_condense_kernel<Number, true> :
                                internal::hex8_condense_kernel<Number, false>;
                    condense<<<(n_slots + 127) / 128, 128, 0, stream>>>(
                      n_slots,
                      plan.parameters.elements_per_block,
                      plan.n_matrix_entries,
                      plan.n_entries,
                      plan.entry_group,
                      block_has_constraints.data(),
                      block_location.data(),
                      dof_is_constrained.data(),
                      inhomogeneities.data(),
                      additional_data.options.use_inhomogeneities_for_rhs,
                      element_data.data());
                    GPU_ASSEMBLY_CHECK_CUDA(cudaGetLastError());
                  }
              }
            else
              internal::throw_error(
                "DeviceAssembler::assemble(): the element strategy " +
                to_string(additional_data.element_strategy) +
                " is for Hex8ElasticityKernel only; other kernels need "
                "thread-per-element.");
          }
        else
          {
            // Linear simplices get a kernel with their sizes as constants.
            internal::with_element_specialization<dim, Kernel>(
              data,
              additional_data.specialize_simplices,
              [&](const auto specialization) {
                constexpr ElementSpecialization s =
                  decltype(specialization)::value;
                const auto element_kernel =
                  plan.parameters.symmetric ?
                    internal::
                      global_nz_element_kernel<dim, Number, Kernel, true, s> :
                    internal::
                      global_nz_element_kernel<dim, Number, Kernel, false, s>;
                GPU_ASSEMBLY_CHECK_CUDA(cudaFuncSetAttribute(
                  element_kernel,
                  cudaFuncAttributeMaxDynamicSharedMemorySize,
                  static_cast<int>(nodal_bytes)));
                element_kernel<<<plan.n_element_blocks,
                                 plan.parameters.elements_per_block,
                                 nodal_bytes,
                                 stream>>>(kernel,
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
                                           nodal_data.data(),
                                           element_data.data());
                GPU_ASSEMBLY_CHECK_CUDA(cudaGetLastError());
              });
          }

        const std::size_t target_bytes =
          static_cast<std::size_t>(plan.parameters.targets_per_block) *
          sizeof(Number);
        const auto reduction_kernel =
          internal::global_nz_reduction_kernel<Number>;
        GPU_ASSEMBLY_CHECK_CUDA(
          cudaFuncSetAttribute(reduction_kernel,
                               cudaFuncAttributeMaxDynamicSharedMemorySize,
                               static_cast<int>(target_bytes)));
        reduction_kernel<<<plan.n_reduction_blocks(),
                           plan.parameters.reduction_threads,
                           target_bytes,
                           stream>>>(plan.reduction_block_order.empty() ?
                                       nullptr :
                                       reduction_block_order.data(),
                                     reduction_target_begin.data(),
                                     reduction_slice_offsets.data(),
                                     reduction_array.data(),
                                     element_data.data(),
                                     static_cast<int>(plan.n_value_targets),
                                     plan.parameters.symmetric ?
                                       upper_position.data() :
                                       nullptr,
                                     mirror_position.data(),
                                     matrix.get_values().data(),
                                     rhs.data());
        GPU_ASSEMBLY_CHECK_CUDA(cudaGetLastError());
        return;
      }

    if (additional_data.method == AssemblyMethod::shared_nz)
      {
        const SharedNZPlan                       &plan = shared_nz_plan;
        const internal::SharedNZArguments<Number> arguments{
          shared_halo_offsets.data(),
          shared_halo_nodes.data(),
          shared_element_offsets.data(),
          shared_connectivity.data(),
          reinterpret_cast<const std::uint16_t *>(shared_slots.data()),
          shared_supplemental.data(),
          shared_supplemental_offsets.data(),
          shared_location.data(),
          shared_has_constraints.data(),
          shared_n_free_elements.data(),
          shared_slice_offsets.data(),
          reinterpret_cast<const std::uint16_t *>(shared_sources.data()),
          shared_target_offsets.data(),
          shared_targets.data(),
          plan.n_supplemental};
        constexpr bool has_node_pairs = SharedNZLayout::runs_node_pairs<Kernel>;
        if (plan.parameters.node_pairs && !has_node_pairs)
          internal::throw_error(SharedNZLayout::node_pairs_refused);
        internal::with_element_specialization<dim, Kernel>(
          data,
          additional_data.specialize_simplices,
          [&](const auto specialization) {
            constexpr ElementSpecialization s = decltype(specialization)::value;
            const auto                      block_kernel =
              has_node_pairs && plan.parameters.node_pairs ?
                                     internal::
                  shared_nz_kernel<dim, Number, Kernel, s, has_node_pairs> :
                                     internal::shared_nz_kernel<dim, Number, Kernel, s, false>;
            GPU_ASSEMBLY_CHECK_CUDA(
              cudaFuncSetAttribute(block_kernel,
                                   cudaFuncAttributeMaxDynamicSharedMemorySize,
                                   static_cast<int>(plan.max_shared_bytes)));
            block_kernel<<<plan.n_blocks,
                           plan.parameters.threads_per_block,
                           plan.max_shared_bytes,
                           stream>>>(kernel,
                                     data,
                                     arguments,
                                     nodal_data.data(),
                                     matrix.get_values().data(),
                                     rhs.data());
            GPU_ASSEMBLY_CHECK_CUDA(cudaGetLastError());
          });
        return;
      }

    // LocalElem methods add into the matrix, which must start from zero.
    GPU_ASSEMBLY_CHECK_CUDA(
      cudaMemsetAsync(matrix.get_values().data(),
                      0,
                      matrix.get_values().size() * sizeof(Number),
                      stream));
    GPU_ASSEMBLY_CHECK_CUDA(
      cudaMemsetAsync(rhs.data(), 0, rhs.size() * sizeof(Number), stream));
    const unsigned int block  = additional_data.local_elem_block_size;
    const auto         launch = [&](const unsigned int first,
                            const unsigned int count,
                            const auto         kernel_function) {
      if (count == 0)
        return;
      kernel_function<<<(count + block - 1) / block, block, 0, stream>>>(
        kernel,
        data,
        first,
        count,
        arrays->n_elements,
        element_connectivity.data(),
        element_supplemental.data(),
        element_location.data(),
        element_nonzero_map.data(),
        element_has_constraints.data(),
        nodal_data.data(),
        element_data.data(),
        matrix.get_values().data(),
        rhs.data());
      GPU_ASSEMBLY_CHECK_CUDA(cudaGetLastError());
    };
    internal::with_element_specialization<dim, Kernel>(
      data,
      additional_data.specialize_simplices,
      [&](const auto specialization) {
        constexpr ElementSpecialization s = decltype(specialization)::value;
        if (additional_data.method == AssemblyMethod::local_elem_atomic)
          launch(0,
                 arrays->n_elements,
                 internal::local_elem_kernel<dim, Number, Kernel, true, s>);
        else
          for (unsigned int c = 0; c + 1 < color_offsets.size(); ++c)
            launch(color_offsets[c],
                   color_offsets[c + 1] - color_offsets[c],
                   internal::local_elem_kernel<dim, Number, Kernel, false, s>);
      });
  }
} // namespace GPUAssembly

#endif

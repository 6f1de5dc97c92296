// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_engine_shared_nz_kernels_cuh
#define gpu_assembly_engine_shared_nz_kernels_cuh

// SharedNZ's device kernel and its launch (SharedNZDeviceData::launch()),
// for .cu files: device_assembler.templates.cuh includes it.

#include <gpu_assembly/base/cuda_check.h>
#include <gpu_assembly/base/kernel_launch.cuh>
#include <gpu_assembly/element/element_stage.h>
#include <gpu_assembly/engine/element_specialization.cuh>
#include <gpu_assembly/engine/shared_nz/device_data.h>
#include <gpu_assembly/engine/shared_nz/layout.h>

#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

namespace GPUAssembly
{
  namespace internal
  {
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
    // the row closes, they would hold up the warp for a round trip to L2
    // or memory at every close; asked for a row ahead, they wait in L1.
    // A compact record (SharedNZLayout::append_compact_row()) is a few
    // words but for rows of many diagonal lists: four lines cover all but
    // those, where the full form's longest row needs twelve.
    template <unsigned int n_c, bool compact = false>
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
        compact ? 4 : (max_targets * sizeof(int) + 127) / 128 + 1;
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
    // its condensation. With compact_targets
    // (SharedNZPlan::Parameters::compact_targets, node pairs only) the
    // targets are compact records, a few words per row instead of an index
    // per nonzero.
    template <int dim,
              typename Number,
              class Kernel,
              ElementSpecialization specialization,
              bool                  node_pairs,
              bool                  compact_targets = false>
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
      // to the computation that waits for them, each would cost a round
      // trip to memory of its own.
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
      // those prefetches would cost more than they bring.
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
      prefetch_row_targets<nc, compact_targets>(targets, 0, n_targets, t % 32);
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
      // L2 to the streams and S(e) that blocks still to come read.
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
        unsigned int       next_first;
        if constexpr (compact_targets)
          {
            // Each lane's targets from the record's run starts and bases
            // (SharedNZLayout::compact_lane_targets(); the words every lane
            // reads are one broadcast load each).
            SharedNZLayout::compact_lane_targets<nc>(
              targets + first,
              row,
              l,
              [](const int *address) {
                return __ldg(address);
              },
              target);
            next_first = first + __ldg(targets + first);
          }
        else
          {
            for (unsigned int c1 = 0; c1 < nc; ++c1)
              for (unsigned int i = 0; i < nc; ++i)
                target[c1][i] =
                  l + 32 * i < width ?
                    __ldcs(targets + first +
                           SharedNZLayout::block_target(c1, 0, 0, row, nc) + l +
                           32 * i) :
                    -1;
            next_first = first + SharedNZLayout::row_targets(row, nc);
          }
        prefetch_row_targets<nc, compact_targets>(targets,
                                                  next_first,
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
        const auto row_form = [&]() {
          if constexpr (compact_targets)
            return SharedNZLayout::CompactTargets{targets};
          else
            return SharedNZLayout::FullTargets();
        }();
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
                                              add_pair,
                                              row_form);
      };

      if constexpr (node_pairs)
        {
          // S(e) copied asynchronously while the threads read the
          // constraints of the elements that have some. The plan's layout
          // of a block's S(e) is the shared one, padded and aligned to 16
          // bytes (SharedNZLayout::staged_size()), so the copy is one
          // coalesced sweep of 16-byte copies rather than a loop of copies of
          // one number each.
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
  } // namespace internal



  namespace internal
  {
    template <typename Number>
    template <int dim, class Kernel>
    void
    SharedNZDeviceData<Number>::launch(const Kernel                   &kernel,
                                       const ElementStageData<Number> &data,
                                       const AssemblyLaunch<Number> &call) const
    {
      const SharedNZArguments<Number> arguments{halo_offsets.data(),
                                                halo_nodes.data(),
                                                element_offsets.data(),
                                                connectivity.data(),
                                                slots.data(),
                                                supplemental.data(),
                                                supplemental_offsets.data(),
                                                location.data(),
                                                has_constraints.data(),
                                                n_free_elements.data(),
                                                slice_offsets.data(),
                                                sources.data(),
                                                target_offsets.data(),
                                                targets.data(),
                                                plan.n_supplemental};
      constexpr bool has_node_pairs = SharedNZLayout::runs_node_pairs<Kernel>;
      if (plan.parameters.node_pairs && !has_node_pairs)
        throw_error(SharedNZLayout::node_pairs_refused);
      with_element_specialization<dim, Kernel>(
        data,
        [&](const auto specialization) {
          constexpr ElementSpecialization s = decltype(specialization)::value;
          // Compact targets come with node pairs alone (the plan refuses
          // them without): a kernel without a node-pair form instantiates
          // one variant.
          const auto block_kernel = [&]() {
            if constexpr (has_node_pairs)
              return !plan.parameters.node_pairs ?
                       shared_nz_kernel<dim, Number, Kernel, s, false> :
                     plan.parameters.compact_targets ?
                       shared_nz_kernel<dim, Number, Kernel, s, true, true> :
                       shared_nz_kernel<dim, Number, Kernel, s, true>;
            else
              return shared_nz_kernel<dim, Number, Kernel, s, false>;
          }();
          launch_kernel("shared_nz_kernel",
                        block_kernel,
                        plan.n_blocks,
                        plan.parameters.threads_per_block,
                        plan.max_shared_bytes,
                        call.stream,
                        kernel,
                        data,
                        arguments,
                        call.nodal_data,
                        call.values,
                        call.rhs);
        });
    }
  } // namespace internal
} // namespace GPUAssembly

#endif

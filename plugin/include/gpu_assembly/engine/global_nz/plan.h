// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_engine_global_nz_plan_h
#define gpu_assembly_engine_global_nz_plan_h

#include <gpu_assembly/adapter/mesh_arrays.h>
#include <gpu_assembly/element/element_views.h>

#include <cstddef>
#include <vector>

namespace GPUAssembly
{
  /**
   * Order the elements along a Morton (Z-order) curve through their
   * centroids, so that consecutive elements share nodes. GlobalNZ's element
   * clusters are consecutive runs of this order, which keeps the nodal data a
   * block prefetches small whatever order the mesh file had.
   */
  std::vector<index_type>
  morton_element_order(const MeshArrays &arrays);

  /**
   * Order the elements by their smallest node number (then by number). With
   * a bandwidth-reducing DoF numbering (Cuthill-McKee) this follows the
   * matrix rows, so that a reduction block summing a run of rows reads
   * element data from a narrow band of element clusters, which the L2
   * cache then holds.
   */
  std::vector<index_type>
  row_element_order(const MeshArrays &arrays);

  /// How GlobalNZ groups elements into clusters.
  enum class ElementOrder
  {
    /// Z-order curve through element centroids.
    morton,
    /// Smallest node number, i.e. matrix row order.
    rows
  };



  /// The order in which GlobalNZ's reduction blocks run.
  enum class ReductionOrder
  {
    /// morton where the element data exceed 1.5 GB, else rows: Z-order
    /// pays where the element data far outgrow the L2 cache, target order
    /// where they stay close to it.
    automatic,
    /// Target order: a sweep along the matrix rows.
    rows,
    /// Z-order of the node of each block's first row. Blocks running at
    /// the same time then sum rows of one region of the mesh, whose element
    /// data the L2 cache can hold; a sweep along the rows keeps the element
    /// data of a whole band of the matrix in flight, which on large meshes
    /// outgrows the cache.
    morton
  };



  /**
   * Where DeviceAssembler builds GlobalNZ's reduction arrays
   * (GlobalNZPlan::reduction_array, reduction_slice_offsets and
   * reduction_source_base), the largest part of its plan. Both builds give
   * the same arrays, byte for byte; GlobalNZPlan::reinit() on its own
   * always builds them on the host.
   */
  enum class ReductionConstruction
  {
    /// On the device, where they are read, unless its memory does not
    /// hold the build's inputs: then on the host and uploaded.
    automatic,
    /// On the host's threads, then uploaded: the reference.
    host,
    /// On the device, a thread per reduction block, straight into the
    /// arrays the reduction kernel reads: nothing of them is built on the
    /// host or uploaded. Throws ExcDeviceMemory where the device's memory
    /// does not hold the build.
    device
  };



  namespace internal
  {
    struct ReductionListSource;
  }



  /**
   * The precomputed structures of GlobalNZ (Sec. 16.3.1 of the GPU Gems
   * chapter), built once on the host for a fixed mesh and reused by every
   * assembly:
   *
   * - element clusters of elements_per_block consecutive (Morton-ordered)
   *   elements, one per thread block, with the set N_k of nodes they need;
   * - the block element matrices E_k: block-local node numbers and the
   *   supplemental data, column-major with elements_per_block rows so that a
   *   block reads them coalesced;
   * - the reduction arrays: for every target (a nonzero of the matrix, then
   *   an entry of the right-hand side), the list of element-data indices
   *   that sum to it, LPT-packed per reduction block (Algorithm 2) and
   *   stored warp by warp.
   *
   * Element data of element slot (k, t), entry i (i < n_matrix_entries:
   * A^e row-major or its packed upper triangle, then F^e) lives at
   * element_data_index(k, t, i): the entries of a cluster's elements side
   * by side, so the element kernel writes them coalesced, in groups of
   * entry_group consecutive entries of one element (ElementOutput).
   */
  struct GlobalNZPlan
  {
    /**
     * The plan's input, GlobalNZ's choices: the storage of A^e, and tuning
     * values for benchmarks, whose defaults are chosen automatically and
     * are what every assembly should use.
     */
    struct Parameters
    {
      /// Threads (= elements) per block of the element kernel.
      unsigned int elements_per_block = 128;
      /// Threads per block of the reduction kernel (lanes of the packing).
      unsigned int reduction_threads = 256;
      /// Consecutive targets a reduction block accumulates in shared memory;
      /// 0: with ReductionOrder::morton 384 for full and 256 for symmetric
      /// element data, 512 with rows. Fewer keep the element data that
      /// concurrently running blocks read within the L2 cache; too few pad
      /// the packed lists.
      unsigned int targets_per_block = 0;
      /// Order of the elements in the clusters.
      ElementOrder element_order = ElementOrder::rows;
      /// Order in which the reduction blocks run.
      ReductionOrder reduction_order = ReductionOrder::automatic;
      /// Store only the upper triangle of A^e (symmetric kernels only):
      /// n (n + 1) / 2 matrix values per element instead of n^2. The
      /// reduction then sums each pair of transposed nonzeros once and
      /// stores the sum to both (upper_position, mirror_position): half the
      /// gathers, whose scattered reads of element data are what the
      /// reduction's time goes to.
      bool symmetric = false;
      /// Where DeviceAssembler builds the reduction arrays.
      ReductionConstruction reduction_construction =
        ReductionConstruction::automatic;
    };

    Parameters parameters;

    unsigned int n_element_blocks    = 0;
    unsigned int n_nodes_per_element = 0;
    unsigned int n_dofs_per_element  = 0;
    unsigned int n_supplemental      = 0;
    /// Matrix values per element: n_dofs^2, or n_dofs (n_dofs + 1) / 2 for
    /// symmetric element data.
    unsigned int n_matrix_entries = 0;
    /// Element data values per element: matrix values, then n_dofs vector
    /// values.
    unsigned int n_entries = 0;
    /// Consecutive entries of one element stored together: n_components
    /// for full element data with ReductionOrder::morton, whose groups are
    /// then the components of one column node, which the reduction
    /// gathers for neighbouring nonzeros of a row at once (one sector
    /// instead of n_components); else 1. The packed upper triangle's rows
    /// do not fall into such groups; on small meshes, where the element
    /// data stay in the L2 cache longer, the grouping costs the element
    /// kernel more than it saves the reduction.
    unsigned int entry_group = 1;
    std::size_t  n_nonzeros  = 0;
    unsigned int n_dofs      = 0;
    /// Matrix targets of the reduction: n_nonzeros, or with symmetric
    /// element data the number of nonzero pairs (upper_position.size()).
    std::size_t n_value_targets = 0;
    /// Symmetric element data: matrix target u is stored to
    /// values[upper_position[u]] (a nonzero on or above the diagonal, or
    /// one below it whose transpose is not in the pattern) and, unless -1,
    /// to values[mirror_position[u]] (its transpose). Empty otherwise,
    /// where target u is values[u].
    std::vector<index_type> upper_position;
    std::vector<index_type> mirror_position;

    /// Element of slot k * elements_per_block + t, or -1 for padding.
    std::vector<index_type> block_element;
    /// N_k: cluster_nodes[cluster_node_offsets[k] ...] are global nodes.
    std::vector<index_type> cluster_node_offsets;
    std::vector<index_type> cluster_nodes;
    unsigned int            max_cluster_nodes = 0;
    /// E_k(e, a): block-local node of node a, at (k * n_nodes + a) * B + t.
    std::vector<index_type> block_connectivity;
    /// S(e) at (k * n_supplemental + i) * B + t; empty where the device
    /// builds the reduction arrays, which then gathers it on the device
    /// too.
    std::vector<double> block_supplemental;
    /// L(e, d) at (k * n_dofs + d) * B + t, read only for constrained
    /// elements to apply the Dirichlet condensation.
    std::vector<index_type> block_location;
    /// 1 if the element in the slot touches a constrained DoF.
    std::vector<unsigned char> block_has_constraints;

    /// Reduction block r accumulates targets [target_begin[r],
    /// target_begin[r+1]) of the combined index space (n_value_targets
    /// matrix targets, then right-hand-side entries); no block straddles
    /// the two.
    std::vector<index_type> reduction_target_begin;
    /// Block r's lists, LPT-packed into reduction_threads lanes and stored
    /// by warps (pack_lists_sliced()): warp w of block r reads
    /// reduction_array[reduction_slice_offsets[r * W + w] ...
    /// reduction_slice_offsets[r * W + w + 1]) with W = reduction_threads /
    /// 32, entry j of its lane l at j * 32 + l. Storing by warps pads a lane
    /// only to the longest lane of its warp, not of the block.
    std::vector<std::size_t> reduction_slice_offsets;
    /// Entries > 0: s + 1 for the source element_data[reduction_source_base[r]
    /// + s] of block r to add; < 0: -(local target + 1) to store the sum to;
    /// 0: padding.
    std::vector<index_type> reduction_array;
    /// The smallest element data index that block r reads. Its entries are
    /// relative to it, so that 32-bit entries address element data of any
    /// size as long as one block's sources lie within 2^31 - 2 values of
    /// each other: a block's targets are a few consecutive rows, and the
    /// elements touching them are near each other in the element order.
    std::vector<std::size_t> reduction_source_base;
    /// Entries of the reduction array, wherever it was built.
    std::size_t n_reduction_entries = 0;
    /// Whether the device built the three reduction arrays above
    /// (ReductionConstruction), which are then empty here: host code that
    /// reads them needs a plan of GlobalNZPlan::reinit().
    bool reduction_arrays_on_device = false;
    /// Block b of the reduction kernel runs reduction block
    /// reduction_block_order[b]; empty for target order.
    std::vector<index_type> reduction_block_order;

    std::size_t
    element_data_size() const
    {
      return static_cast<std::size_t>(n_element_blocks) * n_entries *
             parameters.elements_per_block;
    }

    std::size_t
    element_data_index(const unsigned int k,
                       const unsigned int t,
                       const unsigned int i) const
    {
      const unsigned int B = parameters.elements_per_block;
      return static_cast<std::size_t>(k) * n_entries * B +
             static_cast<std::size_t>(t) * entry_group +
             grouped_entry_position(i, B, entry_group);
    }

    unsigned int
    n_reduction_blocks() const
    {
      return reduction_target_begin.size() - 1;
    }

    /// Bytes of the plan's arrays (element data not included).
    std::size_t
    memory_consumption() const;

    /**
     * Build the plan. @p n_fields is the number of nodal values per node
     * the element kernel will read; it decides the shared memory the element
     * kernel needs, which must not exceed @p shared_memory_limit (bytes).
     *
     * With @p device_lists the reduction arrays and block_supplemental are
     * left empty and what the reduction arrays' build needs besides the
     * plan and the mesh arrays is moved into it, for a build on the device
     * (reduction_arrays_on_device is then the caller's to set).
     */
    void
    reinit(const MeshArrays              &arrays,
           const Parameters              &parameters,
           const unsigned int             n_fields,
           const std::size_t              number_size,
           const std::size_t              shared_memory_limit,
           internal::ReductionListSource *device_lists = nullptr);
  };
} // namespace GPUAssembly

#endif

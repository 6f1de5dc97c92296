#ifndef gpu_assembly_engine_shared_nz_plan_h
#define gpu_assembly_engine_shared_nz_plan_h

#include <gpu_assembly/adapter/mesh_arrays.h>

#include <cstddef>
#include <vector>

namespace GPUAssembly
{
  /**
   * How SharedNZ partitions the nodes.
   */
  enum class NodePartitioner
  {
    /// The greedy union partitioner of Sec. 16.3.2 of the GPU Gems chapter.
    greedy_union,
    /// METIS (k-way on the node graph), with more parts until every part
    /// fits in shared memory.
    metis
  };



  /**
   * Partition the nodes so that each part's element data and halo nodal
   * data fit in @p shared_memory_limit bytes: a part P needs
   * |E(P)| * n_entries * number_size + |Nbar(P)| * n_fields * number_size,
   * with E(P) the elements touching P and Nbar(P) their nodes. Returns the
   * part of every node. Throws ExcUnsupportedInput if a single node's
   * elements do not fit.
   */
  std::vector<unsigned int>
  partition_nodes(const MeshArrays     &arrays,
                  const NodePartitioner partitioner,
                  const unsigned int    n_fields,
                  const std::size_t     number_size,
                  const std::size_t     shared_memory_limit);



  /**
   * The precomputed structures of SharedNZ (Sec. 16.3.2): a thread block per
   * node part P_k computes the element data of every element E_k touching
   * P_k into shared memory, from halo nodal data Nbar_k it fetched into
   * shared memory, and assembles all nonzeros (and right-hand-side entries)
   * of the rows of P_k's DoFs straight into the value array. Element data
   * never leaves the chip; elements on part boundaries are computed by each
   * part they touch.
   *
   * In block k, element data entry i of its j-th element sits in shared
   * memory at nodal_size_k + i * n_elements_k + j (after the halo nodal
   * data), so that threads j of a warp touch consecutive banks.
   */
  struct SharedNZPlan
  {
    struct Parameters
    {
      NodePartitioner partitioner       = NodePartitioner::greedy_union;
      unsigned int    threads_per_block = 256;
      /// Shared memory a block may use, in bytes; 0: all the device allows
      /// one block. Less lets several blocks share a multiprocessor, at the
      /// price of smaller parts and more recomputed elements.
      std::size_t shared_memory_per_block = 0;
    };

    Parameters parameters;

    unsigned int n_blocks            = 0;
    unsigned int n_nodes_per_element = 0;
    unsigned int n_dofs_per_element  = 0;
    unsigned int n_supplemental      = 0;
    unsigned int n_entries           = 0;
    std::size_t  n_nonzeros          = 0;
    unsigned int n_dofs              = 0;
    unsigned int n_fields            = 0;

    /// Nbar_k: halo_nodes[halo_offsets[k] ...] (global node numbers).
    std::vector<index_type> halo_offsets;
    std::vector<index_type> halo_nodes;
    /// E_k: elements[element_offsets[k] ...] (global element numbers).
    std::vector<index_type> element_offsets;
    std::vector<index_type> elements;
    /// Block-local node (index into Nbar_k) of node a of the j-th element
    /// of block k: element_offsets[k] * n_nodes + a * n_k + j.
    std::vector<index_type> block_connectivity;
    /// S(e), same layout with n_supplemental rows.
    std::vector<double> block_supplemental;
    /// L(e, d), same layout with n_dofs rows (for the condensation).
    std::vector<index_type>    block_location;
    std::vector<unsigned char> block_has_constraints;
    /// Packed reduction lists of block k start at reduction_offsets[k];
    /// entries > 0: shared-memory element data index + 1, < 0: -(target +
    /// 1) with targets numbered nonzeros first, then right-hand side.
    std::vector<std::size_t> reduction_offsets;
    std::vector<index_type>  reduction_array;

    /// Largest shared memory a block needs, in bytes.
    std::size_t max_shared_bytes = 0;
    /// Element computations per element of the mesh (>= 1: boundary
    /// elements of parts are computed more than once).
    double recomputation_factor = 0;

    void
    reinit(const MeshArrays  &arrays,
           const Parameters  &parameters,
           const unsigned int n_fields,
           const std::size_t  number_size,
           const std::size_t  shared_memory_limit);

    std::size_t
    memory_consumption() const;
  };
} // namespace GPUAssembly

#endif

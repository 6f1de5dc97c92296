// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_engine_element_stage_traits_h
#define gpu_assembly_engine_element_stage_traits_h

#include <gpu_assembly/adapter/mesh_arrays.h>
#include <gpu_assembly/element/element_stage.h>

#include <cstddef>

// cudaStream_t without the CUDA headers, for host code.
struct CUstream_st;

namespace GPUAssembly
{
  /**
   * The arrays of a GlobalNZ plan's element side (GlobalNZPlan), on the
   * device, and the element-data buffer they are computed into: what an
   * element stage of a kernel's own reads and writes
   * (ElementStageTraits::launch_global_nz_stage()).
   */
  template <typename Number>
  struct GlobalNZStageArguments
  {
    const int    *block_element;
    const int    *cluster_node_offsets;
    const int    *cluster_nodes;
    const int    *block_connectivity;
    const Number *block_supplemental;
    unsigned int  n_supplemental;
    /// Elements per GlobalNZ cluster (the plan's elements_per_block).
    unsigned int B;
    /// Slots of the plan: clusters times B.
    std::size_t n_slots;
    /// The plan's entry_group: 3 where full element data are grouped by
    /// the components of a column node, else 1.
    unsigned int  entry_group;
    const Number *nodal_data;
    Number       *element_data;
    /// Packed upper triangles (GlobalNZPlan::Parameters::symmetric).
    bool symmetric;
    /// Matrix values and element-data values per element.
    unsigned int n_matrix_entries;
    unsigned int n_entries;
    /// Whether any element touches a constrained DoF; the slots that do
    /// (block_has_constraints) need their element data condensed, through
    /// the DoF positions block_location.
    bool                 any_constrained_element;
    const unsigned char *block_has_constraints;
    const int           *block_location;
  };



  /**
   * What the engine asks of an element kernel beyond its operator(), with
   * the defaults that suit a kernel written against the element contract
   * alone. A kernel that computes its element data its own way specializes
   * this class for its type, in its own header, so that every translation
   * unit that sees the kernel sees the specialization too
   * (Hex8ElasticityKernel does). A specialization with
   * has_global_nz_stage = true provides
   *
   * - `static bool uses_global_nz_stage(const Kernel &kernel)`: whether
   *   this kernel object asks for its own stage; otherwise GlobalNZ runs
   *   the engine's thread per element;
   * - `static void check_global_nz_arrays(const MeshArrays &arrays)`: throws
   *   if the stage cannot run on @p arrays; called once per reinit(), at
   *   the first assemble() that uses the stage, since it may walk the mesh;
   * - `static void launch_global_nz_stage(const Kernel &kernel,
   *   const ElementStageData<Number> &data,
   *   const GlobalNZStageArguments<Number> &arguments, CUstream_st *stream)`:
   *   enqueues kernels on @p stream that write the element data of every
   *   slot, condensed, into GlobalNZ's layout
   *   (GlobalNZPlan::element_data_index()), from which GlobalNZ's reduction
   *   then assembles them unchanged.
   *
   * The other methods have no place for a stage of a kernel's own: they
   * refuse a kernel object that asks for one.
   */
  template <class Kernel>
  struct ElementStageTraits
  {
    /// Whether the methods may run the kernel in compute_element()'s forms
    /// for linear simplices (element_specialization()); a kernel for one
    /// cell type turns them off, so that they are not compiled for it.
    static constexpr bool simplex_forms = true;

    /// Whether the kernel brings an element stage of its own for GlobalNZ.
    static constexpr bool has_global_nz_stage = false;
  };



  /**
   * Whether @p kernel asks for an element stage of its own
   * (ElementStageTraits).
   */
  template <class Kernel>
  bool
  uses_own_element_stage(const Kernel &kernel)
  {
    if constexpr (ElementStageTraits<Kernel>::has_global_nz_stage)
      return ElementStageTraits<Kernel>::uses_global_nz_stage(kernel);
    else
      {
        (void)kernel;
        return false;
      }
  }
} // namespace GPUAssembly

#endif

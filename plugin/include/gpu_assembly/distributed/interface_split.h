// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_distributed_interface_split_h
#define gpu_assembly_distributed_interface_split_h

#include <deal.II/base/index_set.h>
#include <deal.II/base/types.h>

#include <gpu_assembly/adapter/mesh_arrays.h>
#include <gpu_assembly/base/config.h>

#include <vector>

namespace GPUAssembly
{
  /**
   * A rank's local assembly split so that the exchange can travel while the
   * rank computes: the interface elements write every value of the rows
   * other ranks own, so that those rows are complete, and can be sent, once
   * the interface elements are assembled; the interior elements write only
   * rows the rank owns, and are assembled while the messages travel.
   *
   * An element writes row r of the local numbering if r is one of its DoFs,
   * or an entry of the constraint line of one of its DoFs (the condensation
   * of a hanging node moves the element's contributions there). An element
   * is an interface element if it writes a row the rank does not own. The
   * rows that interface elements write receive values from both parts
   * (rows the rank does not own: from the interface part alone): there the
   * local value is the interior part's plus the interface part's, added in
   * this order, whatever the order the parts are assembled in.
   */
  struct InterfaceSplit
  {
    /// Elements that write a row other ranks own, increasing.
    std::vector<unsigned int> interface_elements;
    /// The others, increasing; with interface_elements every element once.
    std::vector<unsigned int> interior_elements;
    /// The local rows the rank does not own (the rows it sends), increasing.
    std::vector<index_type> interface_rows;
    /// The local rows that interface elements write, increasing: all
    /// interface_rows and the owned rows next to them.
    std::vector<index_type> rows_written;
    /// The local nonzeros (positions in column_indices) of rows_written,
    /// increasing.
    std::vector<index_type> nonzeros_written;

    /**
     * Split the elements of @p arrays (a rank's arrays in the local
     * numbering, local DoF i being the global DoF @p local_to_global[i])
     * for a rank that owns @p owned_rows.
     */
    void
    reinit(const MeshArrays                                   &arrays,
           const std::vector<dealii::types::global_dof_index> &local_to_global,
           const dealii::IndexSet                             &owned_rows);
  };



  /**
   * @p arrays restricted to the elements @p elements (increasing): the
   * element arrays (connectivity, location, supplemental data, nonzero map)
   * of these elements in this order, every other array (nodes, DoFs,
   * pattern, constraints) as in @p arrays, so that an assembly of the
   * result writes the same local matrix positions as the whole mesh does,
   * from these elements alone.
   */
  MeshArrays
  restrict_to_elements(const MeshArrays                &arrays,
                       const std::vector<unsigned int> &elements);
} // namespace GPUAssembly

#endif

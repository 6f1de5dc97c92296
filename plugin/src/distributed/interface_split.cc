// SPDX-License-Identifier: LGPL-2.1-or-later
#include <deal.II/base/exceptions.h>
#include <deal.II/base/parallel.h>

#include <gpu_assembly/distributed/interface_split.h>

#include <algorithm>
#include <cstdint>

namespace GPUAssembly
{
  namespace
  {
    // Elements per task of the parallel loops over elements.
    constexpr std::size_t element_grain = 4096;

    // The constraint line of each local DoF with entries, or invalid_index.
    std::vector<index_type>
    lines_of_dofs(const MeshArrays &arrays)
    {
      std::vector<index_type> line(arrays.n_dofs, invalid_index);
      for (std::size_t l = 0; l < arrays.constraint_line_dofs.size(); ++l)
        line[arrays.constraint_line_dofs[l]] = static_cast<index_type>(l);
      return line;
    }

    // @p visit(row) for every row element @p e writes (rows may repeat).
    template <typename Visit>
    void
    for_rows_written(const MeshArrays              &arrays,
                     const std::vector<index_type> &line_of_dof,
                     const std::size_t              e,
                     const Visit                   &visit)
    {
      const std::size_t n = arrays.layout.n_dofs;
      for (std::size_t d = 0; d < n; ++d)
        {
          const index_type dof = arrays.location[e * n + d];
          visit(dof);
          const index_type line = line_of_dof[dof];
          if (line != invalid_index)
            for (index_type k = arrays.constraint_entry_offsets[line];
                 k < arrays.constraint_entry_offsets[line + 1];
                 ++k)
              visit(arrays.constraint_entry_dofs[k]);
        }
    }
  } // namespace



  void
  InterfaceSplit::reinit(
    const MeshArrays                                   &arrays,
    const std::vector<dealii::types::global_dof_index> &local_to_global,
    const dealii::IndexSet                             &owned_rows)
  {
    AssertThrow(local_to_global.size() == arrays.n_dofs,
                dealii::ExcDimensionMismatch(local_to_global.size(),
                                             arrays.n_dofs));
    // IndexSet compresses itself on first use; done here, before threads
    // read it.
    owned_rows.compress();
    const std::size_t         n_dofs = arrays.n_dofs;
    std::vector<std::uint8_t> owned(n_dofs);
    dealii::parallel::apply_to_subranges(
      std::size_t(0),
      n_dofs,
      [&](const std::size_t begin, const std::size_t end) {
        for (std::size_t i = begin; i < end; ++i)
          owned[i] = owned_rows.is_element(local_to_global[i]);
      },
      element_grain);

    const std::vector<index_type> line_of_dof = lines_of_dofs(arrays);
    std::vector<std::uint8_t>     is_interface(arrays.n_elements);
    dealii::parallel::apply_to_subranges(
      std::size_t(0),
      std::size_t(arrays.n_elements),
      [&](const std::size_t begin, const std::size_t end) {
        for (std::size_t e = begin; e < end; ++e)
          {
            bool foreign = false;
            for_rows_written(arrays, line_of_dof, e, [&](const index_type r) {
              foreign |= owned[r] == 0;
            });
            is_interface[e] = foreign;
          }
      },
      element_grain);

    interface_elements.clear();
    interior_elements.clear();
    std::vector<std::uint8_t> written(n_dofs, 0);
    for (unsigned int e = 0; e < arrays.n_elements; ++e)
      if (is_interface[e] != 0)
        {
          interface_elements.push_back(e);
          for_rows_written(arrays, line_of_dof, e, [&](const index_type r) {
            written[r] = 1;
          });
        }
      else
        interior_elements.push_back(e);

    interface_rows.clear();
    rows_written.clear();
    nonzeros_written.clear();
    for (std::size_t i = 0; i < n_dofs; ++i)
      {
        if (owned[i] == 0)
          interface_rows.push_back(static_cast<index_type>(i));
        if (written[i] != 0)
          {
            rows_written.push_back(static_cast<index_type>(i));
            for (index_type k = arrays.row_offsets[i];
                 k < arrays.row_offsets[i + 1];
                 ++k)
              nonzeros_written.push_back(k);
          }
      }
  }



  MeshArrays
  restrict_to_elements(const MeshArrays                &arrays,
                       const std::vector<unsigned int> &elements)
  {
    MeshArrays result;
    // Everything but the element arrays, which are filled below.
    result.dim                      = arrays.dim;
    result.n_elements               = elements.size();
    result.n_nodes                  = arrays.n_nodes;
    result.n_dofs                   = arrays.n_dofs;
    result.layout                   = arrays.layout;
    result.supplemental_format      = arrays.supplemental_format;
    result.n_supplemental           = arrays.n_supplemental;
    result.nodal_coordinates        = arrays.nodal_coordinates;
    result.node_dofs                = arrays.node_dofs;
    result.row_offsets              = arrays.row_offsets;
    result.column_indices           = arrays.column_indices;
    result.dof_is_constrained       = arrays.dof_is_constrained;
    result.inhomogeneities          = arrays.inhomogeneities;
    result.constraint_line_dofs     = arrays.constraint_line_dofs;
    result.constraint_entry_offsets = arrays.constraint_entry_offsets;
    result.constraint_entry_dofs    = arrays.constraint_entry_dofs;
    result.constraint_entry_weights = arrays.constraint_entry_weights;
    result.keep_constrained_dofs    = arrays.keep_constrained_dofs;

    // Per element, each array holds its size / n_elements entries (none
    // where an array is not built).
    const std::size_t n              = elements.size();
    const auto        restrict_array = [&](const auto &from, auto &to) {
      const std::size_t size =
        arrays.n_elements == 0 ? 0 : from.size() / arrays.n_elements;
      AssertThrow(size * arrays.n_elements == from.size(),
                  dealii::ExcInternalError());
      to.resize(n * size);
      dealii::parallel::apply_to_subranges(
        std::size_t(0),
        n,
        [&](const std::size_t begin, const std::size_t end) {
          for (std::size_t j = begin; j < end; ++j)
            {
              const std::size_t e = elements[j];
              AssertIndexRange(e, arrays.n_elements);
              std::copy(from.begin() + e * size,
                        from.begin() + (e + 1) * size,
                        to.begin() + j * size);
            }
        },
        element_grain);
    };
    restrict_array(arrays.connectivity, result.connectivity);
    restrict_array(arrays.location, result.location);
    restrict_array(arrays.supplemental, result.supplemental);
    restrict_array(arrays.nonzero_map, result.nonzero_map);
    return result;
  }
} // namespace GPUAssembly

// SPDX-License-Identifier: LGPL-2.1-or-later
#include <gpu_assembly/base/exceptions.h>
#include <gpu_assembly/lac/device_constraints.h>

#include <algorithm>

namespace GPUAssembly
{
  ConstraintLines::ConstraintLines(const MeshArrays &arrays)
  {
    AssertThrow(arrays.dof_is_constrained.size() == arrays.n_dofs &&
                  arrays.inhomogeneities.size() == arrays.n_dofs,
                dealii::ExcMessage("the mesh arrays have no constraint "
                                   "data for their " +
                                   std::to_string(arrays.n_dofs) + " DoFs."));
    entry_offsets.push_back(0);
    unsigned int line = 0;
    for (unsigned int i = 0; i < arrays.n_dofs; ++i)
      {
        if (arrays.dof_is_constrained[i] == 0)
          continue;
        dofs.push_back(i);
        inhomogeneities.push_back(arrays.inhomogeneities[i]);
        // Lines with entries are listed by increasing DoF, like this loop.
        if (line < arrays.constraint_line_dofs.size() &&
            arrays.constraint_line_dofs[line] == static_cast<index_type>(i))
          {
            for (index_type k = arrays.constraint_entry_offsets[line];
                 k < arrays.constraint_entry_offsets[line + 1];
                 ++k)
              {
                entry_dofs.push_back(arrays.constraint_entry_dofs[k]);
                weights.push_back(arrays.constraint_entry_weights[k]);
              }
            ++line;
          }
        entry_offsets.push_back(entry_dofs.size());
      }
    AssertThrow(line == arrays.constraint_line_dofs.size(),
                dealii::ExcMessage(
                  "the mesh arrays list constraint lines with entries for "
                  "DoFs that are not marked constrained, or not in "
                  "increasing order."));
  }



  template <typename Number>
  void
  distribute_constraints(const ConstraintLines &lines,
                         Number                *x,
                         const std::size_t      size)
  {
    const std::vector<Number> weights(lines.weights.begin(),
                                      lines.weights.end());
    const std::vector<Number> inhomogeneities(lines.inhomogeneities.begin(),
                                              lines.inhomogeneities.end());
    for (std::size_t k = 0; k < lines.size(); ++k)
      {
        AssertThrow(static_cast<std::size_t>(lines.dofs[k]) < size,
                    dealii::ExcIndexRange(lines.dofs[k], 0, size));
        x[lines.dofs[k]] =
          internal::constrained_value<Number>(k,
                                              lines.entry_offsets.data(),
                                              lines.entry_dofs.data(),
                                              weights.data(),
                                              inhomogeneities.data(),
                                              x);
      }
  }



  template void
  distribute_constraints(const ConstraintLines &, float *, std::size_t);
  template void
  distribute_constraints(const ConstraintLines &, double *, std::size_t);
} // namespace GPUAssembly

// SPDX-License-Identifier: LGPL-2.1-or-later
#include <gpu_assembly/base/exceptions.h>
#include <gpu_assembly/engine/local_elem/device_data.h>

#include <vector>

#include "../upload.h"

namespace GPUAssembly
{
  namespace internal
  {
    namespace
    {
      // Gathers a per-element array (n_per_element values of element e at
      // e * n_per_element + i) into column-major order over the given
      // element order: entry i of slot s at i * n_slots + s.
      template <typename Target, typename Source>
      std::vector<Target>
      column_major(const std::vector<Source>     &per_element,
                   const unsigned int             n_per_element,
                   const std::vector<index_type> &order)
      {
        const std::size_t   n_slots = order.size();
        std::vector<Target> result(n_per_element * n_slots);
        for (std::size_t s = 0; s < n_slots; ++s)
          for (unsigned int i = 0; i < n_per_element; ++i)
            result[i * n_slots + s] = static_cast<Target>(
              per_element[static_cast<std::size_t>(order[s]) * n_per_element +
                          i]);
        return result;
      }
    } // namespace



    template <typename Number>
    void
    LocalElemDeviceData<Number>::reinit(
      const MeshArrays                &arrays,
      const bool                       new_colored,
      const LocalElemPlan::Parameters &new_parameters)
    {
      parameters = new_parameters;
      colored    = new_colored;
      n_elements = arrays.n_elements;
      AssertThrow(parameters.block_size >= 32 && parameters.block_size <= 1024,
                  dealii::ExcMessage("LocalElem: threads per block must be "
                                     "between 32 and 1024."));

      plan.reinit(arrays, colored);
      const std::vector<index_type> &order = plan.element_order;

      const unsigned int n_ed = arrays.layout.n_dofs;
      // One staging object for all arrays: their transfers overlap.
      StagedUpload staging(
        (arrays.connectivity.size() + arrays.location.size() +
         arrays.nonzero_map.size()) *
          sizeof(int) +
        arrays.supplemental.size() * sizeof(Number) + order.size());
      upload(staging,
             connectivity,
             column_major<int>(arrays.connectivity,
                               arrays.layout.n_nodes,
                               order));
      upload(staging,
             supplemental,
             column_major<Number>(arrays.supplemental,
                                  arrays.n_supplemental,
                                  order));
      upload(staging,
             location,
             column_major<int>(arrays.location, n_ed, order));
      upload(staging,
             nonzero_map,
             column_major<int>(arrays.nonzero_map, n_ed * n_ed, order));
      std::vector<unsigned char> constrained(order.size(), 0);
      for (std::size_t s = 0; s < order.size(); ++s)
        for (unsigned int d = 0; d < n_ed; ++d)
          if (arrays.dof_is_constrained
                [arrays
                   .location[static_cast<std::size_t>(order[s]) * n_ed + d]])
            constrained[s] = 1;
      upload(staging, has_constraints, constrained);
      staging.finish();
      element_data.reinit((n_ed * n_ed + n_ed) *
                          static_cast<std::size_t>(arrays.n_elements));
    }



    template <typename Number>
    std::size_t
    LocalElemDeviceData<Number>::memory_consumption() const
    {
      return connectivity.memory_consumption() +
             supplemental.memory_consumption() + location.memory_consumption() +
             nonzero_map.memory_consumption() +
             has_constraints.memory_consumption() +
             element_data.memory_consumption();
    }



    template class LocalElemDeviceData<float>;
    template class LocalElemDeviceData<double>;
  } // namespace internal
} // namespace GPUAssembly

#include <gpu_assembly/base/device.h>
#include <gpu_assembly/base/exceptions.h>
#include <gpu_assembly/engine/device_assembler.h>
#include <gpu_assembly/host/element_coloring.h>

#include <algorithm>
#include <cstring>
#include <limits>

namespace GPUAssembly
{
  std::string
  to_string(const AssemblyMethod method)
  {
    switch (method)
      {
        case AssemblyMethod::global_nz:
          return "GlobalNZ";
        case AssemblyMethod::shared_nz:
          return "SharedNZ";
        case AssemblyMethod::local_elem_atomic:
          return "LocalElem-atomic";
        case AssemblyMethod::local_elem_colored:
          return "LocalElem-colored";
      }
    return "unknown";
  }



  AssemblyMethod
  parse_assembly_method(const std::string &name)
  {
    for (const auto method : {AssemblyMethod::global_nz,
                              AssemblyMethod::shared_nz,
                              AssemblyMethod::local_elem_atomic,
                              AssemblyMethod::local_elem_colored})
      if (name == to_string(method))
        return method;
    AssertThrow(false,
                dealii::ExcMessage(
                  "Unknown assembly method '" + name +
                  "'; choose GlobalNZ, SharedNZ, LocalElem-atomic "
                  "or LocalElem-colored."));
    return AssemblyMethod::global_nz;
  }



  namespace
  {
    template <typename Number>
    std::vector<Number>
    convert(const std::vector<double> &values)
    {
      return std::vector<Number>(values.begin(), values.end());
    }

    std::vector<unsigned char>
    as_bytes(const std::vector<std::uint16_t> &values)
    {
      std::vector<unsigned char> bytes(values.size() * sizeof(std::uint16_t));
      std::memcpy(bytes.data(), values.data(), bytes.size());
      return bytes;
    }

    // Gathers a per-element array (n_per_element values of element e at
    // e * n_per_element + i) into column-major order over the given element
    // order: entry i of slot s at i * n_slots + s.
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



  template <int dim, typename Number>
  void
  DeviceAssembler<dim, Number>::reinit(const MeshArrays     &new_arrays,
                                       const AdditionalData &new_data)
  {
    AssertThrow(new_arrays.dim == dim,
                dealii::ExcMessage("DeviceAssembler<" + std::to_string(dim) +
                                   "> was given mesh arrays of dimension " +
                                   std::to_string(new_arrays.dim) + "."));
    AssertThrow(n_cuda_devices() > 0,
                dealii::ExcMessage(
                  "DeviceAssembler needs a CUDA device and none was found; "
                  "use HostAssembler (the host path) instead."));
    // Start from nothing: a reinit() with another method must not keep the
    // previous method's plan and element-data buffer on the device.
    *this                   = DeviceAssembler();
    arrays                  = &new_arrays;
    additional_data         = new_data;
    const DeviceInfo device = get_device_info(0);

    shape_values.copy_from_host(convert<Number>(arrays->layout.shape_values));
    quadrature_weights.copy_from_host(
      convert<Number>(arrays->layout.quadrature_weights));
    inhomogeneities.copy_from_host(convert<Number>(arrays->inhomogeneities));
    dof_is_constrained.copy_from_host(
      std::vector<unsigned char>(arrays->dof_is_constrained.begin(),
                                 arrays->dof_is_constrained.end()));

    const unsigned int n_ed      = arrays->layout.n_dofs;
    const std::size_t  n_entries = n_ed * n_ed + n_ed;
    any_constrained_element      = arrays->n_constrained_elements() > 0;

    if (additional_data.element_strategy != ElementStrategy::thread_per_element)
      {
        AssertThrow(additional_data.method == AssemblyMethod::global_nz,
                    dealii::ExcMessage(
                      "The element strategy " +
                      to_string(additional_data.element_strategy) +
                      " computes element data for GlobalNZ only; " +
                      to_string(additional_data.method) +
                      " needs the strategy thread-per-element."));
        AssertThrow(dim == 3 && additional_data.n_nodal_fields == 3,
                    dealii::ExcMessage(
                      "The element strategy " +
                      to_string(additional_data.element_strategy) +
                      " reads the nodal coordinates: set n_nodal_fields to "
                      "3 (it is " +
                      std::to_string(additional_data.n_nodal_fields) + ")."));
        const unsigned int G = additional_data.hex8_elements_per_block;
        AssertThrow((G == 1 || G == 2 || G == 4 || G == 8) &&
                      additional_data.global_nz.elements_per_block % G == 0,
                    dealii::ExcMessage(
                      "hex8_elements_per_block must be 1, 2, 4 or 8 and "
                      "divide GlobalNZ's elements per block; it is " +
                      std::to_string(G) + "."));
        verify_hex8_arrays(*arrays);
      }

    if (additional_data.method == AssemblyMethod::global_nz)
      {
        GlobalNZPlan &plan = global_nz_plan;
        plan.reinit(*arrays,
                    additional_data.global_nz,
                    additional_data.n_nodal_fields,
                    sizeof(Number),
                    device.shared_memory_per_block_optin);
        AssertThrow(plan.reduction_array.size() <
                      static_cast<std::size_t>(std::numeric_limits<int>::max()),
                    ExcUnsupportedInput("GlobalNZ: the reduction array is "
                                        "too long for 32-bit offsets."));
        block_element.copy_from_host(plan.block_element);
        cluster_node_offsets.copy_from_host(plan.cluster_node_offsets);
        cluster_nodes.copy_from_host(plan.cluster_nodes);
        block_connectivity.copy_from_host(plan.block_connectivity);
        block_supplemental.copy_from_host(
          convert<Number>(plan.block_supplemental));
        block_location.copy_from_host(plan.block_location);
        block_has_constraints.copy_from_host(plan.block_has_constraints);
        reduction_target_begin.copy_from_host(plan.reduction_target_begin);
        reduction_slice_offsets.copy_from_host(
          std::vector<int>(plan.reduction_slice_offsets.begin(),
                           plan.reduction_slice_offsets.end()));
        reduction_array.copy_from_host(plan.reduction_array);
        upper_position.copy_from_host(plan.upper_position);
        reduction_block_order.copy_from_host(plan.reduction_block_order);
        mirror_position.copy_from_host(plan.mirror_position);
        element_data.reinit(plan.element_data_size());
        return;
      }

    if (additional_data.method == AssemblyMethod::shared_nz)
      {
        SharedNZPlan     &plan = shared_nz_plan;
        const std::size_t requested =
          additional_data.shared_nz.shared_memory_per_block;
        AssertThrow(requested <= device.shared_memory_per_block_optin,
                    ExcUnsupportedInput(
                      "SharedNZ: " + std::to_string(requested) +
                      " bytes of shared memory per block were requested, the "
                      "device allows " +
                      std::to_string(device.shared_memory_per_block_optin) +
                      "."));
        // The driver reserves 1 KiB of each block's shared memory.
        const unsigned int blocks =
          std::max(1u,
                   additional_data.shared_nz.resolved(arrays->layout.n_nodes)
                     .blocks_per_multiprocessor);
        const std::size_t shared_memory =
          requested > 0 ?
            requested :
            std::min(device.shared_memory_per_block_optin,
                     device.shared_memory_per_multiprocessor / blocks - 1024);
        plan.reinit(*arrays,
                    additional_data.shared_nz,
                    additional_data.n_nodal_fields,
                    sizeof(Number),
                    shared_memory);
        AssertThrow(std::max({plan.sources.size(),
                              plan.targets.size(),
                              plan.block_supplemental.size()}) <
                      static_cast<std::size_t>(std::numeric_limits<int>::max()),
                    ExcUnsupportedInput("SharedNZ: the reduction or S(e) "
                                        "arrays are too long for 32-bit "
                                        "offsets."));
        shared_halo_offsets.copy_from_host(plan.halo_offsets);
        shared_halo_nodes.copy_from_host(plan.halo_nodes);
        shared_element_offsets.copy_from_host(plan.element_offsets);
        // Node pairs read neither: each block stages S(e) and the Dirichlet
        // data of its elements alone.
        shared_connectivity.copy_from_host(plan.parameters.node_pairs ?
                                             std::vector<index_type>() :
                                             plan.block_connectivity);
        shared_slots.copy_from_host(as_bytes(plan.parameters.node_pairs ?
                                               std::vector<std::uint16_t>() :
                                               plan.block_slots));
        shared_supplemental.copy_from_host(
          convert<Number>(plan.block_supplemental));
        // Only node pairs read these: without, a block's S(e) starts at its
        // first element.
        shared_supplemental_offsets.copy_from_host(
          plan.parameters.node_pairs ?
            std::vector<int>(plan.supplemental_offsets.begin(),
                             plan.supplemental_offsets.end()) :
            std::vector<int>());
        shared_location.copy_from_host(plan.block_location);
        shared_has_constraints.copy_from_host(plan.block_has_constraints);
        shared_n_free_elements.copy_from_host(plan.n_free_elements);
        shared_slice_offsets.copy_from_host(
          std::vector<int>(plan.slice_offsets.begin(),
                           plan.slice_offsets.end()));
        shared_sources.copy_from_host(as_bytes(plan.sources));
        shared_target_offsets.copy_from_host(
          std::vector<int>(plan.target_offsets.begin(),
                           plan.target_offsets.end()));
        shared_targets.copy_from_host(plan.targets);
        return;
      }

    // LocalElem: atomics in Morton order (neighbours in a warp share
    // nodes, which the cache rewards), colours each in Morton order.
    const std::vector<index_type> morton = morton_element_order(*arrays);
    std::vector<index_type>       order;
    color_offsets.clear();
    if (additional_data.method == AssemblyMethod::local_elem_atomic)
      order = morton;
    else
      {
        std::vector<unsigned int> rank(arrays->n_elements);
        for (unsigned int s = 0; s < morton.size(); ++s)
          rank[morton[s]] = s;
        color_offsets.push_back(0);
        for (auto color : color_elements(*arrays))
          {
            std::sort(color.begin(),
                      color.end(),
                      [&](const unsigned int a, const unsigned int b) {
                        return rank[a] < rank[b];
                      });
            order.insert(order.end(), color.begin(), color.end());
            color_offsets.push_back(order.size());
          }
      }

    element_connectivity.copy_from_host(
      column_major<int>(arrays->connectivity, arrays->layout.n_nodes, order));
    element_supplemental.copy_from_host(
      column_major<Number>(arrays->supplemental,
                           arrays->n_supplemental,
                           order));
    element_location.copy_from_host(
      column_major<int>(arrays->location, n_ed, order));
    element_nonzero_map.copy_from_host(
      column_major<int>(arrays->nonzero_map, n_ed * n_ed, order));
    std::vector<unsigned char> has_constraints(order.size(), 0);
    for (std::size_t s = 0; s < order.size(); ++s)
      for (unsigned int d = 0; d < n_ed; ++d)
        if (arrays->dof_is_constrained
              [arrays->location[static_cast<std::size_t>(order[s]) * n_ed + d]])
          has_constraints[s] = 1;
    element_has_constraints.copy_from_host(has_constraints);
    element_data.reinit(n_entries * arrays->n_elements);
  }



  template <int dim, typename Number>
  std::size_t
  DeviceAssembler<dim, Number>::device_memory_consumption() const
  {
    std::size_t bytes = 0;
    for (const std::size_t b :
         {shape_values.memory_consumption(),
          quadrature_weights.memory_consumption(),
          inhomogeneities.memory_consumption(),
          dof_is_constrained.memory_consumption(),
          element_data.memory_consumption(),
          block_element.memory_consumption(),
          cluster_node_offsets.memory_consumption(),
          cluster_nodes.memory_consumption(),
          block_connectivity.memory_consumption(),
          block_supplemental.memory_consumption(),
          block_location.memory_consumption(),
          block_has_constraints.memory_consumption(),
          reduction_target_begin.memory_consumption(),
          reduction_slice_offsets.memory_consumption(),
          reduction_array.memory_consumption(),
          upper_position.memory_consumption(),
          reduction_block_order.memory_consumption(),
          mirror_position.memory_consumption(),
          shared_halo_offsets.memory_consumption(),
          shared_halo_nodes.memory_consumption(),
          shared_element_offsets.memory_consumption(),
          shared_connectivity.memory_consumption(),
          shared_slots.memory_consumption(),
          shared_supplemental.memory_consumption(),
          shared_supplemental_offsets.memory_consumption(),
          shared_location.memory_consumption(),
          shared_has_constraints.memory_consumption(),
          shared_n_free_elements.memory_consumption(),
          shared_slice_offsets.memory_consumption(),
          shared_sources.memory_consumption(),
          shared_target_offsets.memory_consumption(),
          shared_targets.memory_consumption(),
          element_connectivity.memory_consumption(),
          element_supplemental.memory_consumption(),
          element_location.memory_consumption(),
          element_nonzero_map.memory_consumption(),
          element_has_constraints.memory_consumption()})
      bytes += b;
    return bytes;
  }



  template class DeviceAssembler<2, float>;
  template class DeviceAssembler<2, double>;
  template class DeviceAssembler<3, float>;
  template class DeviceAssembler<3, double>;
} // namespace GPUAssembly

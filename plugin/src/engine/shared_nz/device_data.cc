// SPDX-License-Identifier: LGPL-2.1-or-later
#include <gpu_assembly/base/exceptions.h>
#include <gpu_assembly/engine/shared_nz/device_data.h>

#include <algorithm>
#include <limits>
#include <string>

#include "../upload.h"

namespace GPUAssembly
{
  namespace internal
  {
    template <typename Number>
    void
    SharedNZDeviceData<Number>::reinit(
      const MeshArrays               &arrays,
      const SharedNZPlan::Parameters &parameters,
      const unsigned int              n_fields,
      const DeviceInfo               &device)
    {
      const std::size_t requested = parameters.shared_memory_per_block;
      AssertThrow(requested <= device.shared_memory_per_block_optin,
                  ExcUnsupportedInput(
                    "SharedNZ: " + std::to_string(requested) +
                    " bytes of shared memory per block were requested, the "
                    "device allows " +
                    std::to_string(device.shared_memory_per_block_optin) +
                    "."));
      // The driver reserves 1 KiB of each block's shared memory.
      const unsigned int blocks = std::max(
        1u,
        parameters.resolved(arrays.layout.n_nodes).blocks_per_multiprocessor);
      const std::size_t shared_memory =
        requested > 0 ?
          requested :
          std::min(device.shared_memory_per_block_optin,
                   device.shared_memory_per_multiprocessor / blocks - 1024);
      plan.reinit(arrays, parameters, n_fields, sizeof(Number), shared_memory);
      AssertThrow(std::max({plan.sources.size(),
                            plan.targets.size(),
                            plan.compact_targets.size(),
                            plan.block_supplemental.size()}) <
                    static_cast<std::size_t>(std::numeric_limits<int>::max()),
                  ExcUnsupportedInput("SharedNZ: the reduction or S(e) "
                                      "arrays are too long for 32-bit "
                                      "offsets."));
      const bool node_pairs = plan.parameters.node_pairs;
      // One staging object for all arrays: their transfers overlap.
      StagedUpload staging(plan.memory_consumption());
      upload(staging, halo_offsets, plan.halo_offsets);
      upload(staging, halo_nodes, plan.halo_nodes);
      upload(staging, element_offsets, plan.element_offsets);
      // Node pairs read neither: each block stages S(e) and the Dirichlet
      // data of its elements alone.
      upload(staging,
             connectivity,
             node_pairs ? std::vector<index_type>() : plan.block_connectivity);
      upload(staging,
             slots,
             node_pairs ? std::vector<std::uint16_t>() : plan.block_slots);
      upload(staging, supplemental, convert<Number>(plan.block_supplemental));
      // Only node pairs read these: without, a block's S(e) starts at its
      // first element.
      upload(staging,
             supplemental_offsets,
             node_pairs ? as_int(plan.supplemental_offsets) :
                          std::vector<int>());
      upload(staging, location, plan.block_location);
      upload(staging, has_constraints, plan.block_has_constraints);
      upload(staging, n_free_elements, plan.n_free_elements);
      upload(staging, slice_offsets, as_int(plan.slice_offsets));
      upload(staging, sources, plan.sources);
      // With compact targets the device reads the compact records alone.
      const bool compact = plan.parameters.compact_targets;
      upload(staging,
             target_offsets,
             as_int(compact ? plan.compact_target_offsets :
                              plan.target_offsets));
      upload(staging, targets, compact ? plan.compact_targets : plan.targets);
      staging.finish();
    }



    template <typename Number>
    std::size_t
    SharedNZDeviceData<Number>::memory_consumption() const
    {
      return halo_offsets.memory_consumption() +
             halo_nodes.memory_consumption() +
             element_offsets.memory_consumption() +
             connectivity.memory_consumption() + slots.memory_consumption() +
             supplemental.memory_consumption() +
             supplemental_offsets.memory_consumption() +
             location.memory_consumption() +
             has_constraints.memory_consumption() +
             n_free_elements.memory_consumption() +
             slice_offsets.memory_consumption() + sources.memory_consumption() +
             target_offsets.memory_consumption() + targets.memory_consumption();
    }



    template class SharedNZDeviceData<float>;
    template class SharedNZDeviceData<double>;
  } // namespace internal
} // namespace GPUAssembly

// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_tests_gpu_device_kernels_h
#define gpu_assembly_tests_gpu_device_kernels_h

#include <cstddef>
#include <vector>

// Host interface to the device half of the GPU tests (device_kernels.cu),
// so the test's deal.II code never passes through nvcc.
namespace Testing
{
  enum class DeviceKernel
  {
    laplace,
    elasticity
  };

  /**
   * What an element kernel reads on the device and writes back:
   * column-major supplemental data (entry i of element e at
   * i * n_elements + e) in, column-major element matrices and vectors out,
   * the layout the GPU methods use for coalesced access.
   */
  struct DeviceElementData
  {
    const std::vector<double> &supplemental;
    unsigned int               n_elements;
    unsigned int               n_nodes;
    unsigned int               n_q_points;
    const std::vector<double> &shape_values;
    std::vector<double>       &matrices;
    std::vector<double>       &vectors;
  };

  /// Run a bundled element kernel on the device, a thread per element.
  void
  compute_element_data_on_device(const int                dim,
                                 const DeviceKernel       kernel,
                                 const DeviceElementData &data);

  /// Ask for @p bytes of device memory through the checked wrapper.
  void
  allocate_device_memory(const std::size_t bytes);
} // namespace Testing

#endif

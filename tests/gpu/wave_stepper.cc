// SPDX-License-Identifier: LGPL-2.1-or-later
// The GPU stepper of the explicit wave solver against the host stepper:
// the same receiver traces and final states, 1e-12 relative in double (the
// arithmetic is the same, so they are expected to be bitwise equal) and
// 1e-6 in single precision, for both partitioners, two block sizes,
// triangles and quadrilaterals, with two materials, damping, an absorbing
// layer, force and prescribed-displacement sources. A GPU run stopped and
// restarted from its state gives the same traces. The DeviceVector types
// the stepper's arrays use (16- and 8-bit link data among them) round-trip
// exactly. Exits with 77 (skipped) without a CUDA device.

#include <deal.II/base/exceptions.h>

#include <gpu_assembly/base/device.h>
#include <gpu_assembly/lac/device_vector.h>
#include <gpu_assembly/wave/wave_stepper.h>

#include <cmath>
#include <cstdint>

#include "../tests.h"
#include "../wave_test_model.h"
#include "gpu_tests.h"

using namespace GPUAssembly::Wave;

namespace
{
  using Model = Testing::WaveModel;

  // The damped model with sources, and a fourth receiver on the top edge.
  Model
  make_model(const bool triangles)
  {
    Model model =
      Testing::make_wave_model(triangles ? 4 : 5, triangles, true, true);
    model.receivers.push_back(model.mesh.nearest_node(0, 0.99));
    return model;
  }



  template <typename Number>
  void
  compare(const Model          &model,
          const PartitionerType type,
          const unsigned int    block_size,
          const std::string    &what,
          Testing::Checks      &checks)
  {
    const NodeBlocks      blocks  = Testing::blocks_of(model, type, block_size);
    const double          dt      = 0.8 * model.dt_stable;
    const unsigned int    n_steps = 3000;
    const Plan<Number>    plan    = make_plan<Number>(model.system,
                                                blocks,
                                                dt,
                                                model.dt_stable,
                                                model.sources,
                                                model.receivers,
                                                n_steps);
    HostStepper<Number>   host;
    DeviceStepper<Number> device;
    host.reinit(plan, 2);
    device.reinit(plan, 2);
    host.advance(n_steps);
    // In uneven pieces, so that records straddle the calls.
    device.advance(1001);
    device.advance(n_steps - 1001);
    std::vector<double> host_prev, host_curr, device_prev, device_curr;
    host.get_state(host_prev, host_curr);
    device.get_state(device_prev, device_curr);

    const double tolerance = sizeof(Number) == 8 ? 1e-12 : 1e-6;
    double       peak      = 0;
    for (const double v : host.receiver_history())
      peak = std::max(peak, std::abs(v));
    const double trace_error =
      Testing::max_relative_difference(device.receiver_history(),
                                       host.receiver_history());
    const double state_error =
      Testing::max_relative_difference(device_curr, host_curr);
    const std::string name =
      what + ", " + to_string(type) + ", " + std::to_string(block_size) +
      " per block, " + (sizeof(Number) == 8 ? "double" : "float") + " (eta " +
      Testing::scientific(plan.efficiency()) + "): ";
    checks.check(peak > 1e-4 && device.receiver_history().size() ==
                                  host.receiver_history().size(),
                 name + "traces recorded, peak " + Testing::scientific(peak));
    checks.check(trace_error <= tolerance,
                 name + "GPU traces = host traces, max relative difference " +
                   Testing::scientific(trace_error) +
                   " <= " + Testing::scientific(tolerance));
    checks.check(state_error <= tolerance,
                 name + "GPU final state = host, max relative difference " +
                   Testing::scientific(state_error));

    if (type == PartitionerType::aligned && block_size == 512)
      {
        checks.check(
          Testing::restarted_traces<DeviceStepper>(plan, 2, 777, n_steps) ==
            device.receiver_history(),
          name + "GPU run restarted after 777 steps records "
                 "bitwise the same traces");
      }
  }


  // A DeviceVector<T> of the stepper's link and index types: values come
  // back unchanged, a prefix can be copied alone, asking for more entries
  // than it holds is refused, and a move leaves the source empty.
  template <typename T>
  void
  check_device_vector(const std::vector<T> &values,
                      const std::string    &type,
                      Testing::Checks      &checks)
  {
    GPUAssembly::DeviceVector<T> vector(values);
    checks.check(vector.to_host() == values &&
                   vector.memory_consumption() == values.size() * sizeof(T),
                 "DeviceVector<" + type +
                   ">: " + std::to_string(values.size()) +
                   " values round-trip exactly");
    std::vector<T> prefix;
    vector.copy_to_host(prefix, 3);
    checks.check(prefix == std::vector<T>(values.begin(), values.begin() + 3),
                 "DeviceVector<" + type +
                   ">: copy_to_host(host, 3) gives the first 3 entries");
    checks.check_throws<dealii::ExceptionBase>(
      [&]() {
        vector.copy_to_host(prefix, values.size() + 1);
      },
      std::to_string(values.size() + 1) +
        " entries requested from a vector "
        "of " +
        std::to_string(values.size()),
      "DeviceVector<" + type +
        ">: copying more entries than it holds is "
        "refused");
    const GPUAssembly::DeviceVector<T> moved(std::move(vector));
    checks.check(vector.size() == 0 && vector.data() == nullptr &&
                   moved.to_host() == values,
                 "DeviceVector<" + type +
                   ">: a move hands over the allocation and empties the "
                   "source");
  }
} // namespace

int
main()
{
  if (!Testing::cuda_device_present())
    return Testing::no_device_exit_code();
  Testing::Checks checks;
  check_device_vector<std::uint16_t>({0, 1, 255, 256, 4097, 65535},
                                     "std::uint16_t",
                                     checks);
  check_device_vector<std::uint8_t>({0, 1, 31, 32, 128, 255},
                                    "std::uint8_t",
                                    checks);
  check_device_vector<int>({-7, 0, 1 << 20, 3, 9}, "int", checks);
  checks.check_throws<dealii::ExceptionBase>(
    []() {
      DeviceStepper<double> stepper;
      stepper.advance(1);
    },
    "advance() called before reinit()",
    "DeviceStepper::advance() before reinit() is refused");
  for (const bool triangles : {true, false})
    {
      const Model       model = make_model(triangles);
      const std::string what =
        std::string(triangles ? "triangles" : "quadrilaterals") + " (" +
        std::to_string(model.mesh.n_nodes) + " nodes)";
      for (const PartitionerType type :
           {PartitionerType::greedy, PartitionerType::aligned})
        for (const unsigned int block_size : {128u, 512u})
          {
            compare<double>(model, type, block_size, what, checks);
            compare<float>(model, type, block_size, what, checks);
          }
    }
  return checks.exit_code();
}

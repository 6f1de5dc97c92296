// SPDX-License-Identifier: LGPL-2.1-or-later
// What the benchmarks of the two explicit solvers (wave2d_benchmark,
// tled_benchmark) do alike with a time stepper, through the interface the
// wave and TLED steppers share.
#ifndef gpu_assembly_benchmarks_stepper_benchmarking_h
#define gpu_assembly_benchmarks_stepper_benchmarking_h

#include <gpu_assembly/base/central_difference_stepper.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <vector>

namespace Benchmarking
{
  inline double
  seconds_since(const std::chrono::steady_clock::time_point start)
  {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                         start)
      .count();
  }

  /// Wall time of @p n_steps steps (the device steppers return once their
  /// steps are done).
  inline double
  seconds_to_advance(GPUAssembly::CentralDifferenceStepper &stepper,
                     const unsigned int                     n_steps)
  {
    const auto start = std::chrono::steady_clock::now();
    stepper.advance(n_steps);
    return seconds_since(start);
  }

  /// How far the current state of @p stepper is from that of @p reference:
  /// the largest difference of a value, and the largest value of the
  /// reference to measure it by.
  struct StateDifference
  {
    double max_difference = 0;
    double max_reference  = 0;
  };

  inline StateDifference
  compare_states(const GPUAssembly::CentralDifferenceStepper &stepper,
                 const GPUAssembly::CentralDifferenceStepper &reference)
  {
    std::vector<double> previous, u, u_reference;
    stepper.get_state(previous, u);
    reference.get_state(previous, u_reference);
    StateDifference result;
    for (std::size_t i = 0; i < u_reference.size(); ++i)
      {
        result.max_difference =
          std::max(result.max_difference, std::abs(u[i] - u_reference[i]));
        result.max_reference =
          std::max(result.max_reference, std::abs(u_reference[i]));
      }
    return result;
  }
} // namespace Benchmarking

#endif

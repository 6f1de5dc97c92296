// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef hyperelastic_explicit_parameters_h
#define hyperelastic_explicit_parameters_h

#include <deal.II/base/parameter_handler.h>

#include <string>
#include <vector>

namespace Hyperelastic
{
  using namespace dealii;

  /**
   * The entries of the explicit (TLED) integrator: `Time integration` in
   * subsection `Time`, the rest in subsection `Explicit dynamics`.
   */
  struct ExplicitDynamics
  {
    std::string               time_integration;
    double                    time_step;
    double                    safety_factor;
    double                    damping;
    double                    hourglass_coefficient;
    double                    ramp_time;
    std::vector<unsigned int> roller_boundary_ids;
    std::string               displaced_region;
    std::vector<double>       displacement;
    std::vector<std::string>  displaced_components;
    unsigned int              trace_interval;
    unsigned int              steps_per_graph;
    std::string               nodal_sum;

    bool
    is_explicit() const
    {
      return time_integration == "explicit";
    }

    static void
    declare_parameters(ParameterHandler &prm);
    void
    parse_parameters(ParameterHandler &prm);
  };
} // namespace Hyperelastic

#endif

// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_tests_hyperelastic_test_utilities_h
#define gpu_assembly_tests_hyperelastic_test_utilities_h

#include <deal.II/base/parameter_handler.h>

#include <sstream>
#include <string>

#include "implicit_solid.h"
#include "parameters.h"

namespace Testing
{
  /// Parameters of the hyperelastic app: the defaults, then @p prm_text.
  inline Hyperelastic::Parameters
  hyperelastic_parameters(const std::string &prm_text)
  {
    dealii::ParameterHandler prm;
    Hyperelastic::Parameters::declare_parameters(prm);
    prm.parse_input_from_string(prm_text);
    Hyperelastic::Parameters parameters;
    parameters.parse_parameters(prm);
    return parameters;
  }

  /// A short run with output off; returns the solid after @p n_steps.
  inline std::unique_ptr<Hyperelastic::ImplicitSolid>
  run_hyperelastic(const std::string &prm_text,
                   const unsigned int n_steps,
                   std::ostream      &log)
  {
    auto solid = std::make_unique<Hyperelastic::ImplicitSolid>(
      hyperelastic_parameters(prm_text + "\nsubsection Output\n"
                                         "  set Output interval = 0\n"
                                         "  set Screen interval = 0\nend\n"),
      log);
    solid->setup();
    for (unsigned int s = 0; s < n_steps; ++s)
      solid->do_step();
    return solid;
  }

  /// Current positions X + u of all nodes, node-major.
  inline std::vector<double>
  positions(const Hyperelastic::ImplicitSolid &solid,
            const std::vector<double>         &u)
  {
    const GPUAssembly::MeshArrays &a = solid.arrays();
    std::vector<double>            x(a.nodal_coordinates);
    for (unsigned int i = 0; i < x.size(); ++i)
      x[i] += u[a.node_dofs[i]];
    return x;
  }
} // namespace Testing

#endif

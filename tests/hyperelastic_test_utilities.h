// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_tests_hyperelastic_test_utilities_h
#define gpu_assembly_tests_hyperelastic_test_utilities_h

#include <deal.II/base/parameter_handler.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "implicit_solid.h"
#include "parameters.h"

namespace Testing
{
  /// A parameter-file subsection @p name that sets @p entries, each
  /// "Name = value".
  inline std::string
  prm_subsection(const std::string              &name,
                 const std::vector<std::string> &entries)
  {
    std::string text = "subsection " + name + "\n";
    for (const std::string &entry : entries)
      text += "  set " + entry + "\n";
    return text + "end\n";
  }

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

  /// A node's position rounded to 1e-8 m: finds the same node in runs
  /// whose partitions number the nodes differently.
  using NodeKey = std::array<long long, 3>;

  /// Displacement and momentum of each node, by position.
  using NodalStates =
    std::map<NodeKey, std::pair<dealii::Tensor<1, 3>, dealii::Tensor<1, 3>>>;

  inline NodeKey
  node_key(const dealii::Point<3> &p)
  {
    NodeKey key;
    for (unsigned int d = 0; d < 3; ++d)
      key[d] = std::llround(p[d] * 1e8);
    return key;
  }

  inline NodalStates
  by_position(const std::vector<Hyperelastic::ImplicitSolid::NodalState> &nodes)
  {
    NodalStates states;
    for (const auto &node : nodes)
      states[node_key(node.position)] = {node.u, node.p};
    return states;
  }

  /// How far the nodal states of a run lie from the reference's.
  struct NodalDifference
  {
    /// Whether every node of the reference is in the run.
    bool all_nodes_found = true;
    /// The reference's largest displacement and momentum.
    double u_max = 0, p_max = 0;
    /// The largest differences of displacement and momentum.
    double du = 0, dp = 0;
  };

  inline NodalDifference
  nodal_difference(const NodalStates &reference, const NodalStates &run)
  {
    NodalDifference d;
    for (const auto &[key, state] : reference)
      {
        const auto other = run.find(key);
        if (other == run.end())
          {
            d.all_nodes_found = false;
            return d;
          }
        d.u_max = std::max(d.u_max, state.first.norm());
        d.p_max = std::max(d.p_max, state.second.norm());
        d.du    = std::max(d.du, (state.first - other->second.first).norm());
        d.dp    = std::max(d.dp, (state.second - other->second.second).norm());
      }
    return d;
  }

  /// Runs compared across partitions and devices: their number of steps
  /// and the relative residual where CG stops.
  constexpr unsigned int comparison_n_steps      = 10;
  constexpr double       comparison_cg_tolerance = 1e-10;
  /// Their states differ by the order of the sums in CG, by where each CG
  /// stops and by the assembly's round-off (1e-13 between device and host):
  /// they agree to a few orders of magnitude above the CG tolerance,
  /// relative to the largest value.
  constexpr double comparison_tolerance = 1e4 * comparison_cg_tolerance;

  /// The Solver subsection of runs compared across partitions and devices:
  /// Newton to 1e-9, CG to comparison_cg_tolerance.
  inline std::string
  comparison_solver()
  {
    std::ostringstream text;
    text << "subsection Solver\n  set CG relative tolerance = "
         << comparison_cg_tolerance << "\n  set Newton tolerance = 1e-9\nend\n";
    return text.str();
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

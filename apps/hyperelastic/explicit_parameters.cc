// SPDX-License-Identifier: LGPL-2.1-or-later
#include "explicit_parameters.h"

#include <deal.II/base/exceptions.h>
#include <deal.II/base/utilities.h>

namespace Hyperelastic
{
  void
  ExplicitDynamics::declare_parameters(ParameterHandler &prm)
  {
    prm.enter_subsection("Time");
    prm.declare_entry(
      "Time integration",
      "implicit",
      Patterns::Selection("implicit|explicit"),
      "implicit: the midpoint rule with Newton's method (Mode chooses "
      "dynamic or quasi-static). explicit: Total Lagrangian Explicit "
      "Dynamics (TLED): central differences with a lumped mass, one-point "
      "elements (hexahedra with hourglass control, or tetrahedra), no "
      "system to solve; see subsection 'Explicit dynamics'. 'Mode', 'Time "
      "step' and 'Load time function' are then not used.");
    prm.leave_subsection();

    prm.enter_subsection("Explicit dynamics");
    prm.declare_entry("Time step",
                      "0",
                      Patterns::Double(0.),
                      "Delta t of the central-difference rule; 0: the "
                      "safety factor times the stable limit min L_e / c "
                      "(c the dilatational wave speed, L_e the hexahedron's "
                      "volume over its largest face divided by sqrt(1 + "
                      "hourglass coefficient), or the tetrahedron's "
                      "smallest height). A larger step than the limit is "
                      "refused. Units: s.");
    prm.declare_entry("Safety factor",
                      "0.5",
                      Patterns::Double(0., 1.),
                      "Fraction of the stable limit used when 'Time step' "
                      "is 0.");
    prm.declare_entry("Damping",
                      "0",
                      Patterns::Double(0.),
                      "Mass-proportional damping coefficient D (damping "
                      "force D M v). Units: 1/s.");
    prm.declare_entry("Hourglass coefficient",
                      "0.1",
                      Patterns::Double(0., 1.),
                      "Hexahedra: stiffness of each hourglass mode as a "
                      "fraction of the element's dilatational stiffness "
                      "(Flanagan-Belytschko kappa; 0.05 to 0.15 usual).");
    prm.declare_entry("Ramp time",
                      "0",
                      Patterns::Double(0.),
                      "The load and the prescribed displacement grow from "
                      "0 to full over this time along the smooth ramp "
                      "s^3 (10 - 15 s + 6 s^2), s = t / ramp time, and "
                      "stay full after. 0: full at once. Units: s.");
    prm.declare_entry("Roller boundary ids",
                      "",
                      Patterns::List(Patterns::Integer(0, 255)),
                      "Boundary ids whose nodes cannot move along the face "
                      "normal but slide freely in the face (the normal must "
                      "be a coordinate axis): the same as 'Boundary "
                      "conditions/Rollers' = 'id: normal component', which "
                      "the explicit integrator reads as well (with 'Roller "
                      "regions'). Empty: none.");
    prm.declare_entry("Displaced region",
                      "",
                      Patterns::Anything(),
                      "Box x0, y0, z0, x1, y1, z1: its nodes are moved by "
                      "'Displacement' (ramped) in the 'Displaced "
                      "components'; their reaction is the traced force. "
                      "The explicit integrator's prescribed displacement: "
                      "it refuses 'Boundary conditions/Prescribed "
                      "displacements', whose functions of time it does not "
                      "follow. Empty: none.");
    prm.declare_entry("Displacement",
                      "0, 0, 0",
                      Patterns::List(Patterns::Double(), 3, 3),
                      "Final displacement of the displaced region. Units: "
                      "m.");
    prm.declare_entry("Displaced components",
                      "x, y, z",
                      Patterns::List(Patterns::Selection("x|y|z"), 1, 3),
                      "Components that the displaced region prescribes; "
                      "the others are free.");
    prm.declare_entry("Trace interval",
                      "300",
                      Patterns::Integer(1),
                      "Every this many steps the trace records the force "
                      "on the displaced region (or the applied load) and "
                      "the displacement of the node nearest the body's "
                      "centre, to trace.csv and trace.png in the output "
                      "directory.");
    prm.declare_entry("Steps per graph",
                      "300",
                      Patterns::Integer(1),
                      "GPU: steps per CUDA graph launch.");
    prm.declare_entry("Nodal sum",
                      "plan",
                      Patterns::Selection("plan|atomic|fused"),
                      "GPU: plan sums each node's element forces in a fixed "
                      "order (bitwise reproducible, equal to the host); "
                      "atomic adds them with atomicAdd (last bits vary); "
                      "fused computes each block of nodes' elements in "
                      "shared memory and sums them in plan's order (one "
                      "kernel, bitwise equal to plan).");
    prm.leave_subsection();
  }



  void
  ExplicitDynamics::parse_parameters(ParameterHandler &prm)
  {
    prm.enter_subsection("Time");
    time_integration = prm.get("Time integration");
    prm.leave_subsection();

    prm.enter_subsection("Explicit dynamics");
    time_step             = prm.get_double("Time step");
    safety_factor         = prm.get_double("Safety factor");
    damping               = prm.get_double("Damping");
    hourglass_coefficient = prm.get_double("Hourglass coefficient");
    ramp_time             = prm.get_double("Ramp time");
    roller_boundary_ids.clear();
    for (const auto &id :
         Utilities::split_string_list(prm.get("Roller boundary ids")))
      roller_boundary_ids.push_back(Utilities::string_to_int(id));
    displaced_region = prm.get("Displaced region");
    displacement.clear();
    for (const auto &x : Utilities::split_string_list(prm.get("Displacement")))
      displacement.push_back(Utilities::string_to_double(x));
    displaced_components =
      Utilities::split_string_list(prm.get("Displaced components"));
    trace_interval  = prm.get_integer("Trace interval");
    steps_per_graph = prm.get_integer("Steps per graph");
    nodal_sum       = prm.get("Nodal sum");
    prm.leave_subsection();
    AssertThrow(safety_factor > 0,
                ExcMessage("'Explicit dynamics/Safety factor' must be "
                           "positive."));
  }
} // namespace Hyperelastic

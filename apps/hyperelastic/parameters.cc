// SPDX-License-Identifier: LGPL-2.1-or-later
#include "parameters.h"

#include <deal.II/base/exceptions.h>
#include <deal.II/base/function_parser.h>
#include <deal.II/base/utilities.h>

#include <cmath>
#include <iostream>
#include <limits>
#include <sstream>

#include "../common/app_utilities.h"

namespace Hyperelastic
{
  namespace
  {
    std::vector<double>
    parse_doubles(const std::string &text,
                  const unsigned int n,
                  const std::string &entry)
    {
      const std::vector<std::string> parts =
        Utilities::split_string_list(text, ',');
      AssertThrow(parts.size() == n,
                  ExcMessage("The entry '" + entry + "' needs " +
                             std::to_string(n) +
                             " comma-separated numbers, got '" + text + "'."));
      std::vector<double> values;
      for (const std::string &part : parts)
        {
          try
            {
              values.push_back(Utilities::string_to_double(part));
            }
          catch (...)
            {
              AssertThrow(false,
                          ExcMessage("The entry '" + entry + "' has '" + part +
                                     "', which is not a number."));
            }
        }
      return values;
    }



    /// The items of a list entry "item; item; ...", each trimmed; empty
    /// items are refused.
    std::vector<std::string>
    split_items(const std::string &text, const std::string &entry)
    {
      std::vector<std::string> items;
      if (Utilities::trim(text).empty())
        return items;
      for (const std::string &item : Utilities::split_string_list(text, ';'))
        {
          AssertThrow(!item.empty(),
                      ExcMessage("The entry '" + entry + "' = '" + text +
                                 "' has an empty item between two ';'."));
          items.push_back(item);
        }
      return items;
    }

    /// "WHERE: REST" split at the first ':'.
    std::pair<std::string, std::string>
    split_at_colon(const std::string &item,
                   const std::string &entry,
                   const std::string &form)
    {
      const auto colon = item.find(':');
      AssertThrow(colon != std::string::npos,
                  ExcMessage("The entry '" + entry + "' has the item '" + item +
                             "', which is not of the form '" + form + "'."));
      return {Utilities::trim(item.substr(0, colon)),
              Utilities::trim(item.substr(colon + 1))};
    }

    BoundarySelection
    parse_selection(const std::string &text,
                    const bool         by_box,
                    const std::string &entry)
    {
      BoundarySelection where;
      where.by_box = by_box;
      where.text   = text;
      if (by_box)
        {
          AssertThrow(!text.empty(),
                      ExcMessage("The entry '" + entry +
                                 "' has an item without its box "
                                 "x0, y0, z0, x1, y1, z1 before the ':'."));
          where.box = Box::parse(text, entry);
          return where;
        }
      int id = -1;
      try
        {
          id = Utilities::string_to_int(text);
        }
      catch (...)
        {}
      AssertThrow(id >= 0 && id <= 255 &&
                    std::to_string(id) == Utilities::trim(text),
                  ExcMessage("The entry '" + entry + "' has '" + text +
                             "' before a ':', which is not a boundary id "
                             "(an integer from 0 to 255)."));
      where.boundary_id = id;
      return where;
    }

    unsigned int
    parse_component(const std::string &text, const std::string &entry)
    {
      const std::string c = Utilities::trim(text);
      for (unsigned int d = 0; d < 3; ++d)
        if (c == std::string(1, char('x' + d)))
          return d;
      AssertThrow(false,
                  ExcMessage("The entry '" + entry + "' has the component '" +
                             c + "'; a component is x, y or z."));
      return 0;
    }

    std::vector<RollerCondition>
    parse_rollers(const std::string &text,
                  const bool         by_box,
                  const std::string &entry)
    {
      std::vector<RollerCondition> rollers;
      for (const std::string &item : split_items(text, entry))
        {
          const auto [where, components] =
            split_at_colon(item,
                           entry,
                           by_box ? "x0, y0, z0, x1, y1, z1: components" :
                                    "boundary id: components");
          RollerCondition roller;
          roller.entry = entry;
          roller.where = parse_selection(where, by_box, entry);
          AssertThrow(!components.empty(),
                      ExcMessage("The entry '" + entry + "' has the item '" +
                                 item + "' without components after ':'."));
          for (const std::string &c :
               Utilities::split_string_list(components, ','))
            {
              const unsigned int d = parse_component(c, entry);
              AssertThrow(!roller.components[d],
                          ExcMessage("The entry '" + entry +
                                     "' names the component " + c +
                                     " twice in the item '" + item + "'."));
              roller.components[d] = true;
            }
          rollers.push_back(roller);
        }
      return rollers;
    }

    std::vector<PrescribedDisplacement>
    parse_prescribed(const std::string &text,
                     const bool         by_box,
                     const std::string &entry)
    {
      std::vector<PrescribedDisplacement> prescribed;
      for (const std::string &item : split_items(text, entry))
        {
          const std::string form =
            by_box ? "x0, y0, z0, x1, y1, z1: component = f(t)" :
                     "boundary id: component = f(t)";
          const auto [where, assignment] = split_at_colon(item, entry, form);
          const auto equals              = assignment.find('=');
          AssertThrow(equals != std::string::npos,
                      ExcMessage("The entry '" + entry + "' has the item '" +
                                 item + "', which is not of the form '" + form +
                                 "'."));
          PrescribedDisplacement p;
          p.entry      = entry;
          p.where      = parse_selection(where, by_box, entry);
          p.component  = parse_component(assignment.substr(0, equals), entry);
          p.expression = Utilities::trim(assignment.substr(equals + 1));
          AssertThrow(!p.expression.empty(),
                      ExcMessage("The entry '" + entry + "' has the item '" +
                                 item + "' without an expression after '='."));
          try
            {
              // muparser parses at the first evaluation.
              FunctionParser<1> f(1);
              f.initialize("s,t", p.expression, {{"pi", numbers::PI}}, true);
              f.value(Point<1>());
            }
          catch (...)
            {
              AssertThrow(false,
                          ExcMessage("The entry '" + entry + "' has '" +
                                     p.expression +
                                     "', which is not a valid expression of "
                                     "t."));
            }
          prescribed.push_back(p);
        }
      return prescribed;
    }



    std::vector<unsigned int>
    parse_boundary_ids(const std::string &text)
    {
      std::vector<unsigned int> ids;
      for (const std::string &id : Utilities::split_string_list(text, ','))
        ids.push_back(Utilities::string_to_int(id));
      return ids;
    }
  } // namespace



  bool
  Box::contains(const Point<3> &p, const double tolerance) const
  {
    if (empty)
      return false;
    for (unsigned int d = 0; d < 3; ++d)
      if (p[d] < lower[d] - tolerance || p[d] > upper[d] + tolerance)
        return false;
    return true;
  }



  Box
  Box::parse(const std::string &text, const std::string &entry)
  {
    Box box;
    if (Utilities::trim(text).empty())
      return box;
    const std::vector<double> v = parse_doubles(text, 6, entry);
    box.empty                   = false;
    box.lower                   = Point<3>(v[0], v[1], v[2]);
    box.upper                   = Point<3>(v[3], v[4], v[5]);
    for (unsigned int d = 0; d < 3; ++d)
      AssertThrow(box.lower[d] <= box.upper[d],
                  ExcMessage("The box '" + entry + "' = '" + text +
                             "' has its lower corner above its upper one "
                             "in direction " +
                             std::to_string(d) + "."));
    return box;
  }



  void
  Parameters::Geometry::declare_parameters(ParameterHandler &prm)
  {
    prm.enter_subsection("Geometry");
    prm.declare_entry("Mesh file",
                      "",
                      Patterns::FileName(),
                      "A 3D mesh of tetrahedra or hexahedra: Gmsh (.msh), "
                      "Abaqus (.inp), VTK (.vtk) or the .dat node/element "
                      "format. Empty: the built-in bar below.");
    prm.declare_entry("Bar size",
                      "4, 1, 1",
                      Patterns::List(Patterns::Double(0.), 3, 3),
                      "Edge lengths of the built-in bar [0, Lx] x [0, Ly] x "
                      "[0, Lz]. Its face x = 0 has boundary id 0, the other "
                      "faces 1 to 5 (x = Lx, y = 0, y = Ly, z = 0, z = Lz). "
                      "Units: m.");
    prm.declare_entry("Subdivisions",
                      "16, 4, 4",
                      Patterns::List(Patterns::Integer(1, 4096), 3, 3),
                      "Cells of the built-in bar along x, y, z. Tetrahedra: "
                      "each brick is cut into 5, so 60, 20, 20 gives "
                      "120,000 tetrahedra and 80,703 unknowns, about the "
                      "chapter's hand model.");
    prm.declare_entry("Cell type",
                      "tetrahedra",
                      Patterns::Selection("tetrahedra|hexahedra"),
                      "Cells of the built-in bar: linear tetrahedra (one "
                      "quadrature point, S(e) the inverse edge matrix) or "
                      "trilinear hexahedra (2x2x2 Gauss points).");
    prm.declare_entry("Scale",
                      "1",
                      Patterns::Double(0.),
                      "Factor applied to the coordinates of a mesh file "
                      "(for example 0.001 for a mesh in mm).");
    prm.declare_entry("Local refinement steps",
                      "0",
                      Patterns::Integer(0, 8),
                      "Times the hexahedra near the clamp (the 'Fixed "
                      "boundary ids' faces and the 'Fixed region' box) and "
                      "the 'Load region' box are refined before the run, "
                      "each time the cells with a vertex there. The mesh "
                      "then has hanging nodes, which the assembly honours "
                      "on every path. Hexahedral meshes only (deal.II "
                      "refines tetrahedral meshes only globally).");
    prm.leave_subsection();
  }



  void
  Parameters::Geometry::parse_parameters(ParameterHandler &prm)
  {
    prm.enter_subsection("Geometry");
    mesh_file = prm.get("Mesh file");
    size      = parse_doubles(prm.get("Bar size"), 3, "Bar size");
    for (const double s : size)
      AssertThrow(s > 0, ExcMessage("The entry 'Bar size' must be positive."));
    subdivisions.clear();
    for (const double s :
         parse_doubles(prm.get("Subdivisions"), 3, "Subdivisions"))
      subdivisions.push_back(static_cast<unsigned int>(s));
    cell_type = prm.get("Cell type");
    scale     = prm.get_double("Scale");
    AssertThrow(scale > 0, ExcMessage("The entry 'Scale' must be positive."));
    local_refinement_steps = prm.get_integer("Local refinement steps");
    prm.leave_subsection();
  }



  void
  Parameters::Material::declare_parameters(ParameterHandler &prm)
  {
    prm.enter_subsection("Material");
    prm.declare_entry("Shear modulus",
                      "5",
                      Patterns::Double(0.),
                      "mu of the compressible neo-Hookean solid, "
                      "W = mu/2 (F^T F - I) : I + lambda/2 ln^2 J - mu ln J "
                      "(the chapter's default 5). Units: Pa.");
    prm.declare_entry("Lame lambda",
                      "2",
                      Patterns::Double(0.),
                      "lambda of the same law (the chapter's default 2). "
                      "Units: Pa.");
    prm.declare_entry("Density",
                      "1",
                      Patterns::Double(0.),
                      "rho in the reference configuration. Units: kg/m^3.");
    prm.declare_entry("Body force",
                      "0, 0, 0",
                      Patterns::List(Patterns::Double(), 3, 3),
                      "b per unit reference volume, for example 0, 0, "
                      "-9.81 rho for gravity. Constant in time in dynamic "
                      "mode, ramped with the load factor t / end time in "
                      "quasi-static mode. Units: N/m^3.");
    prm.leave_subsection();
  }



  void
  Parameters::Material::parse_parameters(ParameterHandler &prm)
  {
    prm.enter_subsection("Material");
    mu         = prm.get_double("Shear modulus");
    lambda     = prm.get_double("Lame lambda");
    density    = prm.get_double("Density");
    body_force = parse_doubles(prm.get("Body force"), 3, "Body force");
    AssertThrow(mu > 0 && density > 0,
                ExcMessage("The shear modulus and the density must be "
                           "positive."));
    prm.leave_subsection();
  }



  void
  Parameters::Boundary::declare_parameters(ParameterHandler &prm)
  {
    prm.enter_subsection("Boundary conditions");
    prm.declare_entry("Fixed boundary ids",
                      "0",
                      Patterns::List(Patterns::Integer(0, 255)),
                      "Boundary ids whose nodes are held at their reference "
                      "position (for Gmsh meshes, physical surface tags). "
                      "Empty: none.");
    prm.declare_entry("Fixed region",
                      "",
                      Patterns::Anything(),
                      "Box x0, y0, z0, x1, y1, z1: nodes inside are held "
                      "fixed as well. Empty: none.");
    prm.declare_entry("Load region",
                      "3.75, 0, 0, 4, 1, 1",
                      Patterns::Anything(),
                      "Box x0, y0, z0, x1, y1, z1 of the nodes that the "
                      "scripted load drags (the chapter drags nodes with "
                      "the mouse). Empty: no nodal load.");
    prm.declare_entry("Load",
                      "0, 0, -0.05",
                      Patterns::List(Patterns::Double(), 3, 3),
                      "Total force on the load region at amplitude 1, "
                      "applied as nodal forces shared equally by its nodes "
                      "(not a traction: on a face, edge and corner nodes "
                      "get the same share as inner ones). Units: N.");
    prm.declare_entry("Load time function",
                      "t < 4 ? 1 : 0",
                      Patterns::Anything(),
                      "Amplitude of the load as a function of time t "
                      "(muparser syntax, e.g. 'sin(2*pi*t)' or "
                      "'t < 4 ? 1 : 0').");
    prm.declare_entry(
      "Rollers",
      "",
      Patterns::Anything(),
      "Displacement components held at zero on boundary ids, the others "
      "free (a symmetry plane, a sliding support): items 'id: components' "
      "separated by ';', for example '0: x; 2: y, z'. Empty: none. Their "
      "reaction forces go to the force trace.");
    prm.declare_entry(
      "Roller regions",
      "",
      Patterns::Anything(),
      "The same for the nodes inside boxes: items 'x0, y0, z0, x1, y1, z1: "
      "components' separated by ';', for example '0, 0, 0, 4, 1, 0: z'. A "
      "box that selects no node is refused.");
    prm.declare_entry(
      "Prescribed displacements",
      "",
      Patterns::Anything(),
      "Displacement components set by functions of time t on boundary ids: "
      "items 'id: component = f(t)' separated by ';', one component each, "
      "for example '1: x = 0.1*t; 1: y = 0' (muparser syntax). In quasi-"
      "static mode each load step sets the value at its end; in dynamic "
      "mode the nodes move from one step's value to the next within the "
      "step. The reaction force goes to the force trace, against the "
      "prescribed value.");
    prm.declare_entry(
      "Prescribed displacement regions",
      "",
      Patterns::Anything(),
      "The same for the nodes inside boxes: items 'x0, y0, z0, x1, y1, z1: "
      "component = f(t)' separated by ';'. A box that selects no node is "
      "refused.");
    prm.leave_subsection();
  }



  void
  Parameters::Boundary::parse_parameters(ParameterHandler &prm)
  {
    prm.enter_subsection("Boundary conditions");
    fixed_boundary_ids = parse_boundary_ids(prm.get("Fixed boundary ids"));
    fixed_region       = Box::parse(prm.get("Fixed region"), "Fixed region");
    load_region        = Box::parse(prm.get("Load region"), "Load region");
    load               = parse_doubles(prm.get("Load"), 3, "Load");
    load_time_function = prm.get("Load time function");
    rollers            = parse_rollers(prm.get("Rollers"), false, "Rollers");
    for (const RollerCondition &roller :
         parse_rollers(prm.get("Roller regions"), true, "Roller regions"))
      rollers.push_back(roller);
    prescribed = parse_prescribed(prm.get("Prescribed displacements"),
                                  false,
                                  "Prescribed displacements");
    for (const PrescribedDisplacement &p :
         parse_prescribed(prm.get("Prescribed displacement regions"),
                          true,
                          "Prescribed displacement regions"))
      prescribed.push_back(p);
    prm.leave_subsection();
  }



  void
  Parameters::SurfaceLoads::declare_parameters(ParameterHandler &prm)
  {
    prm.enter_subsection("Surface loads");
    prm.declare_entry("Traction boundary ids",
                      "",
                      Patterns::List(Patterns::Integer(0, 255)),
                      "Boundary ids whose faces carry the 'Traction'. "
                      "Empty: none.");
    prm.declare_entry("Traction region",
                      "",
                      Patterns::Anything(),
                      "Box x0, y0, z0, x1, y1, z1: the boundary faces whose "
                      "vertices all lie inside carry the 'Traction' as "
                      "well. Empty: none.");
    prm.declare_entry("Traction",
                      "0, 0, 0",
                      Patterns::List(Patterns::Double(), 3, 3),
                      "Dead-load traction at amplitude 1: force per unit "
                      "reference area, fixed in direction, integrated with "
                      "the face quadrature on the reference configuration "
                      "(consistent nodal forces). Units: N/m^2.");
    prm.declare_entry("Traction time function",
                      "1",
                      Patterns::Anything(),
                      "Amplitude of the traction as a function of time t "
                      "(muparser syntax); explicit runs take it at t_n, "
                      "not along 'Explicit dynamics/Ramp time'.");
    prm.declare_entry("Pressure boundary ids",
                      "",
                      Patterns::List(Patterns::Integer(0, 255)),
                      "Boundary ids whose faces carry the 'Pressure'. "
                      "Empty: none.");
    prm.declare_entry("Pressure region",
                      "",
                      Patterns::Anything(),
                      "Box x0, y0, z0, x1, y1, z1: the boundary faces whose "
                      "vertices all lie inside carry the 'Pressure' as "
                      "well. Empty: none.");
    prm.declare_entry("Pressure",
                      "0",
                      Patterns::Double(),
                      "Follower pressure at amplitude 1: force per unit "
                      "current area along the current normal; positive "
                      "pushes against the outward normal (into the body). "
                      "Implicit: its load stiffness makes the Newton "
                      "tangent non-symmetric, so a run with a pressure "
                      "needs the direct solver, or on the resident backend "
                      "on MPI ranks bicgstab-jacobi ('Solver/Linear "
                      "solver'; auto chooses). Explicit: recomputed on the "
                      "current surface at every step. Units: N/m^2.");
    prm.declare_entry("Pressure time function",
                      "1",
                      Patterns::Anything(),
                      "Amplitude of the pressure as a function of time t "
                      "(muparser syntax); explicit runs take it at t_n, "
                      "not along 'Explicit dynamics/Ramp time'.");
    prm.leave_subsection();
  }



  void
  Parameters::SurfaceLoads::parse_parameters(ParameterHandler &prm)
  {
    prm.enter_subsection("Surface loads");
    traction_boundary_ids =
      parse_boundary_ids(prm.get("Traction boundary ids"));
    traction_region =
      Box::parse(prm.get("Traction region"), "Surface loads/Traction region");
    traction = parse_doubles(prm.get("Traction"), 3, "Surface loads/Traction");
    traction_time_function = prm.get("Traction time function");
    pressure_boundary_ids =
      parse_boundary_ids(prm.get("Pressure boundary ids"));
    pressure_region =
      Box::parse(prm.get("Pressure region"), "Surface loads/Pressure region");
    pressure               = prm.get_double("Pressure");
    pressure_time_function = prm.get("Pressure time function");
    prm.leave_subsection();
  }



  void
  Parameters::InitialConditions::declare_parameters(ParameterHandler &prm)
  {
    prm.enter_subsection("Initial conditions");
    prm.declare_entry("Displacement",
                      "0; 0; 0",
                      Patterns::Anything(),
                      "Initial displacement as three expressions in x, y, "
                      "z separated by ';'. Units: m.");
    prm.declare_entry("Velocity",
                      "0; 0; 0",
                      Patterns::Anything(),
                      "Initial velocity, three expressions in x, y, z "
                      "separated by ';'. Units: m/s.");
    prm.leave_subsection();
  }



  void
  Parameters::InitialConditions::parse_parameters(ParameterHandler &prm)
  {
    prm.enter_subsection("Initial conditions");
    displacement = prm.get("Displacement");
    velocity     = prm.get("Velocity");
    prm.leave_subsection();
  }



  void
  Parameters::Time::declare_parameters(ParameterHandler &prm)
  {
    prm.enter_subsection("Time");
    prm.declare_entry("Mode",
                      "dynamic",
                      Patterns::Selection("dynamic|quasi-static"),
                      "dynamic: the midpoint rule of the chapter's eq. (4)-"
                      "(5) with a lumped (Lobatto) mass matrix. "
                      "quasi-static: no inertia; the loads are stepped "
                      "from t = 0 to the end time and each step is solved "
                      "for equilibrium.");
    prm.declare_entry("End time",
                      "10",
                      Patterns::Double(0.),
                      "Simulated time. Units: s.");
    prm.declare_entry("Time step",
                      "0.2",
                      Patterns::Double(0.),
                      "Delta t (the chapter's default 0.2; its real-time "
                      "runs use 0.01). In quasi-static mode: the load "
                      "increment in pseudo-time. Units: s.");
    prm.declare_entry("Maximum number of steps",
                      "0",
                      Patterns::Integer(0),
                      "Stop after this many steps even before the end "
                      "time; 0: no limit.");
    prm.leave_subsection();
  }



  void
  Parameters::Time::parse_parameters(ParameterHandler &prm)
  {
    prm.enter_subsection("Time");
    mode      = prm.get("Mode");
    end_time  = prm.get_double("End time");
    time_step = prm.get_double("Time step");
    max_steps = prm.get_integer("Maximum number of steps");
    AssertThrow(time_step > 0 && end_time > 0,
                ExcMessage("The time step and the end time must be "
                           "positive."));
    prm.leave_subsection();
  }



  void
  Parameters::Solver::declare_parameters(ParameterHandler &prm)
  {
    prm.enter_subsection("Solver");
    prm.declare_entry("Newton tolerance",
                      "1e-5",
                      Patterns::Double(0.),
                      "Newton stops when ||p_k - h(phi)||_2 is below this "
                      "absolute value (the chapter's 1e-5; its real-time "
                      "runs use 2e-5). Units: N s.");
    prm.declare_entry("Maximum Newton iterations",
                      "25",
                      Patterns::Integer(1, 1000),
                      "A step that needs more stops the run as diverged.");
    prm.declare_entry("Divergence limit",
                      "1e6",
                      Patterns::Double(1.),
                      "The run stops as diverged when a Newton residual "
                      "exceeds this multiple of the step's first one.");
    prm.declare_entry(
      "Linear solver",
      "auto",
      Patterns::Selection(
        "auto|direct|cg-jacobi|cg-chebyshev|cg-block-jacobi|bicgstab-jacobi"),
      "The solver of each Newton iteration's linear system. direct: a "
      "sparse direct factorization (LDL^T), analysed once for the sparsity "
      "pattern and refactorized every Newton iteration: cuDSS on the GPU "
      "(one process, a plugin built with cuDSS), UMFPACK on the host, "
      "Trilinos' direct solver (Amesos) with 'Execution/Distributed linear "
      "algebra' = trilinos; the resident backend on several ranks has "
      "none. The direct solver runs the Newton loop from the host. "
      "cg-jacobi: CG with the inverse diagonal as preconditioner, on every "
      "backend; on the GPU a whole step runs as one CUDA graph. "
      "cg-chebyshev: CG with a Chebyshev polynomial of the Jacobi-scaled "
      "tangent as preconditioner (the entries below). cg-block-jacobi: CG "
      "with the inverted 3 x 3 block of each node's DoFs as "
      "preconditioner. On the host both use deal.II's classes "
      "(PreconditionChebyshev, RelaxationBlockJacobi; with Trilinos, "
      "Trilinos' PreconditionBlockJacobi). bicgstab-jacobi: BiCGStab with "
      "the inverse diagonal as preconditioner, for the non-symmetric "
      "tangent of a follower 'Surface loads/Pressure'; offered by the "
      "resident backend on MPI ranks only (the plugin's "
      "DistributedJacobiBiCGStab, on the GPUs or in host memory). The step "
      "lines and the summary count the Krylov iterations, and one per "
      "direct solve. A follower pressure needs direct or bicgstab-jacobi: "
      "the CGs are refused with it. auto: with a pressure, "
      "bicgstab-jacobi on the resident backend on MPI ranks and direct "
      "elsewhere; else direct for quasi-static runs on one GPU where "
      "the plugin has cuDSS and the factorization fits in device memory "
      "(a static tangent makes CG take many iterations), else cg-jacobi "
      "(dynamic runs: the mass term keeps CG's iterations few, and its "
      "steps run as device graphs). The log says which solver runs and "
      "why.");
    prm.declare_entry("CG relative tolerance",
                      "1e-6",
                      Patterns::Double(0., 1.),
                      "The CGs stop at ||r|| <= this * ||r_0|| (the "
                      "chapter's 1e-6; real time: 1e-4). Not used by the "
                      "direct solver.");
    prm.declare_entry("Maximum CG iterations",
                      "10000",
                      Patterns::Integer(1),
                      "Per Newton iteration, for the CGs.");
    prm.declare_entry("Chebyshev degree",
                      "5",
                      Patterns::Integer(1, 100),
                      "cg-chebyshev: degree of the Chebyshev polynomial: a "
                      "higher one takes fewer CG iterations and more "
                      "matrix-vector products per iteration (1: a scaled "
                      "Jacobi step).");
    prm.declare_entry("Chebyshev smoothing range",
                      "20",
                      Patterns::Double(1.),
                      "cg-chebyshev: the polynomial damps the eigenvalues "
                      "of the Jacobi-scaled tangent in [lambda_max / this, "
                      "lambda_max], lambda_max estimated by a few CG "
                      "iterations at every Newton iteration.");
    prm.declare_entry("Maximum step cuts",
                      "5",
                      Patterns::Integer(0, 30),
                      "Quasi-static mode: a load step whose Newton iteration "
                      "does not converge (too many iterations, divergence, "
                      "an inverted element, a failed linear solve) is cut "
                      "in half and retried from the last converged state, "
                      "at most this many times in a row; the step after a "
                      "converged one doubles again, up to 'Time/Time "
                      "step'. When the cuts are used up the run stops "
                      "with the last converged state written. 0: no "
                      "cuts. Dynamic runs stop at the first failure.");
    prm.leave_subsection();
  }



  void
  Parameters::Solver::parse_parameters(ParameterHandler &prm)
  {
    prm.enter_subsection("Solver");
    newton_tolerance          = prm.get_double("Newton tolerance");
    max_newton_iterations     = prm.get_integer("Maximum Newton iterations");
    divergence_limit          = prm.get_double("Divergence limit");
    cg_tolerance              = prm.get_double("CG relative tolerance");
    max_cg_iterations         = prm.get_integer("Maximum CG iterations");
    linear_solver             = prm.get("Linear solver");
    chebyshev_degree          = prm.get_integer("Chebyshev degree");
    chebyshev_smoothing_range = prm.get_double("Chebyshev smoothing range");
    max_step_cuts             = prm.get_integer("Maximum step cuts");
    AssertThrow(newton_tolerance > 0 && cg_tolerance > 0,
                ExcMessage("The Newton and CG tolerances must be positive."));
    prm.leave_subsection();
  }



  void
  Parameters::Execution::declare_parameters(ParameterHandler &prm)
  {
    prm.enter_subsection("Execution");
    prm.declare_entry("Device",
                      "auto",
                      Patterns::Selection("auto|gpu|host"),
                      "gpu: every stage on the GPU (assembly, CG, Newton "
                      "and time updates). host: every stage on the CPU "
                      "cores (the chapter's CPU configuration). auto: the "
                      "GPU if there is one.");
    prm.declare_entry("Assembly method",
                      "GlobalNZ",
                      Patterns::Selection("GlobalNZ|SharedNZ"),
                      "GPU assembly method (chapter Sec. 16.3).");
    prm.declare_entry("Precision",
                      "double",
                      Patterns::Selection("double|float"),
                      "Floating-point type of the GPU path (the chapter "
                      "ran in float). The host path runs in double.");
    prm.declare_entry("Symmetric element data",
                      "true",
                      Patterns::Bool(),
                      "GlobalNZ stores only the upper triangle of the "
                      "element matrices (78 instead of 144 values).");
    prm.declare_entry("Compressed supplemental data",
                      "false",
                      Patterns::Bool(),
                      "Tetrahedra: store S(e) as the 6 values of the "
                      "QR-compressed inverse edge matrix (chapter Sec. "
                      "16.4.2.1) instead of 10; the kernel then reads "
                      "positions rather than displacements.");
    prm.declare_entry("Step graph",
                      "true",
                      Patterns::Bool(),
                      "GPU: run each time step, Newton loop included, as "
                      "one CUDA graph launch whose loops are conditional "
                      "nodes; only the step's report (residuals, CG "
                      "iterations) comes back to the host. false: the host "
                      "drives the Newton loop and reads each residual norm "
                      "(needed for per-stage host timers; results are the "
                      "same). Ignored on the host.");
    prm.declare_entry("Distributed linear algebra",
                      "auto",
                      Patterns::Selection("auto|resident|trilinos"),
                      "Under mpirun (several ranks): where the matrix, the "
                      "vectors and the Jacobi-CG of a Newton iteration "
                      "live. resident: the plugin's DistributedDeviceMatrix, "
                      "DistributedDeviceVector and DistributedJacobiCG "
                      "(DistributedJacobiBiCGStab with a follower "
                      "pressure), on each rank's GPU (nothing but norms "
                      "passes through the host) or, on the host path, in "
                      "host memory. trilinos: "
                      "TrilinosWrappers::SparseMatrix and MPI::Vector with "
                      "deal.II's SolverCG and PreconditionJacobi (the GPU "
                      "path then copies the assembled matrix to the host "
                      "each Newton iteration). auto: resident on the GPU, "
                      "trilinos on the host. Ignored on one process "
                      "unless 'Distributed solver on one process'.");
    prm.declare_entry("Exchange path",
                      "auto",
                      Patterns::Selection("auto|host|nccl|cuda-aware-mpi"),
                      "Under mpirun with the resident linear algebra on the "
                      "GPU: how the halos and the interface rows travel "
                      "between ranks. nccl: device to device with NCCL (the "
                      "plugin built with NCCL, one GPU per rank). host: "
                      "staged through page-locked host memory with MPI. "
                      "cuda-aware-mpi: device buffers given to MPI (an MPI "
                      "built with CUDA support; not covered by the test "
                      "suite; opt-in). auto: nccl where the plugin has NCCL "
                      "and every rank its own GPU, else host. Results are "
                      "the same bit for bit. The host path and the trilinos "
                      "linear algebra exchange through host memory: only "
                      "auto and host apply there.");
    prm.declare_entry("Distributed solver on one process",
                      "false",
                      Patterns::Bool(),
                      "Run the implicit integrator's MPI path (distributed "
                      "triangulation, resident or Trilinos linear algebra) "
                      "also without mpirun or with mpirun -np 1, instead of "
                      "the one-process path (CUDA graph per step): the "
                      "one-rank point of a strong-scaling series of the MPI "
                      "path.");
    prm.leave_subsection();
  }



  void
  Parameters::Execution::parse_parameters(ParameterHandler &prm)
  {
    prm.enter_subsection("Execution");
    device                       = prm.get("Device");
    assembly_method              = prm.get("Assembly method");
    precision                    = prm.get("Precision");
    symmetric_element_data       = prm.get_bool("Symmetric element data");
    compressed_supplemental_data = prm.get_bool("Compressed supplemental data");
    step_graph                   = prm.get_bool("Step graph");
    distributed_linear_algebra   = prm.get("Distributed linear algebra");
    exchange_path                = prm.get("Exchange path");
    distributed_on_one_process =
      prm.get_bool("Distributed solver on one process");
    prm.leave_subsection();
  }



  void
  Parameters::Output::declare_parameters(ParameterHandler &prm)
  {
    prm.enter_subsection("Output");
    prm.declare_entry("Directory",
                      "output",
                      Patterns::DirectoryName(),
                      "Where the VTU files and the .pvd series go (created "
                      "if missing).");
    prm.declare_entry("Base name",
                      "solid",
                      Patterns::FileName(),
                      "Files are <base name>-<step>.vtu and "
                      "<base name>.pvd.");
    prm.declare_entry("Output interval",
                      "5",
                      Patterns::Integer(0),
                      "Write VTU every this many steps (and the initial "
                      "and final states); 0: none.");
    prm.declare_entry("Screen interval",
                      "1",
                      Patterns::Integer(0),
                      "Print a line every this many steps; 0: only the "
                      "summary.");
    prm.declare_entry(
      "Force trace",
      "auto",
      Patterns::Selection("auto|true|false"),
      "Implicit integrator: after every step, the reaction force (the "
      "internal minus the external force summed over the held DoFs) on "
      "each region of 'Prescribed displacements', 'Rollers' and the "
      "fixed boundary, with the region's mean displacement, and the "
      "applied force on the 'Load region'; written to trace.csv and "
      "trace.png, and the driven region's force against its displacement "
      "to force_displacement.csv and force_displacement.png (the first "
      "prescribed displacement's region, else the load region). auto: on "
      "with rollers or prescribed displacements.");
    // Outputs are written while the time loop runs: favour speed over size.
    AppUtilities::declare_compression_entry(prm, "best speed");
    prm.leave_subsection();
  }



  void
  Parameters::Output::parse_parameters(ParameterHandler &prm)
  {
    prm.enter_subsection("Output");
    directory       = prm.get("Directory");
    base_name       = prm.get("Base name");
    output_interval = prm.get_integer("Output interval");
    screen_interval = prm.get_integer("Screen interval");
    force_trace     = prm.get("Force trace");
    compression     = AppUtilities::parse_compression_entry(prm);
    prm.leave_subsection();
  }



  void
  Parameters::declare_parameters(ParameterHandler &prm)
  {
    Geometry::declare_parameters(prm);
    Material::declare_parameters(prm);
    Boundary::declare_parameters(prm);
    SurfaceLoads::declare_parameters(prm);
    InitialConditions::declare_parameters(prm);
    Time::declare_parameters(prm);
    Solver::declare_parameters(prm);
    Execution::declare_parameters(prm);
    Output::declare_parameters(prm);
    ExplicitDynamics::declare_parameters(prm);
  }



  void
  Parameters::parse_parameters(ParameterHandler &prm)
  {
    geometry.parse_parameters(prm);
    material.parse_parameters(prm);
    boundary.parse_parameters(prm);
    surface_loads.parse_parameters(prm);
    initial.parse_parameters(prm);
    time.parse_parameters(prm);
    solver.parse_parameters(prm);
    execution.parse_parameters(prm);
    output.parse_parameters(prm);
    explicit_dynamics.parse_parameters(prm);
    changed_entries = AppUtilities::changed_entries(prm, declare_parameters);
    check_entries_used(prm);
    if (!explicit_dynamics.is_explicit())
      {
        // The explicit integrator's step count depends on the mesh: it and
        // the intervals are checked once the mesh gives the stable time
        // step.
        // Step numbers are unsigned int: a count beyond their range would
        // wrap and end the run early (or never).
        const double n_steps =
          std::ceil(time.end_time / time.time_step * (1 - 1e-12));
        AssertThrow(
          n_steps <= std::numeric_limits<unsigned int>::max() / 2 ||
            (time.max_steps > 0 && time.max_steps < n_steps),
          ExcMessage(
            "'Time/End time' = " + AppUtilities::significant(time.end_time) +
            " s with 'Time/Time step' = " +
            AppUtilities::significant(time.time_step) + " s needs " +
            AppUtilities::significant(n_steps) +
            " steps, more than one run can count (" +
            std::to_string(std::numeric_limits<unsigned int>::max() / 2) +
            "). Choose a larger time step or a shorter end "
            "time."));
        const double       n_run = time.max_steps > 0 ?
                                     std::min<double>(n_steps, time.max_steps) :
                                     n_steps;
        std::ostringstream elsewhere;
        check_intervals(
          static_cast<unsigned int>(
            std::min<double>(n_run, std::numeric_limits<unsigned int>::max())),
          !Utilities::MPI::job_supports_mpi() ||
              Utilities::MPI::this_mpi_process(MPI_COMM_WORLD) == 0 ?
            std::cout :
            elsewhere);
      }
  }



  void
  Parameters::check_entries_used(const ParameterHandler &prm) const
  {
    const auto refuse = [&](const std::vector<std::string> &entries,
                            const std::string              &why) {
      AppUtilities::refuse_unused(changed_entries, prm, entries, why);
    };
    if (!geometry.mesh_file.empty())
      refuse({"Geometry/Bar size",
              "Geometry/Subdivisions",
              "Geometry/Cell type"},
             "it describes the built-in bar, and 'Geometry/Mesh file' = '" +
               geometry.mesh_file +
               "' is read instead. Remove the entry, or the mesh file.");
    else
      refuse({"Geometry/Scale"},
             "it scales the coordinates of a mesh file, and 'Geometry/Mesh "
             "file' is empty (the built-in bar has 'Bar size'). Remove the "
             "entry, or give a mesh file.");

    if (execution.device == "host")
      refuse_gpu_path_entries(
        prm,
        "'Execution/Device' = host, and this entry chooses how the GPU path "
        "runs. Remove it, or set 'Device' to gpu or auto.");
    const auto &e = explicit_dynamics;
    if (e.is_explicit())
      {
        const std::string tail =
          " Remove the entry, or set 'Time/Time integration' to implicit.";
        const std::string by = "'Time/Time integration' = explicit ";
        refuse({"Time/Mode", "Time/Time step"},
               by +
                 "is always dynamic and takes its step from 'Explicit "
                 "dynamics/Time step'." +
                 tail);
        refuse({"Boundary conditions/Load time function"},
               by + "ramps the load over 'Explicit dynamics/Ramp time'." +
                 tail);
        refuse({"Initial conditions/Displacement",
                "Initial conditions/Velocity"},
               by + "starts from rest." + tail);
        refuse({"Solver/Newton tolerance",
                "Solver/Maximum Newton iterations",
                "Solver/Divergence limit",
                "Solver/Linear solver",
                "Solver/CG relative tolerance",
                "Solver/Maximum CG iterations",
                "Solver/Chebyshev degree",
                "Solver/Chebyshev smoothing range",
                "Solver/Maximum step cuts"},
               by +
                 "solves no system: no Newton iterations, no linear "
                 "solver." +
                 tail);
        refuse({"Execution/Assembly method",
                "Execution/Symmetric element data",
                "Execution/Compressed supplemental data",
                "Execution/Step graph"},
               by +
                 "assembles no matrix; on the GPU it runs 'Explicit "
                 "dynamics/Steps per graph' steps per graph launch." +
                 tail);
        refuse({"Execution/Distributed linear algebra",
                "Execution/Distributed solver on one process",
                "Execution/Exchange path"},
               by + "runs as one process and solves no system." + tail);
        refuse({"Output/Screen interval"},
               by +
                 "prints a line at each output ('Output/Output "
                 "interval')." +
                 tail);
        if (e.time_step > 0)
          refuse({"Explicit dynamics/Safety factor"},
                 "'Explicit dynamics/Time step' is given, so the safety "
                 "factor does not choose it. Set 'Time step' to 0, or remove "
                 "the entry.");
        if (Utilities::trim(e.displaced_region).empty() &&
            boundary.load_region.empty)
          refuse({"Explicit dynamics/Ramp time"},
                 "it ramps the load and the displaced region, and this run "
                 "has neither ('Boundary conditions/Load region' and "
                 "'Explicit dynamics/Displaced region' are empty; the "
                 "'Surface loads' follow their own time functions). Remove "
                 "the entry, or give a load or a displaced region.");
        if (Utilities::trim(e.displaced_region).empty())
          refuse({"Explicit dynamics/Displaced components"},
                 "'Explicit dynamics/Displaced region' is empty, so no "
                 "component is displaced. Give the region, or remove the "
                 "entry.");
        if (geometry.mesh_file.empty() && geometry.cell_type == "tetrahedra")
          refuse({"Explicit dynamics/Hourglass coefficient"},
                 "the built-in bar is made of tetrahedra ('Geometry/Cell "
                 "type'), which have no hourglass modes. Remove the entry, "
                 "or use hexahedra.");
        return;
      }

    refuse({"Explicit dynamics/Time step",
            "Explicit dynamics/Safety factor",
            "Explicit dynamics/Damping",
            "Explicit dynamics/Hourglass coefficient",
            "Explicit dynamics/Ramp time",
            "Explicit dynamics/Roller boundary ids",
            "Explicit dynamics/Displaced region",
            "Explicit dynamics/Displacement",
            "Explicit dynamics/Displaced components",
            "Explicit dynamics/Trace interval",
            "Explicit dynamics/Steps per graph",
            "Explicit dynamics/Nodal sum"},
           "'Time/Time integration' = implicit, and the 'Explicit dynamics' "
           "entries are for the explicit integrator. Set 'Time "
           "integration' to explicit, or remove the entry.");
    if (time.mode == "quasi-static")
      refuse({"Material/Density", "Initial conditions/Velocity"},
             "'Time/Mode' = quasi-static has no inertia: the mass and the "
             "velocity enter no equation. Remove the entry, or set 'Mode' "
             "to dynamic.");
    if (time.mode == "dynamic")
      refuse({"Solver/Maximum step cuts"},
             "'Time/Mode' = dynamic stops at the first step that does not "
             "converge; steps are cut in quasi-static mode only. Remove the "
             "entry, or set 'Mode' to quasi-static.");
    if (execution.device != "host" && execution.assembly_method != "GlobalNZ")
      refuse({"Execution/Symmetric element data"},
             "it chooses how GlobalNZ stores the element matrices, and "
             "'Execution/Assembly method' = " +
               execution.assembly_method +
               ". Remove the entry, or set the method to GlobalNZ.");
    if (solver.linear_solver == "direct")
      refuse({"Solver/CG relative tolerance", "Solver/Maximum CG iterations"},
             "'Solver/Linear solver' = direct solves without CG. Remove the "
             "entry, or choose a CG solver.");
    if (solver.linear_solver != "cg-chebyshev")
      refuse({"Solver/Chebyshev degree", "Solver/Chebyshev smoothing range"},
             "it shapes the preconditioner of 'Solver/Linear solver' = "
             "cg-chebyshev, and the linear solver is " +
               solver.linear_solver +
               ". Remove the entry, or choose cg-chebyshev.");
  }



  void
  Parameters::refuse_gpu_path_entries(const ParameterHandler &prm,
                                      const std::string      &why) const
  {
    const std::vector<std::string> entries =
      explicit_dynamics.is_explicit() ?
        std::vector<std::string>{"Execution/Precision",
                                 "Explicit dynamics/Steps per graph",
                                 "Explicit dynamics/Nodal sum"} :
        std::vector<std::string>{"Execution/Assembly method",
                                 "Execution/Precision",
                                 "Execution/Symmetric element data",
                                 "Execution/Step graph"};
    AppUtilities::refuse_unused(changed_entries, prm, entries, why);
  }



  void
  Parameters::check_device_entries(const ParameterHandler &prm,
                                   const bool cuda_device_found) const
  {
    // With 'Device' = auto and no CUDA device the run is on the host, and
    // an entry that shapes the GPU path would be silently ignored.
    if (execution.device == "auto" && !cuda_device_found)
      refuse_gpu_path_entries(
        prm,
        "'Execution/Device' = auto found no CUDA device, so the run is on "
        "the host, and this entry chooses how the GPU path runs. Remove it, "
        "or run where a GPU is.");
  }



  void
  Parameters::check_intervals(const unsigned int n_steps,
                              std::ostream      &log) const
  {
    // 0 writes no state; a longer interval than the run writes the first
    // and the last: a note, not a refusal.
    AppUtilities::check_interval(changed_entries,
                                 "Output/Output interval",
                                 output.output_interval,
                                 n_steps,
                                 "only the first and the last state are "
                                 "written",
                                 false,
                                 log);
    if (explicit_dynamics.is_explicit())
      AppUtilities::check_interval(changed_entries,
                                   "Explicit dynamics/Trace interval",
                                   explicit_dynamics.trace_interval,
                                   n_steps,
                                   "the trace holds the first and the last "
                                   "step only",
                                   false,
                                   log);
    else
      AppUtilities::check_interval(changed_entries,
                                   "Output/Screen interval",
                                   output.screen_interval,
                                   n_steps,
                                   "no step line would be printed, as with 0",
                                   true,
                                   log);
  }
} // namespace Hyperelastic

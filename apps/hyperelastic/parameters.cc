// SPDX-License-Identifier: LGPL-2.1-or-later
#include "parameters.h"

#include <deal.II/base/exceptions.h>
#include <deal.II/base/utilities.h>

#include <cmath>
#include <limits>

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
                      "shared equally by its nodes. Units: N.");
    prm.declare_entry("Load time function",
                      "t < 4 ? 1 : 0",
                      Patterns::Anything(),
                      "Amplitude of the load as a function of time t "
                      "(muparser syntax, e.g. 'sin(2*pi*t)' or "
                      "'t < 4 ? 1 : 0').");
    prm.leave_subsection();
  }



  void
  Parameters::Boundary::parse_parameters(ParameterHandler &prm)
  {
    prm.enter_subsection("Boundary conditions");
    fixed_boundary_ids.clear();
    for (const std::string &id :
         Utilities::split_string_list(prm.get("Fixed boundary ids"), ','))
      fixed_boundary_ids.push_back(Utilities::string_to_int(id));
    fixed_region       = Box::parse(prm.get("Fixed region"), "Fixed region");
    load_region        = Box::parse(prm.get("Load region"), "Load region");
    load               = parse_doubles(prm.get("Load"), 3, "Load");
    load_time_function = prm.get("Load time function");
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
    // Step numbers are unsigned int: a count beyond their range would
    // wrap and end the run early (or never).
    const double n_steps = std::ceil(end_time / time_step * (1 - 1e-12));
    AssertThrow(n_steps <= std::numeric_limits<unsigned int>::max() / 2 ||
                  (max_steps > 0 && max_steps < n_steps),
                ExcMessage(
                  "'Time/End time' = " + AppUtilities::significant(end_time) +
                  " s with 'Time/Time step' = " +
                  AppUtilities::significant(time_step) + " s needs " +
                  AppUtilities::significant(n_steps) +
                  " steps, more than one run can count (" +
                  std::to_string(std::numeric_limits<unsigned int>::max() / 2) +
                  "). Choose a larger time step or a shorter end "
                  "time."));
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
      Patterns::Selection("auto|direct|cg-jacobi|cg-chebyshev|cg-block-jacobi"),
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
      "Trilinos' PreconditionBlockJacobi). The step lines and the summary "
      "count CG's iterations, and one per direct solve. auto: direct for "
      "quasi-static runs on one GPU where "
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
                      "DistributedDeviceVector and DistributedJacobiCG, on "
                      "each rank's GPU (nothing but norms passes through the "
                      "host) or, on the host path, in host memory. trilinos: "
                      "TrilinosWrappers::SparseMatrix and MPI::Vector with "
                      "deal.II's SolverCG and PreconditionJacobi (the GPU "
                      "path then copies the assembled matrix to the host "
                      "each Newton iteration). auto: resident on the GPU, "
                      "trilinos on the host. Ignored on one process "
                      "unless 'Distributed solver on one process'.");
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
    compression     = AppUtilities::parse_compression_entry(prm);
    prm.leave_subsection();
  }



  void
  Parameters::declare_parameters(ParameterHandler &prm)
  {
    Geometry::declare_parameters(prm);
    Material::declare_parameters(prm);
    Boundary::declare_parameters(prm);
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
    initial.parse_parameters(prm);
    time.parse_parameters(prm);
    solver.parse_parameters(prm);
    execution.parse_parameters(prm);
    output.parse_parameters(prm);
    explicit_dynamics.parse_parameters(prm);
  }
} // namespace Hyperelastic

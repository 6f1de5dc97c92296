// SPDX-License-Identifier: LGPL-2.1-or-later
//
// The hyperelastic app's ImplicitSolid on a communicator with every rank
// assembling on its GPU (select_device_by_node_rank(); with more ranks
// than GPUs they share one) against the host path on the same ranks: after
// 10 midpoint-rule steps of a hexahedral bar with hanging nodes and of a
// tetrahedral bar, displacement and momentum at every node must agree to a
// tolerance tied to the CG tolerance, for GlobalNZ (symmetric element data)
// and SharedNZ, with the resident backend (the GPU's default: matrix,
// vectors, CG and updates on the device) and with the Trilinos backend; the
// resident backend's Chebyshev-Jacobi and point-block-Jacobi CGs on the
// device against the host's Jacobi-CG as well; and a quasi-static uniaxial
// extension on rollers driven by a prescribed displacement; a dead traction
// on rollers (both backends) and a follower pressure on the bar (the
// Trilinos backend with its direct solver, and the resident backend with
// the faces' forces and load stiffness and DistributedJacobiBiCGStab on
// the device, which 'Linear solver' = auto must choose, and two device
// runs equal bit for bit).
// Run under mpirun (ctest runs 2 ranks); exits with 77 (skipped) where a
// rank has no CUDA device.

#include <deal.II/base/mpi.h>

#include <gpu_assembly/base/device.h>

#include <array>
#include <cmath>
#include <iostream>
#include <map>
#include <sstream>
#include <string>

#include "gpu/gpu_tests.h"
#include "hyperelastic_test_utilities.h"

namespace
{
  using namespace dealii;
  using Hyperelastic::ImplicitSolid;

  using Testing::comparison_n_steps;
  constexpr double tolerance = Testing::comparison_tolerance;

  Testing::NodalStates
  run(const std::string &prm, std::string &description)
  {
    std::ostringstream log;
    ImplicitSolid      solid(Testing::hyperelastic_parameters(
                          prm + "subsection Output\n"
                                     "  set Output interval = 0\n"
                                     "  set Screen interval = 0\nend\n"),
                        MPI_COMM_WORLD,
                        log);
    solid.setup();
    description = solid.backend_description();
    for (unsigned int s = 0; s < comparison_n_steps; ++s)
      solid.do_step();
    return Testing::by_position(solid.gather_nodal_state(0));
  }

  /// @p linear_solver: 'Solver/Linear solver' of the device run;
  /// @p solver_class: where given, the device run's description must name
  /// it (the solver auto chose); @p device_work: likewise, a part of the
  /// run that must have been done on the device.
  bool
  run_case(const std::string &name,
           const std::string &geometry,
           const std::string &method,
           const std::string &algebra,
           const std::string &linear_solver = "cg-jacobi",
           const std::string &solver_class  = "",
           const std::string &device_work   = "")
  {
    const std::string solver = Testing::comparison_solver();
    std::string       host_text, device_text;
    const auto        host = run(geometry + solver +
                            "subsection Execution\n  set Device = host\n"
                                   "  set Distributed linear algebra = trilinos\n"
                                   "end\n",
                          host_text);
    const auto        device =
      run(geometry + solver +
            "subsection Execution\n  set Device = gpu\n"
            "  set Assembly method = " +
            method + "\n  set Distributed linear algebra = " + algebra +
            "\nend\nsubsection Solver\n  set Linear solver = " + linear_solver +
            // A direct solver refuses a CG tolerance other than the
            // default, which the comparison's entries set.
            (linear_solver == "direct" ?
               "\n  set CG relative tolerance = 1e-6" :
               "") +
            "\nend\n",
          device_text);
    if (Utilities::MPI::this_mpi_process(MPI_COMM_WORLD) != 0)
      return true;
    std::cout << name << ", " << device_text << std::endl;
    const bool resident = device_text.find("resident") != std::string::npos;
    if (resident != (algebra != "trilinos"))
      {
        std::cout << "FAIL " << name
                  << ": 'Distributed linear algebra = " << algebra
                  << "' on the GPU ran the "
                  << (resident ? "resident" : "Trilinos") << " backend"
                  << std::endl;
        return false;
      }
    if (device_text.find(solver_class) == std::string::npos)
      {
        std::cout << "FAIL " << name << ": 'Linear solver' = " << linear_solver
                  << " did not run " << solver_class << std::endl;
        return false;
      }
    if (device_text.find(device_work) == std::string::npos)
      {
        std::cout << "FAIL " << name << ": the device run's description "
                  << "lacks '" << device_work << "'" << std::endl;
        return false;
      }
    if (host.size() != device.size() || host.empty())
      {
        std::cout << "FAIL " << name << ": " << device.size()
                  << " nodes on the device path, " << host.size()
                  << " on the host path" << std::endl;
        return false;
      }
    const auto [all_nodes_found, u_max, p_max, du, dp] =
      Testing::nodal_difference(host, device);
    if (!all_nodes_found)
      {
        std::cout << "FAIL " << name << ": a node is missing on the "
                  << "device path" << std::endl;
        return false;
      }
    const bool ok =
      u_max > 1e-4 && du <= tolerance * u_max && dp <= tolerance * p_max;
    std::cout << (ok ? "  ok   " : "  FAIL ") << name << " (" << method << ", "
              << algebra << ", " << linear_solver << "): max |u| = " << u_max
              << ", displacement differs by " << du << ", momentum by " << dp
              << " (max |p| = " << p_max << "); allowed " << tolerance
              << " relative, max |u| > 1e-4" << std::endl;
    return ok;
  }

  /// Whether two device runs of @p prm on the resident backend, its
  /// pressure faces on the device, give the same states bit for bit: the
  /// pressure's sums and BiCGStab's reductions take a fixed order.
  bool
  bitwise_repeatable(const std::string &name, const std::string &prm)
  {
    const std::string execution =
      Testing::comparison_solver() +
      "subsection Execution\n  set Device = gpu\n"
      "  set Distributed linear algebra = resident\nend\n";
    std::string description;
    const auto  first  = run(prm + execution, description);
    const auto  second = run(prm + execution, description);
    if (Utilities::MPI::this_mpi_process(MPI_COMM_WORLD) != 0)
      return true;
    const auto [all_nodes_found, u_max, p_max, du, dp] =
      Testing::nodal_difference(first, second);
    const bool faces_on_device =
      description.find("pressure faces on the device") != std::string::npos;
    const bool ok = all_nodes_found && !first.empty() && du == 0 && dp == 0 &&
                    faces_on_device;
    std::cout << (ok ? "  ok   " : "  FAIL ") << name
              << ": two device runs on the resident backend differ by " << du
              << " in the displacement and " << dp
              << " in the momentum (must be 0; max |u| = " << u_max << ")"
              << (faces_on_device ? "" :
                                    "; the pressure faces did not run on the "
                                    "device: " +
                                      description)
              << std::endl;
    return ok;
  }
} // namespace

int
main(int argc, char *argv[])
{
  Utilities::MPI::MPI_InitFinalize mpi(argc, argv, 1);
  const bool                       has_device =
    Utilities::MPI::min(GPUAssembly::n_cuda_devices() > 0 ? 1 : 0,
                        MPI_COMM_WORLD) == 1;
  const bool root = Utilities::MPI::this_mpi_process(MPI_COMM_WORLD) == 0;
  if (!has_device)
    return Testing::no_device_exit_code(root);
  try
    {
      const std::string bar       = "subsection Geometry\n"
                                    "  set Bar size = 4, 1, 1\n"
                                    "  set Subdivisions = 8, 2, 2\n";
      const std::string hexahedra = bar +
                                    "  set Cell type = hexahedra\n"
                                    "  set Local refinement steps = 1\nend\n";
      const std::string tetrahedra =
        bar + "  set Cell type = tetrahedra\nend\n";
      bool ok = true;
      // auto is the resident backend on the GPU.
      for (const std::string algebra : {"auto", "trilinos"})
        for (const std::string method : {"GlobalNZ", "SharedNZ"})
          {
            ok = run_case("hexahedra with hanging nodes",
                          hexahedra,
                          method,
                          algebra) &&
                 ok;
            ok = run_case("tetrahedra", tetrahedra, method, algebra) && ok;
          }
      // Rollers and a prescribed displacement, quasi-static: the held
      // components and the prescribed values on the device of every rank.
      const std::string extension =
        "subsection Geometry\n  set Bar size = 2, 1, 1\n"
        "  set Subdivisions = 4, 2, 2\n  set Cell type = hexahedra\nend\n"
        "subsection Boundary conditions\n  set Fixed boundary ids =\n"
        "  set Load region =\n  set Load = 0, 0, 0\n"
        "  set Rollers = 0: x; 2: y; 4: z\n"
        "  set Prescribed displacements = 1: x = 0.5*t\nend\n"
        "subsection Time\n  set Mode = quasi-static\n"
        "  set Time step = 0.1\n  set End time = 1\nend\n";
      for (const std::string algebra : {"auto", "trilinos"})
        ok = run_case("uniaxial extension on rollers",
                      extension,
                      "GlobalNZ",
                      algebra) &&
             ok;
      for (const std::string linear_solver :
           {"cg-chebyshev", "cg-block-jacobi"})
        ok = run_case("hexahedra with hanging nodes",
                      hexahedra,
                      "GlobalNZ",
                      "resident",
                      linear_solver) &&
             ok;
      // Surface loads: the dead traction on both backends, the follower
      // pressure on the Trilinos one, whose direct solver takes its
      // non-symmetric tangent.
      const std::string loads_time =
        "subsection Time\n  set Mode = quasi-static\n"
        "  set Time step = 0.1\n  set End time = 1\nend\n";
      const std::string traction =
        "subsection Geometry\n  set Bar size = 2, 1, 1\n"
        "  set Subdivisions = 4, 2, 2\n  set Cell type = hexahedra\nend\n"
        "subsection Boundary conditions\n  set Fixed boundary ids =\n"
        "  set Load region =\n  set Load = 0, 0, 0\n"
        "  set Rollers = 0: x; 2: y; 4: z\nend\n"
        "subsection Surface loads\n  set Traction boundary ids = 1\n"
        "  set Traction = 0.3, 0, 0\n  set Traction time function = t\nend\n" +
        loads_time;
      for (const std::string algebra : {"auto", "trilinos"})
        ok =
          run_case("dead traction on rollers", traction, "GlobalNZ", algebra) &&
          ok;
      const std::string pressure =
        hexahedra +
        "subsection Boundary conditions\n  set Fixed boundary ids = 0\n"
        "  set Load region =\n  set Load = 0, 0, 0\nend\n"
        "subsection Surface loads\n  set Pressure boundary ids = 5\n"
        "  set Pressure = 0.05\n  set Pressure time function = t\nend\n" +
        loads_time;
      ok = run_case("follower pressure on a bar",
                    pressure,
                    "GlobalNZ",
                    "trilinos",
                    "direct") &&
           ok;
      // The pressure on the resident backend: its faces' forces and load
      // stiffness computed on the device and summed into the device
      // matrix, BiCGStab on the device (auto chooses it), against the
      // host path's direct solves.
      for (const std::string method : {"GlobalNZ", "SharedNZ"})
        ok = run_case("follower pressure on a bar",
                      pressure,
                      method,
                      "resident",
                      "auto",
                      "DistributedJacobiBiCGStab",
                      "pressure faces on the device") &&
             ok;
      ok = bitwise_repeatable("follower pressure on a bar", pressure) && ok;
      ok = Utilities::MPI::min(ok ? 1 : 0, MPI_COMM_WORLD) == 1;
      if (root)
        std::cout << (ok ? "PASSED" : "FAILED") << std::endl;
      return ok ? 0 : 1;
    }
  catch (const std::exception &exc)
    {
      std::cerr << "FAILED with an exception: " << exc.what() << std::endl;
      return 1;
    }
}

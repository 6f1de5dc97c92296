// SPDX-License-Identifier: LGPL-2.1-or-later
// assembly_demo: a linear-elastic cantilever under its own weight, assembled
// through the plugin's flat arrays and written as VTU. It is the smallest
// complete use of the plugin: deal.II objects in, adapter, assembly and
// solve on the GPU ('Linear solver'), results back in a deal.II vector,
// DataOut, and the time of each stage.
//
// Usage: assembly_demo [parameter_file.prm]
//        assembly_demo --print-parameters   (a documented default file)

#include <deal.II/base/conditional_ostream.h>
#include <deal.II/base/parameter_handler.h>
#include <deal.II/base/quadrature_lib.h>
#include <deal.II/base/timer.h>

#include <deal.II/dofs/dof_handler.h>
#include <deal.II/dofs/dof_renumbering.h>

#include <deal.II/fe/fe_q.h>
#include <deal.II/fe/fe_simplex_p.h>
#include <deal.II/fe/fe_system.h>
#include <deal.II/fe/mapping_fe.h>
#include <deal.II/fe/mapping_q.h>

#include <deal.II/grid/grid_generator.h>
#include <deal.II/grid/grid_tools.h>
#include <deal.II/grid/tria.h>

#include <deal.II/lac/affine_constraints.h>
#include <deal.II/lac/precondition.h>
#include <deal.II/lac/solver_cg.h>
#include <deal.II/lac/sparse_matrix.h>
#include <deal.II/lac/vector.h>

#include <deal.II/numerics/data_out.h>
#include <deal.II/numerics/vector_tools.h>

#include <gpu_assembly/adapter/dof_handler_adapter.h>
#include <gpu_assembly/base/device.h>
#include <gpu_assembly/engine/device_assembler.h>
#include <gpu_assembly/engine/host_assembler.h>
#include <gpu_assembly/grid/mesh_input.h>
#include <gpu_assembly/kernels/element_kernels.h>
#include <gpu_assembly/lac/device_csr_matrix.h>
#include <gpu_assembly/lac/device_vector.h>

#include <filesystem>
#include <fstream>
#include <iostream>

#include "../common/app_utilities.h"
#include "../common/device_linear_solvers.h"
#include "../common/snapshot_writer.h"
#include "beam.h"
#include "parameters.h"

namespace AssemblyDemo
{
  using namespace dealii;

  // Peak memory per cell of the built-in beam on the host path
  // (triangulation, DoF handler, adapter arrays, matrix, CG): the growth of
  // the peak from 4 to 8 subdivisions, 3.1 kB and 22 kB per tetrahedron,
  // 15 kB and 200 kB per hexahedron for degrees 1 and 2, rounded up; and the
  // tetrahedra deal.II makes of each hexahedron.
  constexpr double bytes_per_tetrahedron[2] = {4000, 25000};
  constexpr double bytes_per_hexahedron[2]  = {16000, 220000};
  constexpr double cells_per_hexahedron     = 24;

  class Demo
  {
  public:
    explicit Demo(const Parameters &parameters);

    void
    run();

  private:
    void
    make_grid();
    void
    mark_clamped_faces();
    void
    check_clamp() const;
    void
    setup_system();
    void
    assemble_system();
    void
    solve();
    void
    solve_on_device();
    void
    output_results() const;

    static constexpr int dim = 3;

    /// 'Linear solver' resolved (auto becomes host-cg where no device
    /// solver can run); refuses a device solver that cannot run here.
    static std::string
    resolve_linear_solver(const std::string &name);

    const Parameters   parameters;
    ConditionalOStream pcout;
    // Before the timer, so that a refusal prints no empty timing table.
    const std::string                   linear_solver;
    const bool                          solve_on_gpu;
    TimerOutput                         timer;
    Triangulation<dim>                  tria;
    std::unique_ptr<FiniteElement<dim>> fe;
    std::unique_ptr<Mapping<dim>>       mapping;
    std::unique_ptr<Quadrature<dim>>    quadrature;
    DoFHandler<dim>                     dof_handler;
    AffineConstraints<double>           constraints;

    GPUAssembly::DoFHandlerAdapter<dim> adapter;
    // 'Assembly method' resolved (auto: GlobalNZ on a GPU, else host),
    // and the device assembler with its plan, built in the set-up.
    std::string                               assembly_method;
    GPUAssembly::DeviceAssembler<dim, double> device_assembler;
    // The system where the solver runs: on the device, or in deal.II's
    // matrix and vector for the host CG.
    GPUAssembly::DeviceCSRMatrix<double> device_matrix;
    GPUAssembly::DeviceVector<double>    device_rhs;
    SparsityPattern                      sparsity_pattern;
    SparseMatrix<double>                 system_matrix;
    Vector<double>                       system_rhs;
    Vector<double>                       displacement;
  };



  std::string
  Demo::resolve_linear_solver(const std::string &name)
  {
    if (name == "host-cg")
      return name;
    const std::string why_not = AppSolvers::unavailable_reason(name);
    if (name == "auto")
      return why_not.empty() ? name : "host-cg";
    AssertThrow(why_not.empty(),
                ExcMessage("'Linear solver' = " + name +
                           " runs on the GPU, but " + why_not +
                           ". Choose 'Linear solver' = host-cg or auto on a "
                           "machine without a GPU."));
    return name;
  }



  Demo::Demo(const Parameters &parameters)
    : parameters(parameters)
    , pcout(std::cout)
    , linear_solver(resolve_linear_solver(parameters.linear_solver))
    , solve_on_gpu(linear_solver != "host-cg")
    , timer(pcout, TimerOutput::summary, TimerOutput::wall_times)
  {}



  void
  Demo::make_grid()
  {
    TimerOutput::Scope scope(timer, "Mesh");
    if (parameters.mesh_file.empty())
      {
        const unsigned int n       = parameters.subdivisions;
        const double       n_along = std::ceil(n * parameters.length);
        // make_beam() takes ceil(n L) cells along; n_along checks first that
        // they can be counted.
        {
          // Cells, then DoFs (about 1 per cell in 3D for degree 1 and 8 for
          // degree 2, times 3 components), and the memory of their
          // triangulation, DoF handler, constraints, arrays and matrix,
          // refused before deal.II allocates it.
          const double n_cells =
            n_along * n * n *
            (parameters.cell_type == "hexahedra" ? 1. : cells_per_hexahedron);
          AppUtilities::check_memory_estimate(
            n_cells * (parameters.cell_type == "hexahedra" ?
                         bytes_per_hexahedron[parameters.degree - 1] :
                         bytes_per_tetrahedron[parameters.degree - 1]),
            "The built-in beam with 'Mesh/Subdivisions' = " +
              std::to_string(n) + " and 'Mesh/Beam length' = " +
              AppUtilities::significant(parameters.length) + " (about " +
              AppUtilities::significant(n_cells, 3) + " cells)",
            "Choose fewer 'Mesh/Subdivisions' or a shorter beam.");
        }
        AssertThrow(n_along < 1e9,
                    ExcMessage("'Mesh/Beam length' = " +
                               AppUtilities::significant(parameters.length) +
                               " gives " + AppUtilities::significant(n_along) +
                               " cells along the beam; too many to count."));
        make_beam(tria,
                  parameters.length,
                  n,
                  parameters.cell_type == "hexahedra");
      }
    else
      {
        const GPUAssembly::MeshFileSummary summary =
          GPUAssembly::read_mesh(parameters.mesh_file, tria);
        if (summary.n_unused_nodes > 0)
          pcout << "Mesh " << parameters.mesh_file << ": " << summary.describe()
                << std::endl;
        // The mixed mesh would crash in deal.II's DoF renumbering.
        AssertThrow(tria.all_reference_cells_are_simplex() ||
                      tria.all_reference_cells_are_hyper_cube(),
                    ExcMessage("The mesh " + parameters.mesh_file +
                               " mixes cell types; the demo runs on "
                               "tetrahedra or on hexahedra."));
      }
    if (!parameters.mesh_file.empty() || !parameters.clamped_region.empty())
      mark_clamped_faces();
    pcout << "Mesh: " << tria.n_active_cells() << ' '
          << (tria.all_reference_cells_are_simplex() ? "tetrahedra" :
                                                       "hexahedra")
          << ", " << tria.n_vertices() << " vertices" << std::endl;
  }



  void
  Demo::mark_clamped_faces()
  {
    // Boundary id 0: clamped; 1: free. Either the faces whose vertices all
    // lie in the 'Clamped region' box, or those at the smallest x.
    const double        diameter = GridTools::diameter(tria);
    std::vector<double> box;
    for (const std::string &item :
         Utilities::split_string_list(parameters.clamped_region, ','))
      {
        double value = 0;
        try
          {
            value = Utilities::string_to_double(item);
          }
        catch (...)
          {
            AssertThrow(false,
                        ExcMessage("'Mesh/Clamped region': '" + item +
                                   "' is not a number."));
          }
        box.push_back(value);
      }
    AssertThrow(box.empty() || box.size() == 6,
                ExcMessage("'Mesh/Clamped region' must be empty or a box "
                           "x0, y0, z0, x1, y1, z1; it is '" +
                           parameters.clamped_region + "'."));
    double x_min = std::numeric_limits<double>::max();
    for (const auto &vertex : tria.get_vertices())
      x_min = std::min(x_min, vertex[0]);
    const double tolerance = 1e-8 * (diameter + std::abs(x_min));
    const auto   inside    = [&](const Point<dim> &p) {
      if (box.empty())
        return std::abs(p[0] - x_min) < tolerance;
      for (unsigned int d = 0; d < dim; ++d)
        if (p[d] < box[d] - tolerance || p[d] > box[d + 3] + tolerance)
          return false;
      return true;
    };
    for (const auto &cell : tria.active_cell_iterators())
      for (const auto &face : cell->face_iterators())
        if (face->at_boundary())
          {
            bool all_inside = true;
            for (const unsigned int v : face->vertex_indices())
              all_inside = all_inside && inside(face->vertex(v));
            face->set_boundary_id(all_inside ? 0 : 1);
          }
  }



  void
  Demo::check_clamp() const
  {
    // The clamp must hold the rigid motions: its nodes span a plane, or
    // CG meets a singular matrix. Collect the clamped vertices.
    std::vector<Point<dim>> points;
    for (const auto &cell : tria.active_cell_iterators())
      for (const auto &face : cell->face_iterators())
        if (face->at_boundary() && face->boundary_id() == 0)
          for (const unsigned int v : face->vertex_indices())
            points.push_back(face->vertex(v));
    const std::string where =
      parameters.clamped_region.empty() ?
        "at the smallest x of the mesh (the default when 'Mesh/Clamped "
        "region' is empty)" :
        "in 'Mesh/Clamped region' = " + parameters.clamped_region;
    AssertThrow(!points.empty(),
                ExcMessage("No boundary face lies " + where +
                           ", so nothing would be clamped and the body "
                           "could move freely: the system would be "
                           "singular. Set 'Mesh/Clamped region' to a box "
                           "x0, y0, z0, x1, y1, z1 around the boundary faces "
                           "to clamp."));
    const double scale = GridTools::diameter(tria);
    double       area  = 0;
    for (const auto &p : points)
      for (const auto &q : points)
        area =
          std::max(area, cross_product_3d(q - points[0], p - points[0]).norm());
    AssertThrow(area > 1e-12 * scale * scale,
                ExcMessage("The clamped boundary faces " + where +
                           " all lie on one line, which cannot hold the "
                           "body against rotation about it: the system "
                           "would be singular. Set 'Mesh/Clamped region' "
                           "to a box x0, y0, z0, x1, y1, z1 around the "
                           "boundary faces to clamp."));
  }



  void
  Demo::setup_system()
  {
    TimerOutput::Scope scope(timer, "Set-up (adapter arrays, plan)");
    Discretization     discretization(tria.all_reference_cells_are_simplex(),
                                  parameters.degree);
    fe         = std::move(discretization.fe);
    mapping    = std::move(discretization.mapping);
    quadrature = std::move(discretization.quadrature);
    dof_handler.reinit(tria);
    dof_handler.distribute_dofs(*fe);
    DoFRenumbering::Cuthill_McKee(dof_handler);

    constraints.clear();
    make_clamp_constraints(*mapping, dof_handler, constraints);

    adapter.reinit(*mapping, dof_handler, *quadrature, constraints);
    assembly_method = parameters.assembly_method;
    if (assembly_method == "auto")
      assembly_method = GPUAssembly::n_cuda_devices() > 0 ? "GlobalNZ" : "host";
    AssertThrow(assembly_method == "host" || GPUAssembly::n_cuda_devices() > 0,
                ExcMessage("'Assembly method' = " + assembly_method +
                           " runs on the GPU, but no CUDA device was found. "
                           "Choose 'Assembly method' = host or auto on a "
                           "machine without a GPU."));
    if (assembly_method != "host")
      {
        // The plan is built once; a time-dependent or nonlinear program
        // keeps the assembler and calls assemble() each step.
        typename GPUAssembly::DeviceAssembler<dim, double>::AdditionalData data;
        data.method = GPUAssembly::parse_assembly_method(assembly_method);
        device_assembler.reinit(adapter.get_arrays(), data);
      }
    if (!solve_on_gpu)
      {
        adapter.make_sparsity_pattern(sparsity_pattern);
        system_matrix.reinit(sparsity_pattern);
      }
    const GPUAssembly::MeshArrays &arrays = adapter.get_arrays();
    pcout << "Unknowns: " << arrays.n_dofs << " (" << fe->get_name() << "), "
          << arrays.n_nonzeros() << " nonzeros, " << constraints.n_constraints()
          << " clamped; mesh arrays "
          << arrays.memory_consumption() / 1024 / 1024 << " MiB" << std::endl;
  }



  void
  Demo::assemble_system()
  {
    TimerOutput::Scope scope(timer, "Assembly");
    const GPUAssembly::LinearElasticityKernel<dim, double> kernel =
      make_elasticity_kernel(parameters.youngs_modulus,
                             parameters.poisson_ratio,
                             parameters.density,
                             parameters.gravity);

    const GPUAssembly::MeshArrays &arrays = adapter.get_arrays();
    if (solve_on_gpu)
      {
        device_matrix.reinit(arrays);
        device_rhs.reinit(arrays.n_dofs);
      }
    std::vector<double> values, rhs;
    if (assembly_method == "host")
      {
        const GPUAssembly::HostAssembler<dim, double> assembler(arrays);
        assembler.assemble(kernel, values, rhs);
        pcout << "Assembled on the host path (" << assembler.n_colors()
              << " element colours, " << MultithreadInfo::n_threads()
              << " threads)." << std::endl;
        if (solve_on_gpu)
          {
            device_matrix.get_values().copy_from_host(values);
            device_rhs.copy_from_host(rhs);
          }
      }
    else
      {
        // For the host CG the system lives on the device only here.
        GPUAssembly::DeviceCSRMatrix<double> host_solver_matrix;
        GPUAssembly::DeviceVector<double>    host_solver_rhs;
        if (!solve_on_gpu)
          {
            host_solver_matrix.reinit(arrays);
            host_solver_rhs.reinit(arrays.n_dofs);
          }
        GPUAssembly::DeviceCSRMatrix<double> &matrix =
          solve_on_gpu ? device_matrix : host_solver_matrix;
        GPUAssembly::DeviceVector<double> &device_system_rhs =
          solve_on_gpu ? device_rhs : host_solver_rhs;
        const GPUAssembly::DeviceVector<double> nodal(arrays.nodal_coordinates);
        device_assembler.assemble(kernel, nodal, matrix, device_system_rhs);
        pcout << "Assembled on the GPU with " << assembly_method << '.'
              << std::endl;
        if (!solve_on_gpu)
          {
            matrix.get_values().copy_to_host(values);
            device_system_rhs.copy_to_host(rhs);
          }
      }
    if (solve_on_gpu)
      GPUAssembly::synchronize_device();
    else
      {
        adapter.copy_to_sparse_matrix(values, system_matrix);
        system_rhs = Vector<double>(rhs.begin(), rhs.end());
      }
    // A material or load beyond the range of double makes every later
    // number meaningless: CG would call an infinite right-hand side solved.
    // On the device path the load is checked (n_dofs numbers); a matrix
    // that is not finite fails the device solver's own checks.
    if (solve_on_gpu)
      device_rhs.copy_to_host(rhs);
    const std::size_t bad_value = AppUtilities::first_non_finite(values),
                      bad_load  = AppUtilities::first_non_finite(rhs);
    AssertThrow(bad_value == values.size(),
                ExcMessage(
                  "The assembled stiffness matrix holds " +
                  AppUtilities::significant(values[bad_value]) +
                  ", not a finite number: check 'Material/Young's "
                  "modulus' = " +
                  AppUtilities::significant(parameters.youngs_modulus) +
                  " and 'Material/Poisson's ratio' = " +
                  AppUtilities::significant(parameters.poisson_ratio) + "."));
    AssertThrow(bad_load == rhs.size(),
                ExcMessage(
                  "The assembled load holds " +
                  AppUtilities::significant(rhs[bad_load]) + " at unknown " +
                  std::to_string(bad_load) +
                  ", not a finite number: the body force "
                  "'Material/Density' x 'Material/Gravity' = " +
                  AppUtilities::significant(parameters.density) + " x " +
                  AppUtilities::significant(parameters.gravity) + " = " +
                  AppUtilities::significant(-kernel.body_force[2]) +
                  " N/m^3 is beyond the range of double numbers."));
  }



  void
  Demo::solve()
  {
    if (solve_on_gpu)
      return solve_on_device();
    TimerOutput::Scope scope(timer, "Solve (host CG + SSOR)");
    displacement.reinit(dof_handler.n_dofs());
    SolverControl                          control(10 * dof_handler.n_dofs(),
                          1e-10 * system_rhs.l2_norm());
    SolverCG<Vector<double>>               cg(control);
    PreconditionSSOR<SparseMatrix<double>> preconditioner;
    preconditioner.initialize(system_matrix, 1.2);
    cg.solve(system_matrix, displacement, system_rhs, preconditioner);
    constraints.distribute(displacement);
    pcout << "Host CG (SSOR) converged in " << control.last_step()
          << " iterations; max |u| = " << displacement.linfty_norm() << " m"
          << std::endl;
  }



  void
  Demo::solve_on_device()
  {
    // The phases apart, as a Newton loop would call them: analyze() once
    // per mesh, factorize() per assembled matrix, solve() per right-hand
    // side. Each returns when the device is done, so the timer is right.
    AppSolvers::SolverSettings settings;
    settings.relative_tolerance = 1e-10;
    settings.max_iterations     = 10 * dof_handler.n_dofs();
    std::unique_ptr<AppSolvers::DeviceLinearSolver<double>> solver =
      AppSolvers::create_device_solver<double>(linear_solver, settings);
    {
      TimerOutput::Scope scope(timer, "Solver analysis / work space");
      solver->analyze(adapter.get_arrays(), device_matrix);
    }
    // A direct solver factorizes here; the CGs set their preconditioner
    // up for the matrix's values inside each solve.
    const bool direct = solver->is_direct();
    if (direct)
      {
        TimerOutput::Scope scope(timer, "Solver factorization");
        solver->factorize(device_matrix);
      }
    GPUAssembly::DeviceVector<double> solution(dof_handler.n_dofs());
    AppSolvers::SolveResult           result;
    {
      TimerOutput::Scope scope(timer,
                               direct ? "Solve on the GPU" :
                                        "Solve on the GPU (preconditioner "
                                        "set-up included)");
      if (!direct)
        solver->factorize(device_matrix);
      result = solver->solve(solution, device_rhs);
    }
    std::vector<double> values;
    solution.copy_to_host(values);
    displacement = Vector<double>(values.begin(), values.end());
    constraints.distribute(displacement);
    pcout << "Solved on the GPU with " << solver->name()
          << (linear_solver == "auto" ? " (auto)" : "");
    if (direct)
      pcout << ", a direct solve";
    else
      pcout << " in " << result.iterations << " iterations (relative "
            << "residual " << result.relative_residual << ')';
    pcout << "; device memory of the solver "
          << AppUtilities::significant(solver->device_memory() / 1048576., 3)
          << " MiB; max |u| = " << displacement.linfty_norm() << " m"
          << std::endl;
    if (const std::string details = solver->details(); !details.empty())
      pcout << "Solver: " << details << std::endl;
  }



  void
  Demo::output_results() const
  {
    for (unsigned int i = 0; i < displacement.size(); ++i)
      AssertThrow(std::isfinite(displacement[i]),
                  ExcMessage("The solution is not finite at unknown " +
                             std::to_string(i) + " (" +
                             AppUtilities::significant(displacement[i]) +
                             "): nothing is written. The solver did not "
                             "converge to a meaningful result; check the "
                             "material and the mesh."));
    AppUtilities::create_output_directory(parameters.output_directory,
                                          "Output directory");
    DataOut<dim> data_out;
    data_out.attach_dof_handler(dof_handler);
    const std::vector<DataComponentInterpretation::DataComponentInterpretation>
      interpretation(dim,
                     DataComponentInterpretation::component_is_part_of_vector);
    data_out.add_data_vector(displacement,
                             std::vector<std::string>(dim, "displacement"),
                             DataOut<dim>::type_dof_data,
                             interpretation);
    data_out.build_patches(*mapping, parameters.degree);
    const std::string name = parameters.output_directory + "/solution.vtu";
    // The arrays are compressed on all threads.
    DataOutBase::VtkFlags flags;
    flags.compression_level = parameters.compression;
    AppUtilities::write_vtu(data_out, flags, name);
    AppUtilities::write_file(
      parameters.output_directory + "/solution.pvd",
      [&](std::ostream &out) {
        DataOutBase::write_pvd_record(out, {{0., "solution.vtu"}});
      });
    pcout << "Wrote " << name << " (open it or solution.pvd in ParaView)."
          << std::endl;
  }



  void
  Demo::run()
  {
    pcout << GPUAssembly::describe_execution_path() << std::endl;
    make_grid();
    check_clamp();
    setup_system();
    assemble_system();
    solve();
    {
      TimerOutput::Scope scope(timer, "Output");
      output_results();
    }
  }
} // namespace AssemblyDemo



int
main(int argc, char **argv)
{
  return AppUtilities::run_one_process_app<AssemblyDemo::Parameters>(
    argc,
    argv,
    "assembly_demo",
    "Without a file, the defaults below are used.",
    [](const AssemblyDemo::Parameters &parameters) {
      AssemblyDemo::Demo(parameters).run();
    });
}

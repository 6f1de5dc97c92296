// SPDX-License-Identifier: LGPL-2.1-or-later
// assembly_demo: a linear-elastic cantilever under its own weight, assembled
// through the plugin's flat arrays and written as VTU. It is the smallest
// complete use of the plugin: deal.II objects in, adapter, assembly, solve,
// results back in a deal.II vector, DataOut.
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

#include <filesystem>
#include <fstream>
#include <iostream>

#include "../common/app_utilities.h"
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
    output_results() const;

    static constexpr int dim = 3;

    const Parameters                    parameters;
    ConditionalOStream                  pcout;
    TimerOutput                         timer;
    Triangulation<dim>                  tria;
    std::unique_ptr<FiniteElement<dim>> fe;
    std::unique_ptr<Mapping<dim>>       mapping;
    std::unique_ptr<Quadrature<dim>>    quadrature;
    DoFHandler<dim>                     dof_handler;
    AffineConstraints<double>           constraints;

    GPUAssembly::DoFHandlerAdapter<dim> adapter;
    SparsityPattern                     sparsity_pattern;
    SparseMatrix<double>                system_matrix;
    Vector<double>                      system_rhs;
    Vector<double>                      displacement;
  };



  Demo::Demo(const Parameters &parameters)
    : parameters(parameters)
    , pcout(std::cout)
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
        const std::vector<unsigned int> repetitions =
          {static_cast<unsigned int>(n_along), n, n};
        // colorize: the face x = 0 gets boundary id 0, the others 1..5.
        if (parameters.cell_type == "hexahedra")
          GridGenerator::subdivided_hyper_rectangle(
            tria,
            repetitions,
            Point<dim>(),
            Point<dim>(parameters.length, 1, 1),
            true);
        else
          {
            Triangulation<dim> hexes;
            GridGenerator::subdivided_hyper_rectangle(
              hexes,
              repetitions,
              Point<dim>(),
              Point<dim>(parameters.length, 1, 1),
              true);
            GridGenerator::convert_hypercube_to_simplex_mesh(hexes, tria);
          }
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
    TimerOutput::Scope scope(timer, "Set-up (adapter arrays)");
    if (tria.all_reference_cells_are_simplex())
      {
        fe =
          std::make_unique<FESystem<dim>>(FE_SimplexP<dim>(parameters.degree),
                                          dim);
        mapping = std::make_unique<MappingFE<dim>>(FE_SimplexP<dim>(1));
        quadrature =
          std::make_unique<QGaussSimplex<dim>>(parameters.degree + 1);
      }
    else
      {
        fe = std::make_unique<FESystem<dim>>(FE_Q<dim>(parameters.degree), dim);
        mapping    = std::make_unique<MappingQ<dim>>(1);
        quadrature = std::make_unique<QGauss<dim>>(parameters.degree + 1);
      }
    dof_handler.reinit(tria);
    dof_handler.distribute_dofs(*fe);
    DoFRenumbering::Cuthill_McKee(dof_handler);

    constraints.clear();
    VectorTools::interpolate_boundary_values(*mapping,
                                             dof_handler,
                                             0,
                                             Functions::ZeroFunction<dim>(dim),
                                             constraints);
    constraints.close();

    adapter.reinit(*mapping, dof_handler, *quadrature, constraints);
    adapter.make_sparsity_pattern(sparsity_pattern);
    system_matrix.reinit(sparsity_pattern);
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
    const double E = parameters.youngs_modulus, nu = parameters.poisson_ratio;
    GPUAssembly::LinearElasticityKernel<dim, double> kernel;
    kernel.lambda        = E * nu / ((1 + nu) * (1 - 2 * nu));
    kernel.mu            = E / (2 * (1 + nu));
    kernel.body_force[2] = -parameters.density * parameters.gravity;

    const GPUAssembly::MeshArrays &arrays = adapter.get_arrays();
    std::string                    method = parameters.assembly_method;
    if (method == "auto")
      method = GPUAssembly::n_cuda_devices() > 0 ? "GlobalNZ" : "host";

    std::vector<double> values, rhs;
    if (method == "host")
      {
        const GPUAssembly::HostAssembler<dim, double> assembler(arrays);
        assembler.assemble(kernel, values, rhs);
        pcout << "Assembled on the host path (" << assembler.n_colors()
              << " element colours, " << MultithreadInfo::n_threads()
              << " threads)." << std::endl;
      }
    else
      {
        // The plan is built once here; a time-dependent or nonlinear
        // program would keep the assembler and call assemble() each step.
        typename GPUAssembly::DeviceAssembler<dim, double>::AdditionalData data;
        data.method = GPUAssembly::parse_assembly_method(method);
        GPUAssembly::DeviceAssembler<dim, double> assembler;
        assembler.reinit(arrays, data);
        GPUAssembly::DeviceCSRMatrix<double> matrix;
        matrix.reinit(arrays);
        GPUAssembly::DeviceVector<double>       device_rhs(arrays.n_dofs);
        const GPUAssembly::DeviceVector<double> nodal(arrays.nodal_coordinates);
        assembler.assemble(kernel, nodal, matrix, device_rhs);
        matrix.get_values().copy_to_host(values);
        device_rhs.copy_to_host(rhs);
        pcout << "Assembled on the GPU with " << method << '.' << std::endl;
      }
    // A material or load beyond the range of double makes every later
    // number meaningless: CG would call an infinite right-hand side solved.
    const std::size_t bad_value = AppUtilities::first_non_finite(values),
                      bad_load  = AppUtilities::first_non_finite(rhs);
    AssertThrow(bad_value == values.size(),
                ExcMessage("The assembled stiffness matrix holds " +
                           AppUtilities::significant(values[bad_value]) +
                           ", not a finite number: check 'Material/Young's "
                           "modulus' = " +
                           AppUtilities::significant(E) +
                           " and 'Material/Poisson's ratio' = " +
                           AppUtilities::significant(nu) + "."));
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
    adapter.copy_to_sparse_matrix(values, system_matrix);
    system_rhs = Vector<double>(rhs.begin(), rhs.end());
  }



  void
  Demo::solve()
  {
    TimerOutput::Scope scope(timer, "Solve (CG + SSOR)");
    displacement.reinit(dof_handler.n_dofs());
    SolverControl                          control(10 * dof_handler.n_dofs(),
                          1e-10 * system_rhs.l2_norm());
    SolverCG<Vector<double>>               cg(control);
    PreconditionSSOR<SparseMatrix<double>> preconditioner;
    preconditioner.initialize(system_matrix, 1.2);
    cg.solve(system_matrix, displacement, system_rhs, preconditioner);
    constraints.distribute(displacement);
    pcout << "CG converged in " << control.last_step()
          << " iterations; max |u| = " << displacement.linfty_norm() << " m"
          << std::endl;
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
    AppUtilities::write_file(name, [&](std::ostream &out) {
      data_out.write_vtu(out);
    });
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

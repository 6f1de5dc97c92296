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
#include <gpu_assembly/grid/mesh_input.h>
#include <gpu_assembly/host/host_assembler.h>
#include <gpu_assembly/kernels/element_kernels.h>

#include <filesystem>
#include <fstream>
#include <iostream>

namespace AssemblyDemo
{
  using namespace dealii;

  struct Parameters
  {
    std::string  mesh_file;
    double       length;
    unsigned int subdivisions;
    std::string  cell_type;
    unsigned int degree;
    double       youngs_modulus;
    double       poisson_ratio;
    double       density;
    double       gravity;
    std::string  output_directory;
    std::string  assembly_method;

    static void
    declare_parameters(ParameterHandler &prm)
    {
      prm.enter_subsection("Mesh");
      prm.declare_entry("Mesh file",
                        "",
                        Patterns::FileName(),
                        "A 3D mesh (.msh, .inp, .vtk or .dat). Empty: a "
                        "built-in beam [0, L] x [0, 1] x [0, 1]. The faces "
                        "at x = min are clamped either way.");
      prm.declare_entry("Beam length",
                        "4",
                        Patterns::Double(0.),
                        "L of the built-in beam. Units: m.");
      prm.declare_entry("Subdivisions",
                        "8",
                        Patterns::Integer(1, 512),
                        "Cells across the built-in beam's width (its length "
                        "gets L times as many).");
      prm.declare_entry("Cell type",
                        "tetrahedra",
                        Patterns::Selection("tetrahedra|hexahedra"),
                        "Cells of the built-in beam.");
      prm.leave_subsection();

      prm.enter_subsection("Discretization");
      prm.declare_entry("Degree",
                        "1",
                        Patterns::Integer(1, 2),
                        "Polynomial degree of the displacement.");
      prm.leave_subsection();

      prm.enter_subsection("Material");
      prm.declare_entry("Young's modulus",
                        "1e4",
                        Patterns::Double(0.),
                        "E. Units: Pa.");
      prm.declare_entry("Poisson's ratio",
                        "0.3",
                        Patterns::Double(0., 0.5),
                        "nu (dimensionless, below 0.5).");
      prm.declare_entry("Density",
                        "1",
                        Patterns::Double(0.),
                        "rho. Units: kg/m^3.");
      prm.declare_entry("Gravity",
                        "9.81",
                        Patterns::Double(),
                        "Acceleration along -z. Units: m/s^2.");
      prm.leave_subsection();

      prm.declare_entry("Assembly method",
                        "auto",
                        Patterns::Selection("auto|host|GlobalNZ|SharedNZ|"
                                            "LocalElem-atomic|"
                                            "LocalElem-colored"),
                        "Where the matrix is assembled. auto: GlobalNZ on "
                        "the GPU if there is one, else the host path.");
      prm.declare_entry("Output directory",
                        "output",
                        Patterns::DirectoryName(),
                        "Where the VTU and PVD files go (created if "
                        "missing).");
    }

    void
    parse_parameters(ParameterHandler &prm)
    {
      prm.enter_subsection("Mesh");
      mesh_file    = prm.get("Mesh file");
      length       = prm.get_double("Beam length");
      subdivisions = prm.get_integer("Subdivisions");
      cell_type    = prm.get("Cell type");
      prm.leave_subsection();
      prm.enter_subsection("Discretization");
      degree = prm.get_integer("Degree");
      prm.leave_subsection();
      prm.enter_subsection("Material");
      youngs_modulus = prm.get_double("Young's modulus");
      poisson_ratio  = prm.get_double("Poisson's ratio");
      density        = prm.get_double("Density");
      gravity        = prm.get_double("Gravity");
      prm.leave_subsection();
      output_directory = prm.get("Output directory");
      assembly_method  = prm.get("Assembly method");
      AssertThrow(poisson_ratio < 0.5,
                  ExcMessage("Poisson's ratio must be below 0.5."));
      AssertThrow(length > 0 && youngs_modulus > 0,
                  ExcMessage("Beam length and Young's modulus must be "
                             "positive."));
    }
  };



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
        const unsigned int              n = parameters.subdivisions;
        const std::vector<unsigned int> repetitions =
          {static_cast<unsigned int>(std::ceil(n * parameters.length)), n, n};
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
        GPUAssembly::read_mesh(parameters.mesh_file, tria);
        // Clamp the faces at the smallest x of the mesh.
        double x_min = std::numeric_limits<double>::max();
        for (const auto &vertex : tria.get_vertices())
          x_min = std::min(x_min, vertex[0]);
        const double tolerance =
          1e-8 * (GridTools::diameter(tria) + std::abs(x_min));
        for (const auto &cell : tria.active_cell_iterators())
          for (const auto &face : cell->face_iterators())
            if (face->at_boundary())
              face->set_boundary_id(
                std::abs(face->center()[0] - x_min) < tolerance ? 0 : 1);
      }
    pcout << "Mesh: " << tria.n_active_cells() << ' '
          << (tria.all_reference_cells_are_simplex() ? "tetrahedra" :
                                                       "hexahedra")
          << ", " << tria.n_vertices() << " vertices" << std::endl;
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
    std::filesystem::create_directories(parameters.output_directory);
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
    std::ofstream     output(name);
    AssertThrow(output, ExcMessage("Cannot write " + name));
    data_out.write_vtu(output);

    std::ofstream pvd(parameters.output_directory + "/solution.pvd");
    DataOutBase::write_pvd_record(pvd, {{0., "solution.vtu"}});
    pcout << "Wrote " << name << " (open it or solution.pvd in ParaView)."
          << std::endl;
  }



  void
  Demo::run()
  {
    pcout << GPUAssembly::describe_execution_path() << std::endl;
    make_grid();
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
  using namespace dealii;
  try
    {
      ParameterHandler prm;
      AssemblyDemo::Parameters::declare_parameters(prm);
      const std::string argument = argc > 1 ? argv[1] : "";
      if (argument == "--print-parameters" || argument == "--help" ||
          argument == "-h")
        {
          if (argument != "--print-parameters")
            std::cout << "Usage: " << argv[0]
                      << " [parameter_file.prm | --print-parameters]\n"
                         "Without a file, the defaults below are used.\n\n";
          prm.print_parameters(std::cout, ParameterHandler::PRM);
          return 0;
        }
      if (!argument.empty())
        prm.parse_input(argument);
      AssemblyDemo::Parameters parameters;
      parameters.parse_parameters(prm);
      AssemblyDemo::Demo(parameters).run();
    }
  catch (std::exception &exc)
    {
      std::cerr << "\n----------------------------------------------------\n"
                << "assembly_demo stopped with an error:\n"
                << exc.what() << "\nAborting."
                << "\n----------------------------------------------------"
                << std::endl;
      return 1;
    }
  catch (...)
    {
      std::cerr << "assembly_demo stopped with an unknown exception."
                << std::endl;
      return 1;
    }
  return 0;
}

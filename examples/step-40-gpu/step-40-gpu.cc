// SPDX-License-Identifier: LGPL-2.1-or-later
//
// deal.II's step-40 (the Laplace equation on an adaptively refined p4est
// mesh, solved with CG and Trilinos' algebraic multigrid on any number of
// MPI ranks) with its assembly done by GPUAssembly: each rank assembles its
// cells on its GPU (chosen by node-local rank), or on the host where it has
// none, and the plugin adds the interface rows up across the ranks into
// the Trilinos matrix and vector, as compress(add) does. Everything else is
// step-40's. The lines that differ from step-40 are marked "GPUAssembly".
//
// Options:
//   --dealii-assembly   assemble with deal.II (step-40's own loop) instead
//   --host              assemble with the plugin on the host, GPU or not
//   --compare           assemble with the plugin and with deal.II on every
//                       cycle, solve both, print their differences, and
//                       refine from deal.II's solution (so that both are
//                       compared on the same meshes)
//   --method NAME       GPU method: SharedNZ (default), GlobalNZ,
//                       LocalElem-atomic, LocalElem-colored
//   --cycles N          refinement cycles (default 8)
//   --no-output         write no VTU files

#include <deal.II/base/conditional_ostream.h>
#include <deal.II/base/function.h>
#include <deal.II/base/index_set.h>
#include <deal.II/base/quadrature_lib.h>
#include <deal.II/base/timer.h>
#include <deal.II/base/utilities.h>

#include <deal.II/distributed/grid_refinement.h>
#include <deal.II/distributed/tria.h>

#include <deal.II/dofs/dof_handler.h>
#include <deal.II/dofs/dof_tools.h>

#include <deal.II/fe/fe_q.h>
#include <deal.II/fe/fe_values.h>
#include <deal.II/fe/mapping_q.h>

#include <deal.II/grid/grid_generator.h>

#include <deal.II/lac/affine_constraints.h>
#include <deal.II/lac/dynamic_sparsity_pattern.h>
#include <deal.II/lac/full_matrix.h>
#include <deal.II/lac/generic_linear_algebra.h>
#include <deal.II/lac/solver_cg.h>
#include <deal.II/lac/sparsity_tools.h>
#include <deal.II/lac/vector.h>

#include <deal.II/numerics/data_out.h>
#include <deal.II/numerics/error_estimator.h>
#include <deal.II/numerics/vector_tools.h>

// GPUAssembly
#include <gpu_assembly/adapter/dof_handler_adapter.h>
#include <gpu_assembly/distributed/device_selection.h>
#include <gpu_assembly/distributed/distributed_assembler.h>

#include <cmath>
#include <iomanip>
#include <iostream>
#include <string>

#include "step_40_kernel.h"

namespace LA
{
  using namespace dealii::LinearAlgebraTrilinos;
} // namespace LA

namespace Step40
{
  using namespace dealii;

  // GPUAssembly: the choices of the command line.
  struct Options
  {
    bool                        dealii_assembly = false;
    bool                        compare         = false;
    bool                        host            = false;
    GPUAssembly::AssemblyMethod method = GPUAssembly::AssemblyMethod::shared_nz;
    unsigned int                n_cycles = 8;
    bool                        output   = true;
  };



  template <int dim>
  class LaplaceProblem
  {
  public:
    explicit LaplaceProblem(const Options &options);

    void
    run();

  private:
    void
    setup_system();
    void
    assemble_system();
    void
    assemble_with_dealii(LA::MPI::SparseMatrix &matrix, LA::MPI::Vector &rhs);
    LA::MPI::Vector
    solve(const LA::MPI::SparseMatrix &matrix,
          const LA::MPI::Vector       &rhs,
          const std::string           &name);
    void
    compare_with_dealii(const LA::MPI::Vector &solution,
                        const LA::MPI::Vector &reference_solution) const;
    void
    refine_grid();
    void
    output_results(const unsigned int cycle) const;

    MPI_Comm mpi_communicator;

    parallel::distributed::Triangulation<dim> triangulation;

    FE_Q<dim>       fe;
    DoFHandler<dim> dof_handler;

    IndexSet locally_owned_dofs;
    IndexSet locally_relevant_dofs;

    AffineConstraints<double> constraints;

    LA::MPI::SparseMatrix system_matrix;
    LA::MPI::Vector       locally_relevant_solution;
    LA::MPI::Vector       system_rhs;

    ConditionalOStream pcout;
    TimerOutput        computing_timer;

    // GPUAssembly: the rank's arrays, the assembler with its exchange plan,
    // and the nodal coordinates the kernel reads.
    Options                                options;
    bool                                   use_device = false;
    GPUAssembly::DoFHandlerAdapter<dim>    adapter;
    GPUAssembly::DistributedAssembler<dim> assembler;
    // GPUAssembly (--compare): deal.II's matrix, right-hand side and
    // solution on the same mesh.
    LA::MPI::SparseMatrix reference_matrix;
    LA::MPI::Vector       reference_rhs;
  };



  template <int dim>
  LaplaceProblem<dim>::LaplaceProblem(const Options &options)
    : mpi_communicator(MPI_COMM_WORLD)
    , triangulation(mpi_communicator,
                    typename Triangulation<dim>::MeshSmoothing(
                      Triangulation<dim>::smoothing_on_refinement |
                      Triangulation<dim>::smoothing_on_coarsening))
    , fe(2)
    , dof_handler(triangulation)
    , pcout(std::cout,
            (Utilities::MPI::this_mpi_process(mpi_communicator) == 0))
    , computing_timer(mpi_communicator,
                      pcout,
                      TimerOutput::never,
                      TimerOutput::wall_times)
    , options(options)
  {
    // GPUAssembly: a GPU per rank, by node-local rank; the host path where
    // a rank has none.
    if (!options.dealii_assembly)
      {
        const int device =
          GPUAssembly::select_device_by_node_rank(mpi_communicator);
        use_device = !options.host && device >= 0;
        const unsigned int n_on_device =
          Utilities::MPI::sum(use_device ? 1u : 0u, mpi_communicator);
        if (n_on_device == 0)
          pcout << "Assembly: GPUAssembly on the host" << std::endl;
        else
          {
            const unsigned int n_ranks =
              Utilities::MPI::n_mpi_processes(mpi_communicator);
            pcout << "Assembly: GPUAssembly, " << n_on_device << " of "
                  << n_ranks << " ranks on a GPU ("
                  << GPUAssembly::to_string(options.method) << ")"
                  << (n_on_device < n_ranks ? ", the others on the host" : "")
                  << std::endl;
          }
      }
    else
      pcout << "Assembly: deal.II (FEValues, distribute_local_to_global)"
            << std::endl;
  }



  template <int dim>
  void
  LaplaceProblem<dim>::setup_system()
  {
    TimerOutput::Scope t(computing_timer, "setup");

    dof_handler.distribute_dofs(fe);

    locally_owned_dofs = dof_handler.locally_owned_dofs();
    locally_relevant_dofs =
      DoFTools::extract_locally_relevant_dofs(dof_handler);

    locally_relevant_solution.reinit(locally_owned_dofs,
                                     locally_relevant_dofs,
                                     mpi_communicator);
    system_rhs.reinit(locally_owned_dofs, mpi_communicator);

    constraints.clear();
    constraints.reinit(locally_relevant_dofs);
    DoFTools::make_hanging_node_constraints(dof_handler, constraints);
    VectorTools::interpolate_boundary_values(dof_handler,
                                             0,
                                             Functions::ZeroFunction<dim>(),
                                             constraints);
    constraints.close();

    DynamicSparsityPattern dsp(locally_relevant_dofs);
    DoFTools::make_sparsity_pattern(dof_handler, dsp, constraints, false);
    SparsityTools::distribute_sparsity_pattern(dsp,
                                               locally_owned_dofs,
                                               mpi_communicator,
                                               locally_relevant_dofs);
    system_matrix.reinit(locally_owned_dofs,
                         locally_owned_dofs,
                         dsp,
                         mpi_communicator);
    if (options.compare)
      {
        reference_matrix.reinit(locally_owned_dofs,
                                locally_owned_dofs,
                                dsp,
                                mpi_communicator);
        reference_rhs.reinit(locally_owned_dofs, mpi_communicator);
      }

    // GPUAssembly: the rank's cells into flat arrays, the assembly and the
    // exchange of the interface rows planned once per mesh.
    if (!options.dealii_assembly)
      {
        typename GPUAssembly::DoFHandlerAdapter<dim>::AdditionalData
          adapter_data;
        adapter_data.keep_constrained_dofs = false;
        adapter.reinit(MappingQ<dim>(1),
                       dof_handler,
                       QGauss<dim>(fe.degree + 1),
                       constraints,
                       adapter_data);
        typename GPUAssembly::DistributedAssembler<dim>::AdditionalData data;
        data.use_device     = use_device;
        data.n_nodal_fields = dim;
        data.device.method  = options.method;
        assembler.reinit(adapter, system_matrix, system_rhs, data);
      }
  }



  template <int dim>
  void
  LaplaceProblem<dim>::assemble_system()
  {
    TimerOutput::Scope t(computing_timer, "assembly");

    // GPUAssembly: the whole assembly, exchange included.
    if (!options.dealii_assembly)
      {
        assembler.assemble(Step40Kernel<dim, double>(),
                           system_matrix,
                           system_rhs,
                           adapter.get_arrays().nodal_coordinates);
        if (options.compare)
          assemble_with_dealii(reference_matrix, reference_rhs);
      }
    else
      assemble_with_dealii(system_matrix, system_rhs);
  }



  // step-40's assemble_system(), into the given matrix and vector.
  template <int dim>
  void
  LaplaceProblem<dim>::assemble_with_dealii(LA::MPI::SparseMatrix &matrix,
                                            LA::MPI::Vector       &rhs)
  {
    const QGauss<dim> quadrature_formula(fe.degree + 1);

    FEValues<dim> fe_values(fe,
                            quadrature_formula,
                            update_values | update_gradients |
                              update_quadrature_points | update_JxW_values);

    const unsigned int dofs_per_cell = fe.n_dofs_per_cell();
    const unsigned int n_q_points    = quadrature_formula.size();

    FullMatrix<double> cell_matrix(dofs_per_cell, dofs_per_cell);
    Vector<double>     cell_rhs(dofs_per_cell);

    std::vector<types::global_dof_index> local_dof_indices(dofs_per_cell);

    for (const auto &cell : dof_handler.active_cell_iterators())
      if (cell->is_locally_owned())
        {
          cell_matrix = 0.;
          cell_rhs    = 0.;

          fe_values.reinit(cell);

          for (unsigned int q_point = 0; q_point < n_q_points; ++q_point)
            {
              const double rhs_value =
                (fe_values.quadrature_point(q_point)[1] >
                     0.5 +
                       0.25 * std::sin(4.0 * numbers::PI *
                                       fe_values.quadrature_point(q_point)[0]) ?
                   1. :
                   -1.);

              for (unsigned int i = 0; i < dofs_per_cell; ++i)
                {
                  for (unsigned int j = 0; j < dofs_per_cell; ++j)
                    cell_matrix(i, j) += fe_values.shape_grad(i, q_point) *
                                         fe_values.shape_grad(j, q_point) *
                                         fe_values.JxW(q_point);

                  cell_rhs(i) += rhs_value *                         //
                                 fe_values.shape_value(i, q_point) * //
                                 fe_values.JxW(q_point);
                }
            }

          cell->get_dof_indices(local_dof_indices);
          constraints.distribute_local_to_global(cell_matrix,
                                                 cell_rhs,
                                                 local_dof_indices,
                                                 matrix,
                                                 rhs);
        }

    matrix.compress(VectorOperation::add);
    rhs.compress(VectorOperation::add);
  }



  template <int dim>
  LA::MPI::Vector
  LaplaceProblem<dim>::solve(const LA::MPI::SparseMatrix &matrix,
                             const LA::MPI::Vector       &rhs,
                             const std::string           &name)
  {
    TimerOutput::Scope t(computing_timer, "solve");
    LA::MPI::Vector    completely_distributed_solution(locally_owned_dofs,
                                                    mpi_communicator);

    SolverControl solver_control(dof_handler.n_dofs(), 1e-12);

    LA::SolverCG solver(solver_control);

    LA::MPI::PreconditionAMG                 preconditioner;
    LA::MPI::PreconditionAMG::AdditionalData data;
    // Trilinos' defaults are good for this problem.
    preconditioner.initialize(matrix, data);

    solver.solve(matrix, completely_distributed_solution, rhs, preconditioner);

    pcout << "   " << name << "Solved in " << solver_control.last_step()
          << " iterations." << std::endl;

    constraints.distribute(completely_distributed_solution);

    // GPUAssembly: norms of the solution, to compare runs.
    pcout << "   " << name << "Solution norms: " << std::setprecision(14)
          << completely_distributed_solution.l2_norm() << " (l2), "
          << completely_distributed_solution.l1_norm() << " (l1), "
          << completely_distributed_solution.linfty_norm() << " (max)"
          << std::setprecision(6) << std::endl;
    return completely_distributed_solution;
  }



  // GPUAssembly (--compare): the plugin's matrix, right-hand side and
  // @p solution against deal.II's on the same mesh, relative to the size of
  // deal.II's (Frobenius and l2 norms).
  template <int dim>
  void
  LaplaceProblem<dim>::compare_with_dealii(
    const LA::MPI::Vector &solution,
    const LA::MPI::Vector &reference_solution) const
  {
    LA::MPI::SparseMatrix matrix_difference;
    matrix_difference.copy_from(system_matrix);
    matrix_difference.add(-1., reference_matrix);
    LA::MPI::Vector rhs_difference(system_rhs);
    rhs_difference -= reference_rhs;
    LA::MPI::Vector solution_difference(solution);
    solution_difference -= reference_solution;
    pcout << "   Relative difference to deal.II's assembly: matrix "
          << std::scientific << std::setprecision(2)
          << matrix_difference.frobenius_norm() /
               reference_matrix.frobenius_norm()
          << ", right-hand side "
          << rhs_difference.l2_norm() / reference_rhs.l2_norm() << ", solution "
          << solution_difference.l2_norm() / reference_solution.l2_norm()
          << std::defaultfloat << std::setprecision(6) << std::endl;
  }



  template <int dim>
  void
  LaplaceProblem<dim>::refine_grid()
  {
    TimerOutput::Scope t(computing_timer, "refine");

    Vector<float> estimated_error_per_cell(triangulation.n_active_cells());
    KellyErrorEstimator<dim>::estimate(
      dof_handler,
      QGauss<dim - 1>(fe.degree + 1),
      std::map<types::boundary_id, const Function<dim> *>(),
      locally_relevant_solution,
      estimated_error_per_cell);
    parallel::distributed::GridRefinement::refine_and_coarsen_fixed_number(
      triangulation,
      estimated_error_per_cell,
      0.3,
      0.03);
    triangulation.execute_coarsening_and_refinement();
  }



  template <int dim>
  void
  LaplaceProblem<dim>::output_results(const unsigned int cycle) const
  {
    DataOut<dim> data_out;
    data_out.attach_dof_handler(dof_handler);
    data_out.add_data_vector(locally_relevant_solution, "u");

    Vector<float> subdomain(triangulation.n_active_cells());
    for (unsigned int i = 0; i < subdomain.size(); ++i)
      subdomain(i) = triangulation.locally_owned_subdomain();
    data_out.add_data_vector(subdomain, "subdomain");

    data_out.build_patches();

    data_out.write_vtu_with_pvtu_record("./",
                                        "solution",
                                        cycle,
                                        mpi_communicator,
                                        2,
                                        8);
  }



  template <int dim>
  void
  LaplaceProblem<dim>::run()
  {
    pcout << "Running with "
          << "Trilinos"
          << " on " << Utilities::MPI::n_mpi_processes(mpi_communicator)
          << " MPI rank(s)..." << std::endl;

    const unsigned int n_cycles = options.n_cycles;
    for (unsigned int cycle = 0; cycle < n_cycles; ++cycle)
      {
        pcout << "Cycle " << cycle << ':' << std::endl;

        if (cycle == 0)
          {
            GridGenerator::hyper_cube(triangulation);
            triangulation.refine_global(5);
          }
        else
          refine_grid();

        setup_system();

        pcout << "   Number of active cells:       "
              << triangulation.n_global_active_cells() << std::endl
              << "   Number of degrees of freedom: " << dof_handler.n_dofs()
              << std::endl;

        assemble_system();
        // GPUAssembly (--compare): deal.II's solution is the one refined
        // from, so that the next mesh does not depend on the last bits of
        // the plugin's, which a tie between refinement indicators of this
        // symmetric problem could turn into another mesh.
        const LA::MPI::Vector solution =
          options.compare ? solve(reference_matrix, reference_rhs, "") :
                            solve(system_matrix, system_rhs, "");
        // A copy into the ghosted vector (a move would make it the
        // solution's vector, without the ghost entries the error estimator
        // reads).
        locally_relevant_solution = solution;
        if (options.compare)
          compare_with_dealii(solve(system_matrix, system_rhs, "GPUAssembly: "),
                              solution);

        if (options.output &&
            Utilities::MPI::n_mpi_processes(mpi_communicator) <= 32)
          {
            TimerOutput::Scope t(computing_timer, "output");
            output_results(cycle);
          }

        computing_timer.print_summary();
        computing_timer.reset();

        pcout << std::endl;
      }
  }
} // namespace Step40



int
main(int argc, char *argv[])
{
  try
    {
      using namespace dealii;
      using namespace Step40;

      Utilities::MPI::MPI_InitFinalize mpi_initialization(argc, argv, 1);

      // GPUAssembly: the command line.
      Options options;
      for (int i = 1; i < argc; ++i)
        {
          const std::string argument = argv[i];
          if (argument == "--dealii-assembly")
            options.dealii_assembly = true;
          else if (argument == "--compare")
            options.compare = true;
          else if (argument == "--host")
            options.host = true;
          else if (argument == "--no-output")
            options.output = false;
          else if (argument == "--method" && i + 1 < argc)
            options.method = GPUAssembly::parse_assembly_method(argv[++i]);
          else if (argument == "--cycles" && i + 1 < argc)
            options.n_cycles = std::stoi(argv[++i]);
          else
            AssertThrow(false,
                        ExcMessage("unknown or incomplete option '" + argument +
                                   "'; the options are --dealii-assembly, "
                                   "--compare, --host, --method NAME, "
                                   "--cycles N and --no-output."));
        }
      AssertThrow(!(options.dealii_assembly && options.compare),
                  ExcMessage("--compare compares the plugin's assembly with "
                             "deal.II's; it does not go with "
                             "--dealii-assembly."));

      LaplaceProblem<2> laplace_problem_2d(options);
      laplace_problem_2d.run();
    }
  catch (std::exception &exc)
    {
      std::cerr << std::endl
                << std::endl
                << "----------------------------------------------------"
                << std::endl;
      std::cerr << "Exception on processing: " << std::endl
                << exc.what() << std::endl
                << "Aborting!" << std::endl
                << "----------------------------------------------------"
                << std::endl;

      return 1;
    }
  catch (...)
    {
      std::cerr << std::endl
                << std::endl
                << "----------------------------------------------------"
                << std::endl;
      std::cerr << "Unknown exception!" << std::endl
                << "Aborting!" << std::endl
                << "----------------------------------------------------"
                << std::endl;
      return 1;
    }

  return 0;
}

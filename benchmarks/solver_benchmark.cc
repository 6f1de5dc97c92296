// SPDX-License-Identifier: LGPL-2.1-or-later
// Time to solution of 3D linear elasticity on assembly_demo's beam (clamped
// at x = 0, under its own weight; its mesh, element and material,
// apps/assembly_demo/beam.h): the plugin's GPU assembly followed by each
// device solver of the apps' 'Linear solver' table, against deal.II on all
// cores of the same host in the same run: SparseDirectUMFPACK, and
// TrilinosWrappers::SolverCG with TrilinosWrappers::PreconditionAMG (ML,
// the six rigid-body modes as near-null space) on one MPI rank per core.
//
// Start it with one rank per core: mpirun -np <cores> solver_benchmark.
// Rank 0 runs the GPU rows and UMFPACK on its own while the other ranks
// sleep (they wait in a barrier that they poll, so that they leave the
// cores to rank 0's threads); the AMG rows run on all ranks, on a
// parallel::shared::Triangulation of the same beam.
//
// Per case (cell type and size) and solver, one row:
//   iter       CG iterations of the first solve (direct solvers: -)
//   assembly   one re-assembly of matrix and right-hand side: the plugin's
//              DeviceAssembler (GlobalNZ, after one call that loads the
//              kernels), or deal.II's FEValues assembly (WorkStream on
//              rank 0's threads for UMFPACK; one thread per rank for AMG)
//   analysis   the device solver's analyze(): a direct solver's reordering
//              and symbolic factorization, a CG's work space
//   factor     factorize(): the numerical factorization, or the
//              preconditioner's set-up (AMG: PreconditionAMG::initialize();
//              UMFPACK: SparseDirectUMFPACK::initialize(), symbolic and
//              numerical); 0 for the device CGs, which set their
//              preconditioner up in each solve
//   solve      the solve of the first right-hand side
//   first      time to solution: assembly + analysis + factor + solve
//   re-solve   a Newton step's time: re-assembly with Young's modulus
//              times 1.5, factor again (no analysis), solve
//   dev MiB    device memory of the solver: the largest drop of the free
//              device memory (cudaMemGetInfo) at the ends of its phases
//              from before it was created, or what it reports holding if
//              larger
//   error      ||x - x_ref|| / ||x_ref|| of the first solution, x_ref the
//              direct solution (UMFPACK where it ran, else the device
//              direct solver); the re-solve's against x_ref / 1.5
//   speed-up   the faster deal.II row's time over this row's, first and
//              re-solve
// The program exits with 1 (after the tables) where a solution differs
// from the reference by more than --max-error.
//
// Usage: mpirun -np R solver_benchmark [options]
//   --hexahedra N,...     trilinear hexahedra with N cells across the beam
//                         (4 N along); default 29,43,62: about 0.32, 1.0
//                         and 3.0 M DoFs. "none" for none
//   --tetrahedra N,...    quadratic tetrahedra (24 per hexahedron of the
//                         N-cell beam); default 9,14,20: about 0.30, 1.1
//                         and 3.2 M DoFs. "none" for none
//   --solvers a,b,...     the device solvers (default: all of the table)
//   --umfpack-max-dofs N  UMFPACK runs up to N DoFs (default 100000, below
//                         the default cases: UMFPACK's fill-in and time
//                         grow much faster than the DoFs on 3D meshes, so
//                         that it would take longer than all other rows
//                         together); a larger case prints the row with the
//                         reason it did not run
//   --tolerance T         CG's relative residual (default 1e-8), device
//                         and AMG alike
//   --max-error E         largest relative error accepted (default 1e-5)
//   --threads N           rank 0's threads for its deal.II assembly and the
//                         plugin's set-up (default: all cores)
//   --no-amg, --no-umfpack, --no-gpu   leave those rows out
//   --require-gpu         exit with 77 (skipped) where there is no GPU, or
//                         1 where GPU_ASSEMBLY_REQUIRE_GPU demands one

#include <deal.II/base/index_set.h>
#include <deal.II/base/mpi.h>
#include <deal.II/base/multithread_info.h>
#include <deal.II/base/parameter_handler.h>
#include <deal.II/base/utilities.h>

#include <deal.II/distributed/shared_tria.h>

#include <deal.II/dofs/dof_handler.h>
#include <deal.II/dofs/dof_renumbering.h>
#include <deal.II/dofs/dof_tools.h>

#include <deal.II/fe/fe_values.h>

#include <deal.II/lac/dynamic_sparsity_pattern.h>
#include <deal.II/lac/sparse_direct.h>
#include <deal.II/lac/sparse_matrix.h>
#include <deal.II/lac/sparsity_pattern.h>
#include <deal.II/lac/sparsity_tools.h>
#include <deal.II/lac/trilinos_precondition.h>
#include <deal.II/lac/trilinos_solver.h>
#include <deal.II/lac/trilinos_sparse_matrix.h>
#include <deal.II/lac/trilinos_vector.h>
#include <deal.II/lac/vector.h>

#include <gpu_assembly/adapter/dof_handler_adapter.h>
#include <gpu_assembly/base/device.h>
#include <gpu_assembly/engine/device_assembler.h>
#include <gpu_assembly/kernels/element_kernels.h>

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <iomanip>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "../apps/assembly_demo/beam.h"
#include "../apps/assembly_demo/parameters.h"
#include "../apps/common/device_linear_solvers.h"
#include "dealii_elasticity.h"
#include "stepper_benchmarking.h"
#include <Epetra_MultiVector.h>
#include <Teuchos_ParameterList.hpp>

using namespace dealii;

namespace
{
  constexpr int dim = 3;
  using Clock       = std::chrono::steady_clock;
  using Benchmarking::seconds_since;

  const MPI_Comm world = MPI_COMM_WORLD;

  bool
  is_root()
  {
    return Utilities::MPI::this_mpi_process(world) == 0;
  }

  // Young's modulus of the re-assembly, as a Newton step changes the
  // tangent: the solution scales by 1 / factor, which the re-solve's error
  // checks.
  constexpr double coefficient_factor = 1.5;

  struct Options
  {
    std::vector<unsigned int> hexahedra  = {29, 43, 62};
    std::vector<unsigned int> tetrahedra = {9, 14, 20};
    std::vector<std::string>  solvers    = AppSolvers::device_solver_names();
    double                    umfpack_max_dofs = 100000;
    double                    tolerance        = 1e-8;
    double                    max_error        = 1e-5;
    unsigned int threads = std::max(1u, std::thread::hardware_concurrency());
    bool         amg     = true;
    bool         umfpack = true;
    bool         gpu     = true;
    bool         require_gpu = false;
  };

  std::vector<std::string>
  split(const std::string &list)
  {
    return Utilities::split_string_list(list, ',');
  }

  Options
  parse_options(int argc, char **argv)
  {
    Options options;
    for (int i = 1; i < argc; ++i)
      {
        const std::string arg   = argv[i];
        const auto        value = [&]() -> std::string {
          AssertThrow(i + 1 < argc,
                      ExcMessage("Option " + arg + " needs a value."));
          return argv[++i];
        };
        const auto sizes = [&](const std::string &list) {
          std::vector<unsigned int> result;
          if (list != "none")
            for (const std::string &item : split(list))
              result.push_back(Utilities::string_to_int(item));
          return result;
        };
        if (arg == "--hexahedra")
          options.hexahedra = sizes(value());
        else if (arg == "--tetrahedra")
          options.tetrahedra = sizes(value());
        else if (arg == "--solvers")
          {
            options.solvers = split(value());
            for (const std::string &name : options.solvers)
              AssertThrow(!AppSolvers::describe(name).empty() && name != "auto",
                          ExcMessage("--solvers: '" + name +
                                     "' is no device solver."));
          }
        else if (arg == "--umfpack-max-dofs")
          options.umfpack_max_dofs = Utilities::string_to_double(value());
        else if (arg == "--tolerance")
          options.tolerance = Utilities::string_to_double(value());
        else if (arg == "--max-error")
          options.max_error = Utilities::string_to_double(value());
        else if (arg == "--threads")
          options.threads = Utilities::string_to_int(value());
        else if (arg == "--no-amg")
          options.amg = false;
        else if (arg == "--no-umfpack")
          options.umfpack = false;
        else if (arg == "--no-gpu")
          options.gpu = false;
        else if (arg == "--require-gpu")
          options.require_gpu = true;
        else
          AssertThrow(false,
                      ExcMessage("Unknown option " + arg +
                                 "; the options are listed at the top of "
                                 "benchmarks/solver_benchmark.cc."));
      }
    AssertThrow(options.threads >= 1 && options.tolerance > 0 &&
                  options.max_error > 0,
                ExcMessage("--threads, --tolerance and --max-error must be "
                           "positive."));
    return options;
  }



  // The other ranks wait for rank 0's serial part in a barrier that they
  // poll with sleeps: a blocking MPI barrier spins and would take the cores
  // from rank 0's threads.
  void
  wait_for_all_ranks()
  {
    MPI_Request request;
    MPI_Ibarrier(world, &request);
    int done = 0;
    while (true)
      {
        MPI_Test(&request, &done, MPI_STATUS_IGNORE);
        if (done)
          return;
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
      }
  }

  // Wall time of a collective step on all ranks: the slowest rank's.
  template <typename Step>
  double
  collective_seconds(const Step &step)
  {
    MPI_Barrier(world);
    const auto start = Clock::now();
    step();
    return Utilities::MPI::max(seconds_since(start), world);
  }

  std::size_t
  free_device_memory()
  {
    std::size_t       free = 0, total = 0;
    const cudaError_t error = cudaMemGetInfo(&free, &total);
    AssertThrow(error == cudaSuccess,
                ExcMessage(std::string("cudaMemGetInfo: ") +
                           cudaGetErrorString(error)));
    return free;
  }



  // The demo's defaults: material, beam length.
  AssemblyDemo::Parameters
  demo_defaults()
  {
    ParameterHandler prm;
    AssemblyDemo::Parameters::declare_parameters(prm);
    AssemblyDemo::Parameters parameters;
    parameters.parse_parameters(prm);
    return parameters;
  }

  GPUAssembly::LinearElasticityKernel<dim, double>
  beam_kernel(const AssemblyDemo::Parameters &beam, const double factor)
  {
    return AssemblyDemo::make_elasticity_kernel(factor * beam.youngs_modulus,
                                                beam.poisson_ratio,
                                                beam.density,
                                                beam.gravity);
  }

  // deal.II's form of the same kernel.
  template <typename MatrixType, typename VectorType>
  void
  assemble_dealii(const AssemblyDemo::Discretization &discretization,
                  const DoFHandler<dim>              &dof_handler,
                  const AffineConstraints<double>    &constraints,
                  const GPUAssembly::LinearElasticityKernel<dim, double> &k,
                  MatrixType &matrix,
                  VectorType &rhs)
  {
    Tensor<1, dim> body_force;
    for (unsigned int d = 0; d < dim; ++d)
      body_force[d] = k.body_force[d];
    Benchmarking::assemble_elasticity(*discretization.mapping,
                                      dof_handler,
                                      *discretization.quadrature,
                                      constraints,
                                      k.lambda,
                                      k.mu,
                                      body_force,
                                      matrix,
                                      rhs);
  }



  struct Row
  {
    std::string  solver;
    std::string  where;
    std::string  not_run; // why the row did not run; empty if it ran
    std::string  details; // the solver's own account of its cost
    bool         iterative  = false;
    unsigned int iterations = 0;
    double       assembly = 0, analysis = 0, factor = 0, solve = 0;
    double       re_assembly = 0, re_factor = 0, re_solve = 0;
    double       device_mib   = -1; // < 0: not measured
    bool         is_reference = false;
    double       error = -1, re_error = -1; // < 0: no reference
    bool         dealii = false;
    // The solutions in rank 0's (serial) numbering, until compared.
    Vector<double> first_solution, second_solution;

    double
    first() const
    {
      return assembly + analysis + factor + solve;
    }

    double
    again() const
    {
      return re_assembly + re_factor + re_solve;
    }
  };



  // Rank 0's serial discretization of the beam: the plugin's input, the
  // UMFPACK system, and the numbering the errors are measured in.
  struct SerialBeam
  {
    SerialBeam(const AssemblyDemo::Parameters &beam,
               const bool                      hexahedra,
               const unsigned int              n,
               const unsigned int              degree)
      : discretization(!hexahedra, degree)
    {
      AssemblyDemo::make_beam(tria, beam.length, n, hexahedra);
      dof_handler.reinit(tria);
      dof_handler.distribute_dofs(*discretization.fe);
      DoFRenumbering::Cuthill_McKee(dof_handler);
      AssemblyDemo::make_clamp_constraints(*discretization.mapping,
                                           dof_handler,
                                           constraints);
    }

    Triangulation<dim>           tria;
    AssemblyDemo::Discretization discretization;
    DoFHandler<dim>              dof_handler;
    AffineConstraints<double>    constraints;
  };



  // One device solver on the assembled system: the phases timed apart,
  // then the Newton step.
  Row
  run_device_solver(const std::string                         &name,
                    const Options                             &options,
                    const AssemblyDemo::Parameters            &beam,
                    const GPUAssembly::MeshArrays             &arrays,
                    GPUAssembly::DeviceAssembler<dim, double> &assembler,
                    const GPUAssembly::DeviceVector<double>   &nodal,
                    GPUAssembly::DeviceCSRMatrix<double>      &matrix,
                    GPUAssembly::DeviceVector<double>         &rhs,
                    GPUAssembly::DeviceVector<double>         &solution)
  {
    Row row;
    row.solver                = name;
    row.where                 = "GPU";
    const std::string why_not = AppSolvers::unavailable_reason(name);
    if (!why_not.empty())
      {
        row.not_run = why_not;
        return row;
      }
    AppSolvers::SolverSettings settings;
    settings.relative_tolerance = options.tolerance;
    try
      {
        const std::size_t free_before = free_device_memory();
        std::size_t       least_free  = free_before;
        const auto        timed       = [&](double &seconds, auto &&step) {
          GPUAssembly::synchronize_device();
          const auto start = Clock::now();
          step();
          GPUAssembly::synchronize_device();
          seconds    = seconds_since(start);
          least_free = std::min(least_free, free_device_memory());
        };
        const auto kernel_1 = beam_kernel(beam, 1);
        const auto kernel_2 = beam_kernel(beam, coefficient_factor);
        std::unique_ptr<AppSolvers::DeviceLinearSolver<double>> solver =
          AppSolvers::create_device_solver<double>(name, settings);
        AppSolvers::SolveResult result;
        timed(row.assembly, [&] {
          assembler.assemble(kernel_1, nodal, matrix, rhs);
        });
        timed(row.analysis, [&] {
          solver->analyze(arrays, matrix);
        });
        timed(row.factor, [&] {
          solver->factorize(matrix);
        });
        timed(row.solve, [&] {
          result = solver->solve(solution, rhs);
        });
        row.iterative  = !solver->is_direct();
        row.iterations = result.iterations;
        std::vector<double> values;
        solution.copy_to_host(values);
        row.first_solution = Vector<double>(values.begin(), values.end());

        timed(row.re_assembly, [&] {
          assembler.assemble(kernel_2, nodal, matrix, rhs);
        });
        timed(row.re_factor, [&] {
          solver->factorize(matrix);
        });
        timed(row.re_solve, [&] {
          result = solver->solve(solution, rhs);
        });
        solution.copy_to_host(values);
        row.second_solution = Vector<double>(values.begin(), values.end());
        row.details         = solver->details();
        if (row.iterative && row.iterations > 0)
          {
            // What bounds a CG: its SpMVs stream the matrix (values and
            // column indices) from device memory.
            std::ostringstream cost;
            cost << (row.details.empty() ? "" : "; ") << std::setprecision(3)
                 << 1e3 * row.solve / row.iterations
                 << " ms per iteration, the matrix "
                 << matrix.memory_consumption() / 1048576.
                 << " MiB read once per SpMV";
            row.details += cost.str();
          }
        row.device_mib =
          std::max<double>(free_before - least_free, solver->device_memory()) /
          1048576.;
      }
    catch (const ExceptionBase &error)
      {
        // The message alone, on one line, without deal.II's stack trace.
        std::ostringstream message;
        error.print_info(message);
        std::istringstream words(message.str());
        for (std::string word; words >> word;)
          row.not_run += (row.not_run.empty() ? "" : " ") + word;
      }
    catch (const std::exception &error)
      {
        row.not_run = error.what();
      }
    return row;
  }



  // UMFPACK on rank 0: deal.II's assembly on rank 0's threads, then
  // SparseDirectUMFPACK (whose initialize() is symbolic and numerical
  // factorization in one; a second one repeats both).
  Row
  run_umfpack(const SerialBeam               &serial,
              const AssemblyDemo::Parameters &beam,
              const Options                  &options)
  {
    Row row;
    row.solver = "UMFPACK";
    row.where  = "rank 0, " + std::to_string(options.threads) + " threads";
    row.dealii = true;
    const double n_dofs = serial.dof_handler.n_dofs();
    if (n_dofs > options.umfpack_max_dofs)
      {
        std::ostringstream why;
        why << static_cast<types::global_dof_index>(n_dofs)
            << " DoFs > --umfpack-max-dofs " << options.umfpack_max_dofs;
        row.not_run = why.str();
        return row;
      }
    DynamicSparsityPattern dsp(serial.dof_handler.n_dofs());
    DoFTools::make_sparsity_pattern(serial.dof_handler,
                                    dsp,
                                    serial.constraints,
                                    false);
    SparsityPattern sparsity;
    sparsity.copy_from(dsp);
    SparseMatrix<double> matrix(sparsity);
    Vector<double>       rhs(serial.dof_handler.n_dofs());
    SparseDirectUMFPACK  umfpack;
    const auto           timed = [&](double &seconds, auto &&step) {
      const auto start = Clock::now();
      step();
      seconds = seconds_since(start);
    };
    const auto solve_once = [&](const double    factor,
                                double         &assembly,
                                double         &factorization,
                                double         &solve,
                                Vector<double> &solution) {
      timed(assembly, [&] {
        assemble_dealii(serial.discretization,
                        serial.dof_handler,
                        serial.constraints,
                        beam_kernel(beam, factor),
                        matrix,
                        rhs);
      });
      timed(factorization, [&] {
        umfpack.initialize(matrix);
      });
      timed(solve, [&] {
        solution = rhs;
        umfpack.solve(solution);
        serial.constraints.distribute(solution);
      });
    };
    solve_once(1, row.assembly, row.factor, row.solve, row.first_solution);
    solve_once(coefficient_factor,
               row.re_assembly,
               row.re_factor,
               row.re_solve,
               row.second_solution);
    return row;
  }



  // The six rigid-body modes of the locally owned DoFs (three translations,
  // three rotations about the beam's centre), ML's near-null space for
  // elasticity.
  Epetra_MultiVector
  rigid_body_modes(const AssemblyDemo::Discretization &discretization,
                   const DoFHandler<dim>              &dof_handler,
                   const Epetra_Map                   &map,
                   const Point<dim>                   &centre)
  {
    Epetra_MultiVector                   modes(map, 6);
    const FiniteElement<dim>            &fe = dof_handler.get_fe();
    FEValues<dim>                        fe_values(*discretization.mapping,
                            fe,
                            Quadrature<dim>(fe.get_unit_support_points()),
                            update_quadrature_points);
    std::vector<types::global_dof_index> dofs(fe.n_dofs_per_cell());
    for (const auto &cell : dof_handler.active_cell_iterators())
      if (cell->is_locally_owned())
        {
          fe_values.reinit(cell);
          cell->get_dof_indices(dofs);
          for (unsigned int i = 0; i < dofs.size(); ++i)
            {
              const int local = map.LID(static_cast<int>(dofs[i]));
              if (local < 0)
                continue;
              const unsigned int   c = fe.system_to_component_index(i).first;
              const Tensor<1, dim> x = fe_values.quadrature_point(i) - centre;
              modes[c][local]        = 1;
              // Rotations about z, x and y: e_z x x, e_x x x, e_y x x.
              const double rotation[3][dim] = {{-x[1], x[0], 0},
                                               {0, -x[2], x[1]},
                                               {x[2], 0, -x[0]}};
              for (unsigned int r = 0; r < 3; ++r)
                modes[3 + r][local] = rotation[r][c];
            }
        }
    return modes;
  }



  // CG with ML's AMG on all ranks, on a parallel::shared::Triangulation of
  // the same beam; the solutions come back to rank 0 in the serial
  // numbering (the two triangulations have the same cells in the same
  // order, checked).
  Row
  run_amg(const SerialBeam               *serial,
          const AssemblyDemo::Parameters &beam,
          const Options                  &options,
          const bool                      hexahedra,
          const unsigned int              n,
          const unsigned int              degree,
          double                         &setup_seconds)
  {
    Row row;
    row.solver = "AMG-CG";
    row.where =
      std::to_string(Utilities::MPI::n_mpi_processes(world)) + ' ' + "ranks";
    row.dealii                                       = true;
    row.iterative                                    = true;
    const auto                           start_setup = Clock::now();
    parallel::shared::Triangulation<dim> tria(world);
    AssemblyDemo::make_beam(tria, beam.length, n, hexahedra);
    const AssemblyDemo::Discretization discretization(!hexahedra, degree);
    DoFHandler<dim>                    dof_handler(tria);
    dof_handler.distribute_dofs(*discretization.fe);
    const IndexSet            owned = dof_handler.locally_owned_dofs();
    AffineConstraints<double> constraints;
    AssemblyDemo::make_clamp_constraints(*discretization.mapping,
                                         dof_handler,
                                         constraints);
    IndexSet relevant;
    DoFTools::extract_locally_relevant_dofs(dof_handler, relevant);
    DynamicSparsityPattern dsp(relevant);
    DoFTools::make_sparsity_pattern(dof_handler,
                                    dsp,
                                    constraints,
                                    false,
                                    Utilities::MPI::this_mpi_process(world));
    SparsityTools::distribute_sparsity_pattern(dsp, owned, world, relevant);
    TrilinosWrappers::SparseMatrix matrix;
    matrix.reinit(owned, owned, dsp, world);
    TrilinosWrappers::MPI::Vector rhs(owned, world), solution(owned, world);
    setup_seconds = Utilities::MPI::max(seconds_since(start_setup), world);

    TrilinosWrappers::PreconditionAMG::AdditionalData data;
    data.elliptic              = true;
    data.higher_order_elements = degree > 1;
    data.smoother_sweeps       = 2;
    data.aggregation_threshold = 0.02;
    TrilinosWrappers::PreconditionAMG   amg;
    std::unique_ptr<Epetra_MultiVector> modes;
    const auto                          solve_once =
      [&](const double factor, double &assembly, double &setup, double &solve) {
        assembly = collective_seconds([&] {
          assemble_dealii(discretization,
                          dof_handler,
                          constraints,
                          beam_kernel(beam, factor),
                          matrix,
                          rhs);
        });
        setup    = collective_seconds([&] {
          modes = std::make_unique<Epetra_MultiVector>(
            rigid_body_modes(discretization,
                             dof_handler,
                             matrix.trilinos_matrix().DomainMap(),
                             Point<dim>(beam.length / 2, 0.5, 0.5)));
          Teuchos::ParameterList              list;
          std::unique_ptr<Epetra_MultiVector> constant_modes;
          data.set_parameters(list, constant_modes, matrix);
          // Node-wise aggregation: the DoFs of a node are consecutive.
          list.set("PDE equations", dim);
          list.set("null space: type", "pre-computed");
          list.set("null space: dimension", modes->NumVectors());
          list.set("null space: vectors", modes->Values());
          amg.initialize(matrix, list);
        });
        SolverControl control(100000, options.tolerance * rhs.l2_norm());
        solve = collective_seconds([&] {
          solution = 0;
          TrilinosWrappers::SolverCG cg(control);
          cg.solve(matrix, solution, rhs, amg);
        });
        return control.last_step();
      };

    // Rank 0's map from these DoFs to the serial ones, cell by cell.
    std::vector<types::global_dof_index> to_serial;
    if (serial != nullptr)
      {
        to_serial.assign(dof_handler.n_dofs(), numbers::invalid_dof_index);
        const unsigned int n_cell_dofs = discretization.fe->n_dofs_per_cell();
        std::vector<types::global_dof_index> here(n_cell_dofs),
          there(n_cell_dofs);
        auto other = serial->dof_handler.begin_active();
        for (const auto &cell : dof_handler.active_cell_iterators())
          {
            AssertThrow(other != serial->dof_handler.end() &&
                          cell->center().distance(other->center()) <
                            1e-12 * beam.length,
                        ExcMessage("The shared and the serial beam differ "
                                   "in their cells' order; the AMG "
                                   "solution cannot be compared."));
            cell->get_dof_indices(here);
            other->get_dof_indices(there);
            for (unsigned int i = 0; i < n_cell_dofs; ++i)
              to_serial[here[i]] = there[i];
            ++other;
          }
      }
    const auto gather = [&](Vector<double> &result) {
      TrilinosWrappers::MPI::Vector all(owned,
                                        complete_index_set(
                                          dof_handler.n_dofs()),
                                        world);
      all = solution;
      if (serial == nullptr)
        return;
      result.reinit(dof_handler.n_dofs());
      for (types::global_dof_index i = 0; i < dof_handler.n_dofs(); ++i)
        result[to_serial[i]] = all[i];
    };

    // AztecOO stops with an error where it finds that it cannot reach the
    // tolerance ("loss of precision"); every rank gets the same status, so
    // the row records it and the other rows still run.
    try
      {
        row.iterations = solve_once(1, row.assembly, row.factor, row.solve);
        gather(row.first_solution);
        solve_once(coefficient_factor,
                   row.re_assembly,
                   row.re_factor,
                   row.re_solve);
        gather(row.second_solution);
      }
    catch (const ExceptionBase &error)
      {
        std::ostringstream message;
        error.print_info(message);
        std::istringstream words(message.str());
        for (std::string word; words >> word;)
          row.not_run += (row.not_run.empty() ? "" : " ") + word;
      }
    return row;
  }



  double
  relative_error(const Vector<double> &x,
                 const Vector<double> &reference,
                 const double          scale)
  {
    double difference = 0, norm = 0;
    for (unsigned int i = 0; i < x.size(); ++i)
      {
        difference += std::pow(x[i] - reference[i] * scale, 2);
        norm += std::pow(reference[i] * scale, 2);
      }
    return std::sqrt(difference / norm);
  }

  std::string
  seconds(const double s)
  {
    std::ostringstream out;
    out << std::setprecision(3) << s;
    return out.str();
  }

  // The table of one case; returns the rows whose error is too large.
  std::vector<std::string>
  print_table(std::vector<Row> &rows, const Options &options)
  {
    const Row *reference = nullptr;
    for (const Row &row : rows)
      if (row.not_run.empty() && !row.iterative &&
          (reference == nullptr || row.solver == "UMFPACK"))
        reference = &row;
    double best_first = 0, best_again = 0;
    for (const Row &row : rows)
      if (row.dealii && row.not_run.empty())
        {
          best_first =
            best_first == 0 ? row.first() : std::min(best_first, row.first());
          best_again =
            best_again == 0 ? row.again() : std::min(best_again, row.again());
        }
    std::vector<std::string> failures;
    std::cout << std::left << std::setw(16) << "solver" << std::setw(18)
              << "where" << std::right << std::setw(7) << "iter"
              << std::setw(10) << "assembly" << std::setw(10) << "analysis"
              << std::setw(10) << "factor" << std::setw(10) << "solve"
              << std::setw(10) << "first" << std::setw(10) << "re-solve"
              << std::setw(9) << "dev MiB" << std::setw(10) << "error"
              << std::setw(10) << "re-error" << std::setw(16)
              << "speed-up 1st/re" << '\n';
    for (Row &row : rows)
      {
        std::cout << std::left << std::setw(16) << row.solver << std::setw(18)
                  << row.where << std::right;
        if (!row.not_run.empty())
          {
            std::cout << "  not run: " << row.not_run << '\n';
            continue;
          }
        if (reference != nullptr && reference != &row)
          {
            row.error =
              relative_error(row.first_solution, reference->first_solution, 1);
            row.re_error = relative_error(row.second_solution,
                                          reference->first_solution,
                                          1 / coefficient_factor);
            if (row.error > options.max_error ||
                row.re_error > options.max_error || !std::isfinite(row.error) ||
                !std::isfinite(row.re_error))
              failures.push_back(row.solver + " (" + row.where + ")");
          }
        const auto error = [&](const double e) {
          std::ostringstream out;
          if (&row == reference)
            out << "ref";
          else if (e < 0)
            out << "-";
          else
            out << std::scientific << std::setprecision(1) << e;
          return out.str();
        };
        std::ostringstream speed_up;
        if (!row.dealii && best_first > 0)
          speed_up << std::fixed << std::setprecision(1)
                   << best_first / row.first() << " / "
                   << best_again / row.again();
        else
          speed_up << "-";
        std::cout << std::setw(7)
                  << (row.iterative ? std::to_string(row.iterations) : "-")
                  << std::setw(10) << seconds(row.assembly) << std::setw(10)
                  << (row.dealii ? "-" : seconds(row.analysis)) << std::setw(10)
                  << seconds(row.factor) << std::setw(10) << seconds(row.solve)
                  << std::setw(10) << seconds(row.first()) << std::setw(10)
                  << seconds(row.again()) << std::setw(9)
                  << (row.device_mib < 0 ? std::string("-") :
                                           seconds(row.device_mib))
                  << std::setw(10) << error(row.error) << std::setw(10)
                  << error(row.re_error) << std::setw(16) << speed_up.str()
                  << '\n';
      }
    for (const Row &row : rows)
      if (row.not_run.empty() && !row.details.empty())
        std::cout << row.solver << ": " << row.details << '\n';
    // The reference's own re-solve against its first solution.
    if (reference != nullptr)
      {
        const double e = relative_error(reference->second_solution,
                                        reference->first_solution,
                                        1 / coefficient_factor);
        std::cout << "reference " << reference->solver
                  << ": re-solve against first solution / "
                  << std::setprecision(3) << coefficient_factor << ": "
                  << std::scientific << std::setprecision(1) << e
                  << std::defaultfloat << '\n';
        if (!(e <= options.max_error))
          failures.push_back(reference->solver + " re-solve");
      }
    else
      std::cout << "no direct solution ran: errors not measured\n";
    std::cout << std::endl;
    return failures;
  }



  // One case: rank 0's GPU and UMFPACK rows, then the AMG row on all
  // ranks, then the table.
  std::vector<std::string>
  run_case(const Options                  &options,
           const AssemblyDemo::Parameters &beam,
           const bool                      hexahedra,
           const unsigned int              n,
           const bool                      use_gpu)
  {
    const unsigned int          degree = hexahedra ? 1 : 2;
    std::vector<Row>            rows;
    std::unique_ptr<SerialBeam> serial;
    std::ostringstream          header;
    if (is_root())
      {
        MultithreadInfo::set_thread_limit(options.threads);
        const auto start = Clock::now();
        serial = std::make_unique<SerialBeam>(beam, hexahedra, n, degree);
        const double dealii_setup = seconds_since(start);
        header << (hexahedra ? "Hexahedra Q1" : "Tetrahedra P2") << ", " << n
               << " cells across: " << serial->tria.n_active_cells()
               << " cells, " << serial->dof_handler.n_dofs() << " DoFs";
        header << "; rank 0 mesh and DoFs " << seconds(dealii_setup) << " s";
        if (use_gpu)
          {
            const auto                                start_plan = Clock::now();
            const GPUAssembly::DoFHandlerAdapter<dim> adapter(
              *serial->discretization.mapping,
              serial->dof_handler,
              *serial->discretization.quadrature,
              serial->constraints);
            const GPUAssembly::MeshArrays &arrays = adapter.get_arrays();
            typename GPUAssembly::DeviceAssembler<dim, double>::AdditionalData
              data;
            data.method = GPUAssembly::AssemblyMethod::global_nz;
            GPUAssembly::DeviceAssembler<dim, double> assembler;
            assembler.reinit(arrays, data);
            GPUAssembly::DeviceCSRMatrix<double> matrix;
            matrix.reinit(arrays);
            GPUAssembly::DeviceVector<double> rhs(arrays.n_dofs),
              solution(arrays.n_dofs);
            const GPUAssembly::DeviceVector<double> nodal(
              arrays.nodal_coordinates);
            // Loads the kernels, so that no row pays for it.
            assembler.assemble(beam_kernel(beam, 1), nodal, matrix, rhs);
            GPUAssembly::synchronize_device();
            header << ", " << arrays.n_nonzeros() << " nonzeros; GPU set-up "
                   << "(adapter, GlobalNZ plan, upload) "
                   << seconds(seconds_since(start_plan)) << " s, system "
                   << seconds(matrix.memory_consumption() / 1048576.) << " MiB";
            for (const std::string &name : options.solvers)
              rows.push_back(run_device_solver(name,
                                               options,
                                               beam,
                                               arrays,
                                               assembler,
                                               nodal,
                                               matrix,
                                               rhs,
                                               solution));
          }
        if (options.umfpack)
          rows.push_back(run_umfpack(*serial, beam, options));
        MultithreadInfo::set_thread_limit(1);
      }
    wait_for_all_ranks();
    if (options.amg)
      {
        double setup = 0;
        Row    row =
          run_amg(serial.get(), beam, options, hexahedra, n, degree, setup);
        header << "; AMG ranks' mesh, DoFs and sparsity " << seconds(setup)
               << " s";
        if (is_root())
          rows.push_back(std::move(row));
      }
    if (!is_root())
      return {};
    std::cout << header.str() << '\n';
    return print_table(rows, options);
  }
} // namespace



int
main(int argc, char **argv)
{
  Options options;
  try
    {
      options = parse_options(argc, argv);
    }
  catch (const std::exception &error)
    {
      std::cerr << "solver_benchmark: " << error.what() << std::endl;
      return 1;
    }
  // The thread limit of the first call is the most that the task scheduler
  // allows later, so the rank 0's is set here; every rank then runs on one
  // thread (the ranks are the cores) but rank 0 in its serial part, while
  // the others sleep.
  Utilities::MPI::MPI_InitFinalize mpi(argc, argv, options.threads);
  MultithreadInfo::set_thread_limit(1);
  try
    {
      const bool use_gpu = options.gpu && GPUAssembly::n_cuda_devices() > 0;
      if (options.require_gpu && GPUAssembly::n_cuda_devices() == 0)
        {
          // As the gpu tests: skipped, or failed where the environment
          // demands a GPU.
          const char *demanded = std::getenv("GPU_ASSEMBLY_REQUIRE_GPU");
          const bool  fail     = demanded != nullptr &&
                            std::string(demanded) != "" &&
                            std::string(demanded) != "0";
          if (is_root())
            std::cout << (fail ? "FAILED: no CUDA device, but "
                                 "GPU_ASSEMBLY_REQUIRE_GPU demands one." :
                                 "No CUDA device found: skipped "
                                 "(--require-gpu).")
                      << std::endl;
          return fail ? 1 : 77;
        }
      const AssemblyDemo::Parameters beam = demo_defaults();
      if (is_root())
        {
          std::cout << GPUAssembly::describe_execution_path() << '\n'
                    << "Beam " << beam.length
                    << " x 1 x 1, E = " << beam.youngs_modulus
                    << ", nu = " << beam.poisson_ratio
                    << ", rho g = " << beam.density * beam.gravity
                    << "; CG tolerance " << options.tolerance
                    << "; re-solve with E x " << coefficient_factor << "; "
                    << Utilities::MPI::n_mpi_processes(world)
                    << " MPI ranks, rank 0 with " << options.threads
                    << " threads; times in seconds\n";
          if (!use_gpu)
            std::cout << "Device rows skipped: "
                      << (options.gpu ? "no CUDA device" : "--no-gpu") << ".\n";
          std::cout << std::endl;
        }
      std::vector<std::string> failures;
      for (const bool hexahedra : {true, false})
        for (const unsigned int n :
             hexahedra ? options.hexahedra : options.tetrahedra)
          for (const std::string &failure :
               run_case(options, beam, hexahedra, n, use_gpu))
            failures.push_back((hexahedra ? "hexahedra " : "tetrahedra ") +
                               std::to_string(n) + ": " + failure);
      if (is_root() && !failures.empty())
        {
          std::cerr << "FAIL: solutions differ from the direct solution by "
                       "more than --max-error "
                    << options.max_error << ":";
          for (const std::string &failure : failures)
            std::cerr << "\n  " << failure;
          std::cerr << std::endl;
        }
      return Utilities::MPI::max(failures.empty() ? 0 : 1, world);
    }
  catch (const std::exception &error)
    {
      std::cerr << "solver_benchmark: " << error.what() << std::endl;
      MPI_Abort(world, 2);
    }
  return 0;
}

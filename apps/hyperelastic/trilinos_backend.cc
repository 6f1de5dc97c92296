// SPDX-License-Identifier: LGPL-2.1-or-later
// The backend on Trilinos for several ranks (integrator_backend.h).

#include <deal.II/base/mpi.h>

#include <deal.II/lac/affine_constraints.h>
#include <deal.II/lac/diagonal_matrix.h>
#include <deal.II/lac/dynamic_sparsity_pattern.h>
#include <deal.II/lac/la_parallel_vector.h>
#include <deal.II/lac/precondition.h>
#include <deal.II/lac/solver_cg.h>
#include <deal.II/lac/solver_control.h>
#include <deal.II/lac/trilinos_precondition.h>
#include <deal.II/lac/trilinos_solver.h>
#include <deal.II/lac/trilinos_sparse_matrix.h>
#include <deal.II/lac/trilinos_vector.h>

#include <gpu_assembly/adapter/dof_handler_adapter.h>
#include <gpu_assembly/distributed/distributed_assembler.h>
#include <gpu_assembly/engine/device_assembler.h>
#include <gpu_assembly/lac/index_loops.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <memory>
#include <vector>

#include "dealii_cg.h"
#include "host_state.h"
#include "integrator_backend.h"
#include "step_updates.h"
#include <Epetra_CrsMatrix.h>

namespace Hyperelastic
{
  namespace
  {
    using namespace dealii;
    constexpr int dim       = 3;
    using DistributedVector = TrilinosWrappers::MPI::Vector;
    // deal.II's Chebyshev runs on its own vectors (its set-up has a serial
    // branch that Trilinos' vectors do not compile with).
    using ChebyshevVector = LinearAlgebra::distributed::Vector<double>;
    using Chebyshev = PreconditionChebyshev<TrilinosWrappers::SparseMatrix,
                                            ChebyshevVector,
                                            DiagonalMatrix<ChebyshevVector>>;

    class TrilinosBackend : public IntegratorBackend
    {
    public:
      explicit TrilinosBackend(const BackendData &data);

      void
      set_state(const std::vector<double> &u,
                const std::vector<double> &p) override;

      void
      get_state(std::vector<double> &u, std::vector<double> &p) const override;

      void
      get_iterate(std::vector<double> &u) const override;

      void
      predict(const StepLoads &loads) override;

      double
      assemble_residual(const StepLoads &loads) override;

      LinearSolveResult
      solve_and_update(const double       relative_tolerance,
                       const unsigned int max_iterations) override;

      void
      finish_step(const StepLoads &loads) override;

      LinearSolver
      linear_solver() const override
      {
        return data.linear_solver.solver;
      }

      std::string
      description() const override;

      ExchangeTimes
      exchange_times() const override
      {
        return exchange;
      }

    private:
      /// Whether the DoFs of every owned node are consecutive and start at
      /// a multiple of 3 from the first owned DoF: then Ifpack's linear
      /// blocks of 3 rows are the node blocks.
      bool
      node_blocks_are_linear() const;

      /// The preconditioner of the chosen CG for the assembled tangent.
      void
      initialize_preconditioner();

      /// CG with @p preconditioner: @p x from the right-hand side @p b
      /// (the residual).
      template <typename PreconditionerType, typename VectorType>
      LinearSolveResult
      solve_cg(const PreconditionerType &preconditioner,
               const double              relative_tolerance,
               const unsigned int        max_iterations,
               const VectorType         &b,
               VectorType               &x);

      /// Trilinos' direct solver into delta.
      LinearSolveResult
      solve_direct();

      /// The surface loads' forces into the residual @p r (owned entries)
      /// and the pressure's load stiffness into the matrix, scaled as the
      /// element terms (collective).
      void
      add_surface_loads(const StepLoads &loads, double *r);

      const BackendData                        &data;
      const GPUAssembly::DoFHandlerAdapter<3>  &adapter;
      const AffineConstraints<double>          &constraints;
      const MPI_Comm                            communicator;
      const unsigned int                        n_local;
      TrilinosWrappers::SparseMatrix            matrix;
      TrilinosWrappers::PreconditionJacobi      preconditioner;
      TrilinosWrappers::PreconditionBlockJacobi block_preconditioner;
      /// deal.II's Chebyshev around the inverse diagonal (as the plugin's
      /// device CG), its eigenvalue estimate redone for every tangent.
      Chebyshev                                        chebyshev;
      std::shared_ptr<DiagonalMatrix<ChebyshevVector>> inverse_diagonal;
      /// CG's right-hand side and solution in the Chebyshev's vectors.
      ChebyshevVector chebyshev_rhs, chebyshev_solution;
      SolverControl   direct_control;
      std::unique_ptr<TrilinosWrappers::SolverDirect> direct;
      GPUAssembly::DistributedAssembler<dim, double>  assembler;
      DistributedVector u, u_old, p_old, assembled, residual, delta, work;
      /// Locally relevant entries of the nodal data's DoF vector.
      DistributedVector   ghosted;
      std::vector<double> nodal_data;
      /// Owned DoFs with a constraint line, by position in the owned set:
      /// their residual is zero, as the serial backends make it.
      std::vector<unsigned int> constrained;
      /// The diagonal entry of each owned row in the matrix's values.
      std::vector<double *> diagonal;
      double                residual_norm = 0;
      ExchangeTimes         exchange;
      /// Whether any rank has pressure faces: the pressure's exchange is
      /// collective.
      const bool pressure;
      /// With a pressure: the locally relevant DoFs, whose values of the
      /// configuration the kernel sees are read at the faces, those
      /// values, and the forces, summed on the rows' owners.
      std::vector<types::global_dof_index> relevant_dofs;
      std::vector<double>                  surface_u;
      DistributedVector                    surface_force;
    };



    TrilinosBackend::TrilinosBackend(const BackendData &data)
      : data(data)
      , adapter(*data.adapter)
      , constraints(*data.constraints)
      , communicator(adapter.get_communicator())
      , n_local(adapter.locally_owned_dofs().n_elements())
      , pressure(Utilities::MPI::max(data.surface_loads.has_pressure() ? 1 : 0,
                                     communicator) == 1)
    {
      const IndexSet &owned = adapter.locally_owned_dofs();
      if (data.linear_solver.solver == LinearSolver::cg_block_jacobi)
        AssertThrow(Utilities::MPI::min(node_blocks_are_linear() ? 1 : 0,
                                        communicator) == 1,
                    ExcMessage(
                      "'Solver/Linear solver' = cg-block-jacobi with "
                      "'Execution/Distributed linear algebra' = trilinos "
                      "needs the DoFs of each node numbered one after "
                      "another, which this mesh's numbering does not give. "
                      "Choose cg-jacobi or cg-chebyshev."));
      AssertThrow(data.exchange_path == "auto" || data.exchange_path == "host",
                  ExcMessage(
                    "'Execution/Exchange path' = " + data.exchange_path +
                    " applies to the resident linear algebra on the "
                    "GPU; the Trilinos matrix and vectors exchange "
                    "through host memory. Set it to auto or host, "
                    "or 'Execution/Distributed linear algebra' to "
                    "resident."));
      DynamicSparsityPattern dsp;
      adapter.make_sparsity_pattern(dsp);
      matrix.reinit(owned, owned, dsp, communicator);
      for (DistributedVector *v :
           {&u, &u_old, &p_old, &assembled, &residual, &delta, &work})
        v->reinit(owned, communicator);
      ghosted.reinit(owned, adapter.locally_relevant_dofs(), communicator);
      if (pressure)
        {
          surface_force.reinit(owned, communicator);
          const IndexSet &relevant = adapter.locally_relevant_dofs();
          relevant_dofs.assign(relevant.begin(), relevant.end());
          surface_u.resize(relevant_dofs.size());
        }

      typename GPUAssembly::DistributedAssembler<dim, double>::AdditionalData
        assembler_data;
      assembler_data.use_device     = data.use_device;
      assembler_data.n_nodal_fields = dim;
      set_device_method(data, assembler_data.device);
      assembler.reinit(adapter, matrix, assembled, assembler_data);

      // The diagonal entries in the matrix's Epetra arrays, which stay in
      // place once deal.II has filled the matrix (DistributedAssembler
      // writes them there too).
      const Epetra_CrsMatrix &epetra = matrix.trilinos_matrix();
      diagonal.resize(n_local);
      for (unsigned int k = 0; k < n_local; ++k)
        {
          const types::global_dof_index row = owned.nth_index_in_set(k);
          if (constraints.is_constrained(row))
            constrained.push_back(k);
          int       n_entries    = 0;
          double   *values       = nullptr;
          int      *columns      = nullptr;
          const int local_row    = epetra.LRID(static_cast<int>(row));
          const int local_column = epetra.LCID(static_cast<int>(row));
          AssertThrow(local_row >= 0 && local_column >= 0 &&
                        epetra.ExtractMyRowView(local_row,
                                                n_entries,
                                                values,
                                                columns) == 0,
                      ExcInternalError());
          const int *entry =
            std::find(columns, columns + n_entries, local_column);
          AssertThrow(entry != columns + n_entries,
                      ExcInternalError("The sparsity pattern has no diagonal "
                                       "entry in a row."));
          diagonal[k] = values + (entry - columns);
        }
      if (data.linear_solver.solver == LinearSolver::direct)
        direct = std::make_unique<TrilinosWrappers::SolverDirect>(
          direct_control,
          TrilinosWrappers::SolverDirect::AdditionalData());
    }



    bool
    TrilinosBackend::node_blocks_are_linear() const
    {
      const IndexSet                &owned  = adapter.locally_owned_dofs();
      const GPUAssembly::MeshArrays &arrays = adapter.get_arrays();
      const auto &local_to_global           = adapter.get_local_to_global();
      if (owned.n_elements() % dim != 0)
        return false;
      for (unsigned int node = 0; node < arrays.n_nodes; ++node)
        {
          const types::global_dof_index first =
            local_to_global[arrays.node_dofs[node * dim]];
          if (!owned.is_element(first))
            continue;
          if (owned.index_within_set(first) % dim != 0)
            return false;
          for (unsigned int c = 1; c < dim; ++c)
            if (local_to_global[arrays.node_dofs[node * dim + c]] != first + c)
              return false;
        }
      return true;
    }



    void
    TrilinosBackend::set_state(const std::vector<double> &u_new,
                               const std::vector<double> &p_new)
    {
      set_host_state(u_new, p_new, u, u_old, p_old);
    }



    void
    TrilinosBackend::get_state(std::vector<double> &u_out,
                               std::vector<double> &p_out) const
    {
      get_host_state(u_old, p_old, u_out, p_out);
    }



    void
    TrilinosBackend::get_iterate(std::vector<double> &u_out) const
    {
      u_out.assign(u.begin(), u.end());
    }



    void
    TrilinosBackend::predict(const StepLoads &loads)
    {
      GPUAssembly::for_each_index(false,
                                  n_local,
                                  StepUpdates::Predict{loads.dt,
                                                       u_old.begin(),
                                                       p_old.begin(),
                                                       data.lumped_mass.data(),
                                                       u.begin()});
    }



    double
    TrilinosBackend::assemble_residual(const StepLoads &loads)
    {
      const bool dynamic = loads.dt > 0;
      // The kernel sees the midpoint configuration (dynamic) or u.
      GPUAssembly::for_each_index(
        false,
        n_local,
        StepUpdates::Midpoint{dynamic, u.begin(), u_old.begin(), work.begin()});
      const auto start = std::chrono::steady_clock::now();
      ghosted          = work;
      exchange.ghost_updates +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
      adapter.gather_nodal_values(ghosted, nodal_data);
      assembler.assemble(make_step_kernel<double>(data, loads),
                         matrix,
                         assembled,
                         nodal_data);
      const auto &times = assembler.get_times();
      exchange.messages += times.communication;
      exchange.waited += times.exposed;
      exchange.writes += times.write;

      double *const r = residual.begin();
      GPUAssembly::for_each_index(
        false,
        n_local,
        StepUpdates::Residual{loads.dt,
                              load_factor(loads),
                              data.load_pattern.data(),
                              assembled.begin(),
                              data.lumped_mass.data(),
                              u.begin(),
                              u_old.begin(),
                              p_old.begin(),
                              r});
      add_surface_loads(loads, r);
      const bool finite = std::all_of(r, r + n_local, [](const double value) {
        return std::isfinite(value);
      });
      for (const unsigned int k : constrained)
        r[k] = 0;
      // Every rank must take the Newton loop's same branch.
      if (Utilities::MPI::min(finite ? 1 : 0, communicator) == 0)
        return residual_norm = std::numeric_limits<double>::quiet_NaN();

      // m/dt on the diagonal, where the assembler wrote it (no exchange).
      if (dynamic)
        for (unsigned int k = 0; k < n_local; ++k)
          *diagonal[k] += data.lumped_mass[k] / loads.dt;
      initialize_preconditioner();
      return residual_norm = residual.l2_norm();
    }



    void
    TrilinosBackend::add_surface_loads(const StepLoads &loads, double *r)
    {
      const SurfaceLoadData &surface     = data.surface_loads;
      const bool             dynamic     = loads.dt > 0;
      const double           force_scale = dynamic ? loads.dt / 2 : 1.;
      if (surface.has_traction())
        {
          const double factor = force_scale * loads.traction_amplitude;
          for (unsigned int k = 0; k < n_local; ++k)
            r[k] += factor * surface.traction_pattern[k];
        }
      if (!pressure)
        return;

      // The faces see the configuration the kernel sees (ghosted holds
      // it); their forces and load stiffness go to rows that other ranks
      // may own: compress(add) takes those there, in the same order in
      // every run.
      ghosted.extract_subvector_to(relevant_dofs.begin(),
                                   relevant_dofs.end(),
                                   surface_u.begin());
      const double stiffness_scale = dynamic ? loads.dt / 4 : 1.;
      std::vector<types::global_dof_index> rows;
      std::vector<double>                  forces;
      surface_force = 0.;
      for_each_pressure_entry(
        surface,
        surface_u.data(),
        loads.pressure,
        [&](const unsigned int k, const double force) {
          rows.push_back(surface.force_rows[k]);
          forces.push_back(force_scale * surface.force_weights[k] * force);
        },
        [&](const unsigned int k, const double stiffness) {
          matrix.add(surface.stiffness_rows[k],
                     surface.stiffness_columns[k],
                     -stiffness_scale * surface.stiffness_weights[k] *
                       stiffness);
        });
      surface_force.add(rows, forces);
      const auto start = std::chrono::steady_clock::now();
      surface_force.compress(VectorOperation::add);
      matrix.compress(VectorOperation::add);
      exchange.surface_loads +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
      const double *const f = surface_force.begin();
      for (unsigned int k = 0; k < n_local; ++k)
        r[k] += f[k];
    }



    void
    TrilinosBackend::initialize_preconditioner()
    {
      switch (data.linear_solver.solver)
        {
          case LinearSolver::cg_jacobi:
            preconditioner.initialize(matrix);
            break;
          case LinearSolver::cg_block_jacobi:
            block_preconditioner.initialize(
              matrix,
              TrilinosWrappers::PreconditionBlockJacobi::AdditionalData(dim));
            break;
          case LinearSolver::cg_chebyshev:
            {
              if (inverse_diagonal == nullptr)
                {
                  inverse_diagonal =
                    std::make_shared<DiagonalMatrix<ChebyshevVector>>();
                  inverse_diagonal->get_vector()
                    .reinit(adapter.locally_owned_dofs(), communicator);
                  chebyshev_rhs.reinit(inverse_diagonal->get_vector());
                  chebyshev_solution.reinit(inverse_diagonal->get_vector());
                }
              ChebyshevVector &inverse = inverse_diagonal->get_vector();
              for (unsigned int k = 0; k < n_local; ++k)
                inverse.local_element(k) = 1. / *diagonal[k];
              Chebyshev::AdditionalData chebyshev_data;
              chebyshev_data.degree = data.linear_solver.chebyshev_degree;
              chebyshev_data.smoothing_range =
                data.linear_solver.chebyshev_smoothing_range;
              chebyshev_data.preconditioner = inverse_diagonal;
              chebyshev.initialize(matrix, chebyshev_data);
              break;
            }
          case LinearSolver::direct:
            // Amesos factorizes from scratch (symbolic and numeric) for
            // every tangent: it keeps no analysis of the pattern.
          case LinearSolver::bicgstab_jacobi:
            // Refused by make_trilinos_backend().
            break;
        }
    }



    LinearSolveResult
    TrilinosBackend::solve_and_update(const double       relative_tolerance,
                                      const unsigned int max_iterations)
    {
      LinearSolveResult result;
      switch (data.linear_solver.solver)
        {
          case LinearSolver::cg_jacobi:
            result = solve_cg(preconditioner,
                              relative_tolerance,
                              max_iterations,
                              residual,
                              delta);
            break;
          case LinearSolver::cg_block_jacobi:
            result = solve_cg(block_preconditioner,
                              relative_tolerance,
                              max_iterations,
                              residual,
                              delta);
            break;
          case LinearSolver::cg_chebyshev:
            std::copy(residual.begin(), residual.end(), chebyshev_rhs.begin());
            result = solve_cg(chebyshev,
                              relative_tolerance,
                              max_iterations,
                              chebyshev_rhs,
                              chebyshev_solution);
            std::copy(chebyshev_solution.begin(),
                      chebyshev_solution.end(),
                      delta.begin());
            break;
          case LinearSolver::direct:
            result = solve_direct();
            break;
          case LinearSolver::bicgstab_jacobi:
            // Refused by make_trilinos_backend().
            break;
        }
      // distribute() imports the lines' ghost entries: counted as exchange.
      const auto start = std::chrono::steady_clock::now();
      constraints.distribute(delta);
      exchange.ghost_updates +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
      u += delta;
      return result;
    }



    LinearSolveResult
    TrilinosBackend::solve_direct()
    {
      LinearSolveResult result;
      result.iterations       = 1;
      result.initial_residual = residual_norm;
      try
        {
          direct->initialize(matrix);
          direct->solve(delta, residual);
        }
      catch (const TrilinosWrappers::SolverDirect::ExcTrilinosError &)
        {
          // A singular tangent: reported as a breakdown of the solve.
          delta                 = 0.;
          result.final_residual = std::numeric_limits<double>::quiet_NaN();
          return result;
        }
      matrix.vmult(work, delta);
      work -= residual;
      result.final_residual = work.l2_norm();
      result.converged      = std::isfinite(result.final_residual);
      return result;
    }



    template <typename PreconditionerType, typename VectorType>
    LinearSolveResult
    TrilinosBackend::solve_cg(const PreconditionerType &cg_preconditioner,
                              const double              relative_tolerance,
                              const unsigned int        max_iterations,
                              const VectorType         &b,
                              VectorType               &x)
    {
      return solve_with_dealii_cg(matrix,
                                  x,
                                  b,
                                  residual_norm,
                                  cg_preconditioner,
                                  relative_tolerance,
                                  max_iterations);
    }



    void
    TrilinosBackend::finish_step(const StepLoads &loads)
    {
      GPUAssembly::for_each_index(
        false,
        n_local,
        StepUpdates::FinishStep{loads.dt,
                                u.begin(),
                                data.lumped_mass.data(),
                                u_old.begin(),
                                p_old.begin()});
    }



    std::string
    TrilinosBackend::description() const
    {
      const unsigned int n_ranks =
        Utilities::MPI::n_mpi_processes(communicator);
      std::string solver;
      switch (data.linear_solver.solver)
        {
          case LinearSolver::cg_jacobi:
            solver = "deal.II SolverCG with PreconditionJacobi";
            break;
          case LinearSolver::cg_block_jacobi:
            solver = "deal.II SolverCG with PreconditionBlockJacobi (node "
                     "blocks)";
            break;
          case LinearSolver::cg_chebyshev:
            solver = "deal.II SolverCG with PreconditionChebyshev (Jacobi)";
            break;
          case LinearSolver::direct:
            solver = "Trilinos SolverDirect (Amesos_Klu)";
            break;
          case LinearSolver::bicgstab_jacobi:
            // Refused by make_trilinos_backend().
            break;
        }
      const std::string solve =
        "; Trilinos matrix, " + solver +
        " and updates on the host, exchange path " +
        GPUAssembly::to_string(GPUAssembly::HaloPath::host_memory) + ", " +
        std::to_string(n_ranks) + " MPI rank" + (n_ranks > 1 ? "s" : "");
      if (data.use_device)
        return "GPU per rank: DistributedAssembler with " +
               device_method_description(data) + solve;
      return "host: DistributedAssembler with HostAssembler" + solve;
    }
  } // namespace



  std::unique_ptr<IntegratorBackend>
  make_trilinos_backend(const BackendData &data)
  {
    AssertThrow(data.adapter != nullptr && data.constraints != nullptr,
                ExcMessage("make_trilinos_backend() needs the adapter and the "
                           "constraints."));
    refuse_resident_only_solver(data.linear_solver.solver,
                                "the Trilinos backend on MPI ranks "
                                "('Execution/Distributed linear algebra' = "
                                "trilinos)");
    return std::make_unique<TrilinosBackend>(data);
  }
} // namespace Hyperelastic

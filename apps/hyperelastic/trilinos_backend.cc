// SPDX-License-Identifier: LGPL-2.1-or-later
// The backend on Trilinos for several ranks (integrator_backend.h).

#include <deal.II/base/mpi.h>

#include <deal.II/lac/affine_constraints.h>
#include <deal.II/lac/dynamic_sparsity_pattern.h>
#include <deal.II/lac/solver_cg.h>
#include <deal.II/lac/solver_control.h>
#include <deal.II/lac/trilinos_precondition.h>
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
#include <vector>

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

      std::string
      description() const override;

      double
      exchange_seconds() const override
      {
        return exchange_time;
      }

    private:
      const BackendData                             &data;
      const GPUAssembly::DoFHandlerAdapter<3>       &adapter;
      const AffineConstraints<double>               &constraints;
      const MPI_Comm                                 communicator;
      const unsigned int                             n_local;
      TrilinosWrappers::SparseMatrix                 matrix;
      TrilinosWrappers::PreconditionJacobi           preconditioner;
      GPUAssembly::DistributedAssembler<dim, double> assembler;
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
      double                exchange_time = 0;
    };



    TrilinosBackend::TrilinosBackend(const BackendData &data)
      : data(data)
      , adapter(*data.adapter)
      , constraints(*data.constraints)
      , communicator(adapter.get_communicator())
      , n_local(adapter.locally_owned_dofs().n_elements())
    {
      const IndexSet        &owned = adapter.locally_owned_dofs();
      DynamicSparsityPattern dsp;
      adapter.make_sparsity_pattern(dsp);
      matrix.reinit(owned, owned, dsp, communicator);
      for (DistributedVector *v :
           {&u, &u_old, &p_old, &assembled, &residual, &delta, &work})
        v->reinit(owned, communicator);
      ghosted.reinit(owned, adapter.locally_relevant_dofs(), communicator);

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
      exchange_time +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
      adapter.gather_nodal_values(ghosted, nodal_data);
      assembler.assemble(make_step_kernel<double>(data, loads),
                         matrix,
                         assembled,
                         nodal_data);
      exchange_time +=
        assembler.get_times().communication + assembler.get_times().write;

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
      preconditioner.initialize(matrix);
      return residual_norm = residual.l2_norm();
    }



    LinearSolveResult
    TrilinosBackend::solve_and_update(const double       relative_tolerance,
                                      const unsigned int max_iterations)
    {
      LinearSolveResult result;
      result.initial_residual = residual_norm;
      SolverControl               control(max_iterations,
                            relative_tolerance * residual_norm,
                            false,
                            false);
      SolverCG<DistributedVector> cg(control);
      delta = 0.;
      // As the serial Jacobi-CG, an iteration that ran out of steps still
      // updates u: Newton's next residual judges it. A CG that broke down
      // (a non-finite residual) is reported through final_residual.
      try
        {
          cg.solve(matrix, delta, residual, preconditioner);
        }
      catch (const SolverControl::NoConvergence &)
        {}
      result.iterations     = control.last_step();
      result.final_residual = control.last_value();
      result.converged      = control.last_check() == SolverControl::success;
      // distribute() imports the lines' ghost entries: counted as exchange.
      const auto start = std::chrono::steady_clock::now();
      constraints.distribute(delta);
      exchange_time +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
      u += delta;
      return result;
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
      const std::string solve =
        "; Trilinos matrix, deal.II SolverCG with PreconditionJacobi and "
        "updates on the host, " +
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
    return std::make_unique<TrilinosBackend>(data);
  }
} // namespace Hyperelastic

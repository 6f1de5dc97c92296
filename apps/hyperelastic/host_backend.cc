// SPDX-License-Identifier: LGPL-2.1-or-later
#include <deal.II/base/multithread_info.h>
#include <deal.II/base/parallel.h>

#include <deal.II/lac/diagonal_matrix.h>
#include <deal.II/lac/precondition.h>
#include <deal.II/lac/relaxation_block.h>
#include <deal.II/lac/sparse_direct.h>
#include <deal.II/lac/sparse_matrix.h>
#include <deal.II/lac/sparsity_pattern.h>
#include <deal.II/lac/vector.h>

#include <gpu_assembly/engine/host_assembler.h>
#include <gpu_assembly/kernels/neo_hookean.h>
#include <gpu_assembly/lac/device_constraints.h>

#include <atomic>
#include <cmath>
#include <limits>

#include "dealii_cg.h"
#include "host_state.h"
#include "integrator_backend.h"
#include "step_updates.h"

namespace Hyperelastic
{
  namespace
  {
    using namespace dealii;
    constexpr int dim = 3;

    // Apply f(i) to every i in [0, n) on all threads.
    template <class Function>
    void
    for_each_index(const unsigned int n, const Function &f)
    {
      parallel::apply_to_subranges(
        0u,
        n,
        [&](const unsigned int begin, const unsigned int end) {
          for (unsigned int i = begin; i < end; ++i)
            f(i);
        },
        1024);
    }



    class HostBackend : public IntegratorBackend
    {
    public:
      explicit HostBackend(const BackendData &data);

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

      std::size_t
      memory_consumption() const override;

      std::string
      description() const override;

    private:
      void
      vmult(Vector<double> &dst, const Vector<double> &src) const;

      /// Jacobi-CG into delta, the iteration of DeviceJacobiCG.
      LinearSolveResult
      solve_jacobi_cg(const double       relative_tolerance,
                      const unsigned int max_iterations);

      /// UMFPACK into delta, on the tangent copied into dealii_matrix.
      LinearSolveResult
      solve_direct();

      /// The tangent's values into dealii_matrix.
      void
      copy_to_dealii_matrix();

      const BackendData                            &data;
      const GPUAssembly::MeshArrays                &arrays;
      const unsigned int                            n_dofs;
      const GPUAssembly::HostAssembler<dim, double> assembler;
      /// Every constrained DoF's line: a Newton update is distributed to
      /// the DoFs of lines with entries (hanging nodes) after each solve.
      const GPUAssembly::ConstraintLines constraint_lines;
      std::vector<double>                values, assembled;
      std::vector<double>                nodal_data;
      /// With a pressure: its forces, and the displacement they are
      /// evaluated at (the midpoint in dynamic runs).
      std::vector<double> surface_force, surface_u;
      Vector<double>      u, u_old, p_old, residual, delta, inverse_diagonal;
      Vector<double>      cg_r, cg_z, cg_p, cg_q;
      /// All but Jacobi-CG: deal.II's matrix of the adapter's pattern
      /// (deal.II stores a row's diagonal entry first), and for each of its
      /// entries in storage order the position of the same entry in values.
      SparsityPattern      dealii_pattern;
      SparseMatrix<double> dealii_matrix;
      std::vector<int>     dealii_positions;
      SparseDirectUMFPACK  umfpack;
      /// cg_chebyshev: deal.II's Chebyshev around the inverse diagonal.
      PreconditionChebyshev<SparseMatrix<double>, Vector<double>> chebyshev;
      /// cg_block_jacobi: deal.II's block Jacobi on the DoFs of each node
      /// (the Cuthill-McKee numbering does not keep them together).
      RelaxationBlockJacobi<SparseMatrix<double>> block_jacobi;
      /// Its blocks, which it reads through a pointer.
      RelaxationBlockJacobi<SparseMatrix<double>>::AdditionalData block_data;
    };



    HostBackend::HostBackend(const BackendData &data)
      : data(data)
      , arrays(*data.arrays)
      , n_dofs(arrays.n_dofs)
      , assembler(arrays)
      , constraint_lines(arrays)
      , nodal_data(std::size_t(arrays.n_nodes) * dim)
      , u(n_dofs)
      , u_old(n_dofs)
      , p_old(n_dofs)
      , residual(n_dofs)
      , delta(n_dofs)
      , inverse_diagonal(n_dofs)
      , cg_r(n_dofs)
      , cg_z(n_dofs)
      , cg_p(n_dofs)
      , cg_q(n_dofs)
    {
      if (data.linear_solver.solver == LinearSolver::cg_jacobi)
        return;
      std::vector<unsigned int> row_lengths(n_dofs);
      for (unsigned int row = 0; row < n_dofs; ++row)
        row_lengths[row] =
          arrays.row_offsets[row + 1] - arrays.row_offsets[row];
      dealii_pattern.reinit(n_dofs, n_dofs, row_lengths);
      for (unsigned int row = 0; row < n_dofs; ++row)
        for (int k = arrays.row_offsets[row]; k < arrays.row_offsets[row + 1];
             ++k)
          dealii_pattern.add(row, arrays.column_indices[k]);
      dealii_pattern.compress();
      dealii_matrix.reinit(dealii_pattern);
      dealii_positions.reserve(arrays.column_indices.size());
      for (unsigned int row = 0; row < n_dofs; ++row)
        {
          const auto begin =
            arrays.column_indices.begin() + arrays.row_offsets[row];
          const auto end =
            arrays.column_indices.begin() + arrays.row_offsets[row + 1];
          for (auto entry = dealii_pattern.begin(row);
               entry != dealii_pattern.end(row);
               ++entry)
            dealii_positions.push_back(
              std::lower_bound(begin, end, int(entry->column())) -
              arrays.column_indices.begin());
        }
      if (data.linear_solver.solver == LinearSolver::cg_block_jacobi)
        {
          SparsityPattern &blocks = block_data.block_list;
          blocks.reinit(arrays.n_nodes, n_dofs, dim);
          for (unsigned int node = 0; node < arrays.n_nodes; ++node)
            for (unsigned int c = 0; c < dim; ++c)
              blocks.add(node, arrays.node_dofs[node * dim + c]);
          blocks.compress();
        }
    }



    void
    HostBackend::set_state(const std::vector<double> &u_host,
                           const std::vector<double> &p_host)
    {
      set_host_state(u_host, p_host, u, u_old, p_old);
    }



    void
    HostBackend::get_state(std::vector<double> &u_host,
                           std::vector<double> &p_host) const
    {
      get_host_state(u_old, p_old, u_host, p_host);
    }



    void
    HostBackend::get_iterate(std::vector<double> &u_host) const
    {
      u_host.assign(u.begin(), u.end());
    }



    void
    HostBackend::predict(const StepLoads &loads)
    {
      for_each_index(n_dofs,
                     StepUpdates::Predict{loads.dt,
                                          u_old.data(),
                                          p_old.data(),
                                          data.lumped_mass.data(),
                                          u.data()});
    }



    double
    HostBackend::assemble_residual(const StepLoads &loads)
    {
      const bool dynamic = loads.dt > 0;
      for_each_index(arrays.n_nodes * dim, [&](const unsigned int i) {
        const unsigned int dof = arrays.node_dofs[i];
        nodal_data[i]          = dynamic ? 0.5 * (u[dof] + u_old[dof]) : u[dof];
        if (data.nodal_data_are_positions)
          nodal_data[i] += arrays.nodal_coordinates[i];
      });

      const auto kernel = make_step_kernel<double>(data, loads);
      assembler.assemble(kernel,
                         values,
                         assembled,
                         GPUAssembly::AssemblyOptions(),
                         nodal_data,
                         dim);

      // The surface loads are external forces, scaled as f is; the
      // pressure's load stiffness goes into the tangent before the mass.
      const SurfaceLoadData &surface     = data.surface_loads;
      const double           force_scale = dynamic ? loads.dt / 2 : 1.;
      if (surface.has_pressure())
        {
          surface_force.assign(n_dofs, 0.);
          const double *u_pressure = u.data();
          if (dynamic)
            {
              surface_u.resize(n_dofs);
              for (unsigned int i = 0; i < n_dofs; ++i)
                surface_u[i] = 0.5 * (u[i] + u_old[i]);
              u_pressure = surface_u.data();
            }
          add_pressure_loads(surface,
                             u_pressure,
                             loads.pressure,
                             force_scale,
                             dynamic ? loads.dt / 4 : 1.,
                             surface_force.data(),
                             values.data());
        }
      const double traction_factor = force_scale * loads.traction_amplitude;

      // A residual that is not finite (an element inverted by the load) is
      // an outcome the Newton loop reports, so it is detected here:
      // Vector::l2_norm() asserts a finite norm in debug mode.
      std::atomic<bool>           finite(true);
      const StepUpdates::Residual residual_entry{loads.dt,
                                                 load_factor(loads),
                                                 data.load_pattern.data(),
                                                 assembled.data(),
                                                 data.lumped_mass.data(),
                                                 u.data(),
                                                 u_old.data(),
                                                 p_old.data(),
                                                 residual.data()};
      for_each_index(n_dofs, [&](const unsigned int i) {
        residual_entry(i);
        if (surface.has_traction())
          residual[i] += traction_factor * surface.traction_pattern[i];
        if (surface.has_pressure())
          residual[i] += surface_force[i];
        if (arrays.dof_is_constrained[i])
          residual[i] = 0.;
        if (!std::isfinite(residual[i]))
          finite.store(false, std::memory_order_relaxed);

        double &diagonal = values[data.diagonal_index[i]];
        if (dynamic)
          diagonal += data.lumped_mass[i] / loads.dt;
        inverse_diagonal[i] = 1. / diagonal;
      });
      return finite ? residual.l2_norm() :
                      std::numeric_limits<double>::quiet_NaN();
    }



    void
    HostBackend::vmult(Vector<double> &dst, const Vector<double> &src) const
    {
      for_each_index(n_dofs, [&](const unsigned int row) {
        double sum = 0;
        for (int k = arrays.row_offsets[row]; k < arrays.row_offsets[row + 1];
             ++k)
          sum += values[k] * src[arrays.column_indices[k]];
        dst[row] = sum;
      });
    }



    LinearSolveResult
    HostBackend::solve_and_update(const double       relative_tolerance,
                                  const unsigned int max_iterations)
    {
      // deal.II's CG with one of its preconditioners, on a copy of the
      // tangent.
      const auto solve_cg = [&](const auto &preconditioner) {
        return solve_with_dealii_cg(dealii_matrix,
                                    delta,
                                    residual,
                                    residual.l2_norm(),
                                    preconditioner,
                                    relative_tolerance,
                                    max_iterations);
      };
      LinearSolveResult result;
      switch (data.linear_solver.solver)
        {
          case LinearSolver::cg_jacobi:
            result = solve_jacobi_cg(relative_tolerance, max_iterations);
            break;
          case LinearSolver::direct:
            result = solve_direct();
            break;
          case LinearSolver::cg_chebyshev:
            {
              copy_to_dealii_matrix();
              using Chebyshev =
                PreconditionChebyshev<SparseMatrix<double>, Vector<double>>;
              Chebyshev::AdditionalData chebyshev_data;
              chebyshev_data.degree = data.linear_solver.chebyshev_degree;
              chebyshev_data.smoothing_range =
                data.linear_solver.chebyshev_smoothing_range;
              chebyshev_data.preconditioner =
                std::make_shared<DiagonalMatrix<Vector<double>>>(
                  inverse_diagonal);
              chebyshev.initialize(dealii_matrix, chebyshev_data);
              result = solve_cg(chebyshev);
              break;
            }
          case LinearSolver::cg_block_jacobi:
            copy_to_dealii_matrix();
            block_jacobi.initialize(dealii_matrix, block_data);
            result = solve_cg(block_jacobi);
            break;
          case LinearSolver::bicgstab_jacobi:
            // Refused by make_host_backend().
            break;
        }
      if (arrays.n_constraint_lines() > 0)
        GPUAssembly::distribute_constraints(constraint_lines,
                                            delta.data(),
                                            delta.size());
      u += delta;
      return result;
    }



    void
    HostBackend::copy_to_dealii_matrix()
    {
      unsigned int entry = 0;
      for (unsigned int row = 0; row < n_dofs; ++row)
        for (auto it = dealii_matrix.begin(row); it != dealii_matrix.end(row);
             ++it, ++entry)
          it->value() = values[dealii_positions[entry]];
    }



    LinearSolveResult
    HostBackend::solve_direct()
    {
      LinearSolveResult result;
      result.iterations       = 1;
      result.initial_residual = residual.l2_norm();
      copy_to_dealii_matrix();
      try
        {
          umfpack.initialize(dealii_matrix);
          umfpack.vmult(delta, residual);
        }
      catch (const SparseDirectUMFPACK::ExcUMFPACKError &)
        {
          // A singular tangent: reported as a breakdown of the solve.
          delta                 = 0.;
          result.final_residual = std::numeric_limits<double>::quiet_NaN();
          return result;
        }
      // The residual the update leaves, which Newton's next residual does
      // not show where the tangent is ill-conditioned.
      vmult(cg_q, delta);
      cg_q -= residual;
      result.final_residual = cg_q.l2_norm();
      result.converged      = std::isfinite(result.final_residual);
      return result;
    }



    LinearSolveResult
    HostBackend::solve_jacobi_cg(const double       relative_tolerance,
                                 const unsigned int max_iterations)
    {
      // The iteration of DeviceJacobiCG, step by step, with x_0 = 0.
      LinearSolveResult result;
      delta = 0.;
      cg_r  = residual;
      cg_z  = cg_r;
      cg_z.scale(inverse_diagonal);
      cg_p                    = cg_z;
      double rz               = cg_r * cg_z;
      result.initial_residual = cg_r.l2_norm();
      result.final_residual   = result.initial_residual;
      const double tolerance  = relative_tolerance * result.initial_residual;
      if (result.initial_residual <= tolerance)
        result.converged = true;
      for (unsigned int it = 0; it < max_iterations && !result.converged; ++it)
        {
          vmult(cg_q, cg_p);
          const double alpha = rz / (cg_p * cg_q);
          delta.add(alpha, cg_p);
          cg_r.add(-alpha, cg_q);
          cg_z = cg_r;
          cg_z.scale(inverse_diagonal);
          const double rz_new   = cg_r * cg_z;
          result.iterations     = it + 1;
          result.final_residual = cg_r.l2_norm();
          if (!std::isfinite(result.final_residual))
            break;
          if (result.final_residual <= tolerance)
            {
              result.converged = true;
              break;
            }
          cg_p.sadd(rz_new / rz, 1., cg_z);
          rz = rz_new;
        }
      return result;
    }



    void
    HostBackend::finish_step(const StepLoads &loads)
    {
      for_each_index(n_dofs,
                     StepUpdates::FinishStep{loads.dt,
                                             u.data(),
                                             data.lumped_mass.data(),
                                             u_old.data(),
                                             p_old.data()});
    }



    std::size_t
    HostBackend::memory_consumption() const
    {
      return (values.size() + assembled.size() + nodal_data.size() +
              surface_force.size() + surface_u.size() +
              13 * std::size_t(n_dofs)) *
               sizeof(double) +
             dealii_pattern.memory_consumption() +
             dealii_matrix.memory_consumption() +
             dealii_positions.size() * sizeof(int);
    }



    std::string
    HostBackend::description() const
    {
      std::string solver = short_name(data.linear_solver.solver);
      if (data.linear_solver.solver == LinearSolver::direct)
        solver = "UMFPACK";
      else if (data.linear_solver.solver != LinearSolver::cg_jacobi)
        solver = "deal.II's " + solver;
      return "host: coloured HostAssembler, " + solver + " and updates on " +
             std::to_string(MultithreadInfo::n_threads()) +
             " threads in double precision";
    }
  } // namespace



  std::unique_ptr<IntegratorBackend>
  make_host_backend(const BackendData &data)
  {
    refuse_resident_only_solver(data.linear_solver.solver,
                                "the host backend on one process");
    return std::make_unique<HostBackend>(data);
  }
} // namespace Hyperelastic

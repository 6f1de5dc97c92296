// SPDX-License-Identifier: LGPL-2.1-or-later
// The table of device solvers behind 'Linear solver' and the solver
// benchmark: one entry per solver, each a class over the plugin's solver
// that splits its work into the phases of DeviceLinearSolver.

#include "device_linear_solvers.h"

#include <deal.II/base/exceptions.h>

#include <gpu_assembly/base/device.h>
#include <gpu_assembly/base/exceptions.h>
#include <gpu_assembly/lac/device_preconditioned_cg.h>
#include <gpu_assembly/lac/direct_solver.h>
#include <gpu_assembly/lac/direct_solver_exceptions.h>

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <sstream>
#include <type_traits>


namespace AppSolvers
{
  using namespace GPUAssembly;

  namespace
  {
    std::string
    no_cuda_device()
    {
      return n_cuda_devices() == 0 ? "no CUDA device was found" : "";
    }



    // DevicePreconditionedCG with one of its preconditioners. Its solve()
    // sets the preconditioner up for the matrix's current values (the
    // inverse diagonal; Chebyshev's eigenvalue estimate; the node blocks'
    // inverses), so factorize() only takes the matrix and the set-up is
    // part of the solve.
    template <typename Number, CGPreconditioner preconditioner>
    class PreconditionedCG : public DeviceLinearSolver<Number>
    {
    public:
      explicit PreconditionedCG(const SolverSettings &settings)
        : settings(settings)
      {}

      void
      analyze(const MeshArrays              &arrays,
              const DeviceCSRMatrix<Number> &A) override
      {
        typename DevicePreconditionedCG<Number>::AdditionalData data;
        data.preconditioner = preconditioner;
        cg.reinit(arrays, A, data);
        synchronize_device();
        matrix = nullptr;
      }

      void
      factorize(const DeviceCSRMatrix<Number> &A) override
      {
        matrix = &A;
      }

      SolveResult
      solve(DeviceVector<Number> &x, const DeviceVector<Number> &b) override
      {
        AssertThrow(matrix != nullptr,
                    dealii::ExcMessage(name() +
                                       ": solve() needs a factorized matrix."));
        CGControl control;
        control.relative_tolerance = settings.relative_tolerance;
        control.max_iterations     = settings.max_iterations;
        const CGResult result      = cg.solve(*matrix, x, b, control);
        synchronize_device();
        SolveResult solve_result;
        solve_result.iterations = result.iterations;
        solve_result.relative_residual =
          result.initial_residual > 0 ?
            result.final_residual / result.initial_residual :
            0;
        AssertThrow(result.converged,
                    dealii::ExcMessage(
                      name() + " did not converge: relative residual " +
                      std::to_string(solve_result.relative_residual) +
                      " after " + std::to_string(result.iterations) +
                      " iterations (tolerance " +
                      std::to_string(settings.relative_tolerance) +
                      ", at most " + std::to_string(settings.max_iterations) +
                      " iterations). A residual that is not finite means "
                      "a matrix that is not positive definite: a body "
                      "that nothing holds, or constraints missing."));
        return solve_result;
      }

      std::string
      name() const override
      {
        switch (preconditioner)
          {
            case CGPreconditioner::jacobi:
              return "cg-jacobi";
            case CGPreconditioner::chebyshev:
              return "cg-chebyshev";
            case CGPreconditioner::point_block_jacobi:
              return "cg-block-jacobi";
          }
        return "cg";
      }

      bool
      is_direct() const override
      {
        return false;
      }

      std::size_t
      device_memory() const override
      {
        // Not reported by the solver; the benchmark measures it.
        return 0;
      }

      std::string
      details() const override
      {
        std::ostringstream out;
        out << "preconditioner set up in each solve";
        if (preconditioner == CGPreconditioner::chebyshev)
          {
            const ChebyshevParameters &parameters =
              cg.get_additional_data().chebyshev;
            const auto &schedule =
              cg.get_solver().get_chebyshev().get_schedule();
            out << "; Chebyshev degree " << parameters.degree
                << ", smoothing range " << parameters.smoothing_range
                << ", eigenvalues of D^-1 A estimated in ["
                << schedule.min_eigenvalue << ", " << schedule.max_eigenvalue
                << "] (max x 1.2) by " << schedule.cg_iterations << " CG steps";
          }
        return out.str();
      }

    private:
      const SolverSettings           settings;
      DevicePreconditionedCG<Number> cg;
      const DeviceCSRMatrix<Number> *matrix = nullptr;
    };

    template <typename Number>
    using JacobiCG = PreconditionedCG<Number, CGPreconditioner::jacobi>;
    template <typename Number>
    using ChebyshevCG = PreconditionedCG<Number, CGPreconditioner::chebyshev>;
    template <typename Number>
    using BlockJacobiCG =
      PreconditionedCG<Number, CGPreconditioner::point_block_jacobi>;



    std::string
    no_direct_solver()
    {
      if (!DeviceDirectSolver<double>::available())
        return "the plugin was built without cuDSS, the library of the "
               "direct solver (see GPU_ASSEMBLY_WITH_CUDSS in the README)";
      return no_cuda_device();
    }



    // The sparse direct solver on cuDSS: Cholesky, since the apps' matrices
    // are symmetric positive definite once constrained (the constrained
    // rows keep a positive diagonal alone). With single-precision factors
    // (single_precision = true) and iterative refinement in double for
    // double systems.
    template <typename Number, bool single_precision>
    class Direct : public DeviceLinearSolver<Number>
    {
    public:
      explicit Direct(const SolverSettings &)
        : solver(make_data())
      {}

      void
      analyze(const MeshArrays &, const DeviceCSRMatrix<Number> &A) override
      {
        solver.analyze(A);
        synchronize_device();
      }

      void
      factorize(const DeviceCSRMatrix<Number> &A) override
      {
        solver.factorize(A);
        synchronize_device();
      }

      SolveResult
      solve(DeviceVector<Number> &x, const DeviceVector<Number> &b) override
      {
        solver.solve(x, b);
        synchronize_device();
        SolveResult result;
        result.relative_residual =
          std::max(0., solver.get_statistics().relative_residual);
        return result;
      }

      std::string
      name() const override
      {
        return single_precision ? "direct-single" : "direct";
      }

      bool
      is_direct() const override
      {
        return true;
      }

      std::size_t
      device_memory() const override
      {
        const auto &statistics = solver.get_statistics();
        return std::max(statistics.peak_device_memory,
                        statistics.permanent_device_memory) +
               statistics.work_memory;
      }

      std::string
      details() const override
      {
        const auto        &statistics = solver.get_statistics();
        std::ostringstream out;
        out << "factors " << statistics.factor_nonzeros << " nonzeros ("
            << std::setprecision(3)
            << double(statistics.factor_nonzeros) /
                 std::max<std::size_t>(1, statistics.n_nonzeros)
            << " per matrix nonzero), cuDSS's estimate "
            << statistics.peak_device_memory / 1048576. << " MiB at the peak, "
            << statistics.permanent_device_memory / 1048576.
            << " MiB held; residual " << statistics.relative_residual;
        if (single_precision)
          out << " after " << statistics.refinement_steps
              << " refinement steps";
        return out.str();
      }

    private:
      static typename DeviceDirectSolver<Number>::AdditionalData
      make_data()
      {
        typename DeviceDirectSolver<Number>::AdditionalData data;
        data.matrix_type = DirectSolverMatrixType::spd;
        data.single_precision_factorization =
          single_precision && std::is_same_v<Number, double>;
        return data;
      }

      DeviceDirectSolver<Number> solver;
    };

    template <typename Number>
    using DirectDouble = Direct<Number, false>;
    template <typename Number>
    using DirectSingle = Direct<Number, true>;



    template <template <typename> class Solver, typename Number>
    std::unique_ptr<DeviceLinearSolver<Number>>
    create(const SolverSettings &settings)
    {
      return std::make_unique<Solver<Number>>(settings);
    }

    // How each solver of device_solvers() runs and when it cannot.
    struct Entry
    {
      const char *name;
      std::string (*unavailable)();
      std::unique_ptr<DeviceLinearSolver<double>> (*create_double)(
        const SolverSettings &);
      std::unique_ptr<DeviceLinearSolver<float>> (*create_float)(
        const SolverSettings &);
    };

    const std::vector<Entry> entries = {
      {"direct",
       &no_direct_solver,
       &create<DirectDouble, double>,
       &create<DirectDouble, float>},
      {"direct-single",
       &no_direct_solver,
       &create<DirectSingle, double>,
       &create<DirectSingle, float>},
      {"cg-jacobi",
       &no_cuda_device,
       &create<JacobiCG, double>,
       &create<JacobiCG, float>},
      {"cg-chebyshev",
       &no_cuda_device,
       &create<ChebyshevCG, double>,
       &create<ChebyshevCG, float>},
      {"cg-block-jacobi",
       &no_cuda_device,
       &create<BlockJacobiCG, double>,
       &create<BlockJacobiCG, float>},
    };

    const Entry &
    find(const std::string &name)
    {
      for (const Entry &entry : entries)
        if (entry.name == name)
          return entry;
      std::string names;
      for (const std::string &known : device_solver_names())
        names += " " + known;
      AssertThrow(false,
                  dealii::ExcMessage("Unknown linear solver '" + name +
                                     "'; the device solvers are auto" + names +
                                     "."));
      return entries.front();
    }

    template <typename Number>
    std::unique_ptr<DeviceLinearSolver<Number>>
    create_entry(const Entry &entry, const SolverSettings &settings)
    {
      if constexpr (std::is_same_v<Number, double>)
        return entry.create_double(settings);
      else
        return entry.create_float(settings);
    }



    // auto: the first available entry whose analysis succeeds; a direct
    // solver refuses in its analysis a factorization that would not fit.
    template <typename Number>
    class AutoSolver : public DeviceLinearSolver<Number>
    {
    public:
      explicit AutoSolver(const SolverSettings &settings)
        : settings(settings)
      {}

      void
      analyze(const MeshArrays              &arrays,
              const DeviceCSRMatrix<Number> &A) override
      {
        chosen.reset();
        refusals.clear();
        for (const SolverDescription &description : device_solvers())
          if (const Entry &entry = find(description.name);
              entry.unavailable().empty())
            {
              std::unique_ptr<DeviceLinearSolver<Number>> solver =
                create_entry<Number>(entry, settings);
              try
                {
                  solver->analyze(arrays, A);
                }
              catch (const ExcDirectSolverMemory &error)
                {
                  if (!description.direct)
                    throw;
                  // The message alone, on one line.
                  std::ostringstream message;
                  error.print_info(message);
                  std::istringstream words(message.str());
                  refusals += std::string(refusals.empty() ? "" : "; ") +
                              entry.name + " refused:";
                  for (std::string word; words >> word;)
                    refusals += " " + word;
                  continue;
                }
              chosen = std::move(solver);
              return;
            }
        AssertThrow(false,
                    dealii::ExcMessage(
                      "'Linear solver' = auto found no device solver that "
                      "can run here" +
                      (refusals.empty() ?
                         std::string(" (") + no_cuda_device() + ")." :
                         ": " + refusals)));
      }

      void
      factorize(const DeviceCSRMatrix<Number> &A) override
      {
        AssertThrow(chosen, dealii::ExcMessage("auto: analyze() first."));
        chosen->factorize(A);
      }

      SolveResult
      solve(DeviceVector<Number> &x, const DeviceVector<Number> &b) override
      {
        AssertThrow(chosen, dealii::ExcMessage("auto: analyze() first."));
        return chosen->solve(x, b);
      }

      std::string
      name() const override
      {
        return chosen ? chosen->name() : "auto";
      }

      bool
      is_direct() const override
      {
        return chosen && chosen->is_direct();
      }

      std::size_t
      device_memory() const override
      {
        return chosen ? chosen->device_memory() : 0;
      }

      std::string
      details() const override
      {
        const std::string chosen_details = chosen ? chosen->details() : "";
        return refusals.empty()       ? chosen_details :
               chosen_details.empty() ? refusals :
                                        refusals + "; " + chosen_details;
      }

    private:
      const SolverSettings                        settings;
      std::unique_ptr<DeviceLinearSolver<Number>> chosen;
      // Why solvers before the chosen one were passed over.
      std::string refusals;
    };
  } // namespace



  std::string
  unavailable_reason(const std::string &name)
  {
    if (name == "auto")
      {
        for (const Entry &entry : entries)
          if (entry.unavailable().empty())
            return "";
        return no_cuda_device();
      }
    return find(name).unavailable();
  }



  template <typename Number>
  std::unique_ptr<DeviceLinearSolver<Number>>
  create_device_solver(const std::string &name, const SolverSettings &settings)
  {
    const std::string why_not = unavailable_reason(name);
    AssertThrow(why_not.empty(),
                dealii::ExcMessage("The linear solver '" + name +
                                   "' cannot run here: " + why_not + "."));
    if (name == "auto")
      return std::make_unique<AutoSolver<Number>>(settings);
    return create_entry<Number>(find(name), settings);
  }

  template std::unique_ptr<DeviceLinearSolver<double>>
  create_device_solver<double>(const std::string &, const SolverSettings &);
  template std::unique_ptr<DeviceLinearSolver<float>>
  create_device_solver<float>(const std::string &, const SolverSettings &);
} // namespace AppSolvers

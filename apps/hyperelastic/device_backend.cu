// SPDX-License-Identifier: LGPL-2.1-or-later
// The device backend of the hyperelastic time integrator: assembly through
// the plugin's DeviceAssembler, the linear solves through DeviceJacobiCG,
// DevicePreconditionedCG (Chebyshev-Jacobi, point-block Jacobi) or
// DeviceDirectSolver (cuDSS), and the Newton and time updates as
// element-wise kernels (device_kernels.cuh). With Jacobi-CG a whole time
// step, Newton loop included, is one CUDA graph launch (run_step(),
// step_graph.cuh). The staged operations of IntegratorBackend remain for
// the host-driven loop: the other solvers, whose iterations and phases the
// host drives, and drivers without conditional graph nodes.

#include <gpu_assembly/base/cuda_check.h>
#include <gpu_assembly/engine/device_assembler.h>
#include <gpu_assembly/kernels/neo_hookean.h>
#include <gpu_assembly/lac/device_constraints.h>
#include <gpu_assembly/lac/device_preconditioned_cg.h>
#include <gpu_assembly/lac/device_solver.h>
#include <gpu_assembly/lac/direct_solver.h>

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <sstream>

#include "device_kernels.cuh"
#include "integrator_backend.h"
#include "stage_clock.cuh"
#include "step_graph.cuh"
#include "surface_load_kernels.cuh"

namespace Hyperelastic
{
  namespace
  {
    using namespace internal;

    template <typename T>
    std::vector<T>
    convert(const std::vector<double> &values)
    {
      return std::vector<T>(values.begin(), values.end());
    }



    template <typename Number>
    class DeviceBackend : public IntegratorBackend
    {
    public:
      explicit DeviceBackend(const BackendData &data);

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

      void
      setup_linear_solver(const StepLoads &loads) override;

      bool
      runs_whole_steps() const override
      {
        // The surface loads' amplitudes change from step to step outside
        // the graph's parameters: their steps run from the host.
        return step_graph_supported && solver == LinearSolver::cg_jacobi &&
               surface_loads == nullptr;
      }

      bool
      run_step(const StepLoads     &loads,
               const NewtonControl &control,
               StepReport          &report) override;

      bool
      device_stage_times(DeviceStageTimes &times) const override;

      void
      reset_device_stage_times() override;

      std::size_t
      memory_consumption() const override;

      LinearSolver
      linear_solver() const override
      {
        return solver;
      }

      std::string
      linear_solver_note() const override
      {
        return solver_note;
      }

      std::string
      description() const override;

    private:
      void
      check_launch() const
      {
        GPU_ASSEMBLY_CHECK_CUDA(cudaGetLastError());
      }

      /// Blocks of the residual kernel, one thread per DoF up to the
      /// reduction's limit: the kernel reads a diagonal entry through an
      /// index per DoF, and on small meshes fewer threads, each looping
      /// over several DoFs, leave it waiting on those reads.
      unsigned int
      residual_blocks() const
      {
        return std::min(n_blocks(n_dofs),
                        GPUAssembly::DeviceReduction<Number>::max_blocks);
      }

      /// Upload the step's load factor (stream-ordered).
      void
      set_load_factor(const StepLoads &loads, cudaStream_t stream);

      /// predict() on @p stream.
      void
      enqueue_predict(const StepLoads &loads, cudaStream_t stream);

      /// The assembly of assemble_residual() on @p stream, up to the block
      /// sums of r.r in reduction.partial_sums(); returns their number.
      unsigned int
      enqueue_assembly(const StepLoads &loads, cudaStream_t stream);

      /// The direct solve of solve_and_update() into delta.
      LinearSolveResult
      solve_direct();

      /// Capture run_step()'s graph; false if the driver cannot.
      bool
      build_step_graph(const StepLoads     &loads,
                       const NewtonControl &control,
                       const StepGraphKey  &key);

      const BackendData &data;
      const unsigned int n_dofs;
      /// BackendData's solver, or cg_jacobi where it fell back to it.
      LinearSolver                              solver;
      std::string                               solver_note;
      GPUAssembly::DeviceAssembler<dim, Number> assembler;
      GPUAssembly::DeviceCSRMatrix<Number>      matrix;
      GPUAssembly::DeviceJacobiCG<Number>       cg;
      /// cuDSS's factorization: LU where a follower pressure makes the
      /// tangent non-symmetric, else LDL^T.
      std::string
      factorization() const
      {
        return data.surface_loads.has_pressure() ? "LU" : "LDL^T";
      }

      /// LinearSolver::direct: LDL^T, the tangent being symmetric but
      /// indefinite where the body buckles or under compression; LU with a
      /// follower pressure (factorization()).
      std::unique_ptr<GPUAssembly::DeviceDirectSolver<Number>> direct;
      /// cg_chebyshev, cg_block_jacobi: the plugin's preconditioned CG
      /// (its iteration driven from the host).
      std::unique_ptr<GPUAssembly::DevicePreconditionedCG<Number>>
        preconditioned_cg;
      /// The norm of the last assembled residual (the solve's r_0).
      double                                   residual_norm = 0;
      GPUAssembly::DeviceReduction<Number>     reduction;
      GPUAssembly::DeviceVector<Number>        u, u_old, p_old;
      GPUAssembly::DeviceVector<Number>        nodal_data;
      GPUAssembly::DeviceVector<Number>        assembled, residual;
      GPUAssembly::DeviceVector<Number>        delta, inverse_diagonal;
      GPUAssembly::DeviceVector<Number>        mass, load_pattern;
      GPUAssembly::DeviceVector<Number>        reference_positions;
      GPUAssembly::DeviceVector<int>           node_dofs;
      GPUAssembly::DeviceVector<int>           diagonal_index;
      GPUAssembly::DeviceVector<unsigned char> constrained;
      GPUAssembly::DeviceVector<Number>        load_factor;
      /// Hanging-node (and other) constraint lines with entries: a Newton
      /// update is distributed to their DoFs after each solve, which leaves
      /// them at zero. Unset without such lines.
      std::unique_ptr<GPUAssembly::DeviceConstraints<Number>> constraints;
      /// The traction and the pressure; unset without surface loads.
      std::unique_ptr<DeviceSurfaceLoads<Number>> surface_loads;
      /// Host copy of load_factor's value: the source of its upload.
      Number load_factor_value = 0;

      // run_step(): its graph (with its report) and the stage clock.
      StepGraph  step_graph;
      bool       step_graph_supported;
      StageClock clock;
      bool       ran_whole_steps = false;
    };



    template <typename Number>
    DeviceBackend<Number>::DeviceBackend(const BackendData &data)
      : data(data)
      , n_dofs(data.arrays->n_dofs)
      , solver(data.linear_solver.solver)
      , u(n_dofs)
      , u_old(n_dofs)
      , p_old(n_dofs)
      , nodal_data(std::size_t(data.arrays->n_nodes) * dim)
      , assembled(n_dofs)
      , residual(n_dofs)
      , delta(n_dofs)
      , inverse_diagonal(n_dofs)
      , mass(convert<Number>(data.lumped_mass))
      , load_pattern(convert<Number>(data.load_pattern))
      , node_dofs(data.arrays->node_dofs)
      , diagonal_index(data.diagonal_index)
      , constrained(
          std::vector<unsigned char>(data.arrays->dof_is_constrained.begin(),
                                     data.arrays->dof_is_constrained.end()))
      , load_factor(1)
      , step_graph_supported(data.step_graph)
    {
      typename GPUAssembly::DeviceAssembler<dim, Number>::AdditionalData
        additional_data;
      set_device_method(data, additional_data);
      additional_data.n_nodal_fields = dim;
      assembler.reinit(*data.arrays, additional_data);
      matrix.reinit(*data.arrays);
      if (data.arrays->n_constraint_lines() > 0)
        constraints = std::make_unique<GPUAssembly::DeviceConstraints<Number>>(
          *data.arrays);
      if (data.surface_loads.has_traction() ||
          data.surface_loads.has_pressure())
        surface_loads =
          std::make_unique<DeviceSurfaceLoads<Number>>(data.surface_loads,
                                                       n_dofs);
      if (data.nodal_data_are_positions)
        reference_positions.copy_from_host(
          convert<Number>(data.arrays->nodal_coordinates));
      switch (solver)
        {
          case LinearSolver::cg_jacobi:
            break;
          case LinearSolver::direct:
            if (GPUAssembly::DeviceDirectSolver<Number>::available())
              {
                typename GPUAssembly::DeviceDirectSolver<Number>::AdditionalData
                  direct_data;
                // The pressure's load stiffness is not symmetric. It is
                // added to the assembled CSR values, which hold both
                // triangles also with symmetric element data, so only the
                // factorization changes.
                direct_data.matrix_type =
                  data.surface_loads.has_pressure() ?
                    GPUAssembly::DirectSolverMatrixType::general :
                    GPUAssembly::DirectSolverMatrixType::symmetric_indefinite;
                direct =
                  std::make_unique<GPUAssembly::DeviceDirectSolver<Number>>(
                    direct_data);
                break;
              }
            if (!data.direct_may_fall_back)
              throw_message("'Solver/Linear solver' = direct: the plugin was "
                            "built without cuDSS, so it has no direct solver "
                            "on the GPU (install the nvidia-cudss-cu13 wheel "
                            "and configure again, or set CUDSS_DIR). Choose "
                            "cg-jacobi, or 'Execution/Device' = host for "
                            "UMFPACK.");
            solver      = LinearSolver::cg_jacobi;
            solver_note = "the plugin was built without cuDSS, so Jacobi-CG";
            break;
          case LinearSolver::cg_chebyshev:
          case LinearSolver::cg_block_jacobi:
            preconditioned_cg =
              std::make_unique<GPUAssembly::DevicePreconditionedCG<Number>>();
            preconditioned_cg->reinit(*data.arrays,
                                      matrix,
                                      cg_solver_parameters(data.linear_solver));
            break;
          case LinearSolver::bicgstab_jacobi:
            // Refused by make_device_backend().
            break;
        }
    }



    template <typename Number>
    void
    DeviceBackend<Number>::set_state(const std::vector<double> &u_host,
                                     const std::vector<double> &p_host)
    {
      u_old.copy_from_host(convert<Number>(u_host));
      p_old.copy_from_host(convert<Number>(p_host));
      u.copy_from_host(convert<Number>(u_host));
    }



    template <typename Number>
    void
    DeviceBackend<Number>::get_state(std::vector<double> &u_host,
                                     std::vector<double> &p_host) const
    {
      const std::vector<Number> u_values = u_old.to_host();
      const std::vector<Number> p_values = p_old.to_host();
      u_host.assign(u_values.begin(), u_values.end());
      p_host.assign(p_values.begin(), p_values.end());
    }



    template <typename Number>
    void
    DeviceBackend<Number>::get_iterate(std::vector<double> &u_host) const
    {
      const std::vector<Number> values = u.to_host();
      u_host.assign(values.begin(), values.end());
    }



    template <typename Number>
    void
    DeviceBackend<Number>::enqueue_predict(const StepLoads &loads,
                                           cudaStream_t     stream)
    {
      if (loads.dt > 0)
        predict_kernel<<<n_blocks(n_dofs), block_size, 0, stream>>>(
          u_old.data(),
          p_old.data(),
          mass.data(),
          n_dofs,
          Number(loads.dt),
          u.data());
      else
        GPU_ASSEMBLY_CHECK_CUDA(cudaMemcpyAsync(u.data(),
                                                u_old.data(),
                                                n_dofs * sizeof(Number),
                                                cudaMemcpyDeviceToDevice,
                                                stream));
      check_launch();
    }



    template <typename Number>
    void
    DeviceBackend<Number>::predict(const StepLoads &loads)
    {
      enqueue_predict(loads, nullptr);
    }



    template <typename Number>
    void
    DeviceBackend<Number>::set_load_factor(const StepLoads &loads,
                                           cudaStream_t     stream)
    {
      // From pageable memory the copy is staged before the call returns,
      // so the host value may change right after.
      load_factor_value = Number(Hyperelastic::load_factor(loads));
      GPU_ASSEMBLY_CHECK_CUDA(cudaMemcpyAsync(load_factor.data(),
                                              &load_factor_value,
                                              sizeof(Number),
                                              cudaMemcpyHostToDevice,
                                              stream));
    }



    template <typename Number>
    unsigned int
    DeviceBackend<Number>::enqueue_assembly(const StepLoads &loads,
                                            cudaStream_t     stream)
    {
      const bool         dynamic  = loads.dt > 0;
      const unsigned int n_values = nodal_data.size();
      gather_nodal_data<<<n_blocks(n_values), block_size, 0, stream>>>(
        u.data(),
        u_old.data(),
        node_dofs.data(),
        data.nodal_data_are_positions ? reference_positions.data() : nullptr,
        n_values,
        dynamic,
        nodal_data.data());
      check_launch();

      const auto kernel = make_step_kernel<Number>(data, loads);
      assembler.assemble(kernel, nodal_data, matrix, assembled, stream);
      if (surface_loads)
        surface_loads->enqueue(loads,
                               u.data(),
                               u_old.data(),
                               assembled.data(),
                               matrix.get_values().data(),
                               stream);

      using Reduction = GPUAssembly::DeviceReduction<Number>;
      static_assert(Reduction::block_size == block_size);
      const unsigned int blocks = residual_blocks();
      residual_kernel<<<blocks, block_size, 0, stream>>>(
        assembled.data(),
        u.data(),
        u_old.data(),
        p_old.data(),
        mass.data(),
        load_pattern.data(),
        constrained.data(),
        diagonal_index.data(),
        n_dofs,
        Number(loads.dt),
        load_factor.data(),
        residual.data(),
        matrix.get_values().data(),
        inverse_diagonal.data(),
        reduction.partial_sums());
      check_launch();
      return blocks;
    }



    template <typename Number>
    double
    DeviceBackend<Number>::assemble_residual(const StepLoads &loads)
    {
      set_load_factor(loads, nullptr);
      const unsigned int blocks   = enqueue_assembly(loads, nullptr);
      using Reduction             = GPUAssembly::DeviceReduction<Number>;
      constexpr unsigned int slot = Reduction::n_slots - 1;
      reduction.finish(blocks, 1, slot, slot);
      double rr = 0;
      reduction.read_slots(slot, 1, &rr);
      return residual_norm = std::sqrt(rr);
    }



    template <typename Number>
    void
    DeviceBackend<Number>::setup_linear_solver(const StepLoads &loads)
    {
      if (solver != LinearSolver::direct)
        return;
      // The analysis reads the values (LDL^T's matching): a tangent at the
      // initial state, the first Newton iteration's in a quasi-static run.
      assemble_residual(loads);
      std::string               message;
      const DirectSolverOutcome outcome = run_direct_solver_phase(
        [&]() {
          direct->analyze(matrix);
        },
        message);
      if (outcome == DirectSolverOutcome::success)
        {
          const auto        &statistics = direct->get_statistics();
          std::ostringstream note;
          note << "cuDSS " << factorization()
               << " analysed once for all steps; its "
                  "factorization needs about "
               << statistics.peak_device_memory / (1024 * 1024)
               << " MiB of the "
               << statistics.free_device_memory / (1024 * 1024)
               << " MiB free on the device";
          solver_note = note.str();
          return;
        }
      if (outcome == DirectSolverOutcome::singular)
        throw_message("'Solver/Linear solver' = direct: the tangent at the "
                      "initial state is singular. " +
                      message);
      if (!data.direct_may_fall_back)
        throw_message("'Solver/Linear solver' = direct: " + message +
                      " Choose cg-jacobi or cg-chebyshev instead.");
      direct.reset();
      solver      = LinearSolver::cg_jacobi;
      solver_note = "the direct solver's factorization would not fit in "
                    "device memory, so Jacobi-CG (" +
                    message + ")";
    }



    template <typename Number>
    LinearSolveResult
    DeviceBackend<Number>::solve_direct()
    {
      LinearSolveResult result;
      result.iterations       = 1;
      result.initial_residual = residual_norm;
      std::string               message;
      const DirectSolverOutcome outcome = run_direct_solver_phase(
        [&]() {
          // A new factorization of the analysed pattern, no allocation.
          direct->factorize(matrix);
          direct->solve(delta, residual);
        },
        message);
      if (outcome != DirectSolverOutcome::success)
        {
          result.final_residual = std::numeric_limits<double>::quiet_NaN();
          return result;
        }
      const double relative = direct->get_statistics().relative_residual;
      result.final_residual = relative >= 0 ? relative * residual_norm : 0.;
      result.converged      = true;
      return result;
    }



    template <typename Number>
    LinearSolveResult
    DeviceBackend<Number>::solve_and_update(const double relative_tolerance,
                                            const unsigned int max_iterations)
    {
      LinearSolveResult result;
      if (solver == LinearSolver::direct)
        {
          result = solve_direct();
          // A singular tangent stops the step: u stays the iterate that
          // gave it.
          if (!std::isfinite(result.final_residual))
            return result;
        }
      else
        {
          GPUAssembly::CGControl control;
          control.relative_tolerance = relative_tolerance;
          control.max_iterations     = max_iterations;
          result                     = to_linear_solve_result(
            preconditioned_cg ?
              preconditioned_cg->solve(matrix, delta, residual, control) :
              cg.solve(matrix, inverse_diagonal, delta, residual, control));
        }
      if (constraints)
        constraints->distribute(delta);
      newton_update_kernel<Number>
        <<<n_blocks(n_dofs), block_size>>>(delta.data(),
                                           n_dofs,
                                           nullptr,
                                           u.data(),
                                           nullptr,
                                           nullptr);
      check_launch();
      return result;
    }



    template <typename Number>
    void
    DeviceBackend<Number>::finish_step(const StepLoads &loads)
    {
      finish_kernel<<<n_blocks(n_dofs), block_size>>>(u.data(),
                                                      mass.data(),
                                                      n_dofs,
                                                      Number(loads.dt),
                                                      nullptr,
                                                      u_old.data(),
                                                      p_old.data());
      check_launch();
      // Timers around this call see the work done, not just enqueued.
      GPU_ASSEMBLY_CHECK_CUDA(cudaDeviceSynchronize());
    }



    template <typename Number>
    bool
    DeviceBackend<Number>::build_step_graph(const StepLoads     &loads,
                                            const NewtonControl &control,
                                            const StepGraphKey  &key)
    {
      // Memory is not allocated while capturing: size what the solve
      // needs first (the step graph sizes its report).
      cg.initialize(matrix, inverse_diagonal, delta, residual);

      typename GPUAssembly::DeviceJacobiCG<Number>::Control cg_control;
      cg_control.relative_tolerance = control.cg_tolerance;
      cg_control.max_iterations     = control.max_cg_iterations;
      const unsigned int n_partials = residual_blocks();

      const auto assemble_and_test = [&](const cudaStream_t         stream,
                                         cudaGraphConditionalHandle loop) {
        enqueue_assembly(loads, stream);
        newton_test_kernel<<<1, block_size, 0, stream>>>(
          reduction.partial_sums(),
          n_partials,
          control.tolerance,
          control.max_iterations,
          control.divergence_limit,
          loop,
          step_graph.report_data(),
          clock.data());
        check_launch();
      };
      const auto head = [&](const cudaStream_t         stream,
                            cudaGraphConditionalHandle loop) {
        step_begin_kernel<<<1, 1, 0, stream>>>(step_graph.report_data(),
                                               clock.data());
        enqueue_predict(loads, stream);
        stamp_kernel<<<1, 1, 0, stream>>>(clock.data(), clock_slot::update);
        assemble_and_test(stream, loop);
      };
      const auto newton_iteration = [&](const cudaStream_t         stream,
                                        cudaGraphConditionalHandle loop) {
        cg.enqueue_solve(matrix,
                         inverse_diagonal,
                         delta,
                         residual,
                         cg_control,
                         stream);
        if (constraints)
          constraints->distribute(delta, stream);
        newton_update_kernel<Number>
          <<<n_blocks(n_dofs), block_size, 0, stream>>>(
            delta.data(),
            n_dofs,
            cg.device_result(),
            u.data(),
            step_graph.report_data(),
            clock.data());
        check_launch();
        assemble_and_test(stream, loop);
      };
      const auto tail = [&](const cudaStream_t stream) {
        finish_kernel<<<n_blocks(n_dofs), block_size, 0, stream>>>(
          u.data(),
          mass.data(),
          n_dofs,
          Number(loads.dt),
          step_graph.report_data(),
          u_old.data(),
          p_old.data());
        stamp_kernel<<<1, 1, 0, stream>>>(clock.data(), clock_slot::update);
        check_launch();
      };
      return step_graph.build(key, head, newton_iteration, tail);
    }



    template <typename Number>
    bool
    DeviceBackend<Number>::run_step(const StepLoads     &loads,
                                    const NewtonControl &control,
                                    StepReport          &step_report)
    {
      if (!step_graph_supported)
        return false;
      const StepGraphKey key{loads.dt,
                             loads.body_force_factor,
                             control.tolerance,
                             control.max_iterations,
                             control.divergence_limit,
                             control.cg_tolerance,
                             control.max_cg_iterations};
      if (!step_graph.built_for(key))
        {
          // A key that changes from step to step (the body-force ramp of
          // quasi-static runs) would cost a capture and an instantiation
          // per step: those steps run the host-driven loop instead, and the
          // graph is built once the key repeats.
          const bool repeated = step_graph.repeats(key);
          if (step_graph.built() && !repeated)
            return false;
          step_graph.release();
          if (!build_step_graph(loads, control, key))
            {
              // No conditional nodes on this driver: the host runs the
              // loop from now on.
              step_graph_supported = false;
              return false;
            }
        }

      set_load_factor(loads, step_graph.stream());
      step_graph.launch(step_report);
      ran_whole_steps = true;
      return true;
    }



    template <typename Number>
    bool
    DeviceBackend<Number>::device_stage_times(DeviceStageTimes &times) const
    {
      if (!ran_whole_steps)
        return false;
      times = clock.read();
      return true;
    }



    template <typename Number>
    void
    DeviceBackend<Number>::reset_device_stage_times()
    {
      clock.reset();
    }



    template <typename Number>
    std::size_t
    DeviceBackend<Number>::memory_consumption() const
    {
      std::size_t bytes =
        assembler.device_memory_consumption() + matrix.memory_consumption();
      for (const auto *v : {&u,
                            &u_old,
                            &p_old,
                            &nodal_data,
                            &assembled,
                            &residual,
                            &delta,
                            &inverse_diagonal,
                            &mass,
                            &load_pattern,
                            &reference_positions})
        bytes += v->memory_consumption();
      // CG work vectors r, z, p, q.
      bytes += 4 * n_dofs * sizeof(Number);
      if (surface_loads)
        bytes += surface_loads->memory_consumption();
      if (direct)
        bytes += direct->get_statistics().permanent_device_memory +
                 direct->get_statistics().work_memory;
      return bytes + node_dofs.memory_consumption() +
             diagonal_index.memory_consumption() +
             constrained.memory_consumption();
    }



    template <typename Number>
    std::string
    DeviceBackend<Number>::description() const
    {
      return "GPU: " + device_method_description(data) + " assembly, " +
             (solver == LinearSolver::direct ? "cuDSS " + factorization() :
                                               short_name(solver)) +
             " and updates on the device in " +
             (sizeof(Number) == 8 ? "double" : "single") + " precision";
    }
  } // namespace



  template <typename Number>
  std::unique_ptr<IntegratorBackend>
  make_device_backend(const BackendData &data)
  {
    refuse_resident_only_solver(data.linear_solver.solver,
                                "the device backend on one process");
    return std::make_unique<DeviceBackend<Number>>(data);
  }

  template std::unique_ptr<IntegratorBackend>
  make_device_backend<float>(const BackendData &);
  template std::unique_ptr<IntegratorBackend>
  make_device_backend<double>(const BackendData &);
} // namespace Hyperelastic

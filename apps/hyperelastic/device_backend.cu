// The device backend of the hyperelastic time integrator: assembly through
// the plugin's DeviceAssembler, Jacobi-CG through DeviceJacobiCG, and the
// Newton and time updates as element-wise kernels. A whole time step,
// Newton loop included, is one CUDA graph launch (run_step()): the loop's
// tests run on the device, and only the step's report crosses to the
// host, once per step. The staged operations of IntegratorBackend remain
// for the host-driven loop (and drivers without conditional graph nodes).

#include <gpu_assembly/base/cuda_check.h>
#include <gpu_assembly/engine/device_assembler.h>
#include <gpu_assembly/kernels/neo_hookean.h>
#include <gpu_assembly/lac/block_sum.cuh>
#include <gpu_assembly/lac/device_solver.h>
#include <gpu_assembly/lac/graph_capture.cuh>

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>

#include "integrator_backend.h"

namespace Hyperelastic
{
  namespace
  {
    constexpr int dim        = 3;
    constexpr int block_size = 256;

    unsigned int
    n_blocks(const std::size_t n)
    {
      return static_cast<unsigned int>((n + block_size - 1) / block_size);
    }

    template <typename T>
    std::vector<T>
    convert(const std::vector<double> &values)
    {
      return std::vector<T>(values.begin(), values.end());
    }

    // The report of a step run on the device (run_step()), doubles.
    namespace report_slot
    {
      constexpr unsigned int status    = 0; // StepCode
      constexpr unsigned int iteration = 1; // index of the next residual
      constexpr unsigned int cg        = 2; // CG iterations of the step
      constexpr unsigned int residuals = 3; // one per Newton iteration + 1
    }                                       // namespace report_slot

    // StepStatus, plus "still iterating".
    namespace step_code
    {
      constexpr int running      = -1;
      constexpr int converged    = static_cast<int>(StepStatus::converged);
      constexpr int not_finite   = static_cast<int>(StepStatus::not_finite);
      constexpr int diverged     = static_cast<int>(StepStatus::diverged);
      constexpr int cg_breakdown = static_cast<int>(StepStatus::cg_breakdown);
    } // namespace step_code

    // Nodal data of the element kernel: the midpoint displacement
    // (u + u_k)/2 (dynamic) or u (quasi-static), plus X if the kernel reads
    // positions. Gathers from DoF order into node-major order.
    template <typename Number>
    __global__ void
    gather_nodal_data(const Number      *u,
                      const Number      *u_old,
                      const int         *node_dofs,
                      const Number      *reference_positions,
                      const unsigned int n_values,
                      const bool         midpoint,
                      Number            *nodal_data)
    {
      const unsigned int i = blockIdx.x * block_size + threadIdx.x;
      if (i >= n_values)
        return;
      const int dof   = node_dofs[i];
      Number    value = midpoint ? Number(0.5) * (u[dof] + u_old[dof]) : u[dof];
      if (reference_positions != nullptr)
        value += reference_positions[i];
      nodal_data[i] = value;
    }

    // The rest of an assembly in one pass over the DoFs: the residual of
    // eq. (4), r = p_k - m (u - u_k)/dt - dt/2 f(u_mid), where the assembled
    // vector holds dt/2 (f_int - f_body) and the nodal load enters f with a
    // minus sign (quasi-static, dt = 0: r = f_ext - f_int); m/dt added to
    // the diagonal of the tangent (the lumped mass term of eq. (6)) and its
    // inverse stored for the Jacobi preconditioner; and the block sums of
    // r.r for the residual norm. One kernel instead of three: at the
    // hand-model size each is a few microseconds of launch and drain. The
    // load factor changes every step and is read from device memory, so
    // that a step's graph need not be rebuilt for it.
    template <typename Number>
    __global__ void
    residual_kernel(const Number        *assembled,
                    const Number        *u,
                    const Number        *u_old,
                    const Number        *p_old,
                    const Number        *mass,
                    const Number        *load_pattern,
                    const unsigned char *constrained,
                    const int           *diagonal_index,
                    const unsigned int   n,
                    const Number         dt,
                    const Number        *load_factor_pointer,
                    Number              *r,
                    Number              *values,
                    Number              *inverse_diagonal,
                    double              *partial)
    {
      const Number load_factor = *load_factor_pointer;
      double       rr[1]       = {0.};
      for (unsigned int i = blockIdx.x * block_size + threadIdx.x; i < n;
           i += gridDim.x * block_size)
        {
          Number value = load_factor * load_pattern[i] - assembled[i];
          if (dt > Number(0))
            value += p_old[i] - mass[i] * (u[i] - u_old[i]) / dt;
          value = constrained[i] ? Number(0) : value;
          r[i]  = value;
          rr[0] += double(value) * double(value);

          Number diagonal = values[diagonal_index[i]];
          if (dt > Number(0))
            {
              diagonal += mass[i] / dt;
              values[diagonal_index[i]] = diagonal;
            }
          inverse_diagonal[i] = Number(1) / diagonal;
        }

      GPUAssembly::internal::block_sum<block_size>(rr);
      if (threadIdx.x == 0)
        partial[blockIdx.x] = rr[0];
    }



    // First Newton iterate u = u_k + dt p_k / m.
    template <typename Number>
    __global__ void
    predict_kernel(const Number      *u_old,
                   const Number      *p_old,
                   const Number      *mass,
                   const unsigned int n,
                   const Number       dt,
                   Number            *u)
    {
      const unsigned int i = blockIdx.x * block_size + threadIdx.x;
      if (i < n)
        u[i] = u_old[i] + dt * p_old[i] / mass[i];
    }

    // Eq. (5) written with eq. (4): p_{k+1} = 2 m (u - u_k)/dt - p_k; then
    // the new step's old state. Given a step report (run_step()), only if
    // the step converged, so that a failed step leaves the last good state.
    template <typename Number>
    __global__ void
    finish_kernel(const Number      *u,
                  const Number      *mass,
                  const unsigned int n,
                  const Number       dt,
                  const double      *report,
                  Number            *u_old,
                  Number            *p_old)
    {
      const unsigned int i = blockIdx.x * block_size + threadIdx.x;
      if (i >= n || (report != nullptr &&
                     report[report_slot::status] != step_code::converged))
        return;
      if (dt > Number(0))
        p_old[i] = Number(2) * mass[i] * (u[i] - u_old[i]) / dt - p_old[i];
      u_old[i] = u[i];
    }



    // Device clock stamps of the stages: the last stamp, then nanoseconds
    // per stage, accumulated over the steps.
    namespace clock_slot
    {
      constexpr unsigned int last     = 0;
      constexpr unsigned int assembly = 1;
      constexpr unsigned int solve    = 2;
      constexpr unsigned int update   = 3;
      constexpr unsigned int size     = 4;
    } // namespace clock_slot

    __device__ inline unsigned long long
    global_clock()
    {
      unsigned long long t;
      asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
      return t;
    }

    // Charge the time since the last stamp to @p stage (or to nothing, for
    // the step's first stamp) and stamp now.
    __device__ inline void
    stamp(unsigned long long *clock, const unsigned int stage)
    {
      const unsigned long long now = global_clock();
      if (stage != clock_slot::last)
        clock[stage] += now - clock[clock_slot::last];
      clock[clock_slot::last] = now;
    }

    __global__ void
    step_begin_kernel(double *report, unsigned long long *clock)
    {
      report[report_slot::status]    = step_code::running;
      report[report_slot::iteration] = 0;
      report[report_slot::cg]        = 0;
      stamp(clock, clock_slot::last);
    }

    __global__ void
    stamp_kernel(unsigned long long *clock, const unsigned int stage)
    {
      stamp(clock, stage);
    }

    // After an assembly: the residual norm from the residual kernel's block
    // sums, added in the order DeviceReduction::finish() adds them, so that
    // the norm is bitwise the one the host-driven loop sees; then the
    // tests of HyperelasticSolid::do_step(), in its order, and whether the
    // loop goes on.
    __global__ void
    newton_test_kernel(const double                    *partial,
                       const unsigned int               n_partials,
                       const double                     tolerance,
                       const unsigned int               max_iterations,
                       const double                     divergence_limit,
                       const cudaGraphConditionalHandle loop,
                       double                          *report,
                       unsigned long long              *clock)
    {
      double value[1];
      GPUAssembly::internal::sum_partials<block_size>(partial,
                                                      n_partials,
                                                      value);
      if (threadIdx.x != 0)
        return;
      stamp(clock, clock_slot::assembly);
      int status = static_cast<int>(report[report_slot::status]);
      if (status == step_code::running)
        {
          const unsigned int it =
            static_cast<unsigned int>(report[report_slot::iteration]);
          const double residual               = sqrt(value[0]);
          report[report_slot::residuals + it] = residual;
          const double first                  = report[report_slot::residuals];
          if (!isfinite(residual))
            status = step_code::not_finite;
          else if (residual <= tolerance)
            status = step_code::converged;
          else if (it == max_iterations ||
                   residual > divergence_limit * fmax(first, tolerance))
            status = step_code::diverged;
          report[report_slot::status] = status;
        }
      cudaGraphSetConditional(loop, status == step_code::running ? 1u : 0u);
    }

    // After a CG solve: u += delta; and, given a step report (run_step()),
    // the CG's iterations and the breakdown test, the next residual being
    // the next iteration's. The host-driven loop (solve_and_update()) passes
    // no report: it reads the CG's result itself.
    template <typename Number>
    __global__ void
    newton_update_kernel(const Number       *delta,
                         const unsigned int  n,
                         const double       *cg_result,
                         Number             *u,
                         double             *report,
                         unsigned long long *clock)
    {
      const unsigned int i = blockIdx.x * block_size + threadIdx.x;
      if (i == 0 && report != nullptr)
        {
          using CG = GPUAssembly::DeviceJacobiCG<Number>;
          stamp(clock, clock_slot::solve);
          report[report_slot::cg] += cg_result[CG::result_iterations];
          report[report_slot::iteration] += 1;
          if (!isfinite(sqrt(cg_result[CG::result_final_rr])))
            report[report_slot::status] = step_code::cg_breakdown;
        }
      if (i < n)
        u[i] += delta[i];
    }

    // What a step's graph was built for: everything its kernels take by
    // value. The load amplitude is not among them (device memory).
    struct StepGraphKey
    {
      double       dt                = -1;
      double       body_force_factor = 0;
      double       tolerance         = 0;
      unsigned int max_iterations    = 0;
      double       divergence_limit  = 0;
      double       cg_tolerance      = 0;
      unsigned int max_cg_iterations = 0;

      bool
      operator==(const StepGraphKey &other) const
      {
        return dt == other.dt && body_force_factor == other.body_force_factor &&
               tolerance == other.tolerance &&
               max_iterations == other.max_iterations &&
               divergence_limit == other.divergence_limit &&
               cg_tolerance == other.cg_tolerance &&
               max_cg_iterations == other.max_cg_iterations;
      }
    };



    template <typename Number>
    class DeviceBackend : public IntegratorBackend
    {
    public:
      explicit DeviceBackend(const BackendData &data);

      ~DeviceBackend() override;

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

      bool
      runs_whole_steps() const override
      {
        return step_graph_supported;
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
      /// index per DoF, and at the hand-model size fewer threads, each
      /// looping over several DoFs, left it waiting on those reads (14
      /// microseconds with 79 blocks, ncu).
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

      /// Capture run_step()'s graph; false if the driver cannot.
      bool
      build_step_graph(const StepLoads &loads, const NewtonControl &control);

      void
      release_step_graph() noexcept;

      const BackendData                        &data;
      const unsigned int                        n_dofs;
      GPUAssembly::DeviceAssembler<dim, Number> assembler;
      GPUAssembly::DeviceCSRMatrix<Number>      matrix;
      GPUAssembly::DeviceJacobiCG<Number>       cg;
      GPUAssembly::DeviceReduction<Number>      reduction;
      GPUAssembly::DeviceVector<Number>         u, u_old, p_old;
      GPUAssembly::DeviceVector<Number>         nodal_data;
      GPUAssembly::DeviceVector<Number>         assembled, residual;
      GPUAssembly::DeviceVector<Number>         delta, inverse_diagonal;
      GPUAssembly::DeviceVector<Number>         mass, load_pattern;
      GPUAssembly::DeviceVector<Number>         reference_positions;
      GPUAssembly::DeviceVector<int>            node_dofs;
      GPUAssembly::DeviceVector<int>            diagonal_index;
      GPUAssembly::DeviceVector<unsigned char>  constrained;
      GPUAssembly::DeviceVector<Number>         load_factor;
      /// Host copy of load_factor's value: the source of its upload.
      Number load_factor_value = 0;

      // run_step(): its graph, its report and the stage clock.
      cudaStream_t    stream      = nullptr;
      cudaStream_t    body_stream = nullptr;
      cudaGraph_t     step_graph  = nullptr;
      cudaGraphExec_t step_exec   = nullptr;
      StepGraphKey    step_key;
      /// The key of the last step run_step() was asked for.
      StepGraphKey                                  previous_key;
      bool                                          step_graph_supported;
      GPUAssembly::DeviceVector<double>             report;
      std::vector<double>                           report_host;
      GPUAssembly::DeviceVector<unsigned long long> clock;
      bool                                          ran_whole_steps = false;
    };



    template <typename Number>
    DeviceBackend<Number>::DeviceBackend(const BackendData &data)
      : data(data)
      , n_dofs(data.arrays->n_dofs)
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
      , clock(clock_slot::size)
    {
      typename GPUAssembly::DeviceAssembler<dim, Number>::AdditionalData
        additional_data;
      additional_data.method =
        GPUAssembly::parse_assembly_method(data.assembly_method);
      additional_data.symmetric      = data.symmetric_element_data;
      additional_data.n_nodal_fields = dim;
      assembler.reinit(*data.arrays, additional_data);
      matrix.reinit(*data.arrays);
      if (data.nodal_data_are_positions)
        reference_positions.copy_from_host(
          convert<Number>(data.arrays->nodal_coordinates));
      // Blocking streams: they stay ordered with the default stream, which
      // the staged operations and the copies use.
      GPU_ASSEMBLY_CHECK_CUDA(cudaStreamCreate(&stream));
      const cudaError_t error = cudaStreamCreate(&body_stream);
      if (error != cudaSuccess)
        {
          GPU_ASSEMBLY_CHECK_CUDA_NOTHROW(cudaStreamDestroy(stream));
          GPU_ASSEMBLY_CHECK_CUDA(error);
        }
    }



    template <typename Number>
    DeviceBackend<Number>::~DeviceBackend()
    {
      release_step_graph();
      GPU_ASSEMBLY_CHECK_CUDA_NOTHROW(cudaStreamDestroy(body_stream));
      GPU_ASSEMBLY_CHECK_CUDA_NOTHROW(cudaStreamDestroy(stream));
    }



    template <typename Number>
    void
    DeviceBackend<Number>::release_step_graph() noexcept
    {
      if (step_exec != nullptr)
        GPU_ASSEMBLY_CHECK_CUDA_NOTHROW(cudaGraphExecDestroy(step_exec));
      if (step_graph != nullptr)
        GPU_ASSEMBLY_CHECK_CUDA_NOTHROW(cudaGraphDestroy(step_graph));
      step_exec  = nullptr;
      step_graph = nullptr;
      step_key   = StepGraphKey();
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
      return std::sqrt(rr);
    }



    template <typename Number>
    LinearSolveResult
    DeviceBackend<Number>::solve_and_update(const double relative_tolerance,
                                            const unsigned int max_iterations)
    {
      typename GPUAssembly::DeviceJacobiCG<Number>::Control control;
      control.relative_tolerance = relative_tolerance;
      control.max_iterations     = max_iterations;
      const auto result =
        cg.solve(matrix, inverse_diagonal, delta, residual, control);
      newton_update_kernel<Number>
        <<<n_blocks(n_dofs), block_size>>>(delta.data(),
                                           n_dofs,
                                           nullptr,
                                           u.data(),
                                           nullptr,
                                           nullptr);
      check_launch();
      return {result.iterations,
              result.initial_residual,
              result.final_residual,
              result.converged};
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
                                            const NewtonControl &control)
    {
      // Memory is not allocated while capturing: size what the solve and
      // the report need first.
      report.reinit(report_slot::residuals + control.max_iterations + 1);
      report_host.resize(report.size());
      cg.initialize(matrix, inverse_diagonal, delta, residual);

      typename GPUAssembly::DeviceJacobiCG<Number>::Control cg_control;
      cg_control.relative_tolerance = control.cg_tolerance;
      cg_control.max_iterations     = control.max_cg_iterations;
      const unsigned int n_partials = residual_blocks();

      cudaGraph_t graph   = nullptr;
      bool        capture = false, body_capture = false;
      const auto  end_captures = [&]() noexcept {
        cudaGraph_t discarded = nullptr;
        if (body_capture)
          (void)cudaStreamEndCapture(body_stream, &discarded);
        discarded = nullptr;
        if (capture)
          (void)cudaStreamEndCapture(stream, &discarded);
        if (discarded != nullptr)
          (void)cudaGraphDestroy(discarded);
        (void)cudaGetLastError();
      };
      try
        {
          GPU_ASSEMBLY_CHECK_CUDA(
            cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
          capture = true;
          cudaGraphConditionalHandle loop;
          if (!GPUAssembly::internal::create_condition(
                GPUAssembly::internal::capturing_graph(stream),
                loop))
            {
              end_captures();
              return false;
            }

          step_begin_kernel<<<1, 1, 0, stream>>>(report.data(), clock.data());
          enqueue_predict(loads, stream);
          stamp_kernel<<<1, 1, 0, stream>>>(clock.data(), clock_slot::update);
          const auto assemble_and_test = [&](cudaStream_t s) {
            enqueue_assembly(loads, s);
            newton_test_kernel<<<1, block_size, 0, s>>>(
              reduction.partial_sums(),
              n_partials,
              control.tolerance,
              control.max_iterations,
              control.divergence_limit,
              loop,
              report.data(),
              clock.data());
            check_launch();
          };
          assemble_and_test(stream);

          // The Newton loop: a conditional "while" node whose body is
          // captured from a second stream.
          const cudaGraph_t loop_body =
            GPUAssembly::internal::capture_while_node(stream, loop);
          if (loop_body == nullptr)
            {
              end_captures();
              return false;
            }
          GPU_ASSEMBLY_CHECK_CUDA(
            cudaStreamBeginCaptureToGraph(body_stream,
                                          loop_body,
                                          nullptr,
                                          nullptr,
                                          0,
                                          cudaStreamCaptureModeThreadLocal));
          body_capture = true;
          cg.enqueue_solve(matrix,
                           inverse_diagonal,
                           delta,
                           residual,
                           cg_control,
                           body_stream);
          newton_update_kernel<Number>
            <<<n_blocks(n_dofs), block_size, 0, body_stream>>>(
              delta.data(),
              n_dofs,
              cg.device_result(),
              u.data(),
              report.data(),
              clock.data());
          check_launch();
          assemble_and_test(body_stream);
          cudaGraph_t body = nullptr;
          body_capture     = false;
          GPU_ASSEMBLY_CHECK_CUDA(cudaStreamEndCapture(body_stream, &body));

          finish_kernel<<<n_blocks(n_dofs), block_size, 0, stream>>>(
            u.data(),
            mass.data(),
            n_dofs,
            Number(loads.dt),
            report.data(),
            u_old.data(),
            p_old.data());
          stamp_kernel<<<1, 1, 0, stream>>>(clock.data(), clock_slot::update);
          check_launch();
          capture = false;
          GPU_ASSEMBLY_CHECK_CUDA(cudaStreamEndCapture(stream, &graph));
          step_graph = graph;
          GPU_ASSEMBLY_CHECK_CUDA(
            cudaGraphInstantiate(&step_exec, step_graph, 0));
        }
      catch (...)
        {
          end_captures();
          release_step_graph();
          throw;
        }
      return true;
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
      if (step_exec == nullptr || !(key == step_key))
        {
          // A key that changes from step to step (the body-force ramp of
          // quasi-static runs) would cost a capture and an instantiation
          // per step: those steps run the host-driven loop instead, and the
          // graph is built once the key repeats.
          const bool repeated = key == previous_key;
          previous_key        = key;
          if (step_exec != nullptr && !repeated)
            return false;
          release_step_graph();
          if (!build_step_graph(loads, control))
            {
              // No conditional nodes on this driver: the host runs the
              // loop from now on.
              step_graph_supported = false;
              return false;
            }
          step_key = key;
        }

      set_load_factor(loads, stream);
      GPU_ASSEMBLY_CHECK_CUDA(cudaGraphLaunch(step_exec, stream));
      GPU_ASSEMBLY_CHECK_CUDA(cudaMemcpyAsync(report_host.data(),
                                              report.data(),
                                              report.size() * sizeof(double),
                                              cudaMemcpyDeviceToHost,
                                              stream));
      GPU_ASSEMBLY_CHECK_CUDA(cudaStreamSynchronize(stream));
      ran_whole_steps = true;

      const int status   = static_cast<int>(report_host[report_slot::status]);
      step_report.status = static_cast<StepStatus>(status);
      step_report.n_cg_iterations = report_host[report_slot::cg];
      const unsigned int last =
        static_cast<unsigned int>(report_host[report_slot::iteration]);
      // A CG breakdown ends the iteration before its residual.
      const unsigned int n_residuals =
        step_report.status == StepStatus::cg_breakdown ? last : last + 1;
      step_report.residuals.assign(report_host.begin() + report_slot::residuals,
                                   report_host.begin() +
                                     report_slot::residuals + n_residuals);
      return true;
    }



    template <typename Number>
    bool
    DeviceBackend<Number>::device_stage_times(DeviceStageTimes &times) const
    {
      if (!ran_whole_steps)
        return false;
      const std::vector<unsigned long long> ns = clock.to_host();
      times.assembly = 1e-9 * ns[clock_slot::assembly];
      times.solve    = 1e-9 * ns[clock_slot::solve];
      times.update   = 1e-9 * ns[clock_slot::update];
      return true;
    }



    template <typename Number>
    void
    DeviceBackend<Number>::reset_device_stage_times()
    {
      clock.set_zero();
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
      return bytes + node_dofs.memory_consumption() +
             diagonal_index.memory_consumption() +
             constrained.memory_consumption();
    }



    template <typename Number>
    std::string
    DeviceBackend<Number>::description() const
    {
      return "GPU: " + data.assembly_method +
             (data.symmetric_element_data &&
                  data.assembly_method == "GlobalNZ" ?
                " (symmetric element data)" :
                "") +
             " assembly, Jacobi-CG and updates on the device in " +
             (sizeof(Number) == 8 ? "double" : "single") + " precision";
    }
  } // namespace



  template <typename Number>
  std::unique_ptr<IntegratorBackend>
  make_device_backend(const BackendData &data)
  {
    return std::make_unique<DeviceBackend<Number>>(data);
  }

  template std::unique_ptr<IntegratorBackend>
  make_device_backend<float>(const BackendData &);
  template std::unique_ptr<IntegratorBackend>
  make_device_backend<double>(const BackendData &);
} // namespace Hyperelastic

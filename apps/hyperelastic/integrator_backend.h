// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef hyperelastic_integrator_backend_h
#define hyperelastic_integrator_backend_h

// The operations of one time step of the midpoint rule (GPU Gems chapter,
// eq. 4-6) that a backend carries out on its own data: on the host or the
// device of one process, or on the ranks of an MPI communicator (Trilinos,
// or the plugin's resident distributed classes). The Newton loop that
// strings them together lives once, in ImplicitSolid; a backend only moves
// numbers. This header includes no deal.II header, so that nvcc can compile
// the device backend.

#include <gpu_assembly/adapter/mesh_arrays.h>
#include <gpu_assembly/engine/device_assembler.h>
#include <gpu_assembly/kernels/neo_hookean.h>
#include <gpu_assembly/lac/cg_solver.h>

#include <cstddef>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "surface_loads.h"

namespace dealii
{
  template <typename number>
  class AffineConstraints;
}

namespace GPUAssembly
{
  template <int dim>
  class DoFHandlerAdapter;
}

namespace Hyperelastic
{
  /**
   * The linear solver of a Newton iteration ('Solver/Linear solver', 'auto'
   * resolved at set-up).
   */
  enum class LinearSolver
  {
    /// A sparse direct solver: cuDSS on the device, UMFPACK on the host,
    /// Trilinos' direct solver on several ranks.
    direct,
    /// CG preconditioned with the inverse diagonal.
    cg_jacobi,
    /// CG preconditioned with a Chebyshev polynomial in the Jacobi-scaled
    /// matrix (deal.II's PreconditionChebyshev).
    cg_chebyshev,
    /// CG preconditioned with the inverses of the 3 x 3 blocks of each
    /// node's DoFs.
    cg_block_jacobi,
    /// BiCGStab preconditioned with the inverse diagonal, for the
    /// non-symmetric tangent of a follower pressure (the resident backend
    /// on MPI ranks).
    bicgstab_jacobi
  };

  /// The solver's value of 'Solver/Linear solver'.
  inline std::string
  parameter_value(const LinearSolver solver)
  {
    switch (solver)
      {
        case LinearSolver::direct:
          return "direct";
        case LinearSolver::cg_jacobi:
          return "cg-jacobi";
        case LinearSolver::cg_chebyshev:
          return "cg-chebyshev";
        case LinearSolver::cg_block_jacobi:
          return "cg-block-jacobi";
        case LinearSolver::bicgstab_jacobi:
          return "bicgstab-jacobi";
      }
    return "";
  }

  /// The solver of a value of 'Solver/Linear solver' other than auto.
  inline LinearSolver
  parse_linear_solver(const std::string &value)
  {
    for (const LinearSolver solver : {LinearSolver::direct,
                                      LinearSolver::cg_jacobi,
                                      LinearSolver::cg_chebyshev,
                                      LinearSolver::cg_block_jacobi,
                                      LinearSolver::bicgstab_jacobi})
      if (parameter_value(solver) == value)
        return solver;
    throw std::invalid_argument("'Solver/Linear solver' = '" + value +
                                "' names no linear solver.");
  }

  /**
   * Throws dealii's ExcMessage(@p message): for the device backend, which
   * nvcc compiles without deal.II's headers.
   */
  [[noreturn]] void
  throw_message(const std::string &message);

  /// How a phase of the device direct solver ended.
  enum class DirectSolverOutcome
  {
    success,
    /// GPUAssembly::ExcSingularMatrix: the tangent is singular.
    singular,
    /// GPUAssembly::ExcDirectSolverMemory: the factorization would not
    /// fit in device memory.
    out_of_memory
  };

  /**
   * Runs @p phase (calls of GPUAssembly::DeviceDirectSolver) and returns
   * how it ended, @p message set to the exception's text where it threw
   * one of the two outcomes above; any other exception passes. For the
   * device backend, which nvcc compiles without deal.II's headers.
   */
  DirectSolverOutcome
  run_direct_solver_phase(const std::function<void()> &phase,
                          std::string                 &message);

  /// The solver's short name in the log: "Jacobi-CG" and so on.
  inline std::string
  short_name(const LinearSolver solver)
  {
    switch (solver)
      {
        case LinearSolver::direct:
          return "direct solver";
        case LinearSolver::cg_jacobi:
          return "Jacobi-CG";
        case LinearSolver::cg_chebyshev:
          return "Chebyshev-Jacobi-CG";
        case LinearSolver::cg_block_jacobi:
          return "block-Jacobi-CG";
        case LinearSolver::bicgstab_jacobi:
          return "Jacobi-BiCGStab";
      }
    return "";
  }

  /// The name of the timer section (and stage) of the linear solves.
  inline std::string
  solve_stage_name(const LinearSolver solver)
  {
    return "Solve (" + short_name(solver) + ")";
  }

  /**
   * Throws, naming the entries, where @p solver is bicgstab_jacobi, which
   * only the resident backend on MPI ranks offers; @p backend names the
   * backend of the run in the message.
   */
  void
  refuse_resident_only_solver(const LinearSolver solver,
                              const std::string &backend);

  /// The linear solver and its preconditioner's parameters.
  struct LinearSolverData
  {
    LinearSolver solver = LinearSolver::cg_jacobi;
    /// cg_chebyshev: degree of the polynomial and the ratio of the
    /// largest eigenvalue to the smallest one it damps (deal.II's
    /// PreconditionChebyshev::AdditionalData).
    unsigned int chebyshev_degree          = 5;
    double       chebyshev_smoothing_range = 20;
  };



  /**
   * What a backend needs, constant over a run. Per-DoF vectors hold the
   * locally owned DoFs in increasing order: all DoFs on one process.
   */
  struct BackendData
  {
    /// One process (host and device backends): the adapter's arrays.
    const GPUAssembly::MeshArrays *arrays = nullptr;
    /// Several ranks (Trilinos and resident backends): the adapter and the
    /// constraints on the locally relevant DoFs (closed). Both must
    /// outlive the backend.
    const GPUAssembly::DoFHandlerAdapter<3> *adapter     = nullptr;
    const dealii::AffineConstraints<double> *constraints = nullptr;
    /// Lumped (Lobatto) mass per DoF, a hanging DoF's mass also on the
    /// DoFs of its line.
    std::vector<double> lumped_mass;
    /// Nodal load per DoF at unit amplitude of the load time function.
    std::vector<double> load_pattern;
    /// One process: position of the diagonal entry of each row in
    /// column_indices.
    std::vector<int> diagonal_index;
    double           mu     = 5;
    double           lambda = 2;
    /// Body force per unit reference volume.
    double body_force[3] = {0, 0, 0};
    /// Dead traction and follower pressure on boundary faces, at unit
    /// amplitude (StepLoads scales them).
    SurfaceLoadData surface_loads;
    /// Nodal data are current positions (X + u), not displacements: needed
    /// when S(e) is QR-compressed, since only F = sum phi_a (x) grad N_a is
    /// invariant under the rotation the compression drops.
    bool nodal_data_are_positions = false;
    /// Assembly method on the device ("GlobalNZ" or "SharedNZ").
    std::string assembly_method = "GlobalNZ";
    /// Store only the upper triangle of the symmetric element matrices.
    bool symmetric_element_data = true;
    /// Run each time step as one CUDA graph launch (device backend).
    bool step_graph = true;
    /// The solver of each Newton iteration's linear system. A backend
    /// that cannot run it refuses it when constructed, with a message that
    /// names the entry and what to choose instead.
    LinearSolverData linear_solver;
    /// With LinearSolver::direct on the device: where the factorization
    /// would not fit in device memory, or the plugin has no direct solver,
    /// run cg_jacobi instead of refusing ('Solver/Linear solver' = auto).
    bool direct_may_fall_back = false;
    /// Several ranks: assemble on the rank's GPU (chosen before by
    /// select_device_by_node_rank()).
    bool use_device = false;
    /// Several ranks: 'Execution/Exchange path' (auto, host, nccl,
    /// cuda-aware-mpi).
    std::string exchange_path = "auto";
  };



  /// The device assembly method and its choices that @p data asks for.
  inline void
  set_device_method(const BackendData             &data,
                    GPUAssembly::DeviceMethodData &method)
  {
    method.method = GPUAssembly::parse_assembly_method(data.assembly_method);
    method.global_nz.symmetric = data.symmetric_element_data;
  }

  /// The device assembly method, as the backends' description() names it.
  inline std::string
  device_method_description(const BackendData &data)
  {
    return data.assembly_method +
           (data.symmetric_element_data && data.assembly_method == "GlobalNZ" ?
              " (symmetric element data)" :
              "");
  }



  /**
   * What changes from step to step: the step size and the load factors.
   */
  struct StepLoads
  {
    /// Time step; 0 means quasi-static (no inertia).
    double dt = 0;
    /// Factor on the body force.
    double body_force_factor = 1;
    /// Amplitude of the nodal load (BackendData::load_pattern).
    double load_amplitude = 0;
    /// Amplitude of the dead traction (SurfaceLoadData::traction_pattern).
    double traction_amplitude = 0;
    /// The follower pressure: 'Surface loads/Pressure' times its time
    /// function.
    double pressure = 0;
  };



  /**
   * The element kernel of one assembly, the same on host and device.
   * Dynamic: h(u) of eq. (4) evaluates f at the midpoint, so dh/du carries
   * the factor 1/2 of d u_mid / d u: dt/4 on K, dt/2 on f. Quasi-static:
   * K and f unscaled.
   */
  template <typename Number>
  GPUAssembly::NeoHookeanKernel<3, Number>
  make_step_kernel(const BackendData &data, const StepLoads &loads)
  {
    const bool                               dynamic = loads.dt > 0;
    GPUAssembly::NeoHookeanKernel<3, Number> kernel;
    kernel.mu                       = data.mu;
    kernel.lambda                   = data.lambda;
    kernel.nodal_data_are_positions = data.nodal_data_are_positions;
    for (unsigned int d = 0; d < 3; ++d)
      kernel.body_force[d] = loads.body_force_factor * data.body_force[d];
    kernel.stiffness_scale = dynamic ? loads.dt / 4 : 1.;
    kernel.force_scale     = dynamic ? loads.dt / 2 : 1.;
    return kernel;
  }

  /// Factor on BackendData::load_pattern in the residual, scaled as f is.
  inline double
  load_factor(const StepLoads &loads)
  {
    return (loads.dt > 0 ? loads.dt / 2 : 1.) * loads.load_amplitude;
  }



  /**
   * How a linear solve went. A direct solve counts one iteration; its
   * residuals are those of the right-hand side and of the computed update.
   */
  struct LinearSolveResult
  {
    unsigned int iterations       = 0;
    double       initial_residual = 0;
    double       final_residual   = 0;
    bool         converged        = false;
  };



  /// The plugin's preconditioned CG's parameters for cg_chebyshev and
  /// cg_block_jacobi.
  inline GPUAssembly::CGSolverParameters
  cg_solver_parameters(const LinearSolverData &data)
  {
    GPUAssembly::CGSolverParameters parameters;
    parameters.preconditioner =
      data.solver == LinearSolver::cg_block_jacobi ?
        GPUAssembly::CGPreconditioner::point_block_jacobi :
        GPUAssembly::CGPreconditioner::chebyshev;
    parameters.chebyshev.degree          = data.chebyshev_degree;
    parameters.chebyshev.smoothing_range = data.chebyshev_smoothing_range;
    return parameters;
  }

  /// A CG's result as the Newton loop reads it.
  inline LinearSolveResult
  to_linear_solve_result(const GPUAssembly::CGResult &result)
  {
    return {result.iterations,
            result.initial_residual,
            result.final_residual,
            result.converged};
  }



  /**
   * The Newton loop's controls (Parameters::Solver), for a backend that
   * runs the whole loop itself.
   */
  struct NewtonControl
  {
    double       tolerance         = 1e-5;
    unsigned int max_iterations    = 20;
    double       divergence_limit  = 1e3;
    double       cg_tolerance      = 1e-6;
    unsigned int max_cg_iterations = 1000;
  };

  /// How a time step's Newton loop ended.
  enum class StepStatus
  {
    converged,
    /// The residual is not finite (an inverted element, as a rule).
    not_finite,
    /// Too many iterations, or the residual grew past the divergence limit.
    diverged,
    /// The linear solve's residual is not finite: CG broke down (the
    /// tangent is not positive definite), or the direct solver found the
    /// tangent singular.
    cg_breakdown
  };

  /**
   * A time step's Newton loop: the residual norm before each iteration and
   * after the last, and the linear solver's iterations (CG's; one per
   * direct solve).
   */
  struct StepReport
  {
    StepStatus          status = StepStatus::converged;
    std::vector<double> residuals;
    unsigned int        n_cg_iterations = 0;
  };

  /// Seconds the device spent in each stage of the steps it ran whole.
  struct DeviceStageTimes
  {
    double assembly = 0;
    double solve    = 0;
    double update   = 0;
  };



  /**
   * State: displacement u and momentum p per DoF at the last completed
   * step, plus the Newton iterate u for the next one. Vectors are the
   * locally owned entries, as in BackendData. On several ranks every
   * function is collective over the adapter's communicator and returns the
   * same value on every rank.
   */
  class IntegratorBackend
  {
  public:
    virtual ~IntegratorBackend() = default;

    /// Set u_k = u, p_k = p.
    virtual void
    set_state(const std::vector<double> &u, const std::vector<double> &p) = 0;

    /// Copy u_k and p_k to the host.
    virtual void
    get_state(std::vector<double> &u, std::vector<double> &p) const = 0;

    /// Copy the current Newton iterate to the host.
    virtual void
    get_iterate(std::vector<double> &u) const = 0;

    /**
     * Set the linear solver up once, before the first step, whose @p loads
     * are given: the device direct solver assembles the tangent at the
     * state and analyses it (reordering and symbolic factorization, for
     * every later Newton iteration and step, and its memory estimate). A
     * backend whose BackendData::direct_may_fall_back allows it may turn
     * to cg_jacobi here (linear_solver() and linear_solver_note() tell).
     */
    virtual void
    setup_linear_solver(const StepLoads &loads)
    {
      (void)loads;
    }

    /// First Newton iterate: u = u_k + dt p_k / m (dynamic) or u = u_k.
    virtual void
    predict(const StepLoads &loads) = 0;

    /**
     * Assemble the tangent and the residual at the current iterate and
     * return the residual's Euclidean norm, global over the ranks (NaN on
     * every rank if an element of any rank is inverted).
     * Dynamic: r = p_k - h(u) of eq. (4), tangent m/dt + dt/4 K(u_mid).
     * Quasi-static: r = f_ext - f_int(u), tangent K(u).
     */
    virtual double
    assemble_residual(const StepLoads &loads) = 0;

    /**
     * Solve tangent * delta = r with BackendData::linear_solver,
     * distribute the constraints to delta and set u += delta. The CGs
     * start from x_0 = 0 and stop at relative_tolerance * |r| or after
     * @p max_iterations; the direct solver ignores both. A solve that
     * breaks down (CG's p.Ap not finite, a singular tangent in the direct
     * solver) returns a final residual that is not finite.
     */
    virtual LinearSolveResult
    solve_and_update(const double       relative_tolerance,
                     const unsigned int max_iterations) = 0;

    /// p_{k+1} from eq. (5), then u_k = u, p_k = p_{k+1}.
    virtual void
    finish_step(const StepLoads &loads) = 0;

    /**
     * Run a whole step: predict(), the Newton loop of
     * run_newton_loop() with the same tests in the same order,
     * and finish_step() if it converged, with nothing crossing to the host
     * but @p report at the end. On failure the state stays that of the last
     * completed step and the iterate that of the failing iteration, as the
     * loop on the host leaves them. Returns false, having done nothing,
     * where the backend cannot (the caller then runs the loop).
     */
    /// Whether run_step() is worth trying.
    virtual bool
    runs_whole_steps() const
    {
      return false;
    }

    virtual bool
    run_step(const StepLoads     &loads,
             const NewtonControl &control,
             StepReport          &report)
    {
      (void)loads;
      (void)control;
      (void)report;
      return false;
    }

    /// Stage times of the steps run_step() ran, measured on the device;
    /// false if it ran none.
    virtual bool
    device_stage_times(DeviceStageTimes &times) const
    {
      (void)times;
      return false;
    }

    /// Restart the device stage times from zero.
    virtual void
    reset_device_stage_times()
    {}

    /// Device or host memory held, bytes (0 where the backend does not
    /// count it).
    virtual std::size_t
    memory_consumption() const
    {
      return 0;
    }

    /**
     * Seconds this rank has spent so far exchanging values between ranks
     * outside CG's own halo updates, by part (all 0 on one process). A part
     * of the Assembly and Solve stages' times.
     */
    struct ExchangeTimes
    {
      /// Ghost updates of the state before an assembly and of the update
      /// before the constraints are distributed.
      double ghost_updates = 0;
      /// DistributedAssembler's messages of the interface contributions:
      /// posting them and waiting for them (its Times::communication).
      double messages = 0;
      /// The part of messages spent waiting for messages that the interior
      /// assembly did not hide (Times::exposed).
      double waited = 0;
      /// Adding the rank's own and the received contributions into the
      /// matrix and vector (Times::write).
      double writes = 0;
      /// On the resident device path with host staging: the copies between
      /// device and host memory of the messages (Times::transfer).
      double staging = 0;
      /// The surface loads' entries of rows other ranks own.
      double surface_loads = 0;

      double
      total() const
      {
        return ghost_updates + messages + writes + staging + surface_loads;
      }
    };

    virtual ExchangeTimes
    exchange_times() const
    {
      return {};
    }

    /// The solver solve_and_update() runs: BackendData::linear_solver's,
    /// or cg_jacobi where the device backend was allowed to fall back to it.
    virtual LinearSolver
    linear_solver() const = 0;

    /// What the backend found when it set its linear solver up (the
    /// factorization's memory estimate, the reason for a fall-back);
    /// empty where there is nothing to say.
    virtual std::string
    linear_solver_note() const
    {
      return "";
    }

    /// A line saying where the work runs.
    virtual std::string
    description() const = 0;
  };



  /**
   * One process: the backend that runs every stage on the CPU cores in
   * double precision: the plugin's coloured, multithreaded HostAssembler
   * with the same element kernel as the GPU, a threaded CSR product and the
   * same Jacobi-CG iteration. It is the reference for the GPU path and the
   * chapter's CPU configuration (NR_CPU, AssemblyCPU_Opt, DCG_CPU). The
   * other linear solvers run on a copy of the tangent in a deal.II
   * SparseMatrix: UMFPACK (direct), deal.II's SolverCG with
   * PreconditionChebyshev or RelaxationBlockJacobi on the node blocks.
   */
  std::unique_ptr<IntegratorBackend>
  make_host_backend(const BackendData &data);

  /**
   * One process: the backend that runs every stage on the device in
   * @p Number precision (double or float): DeviceJacobiCG (whole steps as
   * graphs), DevicePreconditionedCG or DeviceDirectSolver (cuDSS, LDL^T)
   * for the linear solves. Defined in device_backend.cu.
   */
  template <typename Number>
  std::unique_ptr<IntegratorBackend>
  make_device_backend(const BackendData &data);

  /**
   * Several ranks, on Trilinos: DistributedAssembler (host, or the rank's
   * GPU where data.use_device) assembles into a TrilinosWrappers::
   * SparseMatrix and MPI::Vector, deal.II's SolverCG with TrilinosWrappers::
   * PreconditionJacobi (or PreconditionBlockJacobi, or deal.II's
   * PreconditionChebyshev), or TrilinosWrappers::SolverDirect, solves, the
   * updates run on the owned entries. The pressure's forces and load
   * stiffness of the rank's faces (make_distributed_surface_load_data())
   * go into the vector and the matrix through their compress(add), which
   * takes rows owned elsewhere to their owners.
   */
  std::unique_ptr<IntegratorBackend>
  make_trilinos_backend(const BackendData &data);

  /**
   * Several ranks, resident: DistributedAssembler (the rank's GPU where
   * data.use_device, else the host) assembles into a GPUAssembly::
   * DistributedDeviceMatrix and DistributedDeviceVector with the same
   * storage, DistributedJacobiCG (or DistributedPreconditionedCG, or
   * DistributedJacobiBiCGStab for bicgstab_jacobi) solves,
   * and the state, the predictor, the
   * residual, the Newton and time updates and the constraints'
   * distribution stay there too (step_updates.h). On the device path
   * only scalars (norms, CG's results) come to the host each Newton
   * iteration, and the state when get_state() asks for it. The host
   * storage mode runs the same loops on the CPU. The follower pressure's
   * forces and load stiffness of the rank's faces are computed on the host
   * from the configuration's values at the faces and added to the owned
   * rows of the residual and the matrix; the entries of rows other ranks
   * own are sent to their owners at every Newton iteration (host MPI
   * messages, the same entries every time) and added there after the
   * owner's own, in the order of the sending ranks: the sums are bitwise
   * repeatable. Its non-symmetric tangent needs bicgstab_jacobi.
   */
  std::unique_ptr<IntegratorBackend>
  make_resident_backend(const BackendData &data);
} // namespace Hyperelastic

#endif

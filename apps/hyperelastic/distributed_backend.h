// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef hyperelastic_distributed_backend_h
#define hyperelastic_distributed_backend_h

// The linear algebra of a time step on several MPI ranks: the operations of
// IntegratorBackend (predict, assemble tangent and residual, solve and
// update, finish the step) on distributed vectors. DistributedSolid runs
// the Newton loop (run_newton_loop()) over them and sees nothing else, so
// that the implementation keeping matrix and vectors on the device (the
// resident one) stands beside the Trilinos one without changes elsewhere:
// both read the same DistributedBackendData and exchange states as Trilinos
// vectors.

#include <deal.II/lac/affine_constraints.h>
#include <deal.II/lac/trilinos_vector.h>

#include <gpu_assembly/adapter/dof_handler_adapter.h>

#include <memory>
#include <string>

#include "integrator_backend.h"

namespace Hyperelastic
{
  /// Vectors of the distributed path: the locally owned DoFs of the
  /// DoFHandler, no ghosts.
  using DistributedVector = dealii::TrilinosWrappers::MPI::Vector;

  /**
   * What a distributed backend needs, constant over a run. The adapter and
   * the constraints (on the locally relevant DoFs, closed) must outlive the
   * backend.
   */
  struct DistributedBackendData
  {
    const GPUAssembly::DoFHandlerAdapter<3> *adapter     = nullptr;
    const dealii::AffineConstraints<double> *constraints = nullptr;
    /// Lumped mass per DoF, a hanging DoF's mass also on its line's DoFs
    /// (as BackendData::lumped_mass).
    DistributedVector lumped_mass;
    /// Nodal load at unit amplitude (as BackendData::load_pattern).
    DistributedVector load_pattern;
    /// Material, body force and device assembly method: the entries of
    /// BackendData that make_step_kernel() and the device path read (its
    /// arrays and per-DoF vectors are not used).
    BackendData kernel;
    /// Assemble on this rank's GPU (select_device_by_node_rank() chose it).
    bool use_device = false;
  };



  /**
   * State: displacement u and momentum p per DoF at the last completed
   * step, plus the Newton iterate u for the next one, each rank holding its
   * owned DoFs. Every function is collective over the adapter's
   * communicator and returns the same value on every rank.
   */
  class DistributedIntegratorBackend
  {
  public:
    virtual ~DistributedIntegratorBackend() = default;

    /// Set u_k = u, p_k = p.
    virtual void
    set_state(const DistributedVector &u, const DistributedVector &p) = 0;

    /// Copy u_k and p_k (reinitialized to the owned layout).
    virtual void
    get_state(DistributedVector &u, DistributedVector &p) const = 0;

    /// Copy the current Newton iterate.
    virtual void
    get_iterate(DistributedVector &u) const = 0;

    /// As IntegratorBackend::predict().
    virtual void
    predict(const StepLoads &loads) = 0;

    /// As IntegratorBackend::assemble_residual(): the global norm, NaN on
    /// every rank if any rank's residual is not finite.
    virtual double
    assemble_residual(const StepLoads &loads) = 0;

    /// Solve tangent * delta = r by Jacobi-CG (x_0 = 0, stopped at
    /// relative_tolerance * |r|), distribute the constraints to delta and
    /// set u += delta.
    virtual LinearSolveResult
    solve_and_update(const double       relative_tolerance,
                     const unsigned int max_iterations) = 0;

    /// As IntegratorBackend::finish_step().
    virtual void
    finish_step(const StepLoads &loads) = 0;

    /// A line saying where the work runs.
    virtual std::string
    description() const = 0;

    /**
     * Seconds this rank has spent so far exchanging values between ranks
     * outside CG's own halo updates: DistributedAssembler's exchange of the
     * interface contributions (its Times: communication, write and, on the
     * resident device path, the staging copies) and the ghost updates of
     * the state before an assembly and of the update before the
     * constraints are distributed. A part of the Assembly and Solve
     * stages' times.
     */
    virtual double
    exchange_seconds() const = 0;
  };



  /**
   * The backend on Trilinos: DistributedAssembler (host, or the rank's GPU
   * where data.use_device) assembles into a TrilinosWrappers::SparseMatrix
   * and MPI::Vector, deal.II's SolverCG with TrilinosWrappers::
   * PreconditionJacobi solves, the updates run on the owned entries.
   */
  std::unique_ptr<DistributedIntegratorBackend>
  make_trilinos_backend(const DistributedBackendData &data);



  /**
   * The resident backend: DistributedAssembler (the rank's GPU where
   * data.use_device, else the host) assembles into a
   * GPUAssembly::DistributedDeviceMatrix and DistributedDeviceVector with
   * the same storage, DistributedJacobiCG solves, and the state, the
   * predictor, the residual, the Newton and time updates and the
   * constraints' distribution stay there too (resident_updates.h). On the
   * device path only scalars (norms, CG's results) come to the host each
   * Newton iteration, and the state when get_state() asks for it. The host
   * storage mode runs the same loops on the CPU.
   */
  std::unique_ptr<DistributedIntegratorBackend>
  make_resident_backend(const DistributedBackendData &data);
} // namespace Hyperelastic

#endif

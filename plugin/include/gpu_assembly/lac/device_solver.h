// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_lac_device_solver_h
#define gpu_assembly_lac_device_solver_h

#include <gpu_assembly/base/cuda_handles.h>
#include <gpu_assembly/lac/device_csr_matrix.h>
#include <gpu_assembly/lac/device_vector.h>
#include <gpu_assembly/lac/preconditioned_cg.h>

namespace GPUAssembly
{
  /**
   * Sums over device vectors in a fixed order: a first kernel leaves one
   * partial sum per block of a grid whose size depends only on the vector
   * length, a second kernel adds the partial sums in one block. The result
   * is therefore bitwise reproducible from run to run, which atomics would
   * not give. Sums are accumulated in double for float vectors too, so that
   * single-precision solvers do not lose their stopping test to rounding.
   *
   * Results can stay on the device (scalar slots that solver kernels read
   * without a round trip) or come back to the host; only the latter
   * synchronizes.
   *
   * Instantiated for float and double.
   */
  template <typename Number>
  class DeviceReduction
  {
  public:
    /// Number of device scalar slots that results can be written to.
    static constexpr unsigned int n_slots = 8;

    DeviceReduction();

    /// x . y, returned to the host.
    double
    dot(const DeviceVector<Number> &x, const DeviceVector<Number> &y) const;

    /// Euclidean norm, returned to the host.
    double
    l2_norm(const DeviceVector<Number> &x) const;

    /// x . y into device slot @p slot (no synchronization).
    void
    dot_to_slot(const DeviceVector<Number> &x,
                const DeviceVector<Number> &y,
                const unsigned int          slot) const;

    /// Device pointer to the scalar slots, for kernels that read them.
    double *
    slots() const
    {
      return scalar_slots.data();
    }

    /// Device pointer to room for two partial sums per block.
    double *
    partial_sums() const
    {
      return partial.data();
    }

    /// Blocks (and partial sums) the first kernel uses for @p n entries.
    static unsigned int
    n_blocks(const std::size_t n);

    /// Add the partial sums of @p n_blocks blocks (@p n_sums, 1 or 2,
    /// interleaved sums each) into slots @p slot_0 and @p slot_1.
    void
    finish(const unsigned int n_blocks,
           const unsigned int n_sums,
           const unsigned int slot_0,
           const unsigned int slot_1) const;

    /// Copy slot values to the host (synchronizes).
    void
    read_slots(const unsigned int first_slot,
               const unsigned int n,
               double            *values) const;

    static constexpr unsigned int block_size = 256;
    static constexpr unsigned int max_blocks = 1024;

  private:
    mutable DeviceVector<double> partial;
    mutable DeviceVector<double> scalar_slots;
  };



  /**
   * Conjugate gradients with a diagonal (Jacobi) preconditioner, every
   * operation on the device: the DCG_GPU of the GPU Gems chapter
   * (Sec. 16.4.2). Stops when ||r|| <= relative_tolerance ||r_0|| (the
   * chapter's criterion, with x_0 = 0 so r_0 = b) or, if larger,
   * absolute_tolerance. The iteration is that of preconditioned_cg.h
   * (its per-index steps with PointJacobi and its scalar recurrence,
   * CGScalars, run in this solver's kernels), so it goes on where
   * p.Ap < 0 and stops with a final residual that is not finite on a
   * breakdown, as DistributedJacobiCG does.
   *
   * A solve is one launch of a CUDA graph whose body, a conditional
   * "while" node, is one iteration: an SpMV that also leaves the block sums
   * of p.q, a fused update of x, r and z that leaves those of r.z and r.r,
   * and the direction update, whose first thread also takes the stopping
   * decision on the device. The iteration therefore never waits for the
   * host: for the small systems of real-time simulation the launch latency
   * and the per-iteration round trip of a host-driven loop cost more than
   * the arithmetic. Every block that needs a global sum adds the same block
   * sums in the same order, so the scalars are bitwise reproducible (no
   * atomics), and sums are accumulated in double for float vectors too.
   * Only the result (three numbers) comes back to the host, once per solve.
   *
   * The graph is built on the first solve and rebuilt only when the matrix,
   * the vectors or the control change. Where the driver does not support
   * conditional graph nodes, the same kernels run in a host-driven loop
   * (one 8-byte read per iteration). Working vectors are allocated on the
   * first solve of a size and reused.
   *
   * Instantiated for float and double.
   */
  template <typename Number>
  class DeviceJacobiCG
  {
  public:
    using Control = CGControl;
    using Result  = CGResult;

    DeviceJacobiCG();
    ~DeviceJacobiCG();
    DeviceJacobiCG(const DeviceJacobiCG &) = delete;
    DeviceJacobiCG &
    operator=(const DeviceJacobiCG &) = delete;

    /**
     * Solve A x = b with x_0 = 0, using the inverse diagonal
     * @p inverse_diagonal of A as preconditioner. Does not throw if the
     * iteration limit is reached: the caller decides (Result::converged).
     */
    Result
    solve(const DeviceCSRMatrix<Number> &A,
          const DeviceVector<Number>    &inverse_diagonal,
          DeviceVector<Number>          &x,
          const DeviceVector<Number>    &b,
          const Control                 &control) const;

    /**
     * Enqueue the same solve on @p stream and return at once; the result is
     * left on the device (device_result()). If @p stream is capturing a
     * CUDA graph, the solve is captured into it, its loop a conditional
     * "while" node, so that a caller can put whole solves into graphs of
     * its own (for example, inside a Newton loop that runs on the device).
     * Capturing needs conditional graph nodes; without them this throws.
     * Otherwise, without conditional nodes, the host-driven loop runs and
     * this waits for it.
     */
    void
    enqueue_solve(const DeviceCSRMatrix<Number> &A,
                  const DeviceVector<Number>    &inverse_diagonal,
                  DeviceVector<Number>          &x,
                  const DeviceVector<Number>    &b,
                  const Control                 &control,
                  CUstream_st                   *stream) const;

    /**
     * Check the sizes of a system and size the work vectors (and @p x) for
     * it. solve() and enqueue_solve() do so themselves; a caller that
     * captures enqueue_solve() into a graph calls this before capturing,
     * since memory cannot be allocated during a capture.
     */
    void
    initialize(const DeviceCSRMatrix<Number> &A,
               const DeviceVector<Number>    &inverse_diagonal,
               DeviceVector<Number>          &x,
               const DeviceVector<Number>    &b) const;

    /// Where the last solve leaves its result on the device: doubles at
    /// these offsets from device_result().
    static constexpr unsigned int result_iterations = CGScalars::iterations;
    /// r_0 . r_0
    static constexpr unsigned int result_initial_rr = CGScalars::initial_rr;
    /// r . r of the final iterate
    static constexpr unsigned int result_final_rr = CGScalars::rr;
    /// 1 if converged, else 0
    static constexpr unsigned int result_converged = CGScalars::converged;

    const double *
    device_result() const
    {
      return state.data();
    }

    /// Whether solves run as one graph launch (false: host-driven loop).
    bool
    uses_graph() const
    {
      return graph_supported;
    }

    /**
     * Run the same kernels from a host-driven loop from now on, as on a
     * driver without conditional graph nodes; the results are bitwise the
     * same. For tools that do not follow device-side graph control, such
     * as compute-sanitizer's racecheck.
     */
    void
    disable_graph();

  private:
    /// What a built graph was built for.
    struct GraphKey
    {
      const void  *pointers[8]        = {};
      std::size_t  n                  = 0;
      double       relative_tolerance = 0;
      double       absolute_tolerance = 0;
      unsigned int max_iterations     = 0;

      bool
      operator==(const GraphKey &other) const;
    };

    void
    release_graph() const noexcept;

    /// Block sums: spmv_partial for p.q, partial for (r.z, r.r).
    mutable DeviceVector<double> spmv_partial, partial;
    /// Device scalars of the iteration (CGScalars).
    mutable DeviceVector<double> state;
    mutable DeviceVector<Number> r, z, p, q;

    mutable CudaGraph     graph;
    mutable CudaGraphExec graph_exec;
    mutable bool          graph_supported = true;
    mutable GraphKey      graph_key;
  };
} // namespace GPUAssembly

#endif

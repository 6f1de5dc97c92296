// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_lac_direct_solver_h
#define gpu_assembly_lac_direct_solver_h

#include <gpu_assembly/base/cuda_handles.h>
#include <gpu_assembly/lac/device_csr_matrix.h>
#include <gpu_assembly/lac/device_vector.h>

#include <cstddef>
#include <memory>
#include <string>

namespace GPUAssembly
{
  /**
   * Which factorization DeviceDirectSolver computes, and so which matrices
   * it accepts.
   */
  enum class DirectSolverMatrixType
  {
    /// Symmetric positive definite: Cholesky, L L^T (Laplace, elasticity
    /// and mass matrices with enough Dirichlet constraints).
    spd,
    /// Symmetric, possibly indefinite: L D L^T with pivoting (a shifted
    /// Laplacian, a saddle-point system).
    symmetric_indefinite,
    /// Any square matrix: L U with pivoting (nonsymmetric forms, or where
    /// nothing is known).
    general
  };

  /// "spd (Cholesky)", "symmetric indefinite (LDL^T)" or "general (LU)".
  std::string
  to_string(const DirectSolverMatrixType type);



  /**
   * A sparse direct solver on the device, on NVIDIA cuDSS, for the
   * DeviceCSRMatrix the plugin assembles (its full pattern; constrained rows
   * with their diagonal, hanging nodes and periodicity condensed by the
   * assembly, inhomogeneities in the right-hand side). Shaped like the
   * assembly plan, its three phases are called as often as each changes:
   *
   * - analyze(): reordering (cuDSS's default, a nested dissection) and
   *   symbolic factorization, once per sparsity pattern. Afterwards cuDSS's
   *   estimate of the device memory that the factorization will take
   *   (CUDSS_DATA_MEMORY_ESTIMATES) is compared with the free device
   *   memory, and a factorization that would not fit is refused here,
   *   before it allocates anything, with ExcDirectSolverMemory. The
   *   solver's own work vectors are allocated here too, once.
   * - factorize(): the numerical factorization, once per assembled matrix.
   *   A second call with new values of the same pattern (a Newton step, a
   *   new time step) refactorizes without allocating anything of the
   *   solver's; cuDSS keeps the factor storage of its first factorization
   *   (the GPU test gpu_direct_solver checks that the free device memory
   *   does not change). Cholesky runs cuDSS's refactorization phase where
   *   cuDSS offers it, since without pivoting it repeats the first
   *   factorization's arithmetic; LDL^T and LU run the factorization phase
   *   again, so that their pivots follow the new values.
   * - solve(): forward and backward substitution, once per right-hand side.
   *
   * All device work is enqueued on the stream of AdditionalData (the one
   * the assembly used), so that a factorization follows the assembly of its
   * matrix without a synchronization. factorize() and solve() then wait for
   * that stream, since they check what cuDSS reports and what the solution
   * holds before returning.
   *
   * Errors: a singular matrix, or for DirectSolverMatrixType::spd one that
   * is not positive definite, raises ExcSingularMatrix with the usual
   * causes in a deal.II program (a body that nothing holds, constraints not
   * applied). It is found from cuDSS's status after the factorization
   * (CUDSS_DATA_INFO), from a solution that is not finite (a fixed-order
   * sum over the solution, so that a singular LU never returns NaN
   * silently), and from the relative residual ||b - A x|| / ||b|| of each
   * solve, which must not exceed AdditionalData::singular_residual: where
   * cuDSS perturbs a zero pivot instead of failing, the solution is finite
   * but solves a different system.
   *
   * Precision: in double, the factorization is in double unless
   * AdditionalData::single_precision_factorization asks for a float copy of
   * the matrix to be factorized, whose factors take half the memory; the
   * solution is then improved by iterative refinement in double (the
   * residual with the double matrix, the correction with the float
   * factors) until ||b - A x|| <= refinement_tolerance ||b|| or the
   * residual reaches the rounding of double arithmetic. In float,
   * everything is float.
   *
   * Statistics for benchmarks (no timings: benchmarks time the phases
   * themselves) come from get_statistics().
   *
   * The solver keeps a pointer to the matrix of the last factorize() for
   * the residuals of solve(): that matrix must live, and keep the values it
   * was factorized with, until its solves are done.
   *
   * Where the plugin was built without cuDSS (available() is false), the
   * constructor throws ExcDirectSolverUnavailable, which says how to get
   * it. The exceptions are declared in lac/direct_solver_exceptions.h.
   *
   * Instantiated for float and double.
   */
  template <typename Number>
  class DeviceDirectSolver
  {
  public:
    struct AdditionalData
    {
      /// Which factorization: Cholesky (default), LDL^T or LU.
      DirectSolverMatrixType matrix_type = DirectSolverMatrixType::spd;

      /**
       * For Number = double only: factorize a float copy of the matrix and
       * refine the solution in double (default false: factorize in
       * double). Refused for float.
       */
      bool single_precision_factorization = false;

      /**
       * Iterative refinement steps at most after the first solve with the
       * float factors (default 10). Each step is one SpMV with the double
       * matrix, one norm and one solve with the float factors. Used only
       * with single_precision_factorization.
       */
      unsigned int max_refinement_steps = 10;

      /**
       * Refinement stops once ||b - A x|| <= refinement_tolerance ||b||
       * (default 1e-12), or once ||b - A x|| <= 8 eps ||A||_F ||x|| (eps
       * the double rounding unit), where the residual has reached the
       * rounding of its own computation and no step can reduce it further.
       * A solve that reaches neither within max_refinement_steps throws
       * ExcDirectSolverRefinement, which says so: the matrix is then too
       * ill-conditioned for float factors. Used only with
       * single_precision_factorization; must lie in (0, 1).
       */
      double refinement_tolerance = 1e-12;

      /**
       * Largest relative residual ||b - A x|| / ||b|| of a solve that is
       * accepted; above it the matrix is taken for singular, or too
       * ill-conditioned for the precision of the solve (ExcSingularMatrix).
       * A direct solve leaves about the rounding unit times the condition
       * number; a perturbed zero pivot leaves the part of b that the matrix
       * cannot reach, of the order of ||b||. Default 1e-4 in double (up to
       * condition numbers of about 1e11) and 1e-1 in float (about 1e5;
       * beyond, a float solution has lost its digits anyway). 0 turns the
       * check off, and with it the SpMV that it costs each solve.
       */
      double singular_residual = sizeof(Number) == 8 ? 1e-4 : 1e-1;

      /**
       * Fraction of the free device memory that the factorization may not
       * take (default 0.1): analyze() refuses a factorization whose peak
       * estimate exceeds (1 - memory_margin) times the free memory, leaving
       * room for what the program allocates later. In [0, 1).
       */
      double memory_margin = 0.1;

      /**
       * Bitwise the same factors and solutions from run to run for the same
       * matrix and right-hand side (default true): cuDSS's deterministic
       * mode (CUDSS_CONFIG_DETERMINISTIC_MODE), at a small cost in the
       * factorization. false lets cuDSS choose kernels whose sums may be
       * ordered differently each run.
       */
      bool deterministic = true;

      /**
       * The CUDA stream of every phase (a cudaStream_t; default nullptr,
       * the default stream). Pass the stream the assembly ran on.
       */
      CUstream_st *stream = nullptr;
    };

    /// What the phases report, for benchmarks.
    struct Statistics
    {
      /// Unknowns and nonzeros of the analyzed matrix.
      std::size_t n_rows     = 0;
      std::size_t n_nonzeros = 0;
      /// cuDSS's estimate after analyze(): device memory held from the
      /// factorization on (factors and permutations), in bytes.
      std::size_t permanent_device_memory = 0;
      /// cuDSS's estimate after analyze(): peak device memory of the
      /// factorization, in bytes; the number analyze() compares with the
      /// free memory.
      std::size_t peak_device_memory = 0;
      /// Free device memory when analyze() compared, in bytes.
      std::size_t free_device_memory = 0;
      /// Device memory of the solver's own work vectors, in bytes.
      std::size_t work_memory = 0;
      /// Nonzeros in the factors, as cuDSS reports them after factorize()
      /// (CUDSS_DATA_LU_NNZ).
      std::size_t factor_nonzeros = 0;
      /// Pivots that cuDSS perturbed in the last factorization (LDL^T, LU).
      long long n_perturbed_pivots = 0;
      /// Factorizations since the last analyze(), the first included.
      unsigned int n_factorizations = 0;
      /// Refinement steps of the last solve (0 without
      /// single_precision_factorization).
      unsigned int refinement_steps = 0;
      /// ||b - A x|| / ||b|| of the last solve, where it was computed
      /// (refinement, or singular_residual > 0), else -1.
      double relative_residual = -1;
    };

    /**
     * Whether the plugin was built with cuDSS (the CMake option
     * GPU_ASSEMBLY_WITH_CUDSS).
     */
    static bool
    available();

    /**
     * Check @p data (ExcMessage naming the field where it is out of range)
     * and keep it; touches no device. Throws ExcDirectSolverUnavailable
     * where available() is false.
     */
    explicit DeviceDirectSolver(const AdditionalData &data = AdditionalData());

    ~DeviceDirectSolver();
    DeviceDirectSolver(const DeviceDirectSolver &) = delete;
    DeviceDirectSolver &
    operator=(const DeviceDirectSolver &) = delete;

    /**
     * Reordering and symbolic factorization of @p matrix's pattern, and the
     * memory check (ExcDirectSolverMemory). For symmetric_indefinite and
     * general, cuDSS's matching reads the values too, so pass an assembled
     * matrix. Forgets an earlier analysis and factorization.
     */
    void
    analyze(const DeviceCSRMatrix<Number> &matrix);

    /**
     * Numerical factorization of @p matrix, which must have the pattern of
     * the last analyze(). Throws ExcSingularMatrix where cuDSS finds the
     * matrix singular or (spd) not positive definite.
     */
    void
    factorize(const DeviceCSRMatrix<Number> &matrix);

    /**
     * x = A^-1 b with the last factorization; @p x, another vector than
     * @p b, is resized if needed (an allocation only where its size
     * differs). Throws ExcSingularMatrix
     * for a solution that is not finite or whose residual exceeds
     * AdditionalData::singular_residual.
     */
    void
    solve(DeviceVector<Number> &x, const DeviceVector<Number> &b);

    const AdditionalData &
    get_additional_data() const
    {
      return additional_data;
    }

    const Statistics &
    get_statistics() const
    {
      return statistics;
    }

  private:
    /// cuDSS's objects and the work vectors, opaque here so that host code
    /// needs neither cuDSS's nor CUDA's headers.
    struct Implementation;

    AdditionalData                  additional_data;
    Statistics                      statistics;
    std::unique_ptr<Implementation> implementation;
  };



  namespace internal
  {
    /**
     * Throw ExcMessage naming the field of @p data that is out of range.
     */
    template <typename Number>
    void
    check_direct_solver_data(
      const typename DeviceDirectSolver<Number>::AdditionalData &data);

    /**
     * Throw ExcDirectSolverMemory where a factorization of @p peak_estimate
     * bytes does not fit (1 - @p margin) times @p free_memory bytes (of
     * @p total_memory).
     */
    void
    check_direct_solver_memory(const std::size_t peak_estimate,
                               const std::size_t free_memory,
                               const std::size_t total_memory,
                               const double      margin);

    /**
     * What ExcDirectSolverUnavailable says: the plugin was built without
     * cuDSS, and how to get it.
     */
    std::string
    direct_solver_unavailable_message();

    /// Throw ExcDirectSolverUnavailable.
    [[noreturn]] void
    throw_direct_solver_unavailable();

    /**
     * What ExcSingularMatrix says for a matrix of @p type, where
     * @p finding says what showed it (cuDSS's status, a solution that is
     * not finite, a residual).
     */
    std::string
    singular_matrix_message(const DirectSolverMatrixType type,
                            const std::string           &finding);

    /// Throw ExcSingularMatrix(singular_matrix_message(@p type, @p finding)).
    [[noreturn]] void
    throw_singular_matrix(const DirectSolverMatrixType type,
                          const std::string           &finding);

    /// Throw ExcDirectSolverRefinement.
    [[noreturn]] void
    throw_refinement_error(const unsigned int steps,
                           const double       relative_residual,
                           const double       tolerance);

    /**
     * Name and meaning of a cudssStatus_t (known without cuDSS's headers,
     * so that a build without cuDSS names them too).
     */
    std::string
    cudss_error_string(const int status);

    /**
     * Throw ExcCudssError naming @p call, @p file, @p line and the status
     * if @p status (a cudssStatus_t) is not CUDSS_STATUS_SUCCESS. The
     * solver's device code calls it through GPU_ASSEMBLY_CHECK_CUDSS.
     */
    void
    check_cudss_status(const int         status,
                       const char *const call,
                       const char *const file,
                       const int         line);

    /**
     * As check_cudss_status(), for destructors: a failure is reported on
     * std::cerr, never thrown.
     */
    void
    check_cudss_status_nothrow(const int         status,
                               const char *const call,
                               const char *const file,
                               const int         line) noexcept;
  } // namespace internal
} // namespace GPUAssembly

#endif

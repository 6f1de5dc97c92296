// SPDX-License-Identifier: LGPL-2.1-or-later
#include <gpu_assembly/base/cuda_check.h>
#include <gpu_assembly/lac/device_solver.h>
#include <gpu_assembly/lac/direct_solver.h>

#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <iomanip>
#include <limits>
#include <sstream>
#include <string>
#include <type_traits>

#ifdef GPU_ASSEMBLY_WITH_CUDSS
#  include <cudss.h>
#endif

// Every cuDSS call is checked, in release builds too: a failure throws
// ExcCudssError naming the call and the status.
#define GPU_ASSEMBLY_CHECK_CUDSS(call)                                \
  ::GPUAssembly::internal::check_cudss_status(static_cast<int>(call), \
                                              #call,                  \
                                              __FILE__,               \
                                              __LINE__)

// As GPU_ASSEMBLY_CHECK_CUDSS, for destructors: reports, never throws.
#define GPU_ASSEMBLY_CHECK_CUDSS_NOTHROW(call)                                \
  ::GPUAssembly::internal::check_cudss_status_nothrow(static_cast<int>(call), \
                                                      #call,                  \
                                                      __FILE__,               \
                                                      __LINE__)

namespace GPUAssembly
{
#ifdef GPU_ASSEMBLY_WITH_CUDSS
  namespace
  {
    template <typename Number>
    constexpr cudaDataType_t
    cuda_value_type()
    {
      return std::is_same_v<Number, double> ? CUDA_R_64F : CUDA_R_32F;
    }

    cudssMatrixType_t
    cudss_matrix_type(const DirectSolverMatrixType type)
    {
      switch (type)
        {
          case DirectSolverMatrixType::spd:
            return CUDSS_MTYPE_SPD;
          case DirectSolverMatrixType::symmetric_indefinite:
            return CUDSS_MTYPE_SYMMETRIC;
          case DirectSolverMatrixType::general:
            return CUDSS_MTYPE_GENERAL;
        }
      return CUDSS_MTYPE_GENERAL;
    }

    constexpr unsigned int block_size = 256;

    unsigned int
    n_blocks(const std::size_t n)
    {
      const std::size_t blocks = (n + block_size - 1) / block_size;
      return static_cast<unsigned int>(
        blocks < 4096 ? (blocks > 0 ? blocks : 1) : 4096);
    }

    // A number as the messages print it: 1.23e-07.
    std::string
    scientific(const double value)
    {
      std::ostringstream out;
      out << std::scientific << std::setprecision(2) << value;
      return out.str();
    }

    // Runs body(i) for 0 <= i < n, a thread an index (grid-stride).
    template <class Body>
    __global__ void
    for_each_kernel(const Body body, const std::size_t n)
    {
      for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
           i < n;
           i += std::size_t(gridDim.x) * blockDim.x)
        body(i);
    }

    template <class Body>
    void
    launch_for_each(const Body &body, const std::size_t n, cudaStream_t stream)
    {
      for_each_kernel<<<n_blocks(n), block_size, 0, stream>>>(body, n);
      GPU_ASSEMBLY_CHECK_CUDA(cudaGetLastError());
    }

    // out = in, rounded to the output's precision.
    template <typename From, typename To>
    struct Convert
    {
      const From *in;
      To         *out;

      __device__ void
      operator()(const std::size_t i) const
      {
        out[i] = static_cast<To>(in[i]);
      }
    };

    // r = b - r, where r holds A x.
    template <typename Number>
    struct Residual
    {
      const Number *b;
      Number       *r;

      __device__ void
      operator()(const std::size_t i) const
      {
        r[i] = b[i] - r[i];
      }
    };

    // x += d: a refinement step's correction, computed in float.
    template <typename Number>
    struct AddCorrection
    {
      const float *d;
      Number      *x;

      __device__ void
      operator()(const std::size_t i) const
      {
        x[i] += static_cast<Number>(d[i]);
      }
    };

    template <typename From, typename To>
    void
    convert(const DeviceVector<From> &in,
            DeviceVector<To>         &out,
            cudaStream_t              stream)
    {
      launch_for_each(Convert<From, To>{in.data(), out.data()},
                      in.size(),
                      stream);
    }

    // An integer that cuDSS reports after a phase, in whichever width it
    // writes (the index type, or 64 bits): asked for its size first, and
    // where cuDSS does not answer that, tried in 64 bits, then as an int.
    long long
    get_integer(cudssHandle_t    handle,
                cudssData_t      data,
                cudssDataParam_t parameter)
    {
      std::size_t size = 0;
      if (cudssDataGet(handle, data, parameter, nullptr, 0, &size) !=
            CUDSS_STATUS_SUCCESS ||
          size == sizeof(std::int64_t))
        {
          std::int64_t value = 0;
          if (cudssDataGet(handle,
                           data,
                           parameter,
                           &value,
                           sizeof(value),
                           &size) == CUDSS_STATUS_SUCCESS)
            return value;
        }
      int value = 0;
      GPU_ASSEMBLY_CHECK_CUDSS(
        cudssDataGet(handle, data, parameter, &value, sizeof(value), &size));
      return value;
    }
  } // namespace



  template <typename Number>
  struct DeviceDirectSolver<Number>::Implementation
  {
    ~Implementation()
    {
      for (cudssMatrix_t *object : {&csr, &solution, &rhs})
        if (*object != nullptr)
          GPU_ASSEMBLY_CHECK_CUDSS_NOTHROW(cudssMatrixDestroy(*object));
      if (data != nullptr)
        GPU_ASSEMBLY_CHECK_CUDSS_NOTHROW(cudssDataDestroy(handle, data));
      if (config != nullptr)
        GPU_ASSEMBLY_CHECK_CUDSS_NOTHROW(cudssConfigDestroy(config));
      if (handle != nullptr)
        GPU_ASSEMBLY_CHECK_CUDSS_NOTHROW(cudssDestroy(handle));
    }

    /**
     * r = b - A x and ||r||, on the default stream (cuSPARSE's SpMV and the
     * fixed-order reduction run there) after the work on @p stream;
     * returns to the host, so all is finished when it returns.
     */
    double
    residual_norm(const DeviceVector<Number> &x,
                  const DeviceVector<Number> &b,
                  cudaStream_t                stream)
    {
      GPU_ASSEMBLY_CHECK_CUDA(cudaStreamSynchronize(stream));
      factorized_matrix->vmult(residual, x);
      launch_for_each(Residual<Number>{b.data(), residual.data()},
                      b.size(),
                      nullptr);
      return reduction.l2_norm(residual);
    }

    cudssHandle_t handle   = nullptr;
    cudssConfig_t config   = nullptr;
    cudssData_t   data     = nullptr;
    cudssMatrix_t csr      = nullptr;
    cudssMatrix_t solution = nullptr;
    cudssMatrix_t rhs      = nullptr;

    /// Float copies of the matrix values, right-hand side and solution,
    /// for a single-precision factorization of a double matrix.
    DeviceVector<float> float_values, float_rhs, float_solution;
    /// b - A x.
    DeviceVector<Number>    residual;
    DeviceReduction<Number> reduction;

    /// The matrix of the last successful factorization, nullptr if none.
    const DeviceCSRMatrix<Number> *factorized_matrix = nullptr;
    /// Whether a factorization of this analysis succeeded, whose memory a
    /// refactorization can reuse.
    bool factorized_once = false;
    /// Whether cuDSS accepted CUDSS_PHASE_REFACTORIZATION here.
    bool refactorization_supported = true;
    /// ||A||_F of the factorized matrix (single-precision factorization):
    /// the scale of the rounding in the residual.
    double frobenius_norm = 0;
  };



  template <typename Number>
  DeviceDirectSolver<Number>::DeviceDirectSolver(const AdditionalData &data)
    : additional_data(data)
  {
    internal::check_direct_solver_data<Number>(data);
  }



  template <typename Number>
  DeviceDirectSolver<Number>::~DeviceDirectSolver() = default;



  template <typename Number>
  void
  DeviceDirectSolver<Number>::analyze(const DeviceCSRMatrix<Number> &matrix)
  {
    if (matrix.m() == 0 || matrix.n_nonzeros() == 0)
      internal::throw_error(
        "DeviceDirectSolver::analyze(): the matrix is empty (call "
        "DeviceCSRMatrix::reinit() first).");
    implementation.reset();
    statistics            = Statistics();
    statistics.n_rows     = matrix.m();
    statistics.n_nonzeros = matrix.n_nonzeros();

    auto               work   = std::make_unique<Implementation>();
    const cudaStream_t stream = additional_data.stream;
    const bool         single = additional_data.single_precision_factorization;
    const std::size_t  n      = matrix.m();

    GPU_ASSEMBLY_CHECK_CUDSS(cudssCreate(&work->handle));
    GPU_ASSEMBLY_CHECK_CUDSS(cudssSetStream(work->handle, stream));
    GPU_ASSEMBLY_CHECK_CUDSS(cudssConfigCreate(&work->config));
    const int deterministic = additional_data.deterministic ? 1 : 0;
    GPU_ASSEMBLY_CHECK_CUDSS(cudssConfigSet(work->config,
                                            CUDSS_CONFIG_DETERMINISTIC_MODE,
                                            &deterministic,
                                            sizeof(deterministic)));
    GPU_ASSEMBLY_CHECK_CUDSS(cudssDataCreate(work->handle, &work->data));

    work->residual.reinit(n, true);
    if (single)
      {
        work->float_values.reinit(matrix.n_nonzeros(), true);
        work->float_rhs.reinit(n, true);
        work->float_solution.reinit(n, true);
        convert(matrix.get_values(), work->float_values, stream);
      }
    statistics.work_memory = work->residual.memory_consumption() +
                             work->float_values.memory_consumption() +
                             work->float_rhs.memory_consumption() +
                             work->float_solution.memory_consumption();

    const cudaDataType_t factor_type =
      single ? CUDA_R_32F : cuda_value_type<Number>();
    const void *values =
      single ? static_cast<const void *>(work->float_values.data()) :
               static_cast<const void *>(matrix.get_values().data());
    GPU_ASSEMBLY_CHECK_CUDSS(cudssMatrixCreateCsr(
      &work->csr,
      n,
      n,
      matrix.n_nonzeros(),
      const_cast<int *>(matrix.get_row_offsets().data()),
      nullptr,
      const_cast<int *>(matrix.get_column_indices().data()),
      const_cast<void *>(values),
      CUDA_R_32I,
      CUDA_R_32I,
      factor_type,
      cudss_matrix_type(additional_data.matrix_type),
      CUDSS_MVIEW_FULL,
      CUDSS_BASE_ZERO));
    // The dense solution and right-hand side point to work vectors of the
    // factors' precision until solve() names the caller's.
    void *placeholder = single ? static_cast<void *>(work->float_rhs.data()) :
                                 static_cast<void *>(work->residual.data());
    GPU_ASSEMBLY_CHECK_CUDSS(cudssMatrixCreateDn(&work->solution,
                                                 n,
                                                 1,
                                                 n,
                                                 placeholder,
                                                 factor_type,
                                                 CUDSS_LAYOUT_COL_MAJOR));
    GPU_ASSEMBLY_CHECK_CUDSS(cudssMatrixCreateDn(&work->rhs,
                                                 n,
                                                 1,
                                                 n,
                                                 placeholder,
                                                 factor_type,
                                                 CUDSS_LAYOUT_COL_MAJOR));

    GPU_ASSEMBLY_CHECK_CUDSS(cudssExecute(work->handle,
                                          CUDSS_PHASE_ANALYSIS,
                                          work->config,
                                          work->data,
                                          work->csr,
                                          work->solution,
                                          work->rhs));
    GPU_ASSEMBLY_CHECK_CUDA(cudaStreamSynchronize(stream));

    // [0] permanent and [1] peak device memory, [2] and [3] the same on the
    // host, the rest for the hybrid memory mode.
    std::int64_t estimates[16] = {};
    std::size_t  written       = 0;
    GPU_ASSEMBLY_CHECK_CUDSS(cudssDataGet(work->handle,
                                          work->data,
                                          CUDSS_DATA_MEMORY_ESTIMATES,
                                          estimates,
                                          sizeof(estimates),
                                          &written));
    statistics.permanent_device_memory =
      estimates[0] > 0 ? static_cast<std::size_t>(estimates[0]) : 0;
    statistics.peak_device_memory =
      estimates[1] > 0 ? static_cast<std::size_t>(estimates[1]) : 0;
    std::size_t free = 0, total = 0;
    GPU_ASSEMBLY_CHECK_CUDA(cudaMemGetInfo(&free, &total));
    statistics.free_device_memory = free;
    internal::check_direct_solver_memory(statistics.peak_device_memory,
                                         free,
                                         total,
                                         additional_data.memory_margin);
    implementation = std::move(work);
  }



  template <typename Number>
  void
  DeviceDirectSolver<Number>::factorize(const DeviceCSRMatrix<Number> &matrix)
  {
    if (!implementation)
      internal::throw_error(
        "DeviceDirectSolver::factorize() needs analyze() first.");
    if (matrix.m() != statistics.n_rows ||
        matrix.n_nonzeros() != statistics.n_nonzeros)
      internal::throw_error("DeviceDirectSolver::factorize(): the matrix has " +
                            std::to_string(matrix.m()) + " rows and " +
                            std::to_string(matrix.n_nonzeros()) +
                            " nonzeros, but the analysis was of " +
                            std::to_string(statistics.n_rows) + " rows and " +
                            std::to_string(statistics.n_nonzeros) +
                            " nonzeros: call analyze() for a new pattern.");
    Implementation    &work   = *implementation;
    const cudaStream_t stream = additional_data.stream;
    work.factorized_matrix    = nullptr;

    const bool single = additional_data.single_precision_factorization;
    if (single)
      convert(matrix.get_values(), work.float_values, stream);
    const void *values =
      single ? static_cast<const void *>(work.float_values.data()) :
               static_cast<const void *>(matrix.get_values().data());
    // The same pattern may live in another DeviceCSRMatrix object.
    GPU_ASSEMBLY_CHECK_CUDSS(cudssMatrixSetCsrPointers(
      work.csr,
      const_cast<int *>(matrix.get_row_offsets().data()),
      nullptr,
      const_cast<int *>(matrix.get_column_indices().data()),
      const_cast<void *>(values)));

    const int no_error = 0;
    GPU_ASSEMBLY_CHECK_CUDSS(cudssDataSet(work.handle,
                                          work.data,
                                          CUDSS_DATA_INFO,
                                          &no_error,
                                          sizeof(no_error)));
    // Cholesky does not pivot, so a refactorization repeats the first
    // factorization's arithmetic in its memory; LDL^T and LU pivot on the
    // values and factorize anew. Where cuDSS does not offer the
    // refactorization for a configuration, the factorization phase runs.
    const auto execute = [&](const int phase) {
      return cudssExecute(work.handle,
                          phase,
                          work.config,
                          work.data,
                          work.csr,
                          work.solution,
                          work.rhs);
    };
    cudssStatus_t status = CUDSS_STATUS_NOT_SUPPORTED;
    if (work.factorized_once && work.refactorization_supported &&
        additional_data.matrix_type == DirectSolverMatrixType::spd)
      {
        status                         = execute(CUDSS_PHASE_REFACTORIZATION);
        work.refactorization_supported = status != CUDSS_STATUS_NOT_SUPPORTED;
      }
    if (status == CUDSS_STATUS_NOT_SUPPORTED)
      status = execute(CUDSS_PHASE_FACTORIZATION);
    GPU_ASSEMBLY_CHECK_CUDA(cudaStreamSynchronize(stream));
    ++statistics.n_factorizations;

    // A failed pivot is reported through CUDSS_DATA_INFO, whatever the
    // phase returned, so it is read first.
    int         info    = 0;
    std::size_t written = 0;
    GPU_ASSEMBLY_CHECK_CUDSS(cudssDataGet(work.handle,
                                          work.data,
                                          CUDSS_DATA_INFO,
                                          &info,
                                          sizeof(info),
                                          &written));
    if (info != 0)
      internal::throw_singular_matrix(
        additional_data.matrix_type,
        "cuDSS reports CUDSS_DATA_INFO = " + std::to_string(info) +
          " after the factorization (a zero pivot" +
          (additional_data.matrix_type == DirectSolverMatrixType::spd ?
             std::string(", or one that is not positive") :
             std::string()) +
          ")");
    GPU_ASSEMBLY_CHECK_CUDSS(status);
    statistics.factor_nonzeros = static_cast<std::size_t>(
      get_integer(work.handle, work.data, CUDSS_DATA_LU_NNZ));
    statistics.n_perturbed_pivots =
      additional_data.matrix_type == DirectSolverMatrixType::spd ?
        0 :
        get_integer(work.handle, work.data, CUDSS_DATA_NPIVOTS);
    if (single)
      work.frobenius_norm = work.reduction.l2_norm(matrix.get_values());
    work.factorized_matrix = &matrix;
    work.factorized_once   = true;
  }



  template <typename Number>
  void
  DeviceDirectSolver<Number>::solve(DeviceVector<Number>       &x,
                                    const DeviceVector<Number> &b)
  {
    if (!implementation || implementation->factorized_matrix == nullptr)
      internal::throw_error(
        "DeviceDirectSolver::solve() needs a successful factorize() first.");
    if (b.size() != statistics.n_rows)
      internal::throw_error("DeviceDirectSolver::solve(): the right-hand "
                            "side has " +
                            std::to_string(b.size()) + " entries, the matrix " +
                            std::to_string(statistics.n_rows) + " rows.");
    if (&x == &b)
      internal::throw_error("DeviceDirectSolver::solve(): the solution and "
                            "the right-hand side must be different vectors.");
    if (x.size() != b.size())
      x.reinit(b.size(), true);
    Implementation    &work   = *implementation;
    const cudaStream_t stream = additional_data.stream;
    const bool         single = additional_data.single_precision_factorization;
    statistics.refinement_steps  = 0;
    statistics.relative_residual = -1;

    // One solve with the factors: x = A^-1 b, or d = A^-1 r in float.
    const auto solve_with_factors = [&](const void *rhs_values,
                                        void       *solution_values) {
      GPU_ASSEMBLY_CHECK_CUDSS(cudssMatrixSetValues(work.rhs, rhs_values));
      GPU_ASSEMBLY_CHECK_CUDSS(
        cudssMatrixSetValues(work.solution, solution_values));
      GPU_ASSEMBLY_CHECK_CUDSS(cudssExecute(work.handle,
                                            CUDSS_PHASE_SOLVE,
                                            work.config,
                                            work.data,
                                            work.csr,
                                            work.solution,
                                            work.rhs));
    };

    if (single)
      {
        convert(b, work.float_rhs, stream);
        solve_with_factors(work.float_rhs.data(), work.float_solution.data());
        convert(work.float_solution, x, stream);
      }
    else
      solve_with_factors(b.data(), x.data());

    const bool check_residual = single || additional_data.singular_residual > 0;
    GPU_ASSEMBLY_CHECK_CUDA(cudaStreamSynchronize(stream));
    const double b_norm   = work.reduction.l2_norm(b);
    const auto   relative = [&](const double norm) {
      return b_norm > 0 ? norm / b_norm : norm;
    };
    const auto check_finite = [&](const double norm, const char *what) {
      if (!std::isfinite(norm))
        internal::throw_singular_matrix(
          additional_data.matrix_type,
          std::string("the ") + what +
            " of the solve is not finite (infinite or NaN entries, or "
            "entries too large to square)");
    };
    check_finite(work.reduction.l2_norm(x), "solution");
    if (!check_residual)
      return;

    double residual = relative(work.residual_norm(x, b, stream));
    check_finite(residual, "residual");
    // Refinement ends at the tolerance, or where the residual reaches the
    // rounding of the double SpMV that computes it (8 eps ||A||_F ||x||),
    // below which no correction can take it.
    const auto refined = [&](const double relative_residual) {
      const double rounding = 8 * std::numeric_limits<double>::epsilon() *
                              work.frobenius_norm * work.reduction.l2_norm(x);
      return relative_residual <= additional_data.refinement_tolerance ||
             relative_residual * (b_norm > 0 ? b_norm : 1.) <= rounding;
    };
    if (single)
      while (!refined(residual))
        {
          if (statistics.refinement_steps ==
              additional_data.max_refinement_steps)
            {
              statistics.relative_residual = residual;
              if (additional_data.singular_residual > 0 &&
                  residual > additional_data.singular_residual)
                break;
              internal::throw_refinement_error(
                statistics.refinement_steps,
                residual,
                additional_data.refinement_tolerance);
            }
          convert(work.residual, work.float_rhs, stream);
          solve_with_factors(work.float_rhs.data(), work.float_solution.data());
          launch_for_each(AddCorrection<Number>{work.float_solution.data(),
                                                x.data()},
                          x.size(),
                          stream);
          ++statistics.refinement_steps;
          residual = relative(work.residual_norm(x, b, stream));
          check_finite(residual, "residual");
        }
    statistics.relative_residual = residual;
    if (additional_data.singular_residual > 0 &&
        residual > additional_data.singular_residual)
      internal::throw_singular_matrix(
        additional_data.matrix_type,
        "the solution leaves a relative residual ||b - A x|| / ||b|| = " +
          scientific(residual) + " above " +
          scientific(additional_data.singular_residual) +
          " (AdditionalData::singular_residual), more than rounding in " +
          (sizeof(Number) == 8 && !single ? "double" :
           sizeof(Number) == 8            ? "float factors refined in double" :
                                            "float") +
          " leaves unless the matrix is also far too ill-conditioned for it" +
          (additional_data.matrix_type == DirectSolverMatrixType::spd ?
             std::string() :
             "; cuDSS perturbed " +
               std::to_string(statistics.n_perturbed_pivots) +
               " pivots of the factorization"));
  }

#else

  // Without cuDSS: the constructor refuses (direct_solver.cc), so no
  // object exists on which the phases could be called.
  template <typename Number>
  struct DeviceDirectSolver<Number>::Implementation
  {};

  template <typename Number>
  DeviceDirectSolver<Number>::DeviceDirectSolver(const AdditionalData &data)
    : additional_data(data)
  {
    internal::throw_direct_solver_unavailable();
  }

  template <typename Number>
  DeviceDirectSolver<Number>::~DeviceDirectSolver() = default;

  template <typename Number>
  void
  DeviceDirectSolver<Number>::analyze(const DeviceCSRMatrix<Number> &)
  {
    internal::throw_direct_solver_unavailable();
  }

  template <typename Number>
  void
  DeviceDirectSolver<Number>::factorize(const DeviceCSRMatrix<Number> &)
  {
    internal::throw_direct_solver_unavailable();
  }

  template <typename Number>
  void
  DeviceDirectSolver<Number>::solve(DeviceVector<Number> &,
                                    const DeviceVector<Number> &)
  {
    internal::throw_direct_solver_unavailable();
  }

#endif

  template class DeviceDirectSolver<float>;
  template class DeviceDirectSolver<double>;
} // namespace GPUAssembly

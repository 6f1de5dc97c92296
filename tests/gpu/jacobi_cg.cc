// SPDX-License-Identifier: LGPL-2.1-or-later
// DeviceJacobiCG, whose iteration runs as a CUDA graph with a device-side
// stopping test, against the same Jacobi-CG written out on the host, on
// an assembled 3D elasticity matrix with Dirichlet rows: the solution, the
// iteration count, the iteration limit, a zero right-hand side, reuse and
// rebuilding of the graph, run-to-run reproducibility and float; and the
// host-driven loop of the same kernels, which must give bitwise the graph's
// results. With --no-graph every solve uses that loop (for racecheck,
// which does not follow device-side graph control). Also the owners of
// CUDA streams and events.
// Needs a GPU: exits with 77 (skipped) where there is none.

#include <gpu_assembly/adapter/dof_handler_adapter.h>
#include <gpu_assembly/base/cuda_handles.h>
#include <gpu_assembly/base/device.h>
#include <gpu_assembly/base/exceptions.h>
#include <gpu_assembly/engine/host_assembler.h>
#include <gpu_assembly/kernels/element_kernels.h>
#include <gpu_assembly/lac/device_solver.h>

#include <cmath>
#include <random>
#include <type_traits>
#include <utility>

#include "../test_problems.h"
#include "../tests.h"
#include "gpu_tests.h"

using namespace dealii;
using namespace GPUAssembly;

namespace
{
  struct HostCSR
  {
    const MeshArrays   *arrays;
    std::vector<double> values;

    std::vector<double>
    vmult(const std::vector<double> &x) const
    {
      std::vector<double> y(x.size(), 0.);
      for (std::size_t i = 0; i < x.size(); ++i)
        for (int j = arrays->row_offsets[i]; j < arrays->row_offsets[i + 1];
             ++j)
          y[i] += values[j] * x[arrays->column_indices[j]];
      return y;
    }

    std::vector<double>
    inverse_diagonal() const
    {
      std::vector<double> d(arrays->n_dofs);
      for (std::size_t i = 0; i < d.size(); ++i)
        for (int j = arrays->row_offsets[i]; j < arrays->row_offsets[i + 1];
             ++j)
          if (static_cast<std::size_t>(arrays->column_indices[j]) == i)
            d[i] = 1. / values[j];
      return d;
    }
  };

  double
  dot(const std::vector<double> &a, const std::vector<double> &b)
  {
    double sum = 0;
    for (std::size_t i = 0; i < a.size(); ++i)
      sum += a[i] * b[i];
    return sum;
  }

  struct HostResult
  {
    std::vector<double> x;
    unsigned int        iterations = 0;
    bool                converged  = false;
  };

  // The iteration of DeviceJacobiCG, step by step, with x_0 = 0.
  HostResult
  host_cg(const HostCSR             &A,
          const std::vector<double> &b,
          const double               relative_tolerance,
          const unsigned int         max_iterations)
  {
    const std::vector<double> D = A.inverse_diagonal();
    const std::size_t         n = b.size();
    HostResult                result;
    result.x.assign(n, 0.);
    std::vector<double> r = b, z(n), p(n);
    for (std::size_t i = 0; i < n; ++i)
      z[i] = p[i] = D[i] * r[i];
    double       rz        = dot(r, z);
    const double tolerance = relative_tolerance * std::sqrt(dot(r, r));
    if (std::sqrt(dot(r, r)) <= tolerance)
      {
        result.converged = true;
        return result;
      }
    while (result.iterations < max_iterations)
      {
        const std::vector<double> q     = A.vmult(p);
        const double              alpha = rz / dot(p, q);
        for (std::size_t i = 0; i < n; ++i)
          {
            result.x[i] += alpha * p[i];
            r[i] -= alpha * q[i];
            z[i] = D[i] * r[i];
          }
        ++result.iterations;
        const double rz_new = dot(r, z);
        if (std::sqrt(dot(r, r)) <= tolerance)
          {
            result.converged = true;
            break;
          }
        for (std::size_t i = 0; i < n; ++i)
          p[i] = z[i] + rz_new / rz * p[i];
        rz = rz_new;
      }
    return result;
  }

  double
  relative_residual(const HostCSR             &A,
                    const std::vector<double> &x,
                    const std::vector<double> &b)
  {
    std::vector<double> r = A.vmult(x);
    for (std::size_t i = 0; i < r.size(); ++i)
      r[i] -= b[i];
    return std::sqrt(dot(r, r) / dot(b, b));
  }

  template <typename Number>
  std::vector<double>
  to_double(const DeviceVector<Number> &v)
  {
    const std::vector<Number> values = v.to_host();
    return std::vector<double>(values.begin(), values.end());
  }

  bool use_graph = true;

  template <typename Number>
  void
  test_precision(Testing::Checks           &checks,
                 const HostCSR             &A,
                 const std::vector<double> &b_host)
  {
    const std::string precision = sizeof(Number) == 8 ? "double" : "float";
    const MeshArrays &arrays    = *A.arrays;
    DeviceCSRMatrix<Number> matrix;
    matrix.reinit(arrays);
    matrix.get_values().copy_from_host(
      std::vector<Number>(A.values.begin(), A.values.end()));
    const std::vector<double>  D_host = A.inverse_diagonal();
    const DeviceVector<Number> D(
      std::vector<Number>(D_host.begin(), D_host.end()));
    const DeviceVector<Number> b(
      std::vector<Number>(b_host.begin(), b_host.end()));
    DeviceVector<Number> x(arrays.n_dofs);

    DeviceJacobiCG<Number> solver;
    if (!use_graph)
      solver.disable_graph();
    typename DeviceJacobiCG<Number>::Control control;
    const double tolerance     = sizeof(Number) == 8 ? 1e-10 : 1e-5;
    control.relative_tolerance = tolerance;
    control.max_iterations     = 2000;
    const auto       result    = solver.solve(matrix, D, x, b, control);
    const HostResult reference =
      host_cg(A, b_host, tolerance, control.max_iterations);
    const std::vector<double> x_first  = to_double(x);
    const double              residual = relative_residual(A, x_first, b_host);
    const double difference = Testing::relative_l2_error(x_first, reference.x);
    std::cout << "      " << precision << ": "
              << (solver.uses_graph() ?
                    "one graph launch per solve" :
                    (use_graph ? "host-driven loop (the driver has no "
                                 "conditional graph nodes)" :
                                 "host-driven loop (--no-graph)"))
              << ", " << result.iterations << " iterations (host "
              << reference.iterations << ")" << std::endl;
    checks.check(result.converged &&
                   result.final_residual <=
                     tolerance * result.initial_residual &&
                   residual <= (sizeof(Number) == 8 ? 2e-10 : 5e-5),
                 precision + ": converged, ||b - A x|| / ||b|| = " +
                   Testing::scientific(residual));
    checks.check(difference <= (sizeof(Number) == 8 ? 1e-9 : 1e-4) &&
                   std::abs(int(result.iterations) -
                            int(reference.iterations)) <= 1,
                 precision + ": equals the host Jacobi-CG (relative " +
                   Testing::scientific(difference) + "), " +
                   std::to_string(result.iterations) + " against " +
                   std::to_string(reference.iterations) + " iterations");

    // The host-driven loop runs the same kernels in the same order.
    if (solver.uses_graph())
      {
        DeviceJacobiCG<Number> loop;
        loop.disable_graph();
        DeviceVector<Number> x_loop(arrays.n_dofs);
        const auto           looped = loop.solve(matrix, D, x_loop, b, control);
        checks.check(!loop.uses_graph() && to_double(x_loop) == x_first &&
                       looped.iterations == result.iterations &&
                       looped.final_residual == result.final_residual,
                     precision + ": the host-driven loop gives bitwise the "
                                 "graph's solution and residual");
      }

    // The same solve again reuses the graph and repeats itself bitwise.
    const auto again = solver.solve(matrix, D, x, b, control);
    checks.check(to_double(x) == x_first &&
                   again.iterations == result.iterations &&
                   again.final_residual == result.final_residual,
                 precision + ": a second solve is bitwise identical");

    // An iteration limit stops the loop on the device, after exactly that
    // many iterations, with the host CG's iterate.
    typename DeviceJacobiCG<Number>::Control limited = control;
    limited.max_iterations                           = 3;
    const auto       stopped = solver.solve(matrix, D, x, b, limited);
    const HostResult three   = host_cg(A, b_host, tolerance, 3);
    const double error_3 = Testing::relative_l2_error(to_double(x), three.x);
    checks.check(stopped.iterations == 3 && !stopped.converged &&
                   error_3 <= (sizeof(Number) == 8 ? 1e-12 : 1e-5),
                 precision +
                   ": max_iterations = 3 stops after 3 iterations, not "
                   "converged, at the host's third iterate (relative " +
                   Testing::scientific(error_3) + ")");

    // Another right-hand side (another vector) rebuilds the graph; a zero
    // one converges at once to x = 0.
    const DeviceVector<Number> zero(arrays.n_dofs);
    const auto                 none = solver.solve(matrix, D, x, zero, control);
    const std::vector<double>  x_zero = to_double(x);
    checks.check(none.converged && none.iterations == 0 &&
                   std::all_of(x_zero.begin(),
                               x_zero.end(),
                               [](const double v) {
                                 return v == 0;
                               }),
                 precision + ": b = 0 gives x = 0 after 0 iterations");
    solver.solve(matrix, D, x, b, control);
    checks.check(to_double(x) == x_first,
                 precision + ": back to the first right-hand side, the "
                             "first solution bitwise");

    checks.check_throws<ExceptionBase>(
      [&] {
        const DeviceVector<Number> short_b(arrays.n_dofs - 1);
        solver.solve(matrix, D, x, short_b, control);
      },
      "rows",
      precision + ": a right-hand side of the wrong size is refused");
  }
} // namespace



int
main(int argc, char **argv)
{
  use_graph = !(argc > 1 && std::string(argv[1]) == "--no-graph");
  if (!Testing::cuda_device_present())
    return Testing::no_device_exit_code();
  Testing::Checks checks;

  Testing::TestProblem<3> problem;
  Testing::setup_problem(problem,
                         true,
                         1,
                         3,
                         Testing::ConstraintKind::homogeneous,
                         true,
                         10);
  const DoFHandlerAdapter<3>        adapter = Testing::make_adapter(problem);
  const MeshArrays                 &arrays  = adapter.get_arrays();
  HostCSR                           A{&arrays, {}};
  std::vector<double>               unused_rhs;
  LinearElasticityKernel<3, double> kernel;
  kernel.lambda = 2.;
  kernel.mu     = 5.;
  HostAssembler<3, double>(arrays).assemble(kernel, A.values, unused_rhs);
  std::cout << "Elasticity, " << arrays.n_elements << " tetrahedra, "
            << arrays.n_dofs << " unknowns, " << arrays.n_nonzeros()
            << " nonzeros" << std::endl;

  std::mt19937                           random(42);
  std::uniform_real_distribution<double> uniform(-1., 1.);
  std::vector<double>                    b(arrays.n_dofs);
  for (std::size_t i = 0; i < b.size(); ++i)
    b[i] = arrays.dof_is_constrained[i] ? 0. : uniform(random);

  test_precision<double>(checks, A, b);
  test_precision<float>(checks, A, b);

  {
    // The owners of CUDA streams and events (which the solver's graph
    // capture and the bandwidth measurement use): each owns its object
    // alone, so a move leaves the source empty.
    static_assert(!std::is_copy_constructible_v<CudaStream> &&
                  !std::is_copy_assignable_v<CudaGraphExec>);
    CudaStream         first;
    CUstream_st *const handle = first.get();
    const CudaStream   second(std::move(first));
    const CudaEvent    event;
    checks.check(handle != nullptr && first.get() == nullptr &&
                   second.get() == handle && event.get() != nullptr,
                 "CudaStream and CudaEvent own a created object, and a "
                 "move hands it over and leaves the source empty");
    const double bandwidth = measure_copy_bandwidth(std::size_t(1) << 20, 2);
    checks.check(bandwidth > 0 && std::isfinite(bandwidth),
                 "measure_copy_bandwidth() gives a positive bandwidth");
  }
  return checks.exit_code();
}

// SPDX-License-Identifier: LGPL-2.1-or-later
// The neo-Hookean kernel of the hyperelastic application: its tangent is
// the derivative of its forces (central differences), it reduces to linear
// elasticity at zero displacement, a rigid rotation produces no internal
// force, an inverted element is flagged by NaN, and upper-triangle storage
// (GlobalNZ's symmetric option) assembles the same tangent.

#include <gpu_assembly/adapter/dof_handler_adapter.h>
#include <gpu_assembly/engine/global_nz/plan.h>
#include <gpu_assembly/engine/host_assembler.h>
#include <gpu_assembly/kernels/element_kernels.h>
#include <gpu_assembly/kernels/neo_hookean.h>

#include <cmath>

#include "global_nz_host.h"
#include "test_problems.h"
#include "tests.h"

using namespace dealii;
using namespace GPUAssembly;

// y = A x for the CSR values of the adapter's pattern.
std::vector<double>
multiply(const MeshArrays          &arrays,
         const std::vector<double> &values,
         const std::vector<double> &x)
{
  std::vector<double> y(arrays.n_dofs, 0.);
  for (unsigned int row = 0; row < arrays.n_dofs; ++row)
    for (index_type k = arrays.row_offsets[row];
         k < arrays.row_offsets[row + 1];
         ++k)
      y[row] += values[k] * x[arrays.column_indices[k]];
  return y;
}

double
norm(const std::vector<double> &x)
{
  double sum = 0;
  for (const double v : x)
    sum += v * v;
  return std::sqrt(sum);
}

// Nodal displacements (dim per node) from a function of the node's
// reference position.
template <int dim, class Function>
std::vector<double>
nodal_field(const MeshArrays &arrays, const Function &function)
{
  std::vector<double> u(arrays.n_nodes * dim);
  for (unsigned int n = 0; n < arrays.n_nodes; ++n)
    {
      Point<dim> X;
      for (unsigned int k = 0; k < dim; ++k)
        X[k] = arrays.nodal_coordinates[n * dim + k];
      const Tensor<1, dim> value = function(X);
      for (unsigned int k = 0; k < dim; ++k)
        u[n * dim + k] = value[k];
    }
  return u;
}

// The DoF vector of nodal values (node_dofs maps them).
std::vector<double>
to_dofs(const MeshArrays &arrays, const std::vector<double> &nodal)
{
  std::vector<double> x(arrays.n_dofs);
  for (std::size_t i = 0; i < nodal.size(); ++i)
    x[arrays.node_dofs[i]] = nodal[i];
  return x;
}



template <int dim>
void
test_kernel(Testing::Checks &checks, const bool simplex)
{
  Testing::TestProblem<dim> problem;
  Testing::setup_problem(problem,
                         simplex,
                         1,
                         dim,
                         Testing::ConstraintKind::none,
                         false,
                         4);
  const DoFHandlerAdapter<dim>     adapter = Testing::make_adapter(problem);
  const MeshArrays                &arrays  = adapter.get_arrays();
  const HostAssembler<dim, double> assembler(arrays);
  const std::string                name = problem.name();

  NeoHookeanKernel<dim, double> kernel;
  kernel.mu     = 5.;
  kernel.lambda = 2.;
  std::vector<double> values, forces;

  // At u = 0 the tangent is linear elasticity.
  {
    const std::vector<double> zero(arrays.n_nodes * dim, 0.);
    assembler.assemble(kernel, values, forces, {}, zero, dim);
    LinearElasticityKernel<dim, double> linear;
    linear.mu     = 5.;
    linear.lambda = 2.;
    std::vector<double> linear_values, linear_rhs;
    assembler.assemble(linear, linear_values, linear_rhs);
    const double difference =
      Testing::max_relative_difference(values, linear_values);
    double size = 0;
    for (const double value : linear_values)
      size = std::max(size, std::abs(value));
    checks.check(difference <= 1e-14 && norm(forces) <= 1e-14 * size,
                 name +
                   ": at u = 0 the tangent is linear elasticity and the "
                   "internal force vanishes (max relative difference " +
                   Testing::scientific(difference) + ")");
  }

  // Central differences of the forces along a direction v.
  const auto displacement = [](const Point<dim> &X) {
    Tensor<1, dim> u;
    for (unsigned int k = 0; k < dim; ++k)
      u[k] = 0.1 * std::sin(1.3 * X[0] + k) * (1 + X[dim - 1]) +
             0.05 * X[(k + 1) % dim];
    return u;
  };
  const auto direction = [](const Point<dim> &X) {
    Tensor<1, dim> v;
    for (unsigned int k = 0; k < dim; ++k)
      v[k] = std::cos(2. * X[k] + X[0] * X[dim - 1]) - 0.3 * k;
    return v;
  };
  const std::vector<double> u = nodal_field<dim>(arrays, displacement);
  const std::vector<double> v = nodal_field<dim>(arrays, direction);
  assembler.assemble(kernel, values, forces, {}, u, dim);
  const std::vector<double> Kv = multiply(arrays, values, to_dofs(arrays, v));

  const double        epsilon = 1e-6;
  std::vector<double> plus(u), minus(u), dummy, forces_plus, forces_minus;
  for (std::size_t i = 0; i < u.size(); ++i)
    {
      plus[i] += epsilon * v[i];
      minus[i] -= epsilon * v[i];
    }
  assembler.assemble(kernel, dummy, forces_plus, {}, plus, dim);
  assembler.assemble(kernel, dummy, forces_minus, {}, minus, dim);
  std::vector<double> difference(Kv.size());
  for (std::size_t i = 0; i < Kv.size(); ++i)
    difference[i] = (forces_plus[i] - forces_minus[i]) / (2 * epsilon) - Kv[i];
  const double fd_error = norm(difference) / norm(Kv);
  checks.check(fd_error <= 1e-7,
               name +
                 ": the tangent is the derivative of the forces "
                 "(central differences, relative error " +
                 Testing::scientific(fd_error) + " <= 1e-7)");

  // A rigid rotation stores no energy: no internal force.
  {
    const double angle    = 0.7;
    const auto   rotation = [&](const Point<dim> &X) {
      Tensor<1, dim> r;
      r[0] = std::cos(angle) * X[0] - std::sin(angle) * X[1] - X[0];
      r[1] = std::sin(angle) * X[0] + std::cos(angle) * X[1] - X[1];
      return r;
    };
    std::vector<double> rotation_forces;
    assembler.assemble(kernel,
                       dummy,
                       rotation_forces,
                       {},
                       nodal_field<dim>(arrays, rotation),
                       dim);
    const double relative = norm(rotation_forces) / norm(forces);
    checks.check(relative <= 1e-13,
                 name +
                   ": a rigid rotation by 0.7 rad gives no internal "
                   "force (relative " +
                   Testing::scientific(relative) + ")");
  }

  // Upper-triangle storage adds each shared entry once.
  {
    GlobalNZPlan::Parameters parameters;
    parameters.elements_per_block = 64;
    parameters.symmetric          = true;
    GlobalNZPlan plan;
    plan.reinit(arrays, parameters, dim, sizeof(double), 48 * 1024);
    std::vector<double> scratch, symmetric_values, symmetric_forces;
    global_nz_on_host<dim>(plan,
                           arrays,
                           kernel,
                           AssemblyOptions(),
                           u,
                           dim,
                           scratch,
                           symmetric_values,
                           symmetric_forces);
    const double difference =
      Testing::max_relative_difference(symmetric_values, values);
    checks.check(difference <= 1e-13,
                 name +
                   ": GlobalNZ with upper-triangle element data "
                   "assembles the same tangent (max relative "
                   "difference " +
                   Testing::scientific(difference) + ")");
  }

  // An inverted element: u = -2 X turns F into -I.
  {
    const auto inversion = [](const Point<dim> &X) {
      Tensor<1, dim> r;
      for (unsigned int k = 0; k < dim; ++k)
        r[k] = -2. * X[k];
      return r;
    };
    std::vector<double> inverted_values, inverted_forces;
    assembler.assemble(kernel,
                       inverted_values,
                       inverted_forces,
                       {},
                       nodal_field<dim>(arrays, inversion),
                       dim);
    // In 2D, F = -I has J = +1: no inversion, finite results.
    const bool flagged = (dim == 3) == (std::isnan(norm(inverted_values)) &&
                                        std::isnan(norm(inverted_forces)));
    checks.check(flagged,
                 name + (dim == 3 ?
                           ": an inverted element (J = -1) is flagged by NaN" :
                           ": F = -I (J = +1 in 2D) is not an inversion"));
  }
}



int
main()
{
  Testing::Checks checks;
  test_kernel<3>(checks, true);
  test_kernel<3>(checks, false);
  test_kernel<2>(checks, true);
  return checks.exit_code();
}

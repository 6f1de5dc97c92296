// SPDX-License-Identifier: LGPL-2.1-or-later
// Every GPU assembly method reproduces the host reference assembly (double:
// 1e-13 relative), GlobalNZ and LocalElem-colored are bitwise reproducible,
// and single precision on the device against double on the host gives the
// L2 errors of Table 16.1 of the GPU Gems chapter on the sphere meshes,
// which this program prints. Needs a GPU: exits with 77 where there is none.

#include <deal.II/base/quadrature_lib.h>

#include <deal.II/dofs/dof_renumbering.h>

#include <deal.II/fe/fe_simplex_p.h>
#include <deal.II/fe/fe_system.h>
#include <deal.II/fe/mapping_fe.h>

#include <gpu_assembly/adapter/dof_handler_adapter.h>
#include <gpu_assembly/base/device.h>
#include <gpu_assembly/base/exceptions.h>
#include <gpu_assembly/engine/device_assembler.h>
#include <gpu_assembly/engine/host_assembler.h>
#include <gpu_assembly/grid/mesh_input.h>
#include <gpu_assembly/kernels/element_kernels.h>
#include <gpu_assembly/kernels/neo_hookean.h>

#include <cmath>
#include <iomanip>

#include "../test_problems.h"
#include "../tests.h"
#include "device_assembly.h"
#include "gpu_tests.h"

using namespace dealii;
using namespace GPUAssembly;

const std::vector<AssemblyMethod> all_methods = {
  AssemblyMethod::global_nz,
  AssemblyMethod::shared_nz,
  AssemblyMethod::local_elem_atomic,
  AssemblyMethod::local_elem_colored};

// The methods and, for kernels with a node-pair form (Laplace, linear
// elasticity), SharedNZ computing element data in its reduction
// (SharedNZPlan::Parameters::node_pairs), also with its compact targets
// (SharedNZPlan::Parameters::compact_targets), which follows node pairs
// with full targets in the list.
struct MethodVariant
{
  AssemblyMethod method;
  bool           node_pairs;
  bool           compact_targets = false;

  std::string
  name() const
  {
    return to_string(method) + (node_pairs ? " node pairs" : "") +
           (compact_targets ? ", compact targets" : "");
  }
};

const std::vector<MethodVariant> node_pair_methods = {
  {AssemblyMethod::global_nz, false},
  {AssemblyMethod::shared_nz, false},
  {AssemblyMethod::shared_nz, true},
  {AssemblyMethod::shared_nz, true, true},
  {AssemblyMethod::local_elem_atomic, false},
  {AssemblyMethod::local_elem_colored, false}};

template <int dim, typename Number>
LinearElasticityKernel<dim, Number>
elasticity_kernel()
{
  LinearElasticityKernel<dim, Number> kernel;
  kernel.lambda = 2.;
  kernel.mu     = 5.;
  for (unsigned int d = 0; d < dim; ++d)
    kernel.body_force[d] = 1. - d;
  return kernel;
}



template <int dim, typename Number, class Kernel>
void
device_assemble(const MeshArrays    &arrays,
                const AssemblyMethod method,
                const Kernel        &kernel,
                std::vector<Number> &values,
                std::vector<Number> &rhs,
                const unsigned int   n_repetitions   = 1,
                const bool           symmetric       = false,
                const bool           morton          = false,
                const bool           node_pairs      = false,
                const bool           compact_targets = false)
{
  auto data =
    Testing::assembler_data<dim, Number>(method, node_pairs, symmetric);
  data.shared_nz.compact_targets = compact_targets;
  if (morton)
    {
      // The other orders of the plan, tested on this variant.
      data.global_nz.element_order   = ElementOrder::morton;
      data.global_nz.reduction_order = ReductionOrder::morton;
    }
  Testing::device_assemble<dim>(arrays,
                                data,
                                kernel,
                                n_repetitions,
                                values,
                                rhs);
}



// Double precision on the device against the host reference.
template <int dim>
void
test_against_host(Testing::Checks             &checks,
                  const bool                   simplex,
                  const unsigned int           degree,
                  const bool                   elasticity,
                  const SupplementalDataFormat format)
{
  Testing::TestProblem<dim> problem;
  Testing::setup_problem(problem,
                         simplex,
                         degree,
                         elasticity ? dim : 1,
                         Testing::ConstraintKind::inhomogeneous,
                         true,
                         6);
  const DoFHandlerAdapter<dim> adapter =
    Testing::make_adapter(problem, {format});
  const MeshArrays &arrays = adapter.get_arrays();

  std::vector<double>              reference_values, reference_rhs;
  const HostAssembler<dim, double> host(arrays);
  LaplaceKernel<dim, double>       laplace;
  laplace.source = 3.;
  if (elasticity)
    host.assemble(elasticity_kernel<dim, double>(),
                  reference_values,
                  reference_rhs);
  else
    host.assemble(laplace, reference_values, reference_rhs);

  // SharedNZ's node pairs with full targets, which those with compact
  // targets must equal bitwise.
  std::vector<double> node_pair_values, node_pair_rhs;
  for (const MethodVariant &variant : node_pair_methods)
    {
      const AssemblyMethod method = variant.method;
      std::vector<double>  values, rhs, values_2, rhs_2;
      const auto           assemble = [&](const auto          &kernel,
                                std::vector<double> &v,
                                std::vector<double> &r,
                                const unsigned int   n) {
        device_assemble<dim>(arrays,
                             method,
                             kernel,
                             v,
                             r,
                             n,
                             false,
                             false,
                             variant.node_pairs,
                             variant.compact_targets);
      };
      if (elasticity)
        {
          assemble(elasticity_kernel<dim, double>(), values, rhs, 1);
          assemble(elasticity_kernel<dim, double>(), values_2, rhs_2, 3);
        }
      else
        {
          assemble(laplace, values, rhs, 1);
          assemble(laplace, values_2, rhs_2, 3);
        }
      const double matrix_error =
        Testing::relative_l2_error(values, reference_values);
      const double rhs_error = Testing::relative_l2_error(rhs, reference_rhs);
      checks.check(matrix_error <= 1e-13 && rhs_error <= 1e-13,
                   problem.name() +
                     (format == SupplementalDataFormat::inverse_edge_matrix ?
                        " (edge-matrix S(e))" :
                        "") +
                     ", " + variant.name() +
                     " in double equals the host reference: relative errors " +
                     Testing::scientific(matrix_error) + ", " +
                     Testing::scientific(rhs_error) + " <= 1e-13");
      if (method != AssemblyMethod::local_elem_atomic)
        checks.check(values == values_2 && rhs == rhs_2,
                     problem.name() + ", " + variant.name() +
                       ": bitwise identical on a fresh plan and after "
                       "repeated re-assembly");
      if (variant.node_pairs && !variant.compact_targets)
        {
          node_pair_values = values;
          node_pair_rhs    = rhs;
        }
      if (variant.compact_targets)
        checks.check(!node_pair_values.empty() && values == node_pair_values &&
                       rhs == node_pair_rhs,
                     problem.name() + ", " + variant.name() +
                       ": bitwise identical to node pairs with full "
                       "targets (same sums, stored where the runs say)");
    }

  // GlobalNZ in Z-ordered elements and reduction blocks: with symmetric
  // (upper-triangle) element data, and with full element data grouped by
  // the components of a column node (GlobalNZPlan::entry_group; scalar
  // problems have groups of one).
  for (const bool symmetric : {true, false})
    {
      std::vector<double> values, rhs;
      if (elasticity)
        device_assemble<dim>(arrays,
                             AssemblyMethod::global_nz,
                             elasticity_kernel<dim, double>(),
                             values,
                             rhs,
                             1,
                             symmetric,
                             true);
      else
        device_assemble<dim>(arrays,
                             AssemblyMethod::global_nz,
                             laplace,
                             values,
                             rhs,
                             1,
                             symmetric,
                             true);
      const double matrix_error =
        Testing::relative_l2_error(values, reference_values);
      const double rhs_error = Testing::relative_l2_error(rhs, reference_rhs);
      checks.check(matrix_error <= 1e-13 && rhs_error <= 1e-13,
                   problem.name() + ", GlobalNZ with " +
                     (symmetric ? "symmetric element data" :
                                  "full element data grouped by node "
                                  "components") +
                     " (Z-ordered elements and reduction blocks) equals the "
                     "host reference: relative errors " +
                     Testing::scientific(matrix_error) + ", " +
                     Testing::scientific(rhs_error) + " <= 1e-13");
    }
}



// The neo-Hookean tangent and forces at a non-trivial displacement: every
// method on the device against the host, and GlobalNZ's upper-triangle
// storage (the kernel accumulates over quadrature points).
void
test_neo_hookean(Testing::Checks &checks)
{
  Testing::TestProblem<3> problem;
  Testing::setup_problem(problem,
                         false,
                         1,
                         3,
                         Testing::ConstraintKind::inhomogeneous,
                         true,
                         5);
  const DoFHandlerAdapter<3> adapter = Testing::make_adapter(problem);
  const MeshArrays          &arrays  = adapter.get_arrays();
  std::vector<double>        displacement(arrays.n_nodes * 3);
  for (std::size_t i = 0; i < displacement.size(); ++i)
    displacement[i] = 0.05 * std::sin(0.37 * i) * arrays.nodal_coordinates[i];
  NeoHookeanKernel<3, double> kernel;
  kernel.mu              = 5.;
  kernel.lambda          = 2.;
  kernel.stiffness_scale = 0.1;
  kernel.body_force[2]   = -1.;

  std::vector<double> reference_values, reference_forces;
  HostAssembler<3, double>(arrays)
    .assemble(kernel, reference_values, reference_forces, {}, displacement, 3);

  for (const AssemblyMethod method : all_methods)
    for (const bool symmetric : {false, true})
      {
        if (symmetric && method != AssemblyMethod::global_nz)
          continue;
        typename DeviceAssembler<3, double>::AdditionalData data;
        data.method              = method;
        data.global_nz.symmetric = symmetric;
        DeviceAssembler<3, double> assembler;
        assembler.reinit(arrays, data);
        DeviceCSRMatrix<double> matrix;
        matrix.reinit(arrays);
        DeviceVector<double>       forces(arrays.n_dofs);
        const DeviceVector<double> nodal(displacement);
        assembler.assemble(kernel, nodal, matrix, forces);
        const double matrix_error =
          Testing::relative_l2_error(matrix.get_values().to_host(),
                                     reference_values);
        const double force_error =
          Testing::relative_l2_error(forces.to_host(), reference_forces);
        checks.check(matrix_error <= 1e-13 && force_error <= 1e-13,
                     "neo-Hookean tangent and forces, " + to_string(method) +
                       (symmetric ? " (symmetric element data)" : "") +
                       ", equal the host's: relative errors " +
                       Testing::scientific(matrix_error) + ", " +
                       Testing::scientific(force_error) + " <= 1e-13");
      }
}



// One assembler reinitialized with another method: it assembles with the
// new method and no longer holds the old method's plan and element data.
void
test_method_switch(Testing::Checks &checks)
{
  Testing::TestProblem<3> problem;
  Testing::setup_problem(problem,
                         true,
                         1,
                         3,
                         Testing::ConstraintKind::inhomogeneous,
                         true,
                         6);
  const DoFHandlerAdapter<3> adapter = Testing::make_adapter(problem);
  const MeshArrays          &arrays  = adapter.get_arrays();
  std::vector<double>        reference_values, reference_rhs;
  HostAssembler<3, double>(arrays).assemble(elasticity_kernel<3, double>(),
                                            reference_values,
                                            reference_rhs);

  DeviceAssembler<3, double>                 assembler;
  DeviceAssembler<3, double>::AdditionalData data;
  data.method = AssemblyMethod::global_nz;
  assembler.reinit(arrays, data);
  const std::size_t global_nz_bytes = assembler.device_memory_consumption();
  data.method                       = AssemblyMethod::shared_nz;
  assembler.reinit(arrays, data);
  const std::size_t shared_nz_bytes = assembler.device_memory_consumption();
  DeviceAssembler<3, double> fresh;
  fresh.reinit(arrays, data);

  DeviceCSRMatrix<double> matrix;
  matrix.reinit(arrays);
  DeviceVector<double>       rhs(arrays.n_dofs);
  const DeviceVector<double> nodal(arrays.nodal_coordinates);
  assembler.assemble(elasticity_kernel<3, double>(), nodal, matrix, rhs);
  const double error =
    Testing::relative_l2_error(matrix.get_values().to_host(), reference_values);
  checks.check(error <= 1e-13 &&
                 shared_nz_bytes == fresh.device_memory_consumption() &&
                 shared_nz_bytes < global_nz_bytes,
               "an assembler switched from GlobalNZ to SharedNZ assembles "
               "with SharedNZ (relative error " +
                 Testing::scientific(error) + ") and holds only its plan (" +
                 std::to_string(shared_nz_bytes) +
                 " bytes, as a fresh one; "
                 "GlobalNZ held " +
                 std::to_string(global_nz_bytes) + ")");

  // A node-pair plan with a kernel that has no node-pair form: a clear
  // error, and the matrix is left as it was.
  data.shared_nz.node_pairs = true;
  assembler.reinit(arrays, data);
  const std::vector<double> before = matrix.get_values().to_host();
  checks.check_throws<ExceptionBase>(
    [&] {
      assembler.assemble(MassKernel<3, 3, double>(), nodal, matrix, rhs);
    },
    "the kernel has no node-pair form",
    "SharedNZ with node pairs refuses a kernel without a node-pair form");
  checks.check(matrix.get_values().to_host() == before,
               "the refused assembly left the matrix untouched");
}



// Table 16.1: single precision on the device against double on the host,
// linear elasticity on the sphere meshes.
void
table_16_1(Testing::Checks &checks)
{
  std::cout << "\nTable 16.1 replication: L2 relative error of the nonzeros, "
               "float on the GPU vs double on the host\n"
               "(3D linear elasticity, linear tetrahedra, CSR)\n";
  std::cout << std::setw(44) << "method";
  const std::vector<std::string> meshes = {"Sphere_63.dat",
                                           "Sphere_305.dat",
                                           "Sphere_1701.dat",
                                           "Sphere_3611.dat"};
  for (const auto &mesh : meshes)
    std::cout << std::setw(17) << mesh;
  std::cout << '\n';

  std::vector<std::vector<double>> errors(node_pair_methods.size());
  for (const auto &mesh : meshes)
    {
      Triangulation<3> tria;
      read_mesh(mesh, tria);
      const FESystem<3>      fe(FE_SimplexP<3>(1), 3);
      const MappingFE<3>     mapping(FE_SimplexP<3>(1));
      const QGaussSimplex<3> quadrature(1);
      DoFHandler<3>          dof_handler(tria);
      dof_handler.distribute_dofs(fe);
      AffineConstraints<double> constraints;
      constraints.close();
      const DoFHandlerAdapter<3> adapter(mapping,
                                         dof_handler,
                                         quadrature,
                                         constraints);
      const MeshArrays          &arrays = adapter.get_arrays();
      std::vector<double>        reference_values, reference_rhs;
      HostAssembler<3, double>(arrays).assemble(elasticity_kernel<3, double>(),
                                                reference_values,
                                                reference_rhs);
      for (unsigned int m = 0; m < node_pair_methods.size(); ++m)
        {
          std::vector<float> values, rhs;
          device_assemble<3>(arrays,
                             node_pair_methods[m].method,
                             elasticity_kernel<3, float>(),
                             values,
                             rhs,
                             1,
                             false,
                             false,
                             node_pair_methods[m].node_pairs,
                             node_pair_methods[m].compact_targets);
          errors[m].push_back(
            Testing::relative_l2_error(values, reference_values));
        }
    }
  for (unsigned int m = 0; m < node_pair_methods.size(); ++m)
    {
      std::cout << std::setw(44) << node_pair_methods[m].name() + " CSR";
      for (const double error : errors[m])
        std::cout << std::setw(17) << Testing::scientific(error);
      std::cout << '\n';
    }
  std::cout << std::endl;
  for (unsigned int m = 0; m < node_pair_methods.size(); ++m)
    for (unsigned int i = 0; i < meshes.size(); ++i)
      checks.check(errors[m][i] > 1e-9 && errors[m][i] < 1e-6,
                   node_pair_methods[m].name() + " float on " + meshes[i] +
                     ": L2 error " + Testing::scientific(errors[m][i]) +
                     " is float rounding (between 1e-9 and 1e-6)");
}



// --quick runs one small case of each method and skips the table: for
// compute-sanitizer, which slows kernels down a hundredfold.
int
main(int argc, char **argv)
{
  const bool quick = argc > 1 && std::string(argv[1]) == "--quick";
  if (!Testing::cuda_device_present())
    return Testing::no_device_exit_code();
  Testing::Checks checks;
  const auto      gradients = SupplementalDataFormat::quadrature_gradients;
  test_against_host<3>(checks, true, 1, true, gradients);
  test_method_switch(checks);
  if (quick)
    return checks.exit_code();
  test_against_host<3>(checks,
                       true,
                       1,
                       true,
                       SupplementalDataFormat::inverse_edge_matrix);
  test_against_host<3>(checks, false, 1, true, gradients);
  test_against_host<3>(checks, false, 1, false, gradients);
  test_against_host<3>(checks, true, 2, false, gradients);
  test_against_host<2>(checks, true, 2, true, gradients);
  test_against_host<2>(checks, false, 2, false, gradients);
  test_neo_hookean(checks);
  table_16_1(checks);

  // Misuse is reported, not run.
  checks.check_throws<ExceptionBase>(
    [] {
      DeviceAssembler<3, double> assembler;
      DeviceCSRMatrix<double>    matrix;
      DeviceVector<double>       nodal, rhs;
      assembler.assemble(elasticity_kernel<3, double>(), nodal, matrix, rhs);
    },
    "before reinit",
    "assemble() before reinit() raises an error");
  checks.check_throws<ExcDeviceMemory>(
    [] {
      DeviceVector<double> too_large(std::size_t(1) << 50);
    },
    "Not enough device memory",
    "a device vector larger than the device raises ExcDeviceMemory with the "
    "bytes requested and free");
  checks.check_throws<ExcDeviceMemory>(
    [] {
      measure_copy_bandwidth(std::size_t(1) << 50, 1);
    },
    "Not enough device memory",
    "measure_copy_bandwidth() of buffers larger than the device raises "
    "ExcDeviceMemory with the bytes requested and free");
  return checks.exit_code();
}

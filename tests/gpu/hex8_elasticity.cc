// SPDX-License-Identifier: LGPL-2.1-or-later
// On the device, the element matrices of the three hex8 element kernels
// (Sanfui-Sharma's shapeMap, their standard implementation, and the
// engine's thread per element, with Hex8ElasticityKernel and with
// LinearElasticityKernel) equal deal.II's FEValues ones on distorted
// hexahedra to 1e-13 relative, read from GlobalNZ's element data; the
// matrix assembled through GlobalNZ with the shapeMap strategy equals the
// host reference with inhomogeneous Dirichlet constraints, bitwise the
// same on a second assembly; misuse is refused. Needs a GPU: exits with 77
// where there is none.

#include <gpu_assembly/adapter/dof_handler_adapter.h>
#include <gpu_assembly/base/device.h>
#include <gpu_assembly/base/exceptions.h>
#include <gpu_assembly/engine/device_assembler.h>
#include <gpu_assembly/engine/host_assembler.h>
#include <gpu_assembly/kernels/element_kernels.h>
#include <gpu_assembly/kernels/hex8_elasticity.h>

#include "../hex8_reference.h"
#include "../test_problems.h"
#include "../tests.h"
#include "gpu_tests.h"

using namespace dealii;
using namespace GPUAssembly;

constexpr const auto &body_force = Testing::hex8_body_force;
using Testing::hex8_kernel;

using Setup = Testing::Hex8Problem;



Hex8ElasticityKernel<double>
hex8_kernel(const ElementStrategy strategy, const unsigned int G = 8)
{
  Hex8ElasticityKernel<double> kernel      = hex8_kernel();
  kernel.block_strategy.element_strategy   = strategy;
  kernel.block_strategy.elements_per_block = G;
  return kernel;
}



template <class Kernel>
double
device_element_difference(const Setup               &setup,
                          const Kernel              &kernel,
                          const bool                 symmetric,
                          const std::vector<double> &matrices,
                          const std::vector<double> &vectors,
                          const bool                 morton = false)
{
  DeviceAssembler<3, double>::AdditionalData data;
  data.method              = AssemblyMethod::global_nz;
  data.global_nz.symmetric = symmetric;
  if (morton)
    // Z-ordered reduction blocks: full element data grouped by the
    // components of a column node (GlobalNZPlan::entry_group).
    data.global_nz.reduction_order = ReductionOrder::morton;
  data.n_nodal_fields = 3;
  DeviceAssembler<3, double> assembler;
  assembler.reinit(setup.arrays, data);
  DeviceCSRMatrix<double> matrix;
  matrix.reinit(setup.arrays);
  DeviceVector<double>       rhs;
  const DeviceVector<double> nodal(setup.arrays.nodal_coordinates);
  assembler.assemble(kernel, nodal, matrix, rhs);
  std::vector<double> element_data;
  assembler.get_element_data().copy_to_host(element_data);

  const GlobalNZPlan &plan       = assembler.get_global_nz_plan();
  const unsigned int  B          = plan.parameters.elements_per_block;
  double              difference = 0;
  std::vector<double> K(576), F(24);
  for (unsigned int k = 0; k < plan.n_element_blocks; ++k)
    for (unsigned int t = 0; t < B; ++t)
      {
        const int e = plan.block_element[k * B + t];
        if (e < 0)
          continue;
        for (unsigned int i = 0; i < 24; ++i)
          {
            F[i] =
              element_data[plan.element_data_index(k,
                                                   t,
                                                   plan.n_matrix_entries + i)];
            for (unsigned int j = 0; j < 24; ++j)
              K[i * 24 + j] = element_data[plan.element_data_index(
                k,
                t,
                symmetric ?
                  SymmetricElementOutput<double>::packed_index(24, i, j) :
                  i * 24 + j)];
          }
        difference = std::max(
          difference,
          Testing::element_difference(K.data(),
                                      F.data(),
                                      matrices.data() + std::size_t(e) * 576,
                                      vectors.data() + std::size_t(e) * 24));
      }
  return difference;
}



void
test_local_matrices(Testing::Checks &checks)
{
  const Setup         setup(Testing::ConstraintKind::none, 6);
  std::vector<double> matrices, vectors;
  Testing::fevalues_hex8_matrices(setup.problem,
                                  setup.arrays,
                                  setup.E,
                                  setup.nu,
                                  body_force,
                                  matrices,
                                  vectors);
  // Layout 0: full matrices entry by entry; 1: packed upper triangles; 2:
  // full matrices grouped by the components of a column node, as Z-ordered
  // reduction blocks store them.
  for (const unsigned int layout : {0, 1, 2})
    for (const auto &[strategy, G] :
         std::vector<std::pair<ElementStrategy, unsigned int>>{
           {ElementStrategy::shape_map, 8},
           {ElementStrategy::shape_map, 1},
           {ElementStrategy::shape_map, 2},
           {ElementStrategy::shape_map, 4},
           {ElementStrategy::shape_map_per_entry, 8},
           {ElementStrategy::shape_map_per_entry, 1},
           {ElementStrategy::shape_map_per_entry, 2},
           {ElementStrategy::shape_map_per_entry, 4},
           {ElementStrategy::standard, 8},
           {ElementStrategy::standard, 1},
           {ElementStrategy::thread_per_element, 8}})
      {
        const double difference =
          device_element_difference(setup,
                                    hex8_kernel(strategy, G),
                                    layout == 1,
                                    matrices,
                                    vectors,
                                    layout == 2);
        checks.check(difference < 1e-13,
                     "device " + to_string(strategy) +
                       " (G = " + std::to_string(G) +
                       (layout == 1 ? ", symmetric" :
                                      (layout == 2 ? ", grouped" : "")) +
                       ") element matrices = FEValues' on 216 distorted "
                       "hexahedra (max relative difference " +
                       Testing::scientific(difference) + ")");
      }

  // The engine's LinearElasticityKernel has one material for all elements.
  std::vector<double> E(setup.arrays.n_elements, 2.),
    nu(setup.arrays.n_elements, 0.3);
  Testing::fevalues_hex8_matrices(setup.problem,
                                  setup.arrays,
                                  E,
                                  nu,
                                  body_force,
                                  matrices,
                                  vectors);
  LinearElasticityKernel<3, double> engine;
  engine.lambda = Hex8::lame_lambda(2., 0.3);
  engine.mu     = Hex8::lame_mu(2., 0.3);
  for (unsigned int d = 0; d < 3; ++d)
    engine.body_force[d] = body_force[d];
  const double difference =
    device_element_difference(setup, engine, false, matrices, vectors);
  checks.check(difference < 1e-13,
               "device LinearElasticityKernel (engine, thread per element) "
               "element matrices = FEValues' (max relative difference " +
                 Testing::scientific(difference) + ")");
}



void
test_assembly(Testing::Checks &checks)
{
  const Setup         setup(Testing::ConstraintKind::inhomogeneous, 6);
  const MeshArrays   &arrays = setup.arrays;
  std::vector<double> reference_values, reference_rhs;
  AssemblyOptions     options;
  options.use_inhomogeneities_for_rhs = true;
  const HostAssembler<3, double> host(arrays);
  host.assemble(hex8_kernel(),
                reference_values,
                reference_rhs,
                options,
                arrays.nodal_coordinates,
                3);

  for (const ElementStrategy strategy : {ElementStrategy::shape_map,
                                         ElementStrategy::shape_map_per_entry,
                                         ElementStrategy::standard})
    // Variant 2: full element data grouped by the components of a column
    // node, as Z-ordered reduction blocks store them.
    for (const unsigned int variant : {0, 1, 2})
      {
        const bool                                 symmetric = variant == 1;
        DeviceAssembler<3, double>::AdditionalData data;
        data.method              = AssemblyMethod::global_nz;
        data.global_nz.symmetric = symmetric;
        if (variant == 2)
          data.global_nz.reduction_order = ReductionOrder::morton;
        data.n_nodal_fields = 3;
        data.options        = options;
        DeviceAssembler<3, double> assembler;
        assembler.reinit(arrays, data);
        DeviceCSRMatrix<double> matrix;
        matrix.reinit(arrays);
        DeviceVector<double>       rhs;
        const DeviceVector<double> nodal(arrays.nodal_coordinates);
        std::vector<double>        values, values2, rhs_values, rhs2;
        assembler.assemble(hex8_kernel(strategy), nodal, matrix, rhs);
        matrix.get_values().copy_to_host(values);
        rhs.copy_to_host(rhs_values);
        assembler.assemble(hex8_kernel(strategy), nodal, matrix, rhs);
        matrix.get_values().copy_to_host(values2);
        rhs.copy_to_host(rhs2);
        const double matrix_error =
          Testing::max_relative_difference(values, reference_values);
        const double rhs_error =
          Testing::max_relative_difference(rhs_values, reference_rhs);
        const std::string name =
          "GlobalNZ with " + to_string(strategy) +
          (symmetric ? " (symmetric)" :
                       (variant == 2 ? " (grouped element data)" : ""));
        checks.check(matrix_error < 1e-13 && rhs_error < 1e-13,
                     name +
                       " = host reference, inhomogeneous Dirichlet (matrix " +
                       Testing::scientific(matrix_error) + ", rhs " +
                       Testing::scientific(rhs_error) + ")");
        checks.check(values == values2 && rhs_values == rhs2,
                     name + ": a second assembly is bitwise the same");
      }
}



void
test_errors(Testing::Checks &checks)
{
  const Setup setup(Testing::ConstraintKind::none, 2);
  DeviceAssembler<3, double>::AdditionalData data;
  data.n_nodal_fields = 3;
  data.method         = AssemblyMethod::shared_nz;
  DeviceAssembler<3, double> assembler;
  assembler.reinit(setup.arrays, data);
  DeviceCSRMatrix<double> matrix;
  matrix.reinit(setup.arrays);
  DeviceVector<double>       rhs;
  const DeviceVector<double> nodal(setup.arrays.nodal_coordinates);
  checks.check_throws<ExceptionBase>(
    [&] {
      assembler.assemble(hex8_kernel(ElementStrategy::shape_map),
                         nodal,
                         matrix,
                         rhs);
    },
    "computes element data for GlobalNZ only",
    "shapeMap with SharedNZ is refused at assemble()");
  data.method = AssemblyMethod::global_nz;
  assembler.reinit(setup.arrays, data);
  checks.check_throws<ExceptionBase>(
    [&] {
      assembler.assemble(hex8_kernel(ElementStrategy::shape_map, 3),
                         nodal,
                         matrix,
                         rhs);
    },
    "must be 1, 2, 4 or 8",
    "3 elements per block are refused");
  data.n_nodal_fields = 0;
  assembler.reinit(setup.arrays, data);
  checks.check_throws<ExceptionBase>(
    [&] {
      assembler.assemble(hex8_kernel(ElementStrategy::shape_map),
                         DeviceVector<double>(),
                         matrix,
                         rhs);
    },
    "set n_nodal_fields to 3",
    "shapeMap without the nodal coordinates is refused");
  data.n_nodal_fields    = 3;
  MeshArrays no_material = setup.adapter.get_arrays();
  assembler.reinit(no_material, data);
  checks.check_throws<ExceptionBase>(
    [&] {
      assembler.assemble(hex8_kernel(ElementStrategy::shape_map),
                         nodal,
                         matrix,
                         rhs);
    },
    "the mesh arrays have none",
    "a per-element material missing from S(e) is refused");
}



int
main()
{
  if (!Testing::cuda_device_present())
    return Testing::no_device_exit_code();
  Testing::Checks checks;
  test_local_matrices(checks);
  test_assembly(checks);
  test_errors(checks);
  return checks.exit_code();
}

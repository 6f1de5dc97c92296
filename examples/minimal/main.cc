// SPDX-License-Identifier: LGPL-2.1-or-later
//
// Assembles the Laplace matrix of a deal.II discretization through the
// plugin and checks it against deal.II's own MatrixCreator.

#include <deal.II/base/quadrature_lib.h>

#include <deal.II/dofs/dof_handler.h>

#include <deal.II/fe/fe_q.h>
#include <deal.II/fe/mapping_q.h>

#include <deal.II/grid/grid_generator.h>

#include <deal.II/lac/affine_constraints.h>
#include <deal.II/lac/sparse_matrix.h>

#include <deal.II/numerics/matrix_creator.h>

#include <gpu_assembly/adapter/dof_handler_adapter.h>
#include <gpu_assembly/engine/host_assembler.h>
#include <gpu_assembly/kernels/element_kernels.h>

#include <iostream>

int
main()
{
  using namespace dealii;
  constexpr int      dim = 2;
  Triangulation<dim> tria;
  GridGenerator::hyper_ball(tria);
  tria.refine_global(3);
  const FE_Q<dim>     fe(2);
  const MappingQ<dim> mapping(1);
  const QGauss<dim>   quadrature(3);
  DoFHandler<dim>     dof_handler(tria);
  dof_handler.distribute_dofs(fe);
  AffineConstraints<double> constraints;
  constraints.close();

  // deal.II objects in, flat arrays out.
  const GPUAssembly::DoFHandlerAdapter<dim>     adapter(mapping,
                                                    dof_handler,
                                                    quadrature,
                                                    constraints);
  const GPUAssembly::HostAssembler<dim, double> assembler(adapter.get_arrays());
  std::vector<double>                           values, rhs;
  assembler.assemble(GPUAssembly::LaplaceKernel<dim, double>(), values, rhs);

  SparsityPattern sparsity_pattern;
  adapter.make_sparsity_pattern(sparsity_pattern);
  SparseMatrix<double> matrix(sparsity_pattern), reference(sparsity_pattern);
  adapter.copy_to_sparse_matrix(values, matrix);
  MatrixCreator::create_laplace_matrix(mapping,
                                       dof_handler,
                                       quadrature,
                                       reference);
  matrix.add(-1., reference);
  const double error = matrix.frobenius_norm() / reference.frobenius_norm();
  std::cout << "Laplace matrix with " << values.size()
            << " nonzeros, relative difference to deal.II: " << error
            << std::endl;
  return error < 1e-12 ? 0 : 1;
}

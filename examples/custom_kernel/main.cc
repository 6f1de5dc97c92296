// SPDX-License-Identifier: LGPL-2.1-or-later
//
// A deal.II program that assembles a reaction-diffusion system with an
// element kernel of its own (reaction_diffusion_kernel.h) through the
// installed plugin: on the host with HostAssembler and, where a CUDA device
// exists, on the device with each GPU method. Every result is compared with
// deal.II's own assembly, an FEValues loop into
// AffineConstraints::distribute_local_to_global(). Without a CUDA device the
// GPU part is skipped, and the program says so.

#include <deal.II/base/function.h>
#include <deal.II/base/quadrature_lib.h>

#include <deal.II/dofs/dof_handler.h>

#include <deal.II/fe/fe_q.h>
#include <deal.II/fe/fe_values.h>
#include <deal.II/fe/mapping_q.h>

#include <deal.II/grid/grid_generator.h>

#include <deal.II/lac/affine_constraints.h>
#include <deal.II/lac/full_matrix.h>
#include <deal.II/lac/sparse_matrix.h>
#include <deal.II/lac/vector.h>

#include <deal.II/numerics/vector_tools.h>

#include <gpu_assembly/adapter/dof_handler_adapter.h>
#include <gpu_assembly/base/device.h>
#include <gpu_assembly/base/version.h>
#include <gpu_assembly/engine/device_assembler.h>
#include <gpu_assembly/engine/host_assembler.h>

#include <iostream>

#include "reaction_diffusion_kernel.h"

using namespace dealii;

namespace
{
  constexpr int dim = 2;

  /// The diffusion coefficient k(x) = 1 + |x|^2.
  class Diffusion : public Function<dim>
  {
  public:
    double
    value(const Point<dim> &p, const unsigned int = 0) const override
    {
      return 1. + p.norm_square();
    }
  };



  /// deal.II's assembly of what the kernel computes, the reference.
  void
  assemble_with_fe_values(const Mapping<dim>              &mapping,
                          const DoFHandler<dim>           &dof_handler,
                          const Quadrature<dim>           &quadrature,
                          const AffineConstraints<double> &constraints,
                          const Vector<double>            &diffusion,
                          const ReactionDiffusionKernel<dim, double> &kernel,
                          SparseMatrix<double>                       &matrix,
                          Vector<double>                             &rhs)
  {
    FEValues<dim>       fe_values(mapping,
                            dof_handler.get_fe(),
                            quadrature,
                            update_values | update_gradients |
                              update_JxW_values);
    const unsigned int  n_dofs = dof_handler.get_fe().n_dofs_per_cell();
    FullMatrix<double>  cell_matrix(n_dofs, n_dofs);
    Vector<double>      cell_rhs(n_dofs);
    std::vector<double> k(quadrature.size());
    std::vector<types::global_dof_index> dof_indices(n_dofs);
    for (const auto &cell : dof_handler.active_cell_iterators())
      {
        fe_values.reinit(cell);
        fe_values.get_function_values(diffusion, k);
        cell_matrix = 0;
        cell_rhs    = 0;
        for (const unsigned int q : fe_values.quadrature_point_indices())
          for (const unsigned int i : fe_values.dof_indices())
            {
              for (const unsigned int j : fe_values.dof_indices())
                cell_matrix(i, j) +=
                  (k[q] *
                     (fe_values.shape_grad(i, q) * fe_values.shape_grad(j, q)) +
                   kernel.reaction * fe_values.shape_value(i, q) *
                     fe_values.shape_value(j, q)) *
                  fe_values.JxW(q);
              cell_rhs(i) +=
                kernel.source * fe_values.shape_value(i, q) * fe_values.JxW(q);
            }
        cell->get_dof_indices(dof_indices);
        constraints.distribute_local_to_global(cell_matrix,
                                               cell_rhs,
                                               dof_indices,
                                               matrix,
                                               rhs);
      }
  }



  /// Compares an assembled system with the reference and prints the
  /// relative differences; true if both are below 1e-12.
  bool
  check(const std::string          &name,
        const SparseMatrix<double> &matrix,
        const std::vector<double>  &rhs,
        const SparseMatrix<double> &reference_matrix,
        const Vector<double>       &reference_rhs)
  {
    SparseMatrix<double> matrix_difference(
      reference_matrix.get_sparsity_pattern());
    matrix_difference.copy_from(matrix);
    matrix_difference.add(-1., reference_matrix);
    const double matrix_error =
      matrix_difference.frobenius_norm() / reference_matrix.frobenius_norm();
    Vector<double> rhs_difference(rhs.begin(), rhs.end());
    rhs_difference -= reference_rhs;
    const double rhs_error = rhs_difference.l2_norm() / reference_rhs.l2_norm();
    const bool   passed    = matrix_error < 1e-12 && rhs_error < 1e-12;
    std::cout << "  " << name << ": relative difference to deal.II "
              << matrix_error << " (matrix), " << rhs_error
              << " (right-hand side)"
              << (passed ? "" : ", FAILED: more than 1e-12") << std::endl;
    return passed;
  }
} // namespace



int
main()
{
  try
    {
      std::cout << "GPUAssembly " << GPU_ASSEMBLY_VERSION_STRING << std::endl;

      Triangulation<dim> triangulation;
      GridGenerator::hyper_ball(triangulation);
      triangulation.refine_global(4);
      const FE_Q<dim>     fe(2);
      const MappingQ<dim> mapping(1);
      const QGauss<dim>   quadrature(3);
      DoFHandler<dim>     dof_handler(triangulation);
      dof_handler.distribute_dofs(fe);
      AffineConstraints<double> constraints;
      VectorTools::interpolate_boundary_values(mapping,
                                               dof_handler,
                                               0,
                                               Functions::ZeroFunction<dim>(),
                                               constraints);
      constraints.close();
      Vector<double> diffusion(dof_handler.n_dofs());
      VectorTools::interpolate(mapping, dof_handler, Diffusion(), diffusion);

      ReactionDiffusionKernel<dim, double> kernel;
      kernel.reaction = 2.;
      kernel.source   = 3.;

      // deal.II objects in, flat arrays out; the coefficient's nodal values
      // are the kernel's nodal data.
      const GPUAssembly::DoFHandlerAdapter<dim> adapter(mapping,
                                                        dof_handler,
                                                        quadrature,
                                                        constraints);
      const GPUAssembly::MeshArrays            &arrays = adapter.get_arrays();
      std::vector<double>                       nodal_diffusion;
      adapter.gather_nodal_values(diffusion, nodal_diffusion);

      SparsityPattern sparsity_pattern;
      adapter.make_sparsity_pattern(sparsity_pattern);
      SparseMatrix<double> reference_matrix(sparsity_pattern);
      Vector<double>       reference_rhs(dof_handler.n_dofs());
      assemble_with_fe_values(mapping,
                              dof_handler,
                              quadrature,
                              constraints,
                              diffusion,
                              kernel,
                              reference_matrix,
                              reference_rhs);
      std::cout << "Reaction-diffusion system with " << dof_handler.n_dofs()
                << " unknowns and " << sparsity_pattern.n_nonzero_elements()
                << " nonzeros:" << std::endl;

      // The host path: the same kernel, compiled by the host compiler.
      const GPUAssembly::HostAssembler<dim, double> host_assembler(arrays);
      std::vector<double>                           values, rhs;
      host_assembler.assemble(kernel,
                              values,
                              rhs,
                              GPUAssembly::AssemblyOptions(),
                              nodal_diffusion,
                              1);
      SparseMatrix<double> host_matrix(sparsity_pattern);
      adapter.copy_to_sparse_matrix(values, host_matrix);
      bool passed = check("HostAssembler",
                          host_matrix,
                          rhs,
                          reference_matrix,
                          reference_rhs);

      if (GPUAssembly::n_cuda_devices() == 0)
        {
          std::cout << "No CUDA device: the GPU part was skipped." << std::endl;
          return passed ? 0 : 1;
        }
      std::cout << GPUAssembly::describe_execution_path() << std::endl;

      // The device path: a plan per method, built on the host and uploaded
      // once; assemble() then runs on the device alone, as often as needed.
      const GPUAssembly::DeviceVector<double> device_diffusion(nodal_diffusion);
      for (const GPUAssembly::AssemblyMethod method :
           {GPUAssembly::AssemblyMethod::global_nz,
            GPUAssembly::AssemblyMethod::shared_nz,
            GPUAssembly::AssemblyMethod::local_elem_atomic,
            GPUAssembly::AssemblyMethod::local_elem_colored})
        {
          GPUAssembly::DeviceAssembler<dim, double>::AdditionalData data;
          data.method         = method;
          data.n_nodal_fields = 1;
          GPUAssembly::DeviceAssembler<dim, double> device_assembler;
          device_assembler.reinit(arrays, data);
          GPUAssembly::DeviceCSRMatrix<double> device_matrix;
          device_matrix.reinit(arrays);
          GPUAssembly::DeviceVector<double> device_rhs(arrays.n_dofs);
          device_assembler.assemble(kernel,
                                    device_diffusion,
                                    device_matrix,
                                    device_rhs);

          SparseMatrix<double> matrix(sparsity_pattern);
          device_matrix.copy_to(matrix);
          passed &= check(GPUAssembly::to_string(method),
                          matrix,
                          device_rhs.to_host(),
                          reference_matrix,
                          reference_rhs);
        }
      return passed ? 0 : 1;
    }
  catch (const std::exception &exc)
    {
      std::cerr << "Exception: " << exc.what() << std::endl;
      return 1;
    }
}

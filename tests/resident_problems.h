// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_tests_resident_problems_h
#define gpu_assembly_tests_resident_problems_h

// A distributed discretization (distributed_problems.h's meshes, hanging
// node and Dirichlet constraints), its Trilinos target, and the checks
// shared by the tests of the distributed classes on the host and on the
// device.

#include <deal.II/base/function_lib.h>
#include <deal.II/base/quadrature_lib.h>

#include <deal.II/dofs/dof_tools.h>

#include <deal.II/fe/fe_q.h>
#include <deal.II/fe/fe_system.h>
#include <deal.II/fe/mapping_q.h>

#include <deal.II/lac/dynamic_sparsity_pattern.h>
#include <deal.II/lac/la_parallel_vector.h>
#include <deal.II/lac/trilinos_sparse_matrix.h>
#include <deal.II/lac/trilinos_vector.h>

#include <deal.II/numerics/vector_tools.h>

#include <gpu_assembly/adapter/dof_handler_adapter.h>
#include <gpu_assembly/distributed/distributed_assembler.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "dealii_reference.h"
#include "distributed_problems.h"

namespace Testing
{
  template <int dim>
  struct DistributedProblem
  {
    /// The mesh of make_triangulation(), @p shear and
    /// @p extra_refinements passed on.
    DistributedProblem(const TriaKind     kind,
                       const Form         form,
                       const unsigned int degree,
                       const bool         hanging_nodes,
                       const bool         keep_constrained_dofs = true,
                       const double       shear                 = 0,
                       const unsigned int extra_refinements     = 0)
      : form(form)
      , n_components(form == Form::laplace ? 1 : dim)
      , tria(make_triangulation<dim>(kind,
                                     hanging_nodes,
                                     shear,
                                     extra_refinements))
      , fe(FE_Q<dim>(degree), n_components)
      , dof_handler(*tria)
      , mapping(1)
      , quadrature(degree + 1)
    {
      dof_handler.distribute_dofs(fe);
      make_constraints(mapping, dof_handler, constraints);
      typename GPUAssembly::DoFHandlerAdapter<dim>::AdditionalData data;
      data.keep_constrained_dofs = keep_constrained_dofs;
      adapter.reinit(mapping, dof_handler, quadrature, constraints, data);
    }

    template <class Function>
    void
    with_kernel(const Function &f) const
    {
      ::with_kernel<dim, double>(form, n_components, f);
    }

    const Form                                                   form;
    const unsigned int                                           n_components;
    std::unique_ptr<parallel::DistributedTriangulationBase<dim>> tria;
    FESystem<dim>                                                fe;
    DoFHandler<dim>                                              dof_handler;
    MappingQ<dim>                                                mapping;
    QGauss<dim>                                                  quadrature;
    AffineConstraints<double>                                    constraints;
    GPUAssembly::DoFHandlerAdapter<dim>                          adapter;
  };



  // The Trilinos target of a problem, assembled on the host: the matrix and
  // right-hand side on the adapter's sparsity pattern, the reference the
  // other targets and the device path are compared with.
  template <int dim>
  struct TrilinosTarget
  {
    explicit TrilinosTarget(const DistributedProblem<dim> &problem)
    {
      const IndexSet &owned = problem.adapter.locally_owned_dofs();
      problem.adapter.make_sparsity_pattern(dsp);
      matrix.reinit(owned, owned, dsp, MPI_COMM_WORLD);
      rhs.reinit(owned, MPI_COMM_WORLD);
      assembler.reinit(problem.adapter, matrix, rhs);
      assemble(problem);
    }

    // Assemble again, with the plan of the first assembly.
    void
    assemble(const DistributedProblem<dim> &problem)
    {
      problem.with_kernel([&](const auto &kernel) {
        assembler.assemble(kernel, matrix, rhs);
      });
    }

    DynamicSparsityPattern                         dsp;
    TrilinosWrappers::SparseMatrix                 matrix;
    TrilinosWrappers::MPI::Vector                  rhs;
    GPUAssembly::DistributedAssembler<dim, double> assembler;
  };



  // Owned entries of a smooth function of the global index, for products
  // whose every entry matters.
  inline void
  fill_owned(LinearAlgebra::distributed::Vector<double> &vector)
  {
    const auto &partitioner = *vector.get_partitioner();
    for (unsigned int i = 0; i < partitioner.locally_owned_size(); ++i)
      vector.local_element(i) =
        std::sin(0.37 * partitioner.local_to_global(i) + 0.1) + 0.2;
  }



  // ||a - b|| / ||b||, Euclidean, over all ranks.
  template <typename Number>
  double
  relative_difference(const std::vector<Number> &a,
                      const std::vector<Number> &b,
                      const MPI_Comm             communicator)
  {
    double difference = 0, norm = 0;
    for (std::size_t i = 0; i < a.size() && i < b.size(); ++i)
      {
        difference += (double(a[i]) - b[i]) * (double(a[i]) - b[i]);
        norm += double(b[i]) * b[i];
      }
    difference = Utilities::MPI::sum(difference, communicator);
    norm       = Utilities::MPI::sum(norm, communicator);
    const bool sizes_differ =
      Utilities::MPI::max(a.size() != b.size() ? 1 : 0, communicator) == 1;
    if (sizes_differ)
      return std::numeric_limits<double>::infinity();
    return norm > 0 ? std::sqrt(difference / norm) : std::sqrt(difference);
  }



  // Whether a and b are equal bit for bit on every rank.
  template <typename Number>
  bool
  bitwise_equal(const std::vector<Number> &a,
                const std::vector<Number> &b,
                const MPI_Comm             communicator)
  {
    const bool equal =
      a.size() == b.size() &&
      (a.empty() ||
       std::memcmp(a.data(), b.data(), a.size() * sizeof(Number)) == 0);
    return Utilities::MPI::min(equal ? 1 : 0, communicator) == 1;
  }
} // namespace Testing

#endif

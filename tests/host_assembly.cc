// SPDX-License-Identifier: LGPL-2.1-or-later
// The host reference assembly through the flat arrays reproduces deal.II's
// own assembly (FEValues loop + AffineConstraints::distribute_local_to_global)
// for every supported element, kernel and kind of constraint.

#include <deal.II/base/multithread_info.h>
#include <deal.II/base/quadrature_lib.h>

#include <deal.II/dofs/dof_tools.h>

#include <deal.II/fe/fe_values.h>

#include <deal.II/lac/dynamic_sparsity_pattern.h>
#include <deal.II/lac/full_matrix.h>
#include <deal.II/lac/sparse_matrix.h>
#include <deal.II/lac/vector.h>

#include <gpu_assembly/adapter/dof_handler_adapter.h>
#include <gpu_assembly/element/element_stage.h>
#include <gpu_assembly/engine/host/element_stage.h>
#include <gpu_assembly/engine/host_assembler.h>
#include <gpu_assembly/kernels/element_kernels.h>
#include <gpu_assembly/kernels/neo_hookean.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "dealii_reference.h"
#include "test_problems.h"
#include "tests.h"

using namespace dealii;
using namespace GPUAssembly;

template <int dim, typename Number>
void
assemble_with_plugin(const DoFHandlerAdapter<dim> &adapter,
                     const Form                    form,
                     const unsigned int            n_components,
                     std::vector<Number>          &values,
                     std::vector<Number>          &rhs)
{
  const HostAssembler<dim, Number> assembler(adapter.get_arrays());
  with_kernel<dim, Number>(form, n_components, [&](const auto &kernel) {
    assembler.assemble(kernel, values, rhs);
  });
}



template <int dim, typename Number>
Errors
compare(const Testing::TestProblem<dim> &problem,
        const Form                       form,
        const bool                       keep_constrained_dofs,
        const SupplementalDataFormat     format)
{
  SparsityPattern      sparsity_pattern;
  SparseMatrix<double> reference;
  Vector<double>       reference_rhs;
  assemble_with_dealii(problem,
                       form,
                       keep_constrained_dofs,
                       sparsity_pattern,
                       reference,
                       reference_rhs);

  const DoFHandlerAdapter<dim> adapter =
    Testing::make_adapter(problem, {format, keep_constrained_dofs});
  std::vector<Number> values, rhs;
  assemble_with_plugin<dim, Number>(adapter,
                                    form,
                                    problem.n_components,
                                    values,
                                    rhs);
  return errors_against(adapter,
                        sparsity_pattern,
                        reference,
                        reference_rhs,
                        values,
                        rhs);
}



template <int dim>
void
test_all_elements(Testing::Checks &checks)
{
  for (const bool simplex : {false, true})
    for (const unsigned int degree : {1u, 2u})
      for (const Form form : {Form::laplace, Form::mass, Form::elasticity})
        for (const unsigned int n_components :
             (form == Form::laplace    ? std::vector<unsigned int>{1u} :
              form == Form::elasticity ? std::vector<unsigned int>{dim} :
                                         std::vector<unsigned int>{1u, dim}))
          for (const auto kind : {Testing::ConstraintKind::none,
                                  Testing::ConstraintKind::homogeneous,
                                  Testing::ConstraintKind::inhomogeneous})
            {
              // Renumbering and dropping constrained couplings are
              // exercised on the constrained cases.
              const bool renumber = kind != Testing::ConstraintKind::none;
              const bool keep = kind != Testing::ConstraintKind::homogeneous;
              Testing::TestProblem<dim> problem;
              Testing::setup_problem(problem,
                                     simplex,
                                     degree,
                                     n_components,
                                     kind,
                                     renumber);
              const Errors errors = compare<dim, double>(
                problem,
                form,
                keep,
                SupplementalDataFormat::quadrature_gradients);
              std::ostringstream what;
              what << problem.name() << ", " << to_string(form) << ", "
                   << Testing::to_string(kind)
                   << (keep ? "" : " (constrained couplings dropped)")
                   << ": relative Frobenius error " << errors.matrix << ", rhs "
                   << errors.rhs << " <= 1e-12";
              checks.check(errors.matrix <= 1e-12 && errors.rhs <= 1e-12,
                           what.str());
            }
}



template <int dim>
void
test_edge_matrix_format(Testing::Checks &checks)
{
  for (const Form form : {Form::laplace, Form::mass, Form::elasticity})
    {
      Testing::TestProblem<dim> problem;
      Testing::setup_problem(problem,
                             true,
                             1,
                             form == Form::laplace ? 1 : dim,
                             Testing::ConstraintKind::inhomogeneous);
      const Errors errors =
        compare<dim, double>(problem,
                             form,
                             true,
                             SupplementalDataFormat::inverse_edge_matrix);
      std::ostringstream what;
      what << problem.name() << ", " << to_string(form)
           << ", inverse-edge-matrix S(e): relative errors " << errors.matrix
           << ", " << errors.rhs << " <= 1e-12";
      checks.check(errors.matrix <= 1e-12 && errors.rhs <= 1e-12, what.str());
    }
}



// Single precision through the same kernels: errors of the order of float's
// rounding, not of a different discretization.
template <int dim>
void
test_single_precision(Testing::Checks &checks)
{
  Testing::TestProblem<dim> problem;
  Testing::setup_problem(problem,
                         true,
                         1,
                         dim,
                         Testing::ConstraintKind::inhomogeneous);
  const Errors errors =
    compare<dim, float>(problem,
                        Form::elasticity,
                        true,
                        SupplementalDataFormat::quadrature_gradients);
  std::ostringstream what;
  what << problem.name() << " elasticity in float: relative errors "
       << errors.matrix << ", " << errors.rhs << " <= 1e-6";
  checks.check(errors.matrix <= 1e-6 && errors.rhs <= 1e-6 && errors.matrix > 0,
               what.str());
}



// compute_element() specialized for linear simplices (what the GPU methods
// run on tetrahedra and triangles) computes every element exactly as the
// general form does, condensation included: same operations in the same
// order, so bitwise the same values on the host.
template <int dim, class Kernel>
bool
specialization_matches(const MeshArrays           &arrays,
                       const Kernel               &kernel,
                       const std::vector<double>  &nodal_data,
                       const unsigned int          n_nodal_fields,
                       const ElementSpecialization specialization,
                       std::string                &what)
{
  const HostElementStage<double>  stage(arrays,
                                       n_nodal_fields,
                                       AssemblyOptions());
  const ElementStageData<double> &data = stage.data();
  if (element_specialization<dim>(data) != specialization)
    {
      what = "element_specialization() does not choose " +
             std::to_string(static_cast<int>(specialization));
      return false;
    }
  const unsigned int  n_ed = data.n_dofs;
  std::vector<double> general(n_ed * n_ed + n_ed), special(general.size());
  const std::vector<double> supplemental(arrays.supplemental.begin(),
                                         arrays.supplemental.end());
  std::size_t               n_constrained = 0;
  for (std::size_t e = 0; e < arrays.n_elements; ++e)
    {
      const bool has_constraints =
        std::any_of(arrays.location.begin() + e * n_ed,
                    arrays.location.begin() + (e + 1) * n_ed,
                    [&](const index_type dof) {
                      return data.dof_is_constrained[dof];
                    });
      n_constrained += has_constraints;
      const auto compute = [&](std::vector<double> &out, const auto form) {
        const ElementOutput<double> output{out.data(),
                                           out.data() + n_ed * n_ed,
                                           n_ed,
                                           1};
        compute_element<dim,
                        double,
                        Kernel,
                        ElementOutput<double>,
                        decltype(form)::value>(
          kernel,
          data,
          supplemental.data() + e * arrays.n_supplemental,
          nodal_data.data(),
          arrays.connectivity.data() + e * arrays.layout.n_nodes,
          1,
          output,
          has_constraints,
          arrays.location.data() + e * n_ed);
      };
      compute(general,
              std::integral_constant<ElementSpecialization,
                                     ElementSpecialization::general>());
      if (specialization == ElementSpecialization::simplex_gradients)
        compute(
          special,
          std::integral_constant<ElementSpecialization,
                                 ElementSpecialization::simplex_gradients>());
      else
        compute(
          special,
          std::integral_constant<ElementSpecialization,
                                 ElementSpecialization::simplex_edge_matrix>());
      // memcmp: NaN written by an inverted element must match too.
      if (std::memcmp(general.data(),
                      special.data(),
                      general.size() * sizeof(double)) != 0)
        {
          what = "element " + std::to_string(e) + " differs";
          return false;
        }
    }
  what = std::to_string(arrays.n_elements) + " elements, " +
         std::to_string(n_constrained) + " with constrained DoFs";
  return n_constrained > 0 && n_constrained < arrays.n_elements;
}



template <int dim>
void
test_simplex_specializations(Testing::Checks &checks)
{
  for (const auto format : {SupplementalDataFormat::quadrature_gradients,
                            SupplementalDataFormat::inverse_edge_matrix,
                            SupplementalDataFormat::compressed_edge_matrix})
    for (const Form form : {Form::laplace, Form::mass, Form::elasticity})
      for (const bool neo_hookean : {false, true})
        {
          if (neo_hookean && form != Form::elasticity)
            continue;
          Testing::TestProblem<dim> problem;
          Testing::setup_problem(problem,
                                 true,
                                 1,
                                 form == Form::laplace ? 1 : dim,
                                 Testing::ConstraintKind::inhomogeneous);
          typename DoFHandlerAdapter<dim>::AdditionalData adapter_data;
          adapter_data.supplemental_format = format;
          // One quadrature point, as the specializations require.
          const QGaussSimplex<dim>     quadrature(1);
          const DoFHandlerAdapter<dim> adapter(*problem.mapping,
                                               problem.dof_handler,
                                               quadrature,
                                               problem.constraints,
                                               adapter_data);
          const MeshArrays            &arrays = adapter.get_arrays();
          const auto                   specialization =
            format == SupplementalDataFormat::quadrature_gradients ?
                                ElementSpecialization::simplex_gradients :
                                ElementSpecialization::simplex_edge_matrix;
          std::string what;
          bool        ok = false;
          if (neo_hookean)
            {
              // A smooth displacement, so that F is not the identity.
              std::vector<double> displacement(arrays.nodal_coordinates.size());
              for (std::size_t i = 0; i < displacement.size(); ++i)
                displacement[i] =
                  0.05 * std::sin(3. * arrays.nodal_coordinates[i] + i % dim);
              NeoHookeanKernel<dim, double> kernel;
              kernel.mu     = mu;
              kernel.lambda = lambda;
              ok            = specialization_matches<dim>(arrays,
                                               kernel,
                                               displacement,
                                               dim,
                                               specialization,
                                               what);
            }
          else
            with_kernel<dim, double>(form,
                                     form == Form::laplace ? 1 : dim,
                                     [&](const auto &kernel) {
                                       ok = specialization_matches<dim>(
                                         arrays,
                                         kernel,
                                         {},
                                         0,
                                         specialization,
                                         what);
                                     });
          checks.check(
            ok,
            problem.name() + ", " +
              (neo_hookean ? std::string("neo-Hookean") : to_string(form)) +
              ", S(e) " +
              (format == SupplementalDataFormat::quadrature_gradients ?
                 "quadrature gradients" :
               format == SupplementalDataFormat::inverse_edge_matrix ?
                 "inverse edge matrix" :
                 "compressed edge matrix") +
              ": the simplex specialization of compute_element() "
              "gives the general form's element data bitwise (" +
              what + ")");
        }
}



// The colouring makes the result independent of the number of threads.
void
test_reproducibility(Testing::Checks &checks)
{
  Testing::TestProblem<3> problem;
  Testing::setup_problem(problem,
                         true,
                         2,
                         3,
                         Testing::ConstraintKind::inhomogeneous,
                         true,
                         4);
  const DoFHandlerAdapter<3> adapter = Testing::make_adapter(problem);
  std::vector<double>        values_1, rhs_1, values_n, rhs_n;
  MultithreadInfo::set_thread_limit(1);
  assemble_with_plugin<3, double>(adapter,
                                  Form::elasticity,
                                  3,
                                  values_1,
                                  rhs_1);
  MultithreadInfo::set_thread_limit();
  assemble_with_plugin<3, double>(adapter,
                                  Form::elasticity,
                                  3,
                                  values_n,
                                  rhs_n);
  checks.check(values_1 == values_n && rhs_1 == rhs_n,
               "assembly on 1 thread and on " +
                 std::to_string(MultithreadInfo::n_threads()) +
                 " threads is bitwise identical");
}



int
main()
{
  Testing::Checks checks;
  test_all_elements<2>(checks);
  test_all_elements<3>(checks);
  test_edge_matrix_format<2>(checks);
  test_edge_matrix_format<3>(checks);
  test_single_precision<2>(checks);
  test_single_precision<3>(checks);
  test_simplex_specializations<2>(checks);
  test_simplex_specializations<3>(checks);
  test_reproducibility(checks);
  return checks.exit_code();
}

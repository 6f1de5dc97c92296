// SPDX-License-Identifier: LGPL-2.1-or-later
// Constraints with entries (hanging nodes, periodicity, chained user lines)
// mixed with Dirichlet lines: the host assembler and the host executions of
// the GlobalNZ and SharedNZ plans, each followed by the constraint plan,
// give deal.II's AffineConstraints::distribute_local_to_global() assembly
// on the pattern of DoFTools::make_sparsity_pattern() with the same
// constraints, for both keep_constrained_dofs and both
// use_inhomogeneities_for_rhs; the host form of DeviceConstraints'
// distribute() gives AffineConstraints::distribute().

#include <deal.II/base/multithread_info.h>

#include <deal.II/lac/vector.h>

#include <gpu_assembly/adapter/dof_handler_adapter.h>
#include <gpu_assembly/engine/global_nz/plan.h>
#include <gpu_assembly/engine/host/constraint_stage.h>
#include <gpu_assembly/engine/host/element_stage.h>
#include <gpu_assembly/engine/host_assembler.h>
#include <gpu_assembly/engine/shared_nz/plan.h>
#include <gpu_assembly/lac/device_constraints.h>

#include <algorithm>

#include "constraint_problems.h"
#include "dealii_reference.h"
#include "global_nz_host.h"
#include "shared_nz_host.h"
#include "tests.h"

using namespace dealii;
using namespace GPUAssembly;

namespace
{
  // Whether every row of the CSR pattern of @p arrays holds exactly the
  // columns of the same row of @p reference (which stores its diagonal
  // first).
  bool
  same_rows(const MeshArrays &arrays, const SparsityPattern &reference)
  {
    if (reference.n_rows() != arrays.n_dofs)
      return false;
    std::vector<types::global_dof_index> columns;
    for (unsigned int row = 0; row < arrays.n_dofs; ++row)
      {
        columns.clear();
        for (auto entry = reference.begin(row); entry != reference.end(row);
             ++entry)
          columns.push_back(entry->column());
        std::sort(columns.begin(), columns.end());
        if (!std::equal(columns.begin(),
                        columns.end(),
                        arrays.column_indices.begin() + arrays.row_offsets[row],
                        arrays.column_indices.begin() +
                          arrays.row_offsets[row + 1]))
          return false;
      }
    return true;
  }



  template <int dim>
  void
  test_case(Testing::Checks               &checks,
            const Testing::ConstrainedCase constrained_case,
            const unsigned int             degree,
            const Form                     form,
            const bool                     plans_too)
  {
    const unsigned int        n_components = form == Form::elasticity ? dim : 1;
    Testing::TestProblem<dim> problem;
    Testing::setup_constrained_problem(problem,
                                       constrained_case,
                                       degree,
                                       n_components);
    unsigned int n_with_entries = 0;
    for (const auto &line : problem.constraints.get_lines())
      n_with_entries += !line.entries.empty();
    const std::string name = problem.name() + ", " + to_string(form) + ", " +
                             Testing::to_string(constrained_case);
    checks.check(n_with_entries > 0 && problem.tria.has_hanging_nodes(),
                 name + ": the mesh has hanging nodes and " +
                   std::to_string(n_with_entries) +
                   " constraint lines have entries");

    for (const bool keep : {true, false})
      for (const bool use_inhomogeneities : {false, true})
        {
          SparsityPattern      sparsity_pattern;
          SparseMatrix<double> reference;
          Vector<double>       reference_rhs;
          assemble_with_dealii(problem,
                               form,
                               keep,
                               sparsity_pattern,
                               reference,
                               reference_rhs,
                               use_inhomogeneities);

          const DoFHandlerAdapter<dim> adapter =
            Testing::make_adapter(problem,
                                  {SupplementalDataFormat::quadrature_gradients,
                                   keep});
          const MeshArrays &arrays = adapter.get_arrays();
          checks.check(arrays.n_nonzeros() ==
                         sparsity_pattern.n_nonzero_elements(),
                       name + ": the adapter's pattern has deal.II's " +
                         std::to_string(sparsity_pattern.n_nonzero_elements()) +
                         " nonzeros");
          checks.check(same_rows(arrays, sparsity_pattern),
                       name + (keep ? "" : ", constrained couplings dropped") +
                         ": every row of the adapter's pattern holds the "
                         "columns of DoFTools::make_sparsity_pattern()'s");

          AssemblyOptions options;
          options.use_inhomogeneities_for_rhs = use_inhomogeneities;
          const std::string variant =
            name + (keep ? "" : ", constrained couplings dropped") +
            (use_inhomogeneities ? ", inhomogeneities in the rhs" : "");
          const auto check = [&](const std::string         &who,
                                 const std::vector<double> &values,
                                 const std::vector<double> &rhs) {
            const Errors errors = errors_against(adapter,
                                                 sparsity_pattern,
                                                 reference,
                                                 reference_rhs,
                                                 values,
                                                 rhs);
            checks.check(errors.matrix <= 1e-13 && errors.rhs <= 1e-13,
                         variant + ": " + who +
                           " equals deal.II's assembly: relative errors " +
                           Testing::scientific(errors.matrix) + ", " +
                           Testing::scientific(errors.rhs) + " <= 1e-13");
          };

          const HostAssembler<dim, double> host(arrays);
          with_kernel<dim, double>(form, n_components, [&](const auto &kernel) {
            std::vector<double> values, rhs;
            host.assemble(kernel, values, rhs, options);
            check("the host assembler", values, rhs);

            if (!plans_too)
              return;
            // The device methods' plans run on the host, then the
            // constraint plan, as DeviceAssembler runs them.
            const std::vector<double> nodal(arrays.nodal_coordinates.begin(),
                                            arrays.nodal_coordinates.end());
            const HostConstraintStage<double> constraint_stage(arrays);
            const HostElementStage<double> element_stage(arrays, dim, options);
            {
              GlobalNZPlan plan;
              plan.reinit(arrays,
                          GlobalNZPlan::Parameters(),
                          dim,
                          sizeof(double),
                          48 * 1024);
              std::vector<double> scratch;
              global_nz_on_host<dim>(plan,
                                     arrays,
                                     kernel,
                                     options,
                                     nodal,
                                     dim,
                                     scratch,
                                     values,
                                     rhs);
              constraint_stage.template apply<dim>(kernel,
                                                   element_stage.data(),
                                                   nodal.data(),
                                                   values.data(),
                                                   rhs.data());
              check("the GlobalNZ plan with the constraint plan", values, rhs);
            }
            for (const bool node_pairs : {false, true})
              {
                SharedNZPlan::Parameters parameters;
                parameters.node_pairs = node_pairs;
                SharedNZPlan plan;
                plan.reinit(arrays, parameters, dim, sizeof(double), 48 * 1024);
                shared_nz_on_host<dim>(plan,
                                       arrays,
                                       kernel,
                                       options,
                                       nodal,
                                       values,
                                       rhs);
                constraint_stage.template apply<dim>(kernel,
                                                     element_stage.data(),
                                                     nodal.data(),
                                                     values.data(),
                                                     rhs.data());
                check(std::string("the SharedNZ plan") +
                        (node_pairs ? " with node pairs" : "") +
                        " with the constraint plan",
                      values,
                      rhs);
              }
          });
        }
  }



  // The constraint plan is the same on one thread and on several.
  template <int dim>
  void
  test_plan_threads(Testing::Checks &checks)
  {
    Testing::TestProblem<dim> problem;
    Testing::setup_constrained_problem(problem,
                                       Testing::ConstrainedCase::chained,
                                       1,
                                       dim,
                                       1);
    const DoFHandlerAdapter<dim> adapter = Testing::make_adapter(problem);
    ConstraintPlan               one, several;
    MultithreadInfo::set_thread_limit(1);
    one.reinit(adapter.get_arrays());
    MultithreadInfo::set_thread_limit(4);
    several.reinit(adapter.get_arrays());
    checks.check(one.elements == several.elements &&
                   one.targets == several.targets &&
                   one.overwrite == several.overwrite &&
                   one.source_offsets == several.source_offsets &&
                   one.sources == several.sources &&
                   one.weights == several.weights && !one.empty(),
                 problem.name() + ": the constraint plan (" +
                   std::to_string(one.elements.size()) + " elements, " +
                   std::to_string(one.sources.size()) +
                   " weighted entries) is the same on 1 and 4 threads");
  }



  // DeviceConstraints' arithmetic, on the host: every constrained entry of
  // a random vector set from its line, as AffineConstraints::distribute().
  template <int dim>
  void
  test_distribute(Testing::Checks &checks, const Testing::ConstrainedCase c)
  {
    Testing::TestProblem<dim> problem;
    Testing::setup_constrained_problem(problem, c, 2, 1);
    const DoFHandlerAdapter<dim> adapter = Testing::make_adapter(problem);
    std::vector<double>          ours =
      Testing::random_values(problem.dof_handler.n_dofs(), 7);
    Vector<double> reference(ours.begin(), ours.end());
    problem.constraints.distribute(reference);
    distribute_constraints(ConstraintLines(adapter.get_arrays()), ours);
    const double difference = Testing::max_difference(ours, reference);
    checks.check(difference <= 1e-14 * reference.linfty_norm(),
                 problem.name() + ", " + Testing::to_string(c) +
                   ": distribute_constraints() equals "
                   "AffineConstraints::distribute(), max difference " +
                   Testing::scientific(difference));
  }
} // namespace



int
main()
{
  // Results must not depend on the thread count; run with several.
  MultithreadInfo::set_thread_limit(4);
  Testing::Checks checks;
  using C = Testing::ConstrainedCase;
  try
    {
      test_case<2>(checks, C::refined_ball, 1, Form::laplace, true);
      test_case<2>(checks, C::refined_ball, 2, Form::laplace, true);
      test_case<3>(checks, C::refined_ball, 1, Form::laplace, true);
      test_case<2>(checks,
                   C::refined_ball_inhomogeneous,
                   1,
                   Form::elasticity,
                   true);
      test_case<3>(checks,
                   C::refined_ball_inhomogeneous,
                   1,
                   Form::elasticity,
                   true);
      test_case<2>(checks,
                   C::refined_ball_inhomogeneous,
                   2,
                   Form::laplace,
                   true);
      test_case<2>(checks, C::periodic_cube, 1, Form::laplace, true);
      test_case<2>(checks, C::periodic_cube, 2, Form::elasticity, true);
      test_case<3>(checks, C::periodic_cube, 1, Form::laplace, true);
      test_case<2>(checks, C::chained, 1, Form::laplace, true);
      test_case<2>(checks, C::chained, 2, Form::elasticity, true);
      test_case<3>(checks, C::chained, 1, Form::mass, false);
      test_plan_threads<3>(checks);
      test_distribute<2>(checks, C::chained);
      test_distribute<2>(checks, C::periodic_cube);
      test_distribute<3>(checks, C::refined_ball_inhomogeneous);
    }
  catch (const std::exception &exc)
    {
      checks.check(false, std::string("unexpected exception: ") + exc.what());
    }
  return checks.exit_code();
}

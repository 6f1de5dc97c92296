// SPDX-License-Identifier: LGPL-2.1-or-later
// The plans are built on the task threads, and must not depend on how many
// there are: the GlobalNZ plan (both element orders, both orders of the
// reduction blocks, full and symmetric element data) and the constraint
// plan, built with one thread and with several, are compared field by
// field on a locally refined hexahedral mesh with hanging nodes and on a
// tetrahedral mesh.

#include <deal.II/base/multithread_info.h>

#include <gpu_assembly/adapter/dof_handler_adapter.h>
#include <gpu_assembly/engine/constraints/plan.h>
#include <gpu_assembly/engine/global_nz/plan.h>

#include <string>
#include <vector>

#include "constraint_problems.h"
#include "test_problems.h"
#include "tests.h"

using namespace dealii;
using namespace GPUAssembly;

namespace
{
  // The names of the fields in which two plans differ.
  class FieldComparison
  {
  public:
    template <typename T>
    void
    operator()(const std::string &name, const T &a, const T &b)
    {
      if (!(a == b))
        differing += (differing.empty() ? "" : ", ") + name;
    }

    std::string differing;
  };



  std::string
  compare(const GlobalNZPlan &a, const GlobalNZPlan &b)
  {
    FieldComparison c;
    c("n_element_blocks", a.n_element_blocks, b.n_element_blocks);
    c("n_nodes_per_element", a.n_nodes_per_element, b.n_nodes_per_element);
    c("n_dofs_per_element", a.n_dofs_per_element, b.n_dofs_per_element);
    c("n_supplemental", a.n_supplemental, b.n_supplemental);
    c("n_matrix_entries", a.n_matrix_entries, b.n_matrix_entries);
    c("n_entries", a.n_entries, b.n_entries);
    c("entry_group", a.entry_group, b.entry_group);
    c("n_nonzeros", a.n_nonzeros, b.n_nonzeros);
    c("n_dofs", a.n_dofs, b.n_dofs);
    c("n_value_targets", a.n_value_targets, b.n_value_targets);
    c("upper_position", a.upper_position, b.upper_position);
    c("mirror_position", a.mirror_position, b.mirror_position);
    c("block_element", a.block_element, b.block_element);
    c("cluster_node_offsets", a.cluster_node_offsets, b.cluster_node_offsets);
    c("cluster_nodes", a.cluster_nodes, b.cluster_nodes);
    c("max_cluster_nodes", a.max_cluster_nodes, b.max_cluster_nodes);
    c("block_connectivity", a.block_connectivity, b.block_connectivity);
    // Copies of the adapter's values: equal as numbers means equal bits.
    c("block_supplemental", a.block_supplemental, b.block_supplemental);
    c("block_location", a.block_location, b.block_location);
    c("block_has_constraints",
      a.block_has_constraints,
      b.block_has_constraints);
    c("reduction_target_begin",
      a.reduction_target_begin,
      b.reduction_target_begin);
    c("reduction_slice_offsets",
      a.reduction_slice_offsets,
      b.reduction_slice_offsets);
    c("reduction_source_base",
      a.reduction_source_base,
      b.reduction_source_base);
    c("reduction_array", a.reduction_array, b.reduction_array);
    c("reduction_block_order",
      a.reduction_block_order,
      b.reduction_block_order);
    return c.differing;
  }



  std::string
  compare(const ConstraintPlan &a, const ConstraintPlan &b)
  {
    FieldComparison c;
    c("n_nodes_per_element", a.n_nodes_per_element, b.n_nodes_per_element);
    c("n_dofs_per_element", a.n_dofs_per_element, b.n_dofs_per_element);
    c("n_supplemental", a.n_supplemental, b.n_supplemental);
    c("elements", a.elements, b.elements);
    c("connectivity", a.connectivity, b.connectivity);
    c("supplemental", a.supplemental, b.supplemental);
    c("targets", a.targets, b.targets);
    c("n_matrix_targets", a.n_matrix_targets, b.n_matrix_targets);
    c("overwrite", a.overwrite, b.overwrite);
    c("source_offsets", a.source_offsets, b.source_offsets);
    c("sources", a.sources, b.sources);
    // Products of the same two weights in the same order: bitwise equal
    // wherever they are equal at all.
    c("weights", a.weights, b.weights);
    return c.differing;
  }



  // The plan of @p build with one thread and with @p n_threads, compared;
  // the latter returned.
  template <class Plan, class Build>
  Plan
  check_independent_of_threads(Testing::Checks   &checks,
                               const std::string &what,
                               const unsigned int n_threads,
                               const Build       &build)
  {
    Plan serial, parallel;
    MultithreadInfo::set_thread_limit(1);
    build(serial);
    MultithreadInfo::set_thread_limit(n_threads);
    build(parallel);
    const std::string differing = compare(serial, parallel);
    checks.check(differing.empty(),
                 what + ": every field is the same with 1 and " +
                   std::to_string(n_threads) + " threads" +
                   (differing.empty() ? "" : " (differ: " + differing + ")"));
    return parallel;
  }



  template <int dim>
  void
  check_plans(Testing::Checks                 &checks,
              const Testing::TestProblem<dim> &problem,
              const std::string               &mesh,
              const bool                       expect_constraint_lines)
  {
    const DoFHandlerAdapter<dim> adapter   = Testing::make_adapter(problem);
    const MeshArrays            &arrays    = adapter.get_arrays();
    const unsigned int           n_threads = 4;
    const std::string            name = mesh + ", " + problem.name() + " (" +
                             std::to_string(arrays.n_elements) + " elements)";

    for (const ElementOrder element_order :
         {ElementOrder::rows, ElementOrder::morton})
      for (const ReductionOrder reduction_order :
           {ReductionOrder::rows, ReductionOrder::morton})
        for (const bool symmetric : {false, true})
          {
            GlobalNZPlan::Parameters parameters;
            parameters.element_order   = element_order;
            parameters.reduction_order = reduction_order;
            parameters.symmetric       = symmetric;
            check_independent_of_threads<GlobalNZPlan>(
              checks,
              name + ", GlobalNZ plan (elements in " +
                (element_order == ElementOrder::rows ? "row" : "Z") +
                " order, reduction blocks in " +
                (reduction_order == ReductionOrder::rows ? "row" : "Z") +
                " order, " + (symmetric ? "symmetric" : "full") +
                " element data)",
              n_threads,
              [&](GlobalNZPlan &plan) {
                plan.reinit(arrays,
                            parameters,
                            dim,
                            sizeof(double),
                            227 * 1024);
              });
          }

    const ConstraintPlan plan =
      check_independent_of_threads<ConstraintPlan>(checks,
                                                   name + ", constraint plan",
                                                   n_threads,
                                                   [&](ConstraintPlan &plan) {
                                                     plan.reinit(arrays);
                                                   });
    // A plan without targets is the same whatever the threads: the
    // comparison needs lines with entries to mean anything.
    checks.check(plan.targets.empty() != expect_constraint_lines,
                 name + ": the constraint plan has targets exactly where "
                        "constraint lines have entries");
  }
} // namespace



int
main()
{
  Testing::Checks checks;
  {
    Testing::TestProblem<3> problem;
    Testing::setup_constrained_problem(
      problem,
      Testing::ConstrainedCase::refined_ball_inhomogeneous,
      1,
      3,
      2);
    check_plans(checks, problem, "refined ball with hanging nodes", true);
  }
  {
    Testing::TestProblem<3> problem;
    Testing::setup_problem(problem,
                           true,
                           1,
                           3,
                           Testing::ConstraintKind::inhomogeneous,
                           true,
                           16);
    check_plans(checks, problem, "tetrahedral cube", false);
  }
  return checks.exit_code();
}

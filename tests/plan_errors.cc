// SPDX-License-Identifier: LGPL-2.1-or-later
// Plans refuse what they cannot hold with a clear error, and their arrays
// do not depend on how many threads built them.

#include <deal.II/base/multithread_info.h>

#include <gpu_assembly/adapter/dof_handler_adapter.h>
#include <gpu_assembly/base/exceptions.h>
#include <gpu_assembly/engine/global_nz/plan.h>
#include <gpu_assembly/engine/shared_nz/plan.h>

#include "rule_checks.h"
#include "test_problems.h"
#include "tests.h"

using namespace dealii;
using namespace GPUAssembly;

// Node pairs keep which DoFs of an element are constrained in 64 bits: a
// plan for elements of more DoFs (quadratic hexahedra in 3D elasticity, 81)
// is refused with a clear error before anything is built.
void
test_node_pairs_dof_limit(Testing::Checks &checks)
{
  Testing::TestProblem<3> problem;
  Testing::setup_problem(problem,
                         false,
                         2,
                         3,
                         Testing::ConstraintKind::inhomogeneous,
                         false,
                         1);
  const DoFHandlerAdapter<3> adapter = Testing::make_adapter(problem);
  SharedNZPlan::Parameters   parameters;
  parameters.node_pairs = true;
  checks.check_throws<ExcUnsupportedInput>(
    [&] {
      SharedNZPlan plan;
      plan.reinit(adapter.get_arrays(),
                  parameters,
                  3,
                  sizeof(double),
                  std::size_t(1) << 30);
    },
    "constrained in 64 bits, and this element has 81 DoFs",
    problem.name() + ": node pairs refuse elements of more than 64 DoFs");
}



// Plans are built in parallel; their arrays must not depend on how many
// threads built them, or results would differ from machine to machine.
void
test_plans_independent_of_threads(Testing::Checks &checks)
{
  Testing::TestProblem<3> problem;
  Testing::setup_problem(problem,
                         true,
                         1,
                         3,
                         Testing::ConstraintKind::inhomogeneous,
                         true,
                         8);
  const DoFHandlerAdapter<3> adapter = Testing::make_adapter(problem);
  const MeshArrays          &arrays  = adapter.get_arrays();

  std::vector<GlobalNZPlan> global(3), symmetric(3);
  std::vector<SharedNZPlan> shared(3), pairs(3);
  const unsigned int thread_limits[] = {1, 4, numbers::invalid_unsigned_int};
  for (unsigned int i = 0; i < 3; ++i)
    {
      MultithreadInfo::set_thread_limit(thread_limits[i]);
      GlobalNZPlan::Parameters global_parameters;
      global_parameters.targets_per_block = 300;
      global[i].reinit(arrays, global_parameters, 3, sizeof(double), 48 * 1024);
      SharedNZPlan::Parameters shared_parameters;
      shared_parameters.threads_per_block = 128;
      shared[i].reinit(arrays, shared_parameters, 3, sizeof(double), 64 * 1024);
      // Symmetric data with elements and reduction blocks in Z-order: the
      // other parallel paths.
      global_parameters.symmetric       = true;
      global_parameters.element_order   = ElementOrder::morton;
      global_parameters.reduction_order = ReductionOrder::morton;
      symmetric[i].reinit(arrays,
                          global_parameters,
                          3,
                          sizeof(double),
                          48 * 1024);
      shared_parameters.node_pairs = true;
      pairs[i].reinit(arrays, shared_parameters, 3, sizeof(double), 64 * 1024);
    }
  MultithreadInfo::set_thread_limit();

  for (unsigned int i = 1; i < 3; ++i)
    {
      const GlobalNZPlan &a = global[0], &b = global[i];
      Testing::check_rules(
        checks,
        "GlobalNZ plan built by 1 thread equals the one" +
          std::string(i == 1 ? " built by 4" : " built by all"),
        {{a.block_element == b.block_element &&
            a.cluster_node_offsets == b.cluster_node_offsets &&
            a.cluster_nodes == b.cluster_nodes,
          "same element clusters"},
         {a.block_connectivity == b.block_connectivity &&
            a.block_supplemental == b.block_supplemental &&
            a.block_location == b.block_location &&
            a.block_has_constraints == b.block_has_constraints,
          "same block element arrays E_k, S(e), L(e)"},
         {a.reduction_target_begin == b.reduction_target_begin &&
            a.reduction_slice_offsets == b.reduction_slice_offsets &&
            a.reduction_source_base == b.reduction_source_base &&
            a.reduction_array == b.reduction_array,
          "same packed reduction lists"}});
      const GlobalNZPlan &s = symmetric[0], &t = symmetric[i];
      Testing::check_rules(
        checks,
        "GlobalNZ plan of symmetric element data in Z-order built by 1 "
        "thread equals the one" +
          std::string(i == 1 ? " built by 4" : " built by all"),
        {{s.block_element == t.block_element &&
            s.reduction_block_order == t.reduction_block_order,
          "same Z-order of elements and reduction blocks"},
         {s.upper_position == t.upper_position &&
            s.mirror_position == t.mirror_position &&
            s.n_value_targets == t.n_value_targets,
          "same pairs of transposed nonzeros, numbered alike"},
         {s.reduction_target_begin == t.reduction_target_begin &&
            s.reduction_slice_offsets == t.reduction_slice_offsets &&
            s.reduction_source_base == t.reduction_source_base &&
            s.reduction_array == t.reduction_array,
          "same packed reduction lists"}});
      for (const bool node_pairs : {false, true})
        {
          const SharedNZPlan &c = (node_pairs ? pairs : shared)[0],
                             &d = (node_pairs ? pairs : shared)[i];
          Testing::check_rules(
            checks,
            std::string(node_pairs ? "SharedNZ node-pair" : "SharedNZ") +
              " plan built by 1 thread equals the one" +
              std::string(i == 1 ? " built by 4" : " built by all"),
            {{c.owned_offsets == d.owned_offsets &&
                c.owned_nodes == d.owned_nodes,
              "same node parts"},
             {c.halo_offsets == d.halo_offsets &&
                c.halo_nodes == d.halo_nodes &&
                c.element_offsets == d.element_offsets &&
                c.elements == d.elements,
              "same halos and element sets E_k"},
             {c.block_connectivity == d.block_connectivity &&
                c.block_slots == d.block_slots && c.n_slots == d.n_slots &&
                c.block_supplemental == d.block_supplemental &&
                c.block_location == d.block_location &&
                c.block_has_constraints == d.block_has_constraints,
              "same block element arrays and slots"},
             {c.slice_offsets == d.slice_offsets && c.sources == d.sources &&
                c.n_diagonal_lists == d.n_diagonal_lists,
              "same reduction streams"},
             {c.target_offsets == d.target_offsets && c.targets == d.targets,
              "same targets"}});
        }
    }
  checks.check(shared[0].n_blocks > 1,
               "the SharedNZ plan compared has several node parts (" +
                 std::to_string(shared[0].n_blocks) + ")");
  checks.check(pairs[0].n_blocks > 1,
               "the SharedNZ node-pair plan compared has several node parts (" +
                 std::to_string(pairs[0].n_blocks) + ")");
  checks.check(symmetric[0].n_value_targets < arrays.n_nonzeros() &&
                 symmetric[0].n_value_targets > arrays.n_nonzeros() / 2,
               "the symmetric GlobalNZ plan compared sums pairs of "
               "transposed nonzeros once (" +
                 std::to_string(symmetric[0].n_value_targets) +
                 " targets for " + std::to_string(arrays.n_nonzeros()) +
                 " nonzeros)");
}



int
main()
{
  Testing::Checks checks;
  test_node_pairs_dof_limit(checks);
  test_plans_independent_of_threads(checks);
  return checks.exit_code();
}

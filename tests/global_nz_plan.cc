// SPDX-License-Identifier: LGPL-2.1-or-later
// GlobalNZ's plan, checked on the host: its reduction lists cover every
// element contribution exactly once, and the plan executed on the host
// (kernel by kernel, lane by lane) reproduces the reference assembly.

#include <gpu_assembly/adapter/dof_handler_adapter.h>
#include <gpu_assembly/engine/global_nz/plan.h>
#include <gpu_assembly/engine/host/element_stage.h>
#include <gpu_assembly/engine/host_assembler.h>
#include <gpu_assembly/kernels/element_kernels.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>

#include "global_nz_host.h"
#include "rule_checks.h"
#include "test_problems.h"
#include "tests.h"

using namespace dealii;
using namespace GPUAssembly;

// Reduction lists of a GlobalNZ plan: every contribution (valid K entry
// or vector entry) appears exactly once as a source, and under the right
// target; every target is stored once. With symmetric element data a
// target is a pair of transposed nonzeros, and every nonzero must be the
// upper or the mirror position of exactly one target.
void
check_reduction_lists(Testing::Checks    &checks,
                      const GlobalNZPlan &plan,
                      const MeshArrays   &arrays,
                      const std::string  &name)
{
  const unsigned int B         = plan.parameters.elements_per_block;
  const unsigned int n_ed      = plan.n_dofs_per_element;
  const bool         symmetric = plan.parameters.symmetric;

  // The element-data layout: every entry of every slot has a position of
  // its own, and full element data in Z-ordered reduction blocks keep the
  // components of a column node (entry_group consecutive entries of one
  // element) side by side.
  {
    const unsigned int g = plan.entry_group;
    std::vector<int>   used(plan.element_data_size(), 0);
    bool grouped = g == (!symmetric && plan.parameters.reduction_order ==
                                         ReductionOrder::morton ?
                           arrays.layout.n_components :
                           1u) &&
                   plan.n_entries % g == 0 && plan.n_matrix_entries % g == 0;
    for (unsigned int k = 0; k < plan.n_element_blocks; ++k)
      for (unsigned int t = 0; t < B; ++t)
        for (unsigned int i = 0; i < plan.n_entries; ++i)
          {
            const std::size_t position = plan.element_data_index(k, t, i);
            ++used[position];
            if (i % g != 0)
              grouped &= position == plan.element_data_index(k, t, i - 1) + 1;
          }
    const std::string what = name +
                             (symmetric ? ", symmetric element data" : "") +
                             ": the element-data layout";
    Testing::check_rules(
      checks,
      what,
      {{Testing::each_once(used),
        "every entry of every slot has a position of its own"},
       {grouped,
        "entries come in groups of " + std::to_string(g) +
          " of one element (n_components only for full data in Z-ordered "
          "reduction blocks)"}});
  }

  std::vector<index_type> target_of_position(plan.n_nonzeros, -1);
  bool                    positions_once = true;
  if (symmetric)
    {
      std::vector<int> stored(plan.n_nonzeros, 0);
      for (std::size_t u = 0; u < plan.n_value_targets; ++u)
        {
          ++stored[plan.upper_position[u]];
          target_of_position[plan.upper_position[u]] = u;
          if (const index_type m = plan.mirror_position[u]; m >= 0)
            {
              ++stored[m];
              target_of_position[m] = u;
              // The mirror is the transpose of the upper member.
              const auto row_of = [&](const index_type p) {
                return std::upper_bound(arrays.row_offsets.begin(),
                                        arrays.row_offsets.end(),
                                        p) -
                       arrays.row_offsets.begin() - 1;
              };
              const index_type p = plan.upper_position[u];
              positions_once &= row_of(m) == arrays.column_indices[p] &&
                                arrays.column_indices[m] == row_of(p);
            }
        }
      positions_once &= Testing::each_once(stored);
    }
  else
    for (std::size_t p = 0; p < plan.n_nonzeros; ++p)
      target_of_position[p] = p;

  std::vector<index_type> target_of(plan.element_data_size(), -1);
  for (unsigned int k = 0; k < plan.n_element_blocks; ++k)
    for (unsigned int t = 0; t < B; ++t)
      if (const index_type e = plan.block_element[k * B + t]; e >= 0)
        {
          const index_type *K =
            arrays.nonzero_map.data() + std::size_t(e) * n_ed * n_ed;
          for (unsigned int d1 = 0; d1 < n_ed; ++d1)
            for (unsigned int d2 = symmetric ? d1 : 0; d2 < n_ed; ++d2)
              {
                const index_type   p = K[d1 * n_ed + d2] != invalid_index ?
                                         K[d1 * n_ed + d2] :
                                         K[d2 * n_ed + d1];
                const unsigned int i =
                  symmetric ?
                    SymmetricElementOutput<double>::packed_index(n_ed, d1, d2) :
                    d1 * n_ed + d2;
                target_of[plan.element_data_index(k, t, i)] =
                  p == invalid_index ? -1 : target_of_position[p];
              }
          for (unsigned int d = 0; d < n_ed; ++d)
            target_of[plan
                        .element_data_index(k, t, plan.n_matrix_entries + d)] =
              plan.n_value_targets + arrays.location[std::size_t(e) * n_ed + d];
        }

  std::vector<int>   source_seen(plan.element_data_size(), 0);
  std::vector<int>   target_seen(plan.n_value_targets + plan.n_dofs, 0);
  bool               targets_right = true;
  bool               bases_tight   = true;
  const unsigned int T             = plan.parameters.reduction_threads;
  for (unsigned int r = 0; r < plan.n_reduction_blocks(); ++r)
    {
      // The smallest relative entry of a block with sources is 1: its base
      // is its smallest source.
      index_type smallest = std::numeric_limits<index_type>::max();
      for (std::size_t p = plan.reduction_slice_offsets[r * (T / 32)];
           p < plan.reduction_slice_offsets[(r + 1) * (T / 32)];
           ++p)
        if (plan.reduction_array[p] > 0)
          smallest = std::min(smallest, plan.reduction_array[p]);
      bases_tight &=
        smallest == 1 || smallest == std::numeric_limits<index_type>::max();
      for (unsigned int lane = 0; lane < T; ++lane)
        {
          const std::size_t slice = std::size_t(r) * (T / 32) + lane / 32;
          const std::size_t n_columns =
            (plan.reduction_slice_offsets[slice + 1] -
             plan.reduction_slice_offsets[slice]) /
            32;
          std::vector<std::size_t> pending;
          for (std::size_t j = 0; j < n_columns; ++j)
            {
              const index_type i =
                plan.reduction_array[plan.reduction_slice_offsets[slice] +
                                     j * 32 + lane % 32];
              if (i > 0)
                pending.push_back(plan.reduction_source_base[r] + i - 1);
              else if (i < 0)
                {
                  const index_type target =
                    plan.reduction_target_begin[r] + (-i - 1);
                  ++target_seen[target];
                  for (const std::size_t source : pending)
                    {
                      ++source_seen[source];
                      targets_right &= target_of[source] == target;
                    }
                  pending.clear();
                }
            }
          targets_right &= pending.empty();
        }
    }
  bool sources_complete = true;
  for (std::size_t s = 0; s < source_seen.size(); ++s)
    sources_complete &= source_seen[s] == (target_of[s] >= 0 ? 1 : 0);
  Testing::check_rules(
    checks,
    name + (symmetric ? ", symmetric element data" : "") + ": reduction lists",
    {{sources_complete, "each contribution is a source exactly once"},
     {targets_right, "each source is summed under its own target"},
     {bases_tight,
      "each block's entries are relative to its smallest source "
      "(reduction_source_base)"},
     {Testing::each_once(target_seen), "each target is stored exactly once"},
     {positions_once,
      symmetric ? "each of the " + std::to_string(plan.n_nonzeros) +
                    " nonzeros is the upper or the mirror member of exactly "
                    "one of the " +
                    std::to_string(plan.n_value_targets) + " targets" :
                  std::string("matrix targets are the nonzeros")}});
}



template <int dim>
void
test_global_nz_plan(Testing::Checks             &checks,
                    const bool                   simplex,
                    const unsigned int           degree,
                    const bool                   vector_valued,
                    const SupplementalDataFormat format)
{
  Testing::TestProblem<dim> problem;
  Testing::setup_problem(problem,
                         simplex,
                         degree,
                         vector_valued ? dim : 1,
                         Testing::ConstraintKind::inhomogeneous,
                         true,
                         5);
  const DoFHandlerAdapter<dim> adapter =
    Testing::make_adapter(problem, {format});
  const MeshArrays &arrays = adapter.get_arrays();

  GlobalNZPlan::Parameters parameters;
  parameters.elements_per_block = 64;
  parameters.reduction_threads  = 64;
  parameters.targets_per_block  = 300;
  // Both cluster orders must give valid plans; alternate between them.
  parameters.element_order =
    dim == 2 ? ElementOrder::morton : ElementOrder::rows;
  // And both orders of the reduction blocks.
  parameters.reduction_order =
    dim == 2 ? ReductionOrder::rows : ReductionOrder::morton;
  GlobalNZPlan plan;
  plan.reinit(arrays, parameters, dim, sizeof(double), 48 * 1024);
  const unsigned int B = parameters.elements_per_block;
  if (parameters.reduction_order == ReductionOrder::morton)
    {
      std::vector<index_type> order = plan.reduction_block_order;
      std::sort(order.begin(), order.end());
      bool permutation = order.size() == plan.n_reduction_blocks();
      for (std::size_t b = 0; permutation && b < order.size(); ++b)
        permutation = order[b] == static_cast<index_type>(b);
      Testing::check_rules(
        checks,
        problem.name() + ": the " + std::to_string(plan.n_reduction_blocks()) +
          " Z-ordered reduction blocks",
        {{permutation, "run in a permutation of the blocks"},
         {plan.reduction_block_order !=
            std::vector<index_type>(order.begin(), order.end()),
          "run in an order that differs from target order"}});
    }

  // Clusters: every element in exactly one slot; N_k holds their nodes.
  std::vector<int> element_seen(arrays.n_elements, 0);
  bool             nodes_ok = true;
  for (unsigned int k = 0; k < plan.n_element_blocks; ++k)
    for (unsigned int t = 0; t < B; ++t)
      if (const index_type e = plan.block_element[k * B + t]; e >= 0)
        {
          ++element_seen[e];
          for (unsigned int a = 0; a < plan.n_nodes_per_element; ++a)
            {
              const index_type local =
                plan.block_connectivity
                  [(std::size_t(k) * plan.n_nodes_per_element + a) * B + t];
              const index_type global =
                plan.cluster_nodes[plan.cluster_node_offsets[k] + local];
              nodes_ok &=
                local < plan.cluster_node_offsets[k + 1] -
                          plan.cluster_node_offsets[k] &&
                global ==
                  arrays
                    .connectivity[std::size_t(e) * arrays.layout.n_nodes + a];
            }
        }
  Testing::check_rules(checks,
                       problem.name() + ": clusters",
                       {{Testing::each_once(element_seen),
                         "each element sits in exactly one cluster slot"},
                        {nodes_ok,
                         "E_k maps each element to its nodes "
                         "through N_k"}});

  check_reduction_lists(checks, plan, arrays, problem.name());

  // The plan run on the host equals the reference assembly.
  LinearElasticityKernel<dim, double> elasticity;
  elasticity.lambda        = 3.;
  elasticity.mu            = 1.25;
  elasticity.body_force[0] = 1.;
  LaplaceKernel<dim, double> laplace;
  laplace.source = 2.;
  std::vector<double> nodal(arrays.n_nodes * dim, 0.);
  std::vector<double> reference_values, reference_rhs, values, rhs, scratch;
  const HostAssembler<dim, double> reference(arrays);
  // The problem's kernel (elasticity if vector-valued, else Laplace) run
  // through @p run_plan on the host into @p plan_values and @p plan_rhs.
  const auto on_host = [&](const GlobalNZPlan  &run_plan,
                           std::vector<double> &plan_values,
                           std::vector<double> &plan_rhs) {
    const auto run = [&](const auto &kernel) {
      global_nz_on_host<dim>(run_plan,
                             arrays,
                             kernel,
                             AssemblyOptions(),
                             nodal,
                             dim,
                             scratch,
                             plan_values,
                             plan_rhs);
    };
    if (vector_valued)
      run(elasticity);
    else
      run(laplace);
  };
  if (vector_valued)
    reference.assemble(elasticity, reference_values, reference_rhs);
  else
    reference.assemble(laplace, reference_values, reference_rhs);
  on_host(plan, values, rhs);
  const double error     = Testing::relative_l2_error(values, reference_values);
  const double rhs_error = Testing::relative_l2_error(rhs, reference_rhs);
  Testing::check_rules(
    checks,
    problem.name() + ": GlobalNZ executed on the host",
    {{error <= 1e-13,
      "matrix equals the reference assembly (relative error " +
        Testing::scientific(error) + " <= 1e-13)"},
     {rhs_error <= 1e-13,
      "right-hand side equals the reference assembly (relative error " +
        Testing::scientific(rhs_error) + " <= 1e-13)"}});

  // Symmetric element data: half the storage, the same matrix.
  {
    GlobalNZPlan::Parameters symmetric_parameters = parameters;
    symmetric_parameters.symmetric                = true;
    GlobalNZPlan symmetric_plan;
    symmetric_plan.reinit(arrays,
                          symmetric_parameters,
                          dim,
                          sizeof(double),
                          48 * 1024);
    check_reduction_lists(checks, symmetric_plan, arrays, problem.name());
    std::vector<double> symmetric_values, symmetric_rhs;
    on_host(symmetric_plan, symmetric_values, symmetric_rhs);
    // A^e of the kernels is symmetric up to the rounding of its products
    // (lambda * g_a * g_b is not lambda * g_b * g_a bit for bit), so the
    // two storages agree to rounding, not bitwise.
    const double difference =
      std::max(Testing::max_relative_difference(symmetric_values, values),
               Testing::max_relative_difference(symmetric_rhs, rhs));
    const unsigned int n = plan.n_dofs_per_element;
    Testing::check_rules(
      checks,
      problem.name() + ": symmetric element data",
      {{symmetric_plan.n_matrix_entries == n * (n + 1) / 2,
        "hold " + std::to_string(symmetric_plan.n_matrix_entries) +
          " matrix values per element, the upper triangle of " +
          std::to_string(n * n)},
       {difference <= 1e-14,
        "give the same matrix and vector (max relative difference " +
          Testing::scientific(difference) + " <= 1e-14)"}});
  }

  checks.check_throws<ExcUnsupportedInput>(
    [&] {
      GlobalNZPlan::Parameters small_parameters = parameters;
      small_parameters.targets_per_block        = 32;
      GlobalNZPlan small;
      small.reinit(arrays, small_parameters, dim, sizeof(double), 300);
    },
    "nodal data of a cluster",
    problem.name() + ": a plan that needs more shared memory than the "
                     "device has is refused");
}



int
main()
{
  Testing::Checks checks;
  test_global_nz_plan<2>(checks,
                         false,
                         2,
                         false,
                         SupplementalDataFormat::quadrature_gradients);
  test_global_nz_plan<2>(checks,
                         true,
                         1,
                         true,
                         SupplementalDataFormat::inverse_edge_matrix);
  test_global_nz_plan<3>(checks,
                         true,
                         1,
                         true,
                         SupplementalDataFormat::quadrature_gradients);
  test_global_nz_plan<3>(checks,
                         false,
                         1,
                         true,
                         SupplementalDataFormat::quadrature_gradients);
  return checks.exit_code();
}

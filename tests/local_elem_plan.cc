// SPDX-License-Identifier: LGPL-2.1-or-later
// LocalElem's element order, checked on the host: the atomic launch takes
// the elements in Morton order, the coloured launches colour by colour of
// a valid colouring, each colour in Morton order.

#include <gpu_assembly/adapter/dof_handler_adapter.h>
#include <gpu_assembly/engine/element_coloring.h>
#include <gpu_assembly/engine/global_nz/plan.h>
#include <gpu_assembly/engine/local_elem/plan.h>

#include <algorithm>
#include <vector>

#include "rule_checks.h"
#include "test_problems.h"
#include "tests.h"

using namespace dealii;
using namespace GPUAssembly;

template <int dim>
void
test_local_elem_plan(Testing::Checks &checks, const bool simplex)
{
  Testing::TestProblem<dim> problem;
  Testing::setup_problem(problem,
                         simplex,
                         1,
                         dim,
                         Testing::ConstraintKind::inhomogeneous,
                         true,
                         4);
  const DoFHandlerAdapter<dim>  adapter(*problem.mapping,
                                       problem.dof_handler,
                                       *problem.quadrature,
                                       problem.constraints);
  const MeshArrays             &arrays = adapter.get_arrays();
  const std::vector<index_type> morton = morton_element_order(arrays);
  std::vector<unsigned int>     rank(arrays.n_elements);
  for (unsigned int s = 0; s < morton.size(); ++s)
    rank[morton[s]] = s;

  LocalElemPlan atomic;
  atomic.reinit(arrays, false);
  Testing::check_rules(
    checks,
    problem.name() + ": LocalElem-atomic's order",
    {{atomic.element_order == morton, "the elements in Morton order"},
     {atomic.n_colors() == 0 && atomic.color_offsets.empty(), "no colours"}});

  LocalElemPlan colored;
  colored.reinit(arrays, true);
  std::vector<std::vector<unsigned int>> colors;
  bool                                   morton_within = true;
  for (unsigned int c = 0; c < colored.n_colors(); ++c)
    {
      colors.emplace_back(colored.element_order.begin() +
                            colored.color_offsets[c],
                          colored.element_order.begin() +
                            colored.color_offsets[c + 1]);
      morton_within &=
        std::is_sorted(colors.back().begin(),
                       colors.back().end(),
                       [&](const unsigned int a, const unsigned int b) {
                         return rank[a] < rank[b];
                       });
    }
  Testing::check_rules(
    checks,
    problem.name() + ": LocalElem-colored's order, " +
      std::to_string(colored.n_colors()) + " colours",
    {{colored.n_colors() > 1, "several colours"},
     {colored.color_offsets.front() == 0 &&
        colored.color_offsets.back() == colored.element_order.size(),
      "the colours cover the element order"},
     {is_valid_coloring(arrays, colors),
      "every element once, no two elements of a colour share a node"},
     {morton_within, "each colour in Morton order"}});
}



int
main()
{
  Testing::Checks checks;
  test_local_elem_plan<2>(checks, false);
  test_local_elem_plan<3>(checks, true);
  return checks.exit_code();
}

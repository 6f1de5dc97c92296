// SPDX-License-Identifier: LGPL-2.1-or-later
// LocalElem's element order, checked on the host: the atomic launch takes
// the elements in Morton order, the coloured launches colour by colour of
// a valid colouring, each colour in Morton order. Morton order is checked
// by its definition (the Z-order of the element centroids, compared
// dimension by dimension without interleaving bits), not by the plan's own
// function.

#include <gpu_assembly/adapter/dof_handler_adapter.h>
#include <gpu_assembly/engine/element_coloring.h>
#include <gpu_assembly/engine/local_elem/plan.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <numeric>
#include <vector>

#include "rule_checks.h"
#include "test_problems.h"
#include "tests.h"

using namespace dealii;
using namespace GPUAssembly;

namespace
{
  /**
   * Whether element a comes before element b in Morton order: the Z-order
   * of their centroids, quantized in the bounding box of the mesh's nodes to
   * the plugin's resolution (21 bits per coordinate in 3D, 32 in 2D), with
   * the element number breaking ties. The dimension whose quantized
   * coordinates differ in the highest bit decides; at the same bit the
   * later dimension does, whose bit lies above the earlier's in the
   * interleaved key x0 y0 z0 x1 y1 z1 ... (lowest first).
   */
  class MortonLess
  {
  public:
    explicit MortonLess(const MeshArrays &arrays)
      : dim(arrays.dim)
      , quantized(arrays.n_elements * arrays.dim)
    {
      std::vector<double> lower(dim, std::numeric_limits<double>::max()),
        upper(dim, std::numeric_limits<double>::lowest());
      for (unsigned int n = 0; n < arrays.n_nodes; ++n)
        for (unsigned int k = 0; k < dim; ++k)
          {
            lower[k] =
              std::min(lower[k], arrays.nodal_coordinates[n * dim + k]);
            upper[k] =
              std::max(upper[k], arrays.nodal_coordinates[n * dim + k]);
          }
      const double       bits    = dim == 3 ? 2097151. : 4294967295.;
      const unsigned int n_nodes = arrays.layout.n_nodes;
      for (unsigned int e = 0; e < arrays.n_elements; ++e)
        for (unsigned int k = 0; k < dim; ++k)
          {
            double centroid = 0;
            for (unsigned int a = 0; a < n_nodes; ++a)
              centroid +=
                arrays.nodal_coordinates
                  [arrays.connectivity[std::size_t(e) * n_nodes + a] * dim + k];
            centroid /= n_nodes;
            const double extent    = upper[k] - lower[k];
            quantized[e * dim + k] = static_cast<std::uint64_t>(
              extent > 0 ? (centroid - lower[k]) / extent * bits : 0.);
          }
    }

    bool
    operator()(const unsigned int a, const unsigned int b) const
    {
      int          deciding = -1;
      unsigned int highest  = 0;
      for (unsigned int k = 0; k < dim; ++k)
        {
          const std::uint64_t difference =
            quantized[a * dim + k] ^ quantized[b * dim + k];
          unsigned int bit = 0;
          while ((difference >> bit) != 0)
            ++bit;
          if (bit > 0 && bit >= highest)
            {
              highest  = bit;
              deciding = k;
            }
        }
      if (deciding < 0)
        return a < b;
      return quantized[a * dim + deciding] < quantized[b * dim + deciding];
    }

  private:
    unsigned int               dim;
    std::vector<std::uint64_t> quantized;
  };
} // namespace

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
  const DoFHandlerAdapter<dim> adapter = Testing::make_adapter(problem);
  const MeshArrays            &arrays  = adapter.get_arrays();
  const MortonLess             morton_less(arrays);

  LocalElemPlan atomic;
  atomic.reinit(arrays, false);
  std::vector<index_type> sorted(atomic.element_order);
  std::sort(sorted.begin(), sorted.end());
  std::vector<index_type> all_elements(arrays.n_elements);
  std::iota(all_elements.begin(), all_elements.end(), 0);
  Testing::check_rules(checks,
                       problem.name() + ": LocalElem-atomic's order",
                       {{sorted == all_elements, "every element once"},
                        {std::is_sorted(atomic.element_order.begin(),
                                        atomic.element_order.end(),
                                        morton_less),
                         "the elements in Morton order"},
                        {atomic.n_colors() == 0 && atomic.color_offsets.empty(),
                         "no colours"}});

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
        std::is_sorted(colors.back().begin(), colors.back().end(), morton_less);
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

// SPDX-License-Identifier: LGPL-2.1-or-later
// Benchmark of the element colouring (GPUAssembly::color_elements(), which
// the host path and LocalElem-colored use) against deal.II's
// GraphColoring::make_graph_coloring with the element's nodes as conflict
// indices, on the same meshes in the same run: hexahedra Q1 and Q2,
// hexahedra Q1 with hanging nodes, tetrahedra P1 and P2. For each, the
// number of colours, the smallest and largest colour (the host path runs
// one parallel loop per colour, LocalElem-colored one launch), and the time.
// Both colourings are checked with is_valid_coloring().
//
// Usage: coloring_benchmark [scale]   (default 1: about 0.1-0.2 M elements
//        per mesh; the element counts grow with scale^3)
//        Options: --skip-dealii (no GraphColoring peer: its DSatur step
//                 grows faster than linearly)

#include <deal.II/base/graph_coloring.h>
#include <deal.II/base/quadrature_lib.h>
#include <deal.II/base/timer.h>

#include <deal.II/dofs/dof_handler.h>
#include <deal.II/dofs/dof_tools.h>

#include <deal.II/fe/fe_q.h>
#include <deal.II/fe/fe_simplex_p.h>
#include <deal.II/fe/mapping_fe.h>
#include <deal.II/fe/mapping_q.h>

#include <deal.II/grid/grid_generator.h>
#include <deal.II/grid/tria.h>

#include <deal.II/lac/affine_constraints.h>

#include <gpu_assembly/adapter/dof_handler_adapter.h>
#include <gpu_assembly/engine/element_coloring.h>

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <iostream>
#include <numeric>
#include <string>

using namespace dealii;
using namespace GPUAssembly;

namespace
{
  using Colors = std::vector<std::vector<unsigned int>>;

  Colors
  dealii_coloring(const MeshArrays &arrays)
  {
    std::vector<unsigned int> elements(arrays.n_elements);
    std::iota(elements.begin(), elements.end(), 0u);
    using Iterator               = std::vector<unsigned int>::const_iterator;
    const unsigned int n_en      = arrays.layout.n_nodes;
    const auto         conflicts = [&](const Iterator &it) {
      const index_type *const E =
        arrays.connectivity.data() + static_cast<std::size_t>(*it) * n_en;
      return std::vector<types::global_dof_index>(E, E + n_en);
    };
    const auto colored = GraphColoring::make_graph_coloring(elements.cbegin(),
                                                            elements.cend(),
                                                            conflicts);
    Colors     colors(colored.size());
    for (unsigned int c = 0; c < colored.size(); ++c)
      for (const Iterator &it : colored[c])
        colors[c].push_back(*it);
    return colors;
  }



  void
  print_row(const std::string &mesh,
            const std::string &method,
            const MeshArrays  &arrays,
            const Colors      &colors,
            const double       seconds)
  {
    std::size_t smallest = arrays.n_elements, largest = 0;
    for (const auto &color : colors)
      {
        smallest = std::min(smallest, color.size());
        largest  = std::max(largest, color.size());
      }
    std::cout << std::left << std::setw(22) << mesh << std::setw(24) << method
              << std::right << std::setw(9) << arrays.n_elements << std::setw(8)
              << colors.size() << std::setw(10) << smallest << std::setw(10)
              << largest << std::setw(10)
              << (colors.empty() ? 0. :
                                   double(arrays.n_elements) / colors.size())
              << std::setw(12) << std::fixed << std::setprecision(1)
              << 1e3 * seconds << std::setw(8)
              << (is_valid_coloring(arrays, colors) ? "yes" : "NO")
              << std::defaultfloat << std::setprecision(6) << '\n';
  }



  template <int dim>
  void
  run(const std::string &mesh,
      const bool         simplex,
      const unsigned int degree,
      const unsigned int subdivisions,
      const bool         hanging_nodes,
      const bool         skip_dealii)
  {
    Triangulation<dim> tria;
    if (simplex)
      GridGenerator::subdivided_hyper_cube_with_simplices(tria, subdivisions);
    else
      GridGenerator::subdivided_hyper_cube(tria, subdivisions);
    if (hanging_nodes)
      {
        // The octant at the origin refined once.
        for (const auto &cell : tria.active_cell_iterators())
          if (cell->center().norm() < 0.5)
            cell->set_refine_flag();
        tria.execute_coarsening_and_refinement();
      }
    std::unique_ptr<FiniteElement<dim>> fe;
    std::unique_ptr<Mapping<dim>>       mapping;
    std::unique_ptr<Quadrature<dim>>    quadrature;
    if (simplex)
      {
        fe         = std::make_unique<FE_SimplexP<dim>>(degree);
        mapping    = std::make_unique<MappingFE<dim>>(FE_SimplexP<dim>(1));
        quadrature = std::make_unique<QGaussSimplex<dim>>(degree + 1);
      }
    else
      {
        fe         = std::make_unique<FE_Q<dim>>(degree);
        mapping    = std::make_unique<MappingQ<dim>>(1);
        quadrature = std::make_unique<QGauss<dim>>(degree + 1);
      }
    DoFHandler<dim> dof_handler(tria);
    dof_handler.distribute_dofs(*fe);
    AffineConstraints<double> constraints;
    if (hanging_nodes)
      DoFTools::make_hanging_node_constraints(dof_handler, constraints);
    constraints.close();
    const DoFHandlerAdapter<dim> adapter(*mapping,
                                         dof_handler,
                                         *quadrature,
                                         constraints);
    const MeshArrays            &arrays = adapter.get_arrays();

    Timer        timer;
    const Colors colors = color_elements(arrays);
    print_row(mesh, "color_elements", arrays, colors, timer.wall_time());
    if (!skip_dealii)
      {
        timer.restart();
        const Colors peer = dealii_coloring(arrays);
        print_row(mesh,
                  "deal.II GraphColoring",
                  arrays,
                  peer,
                  timer.wall_time());
      }
  }
} // namespace



int
main(int argc, char **argv)
{
  try
    {
      double scale       = 1;
      bool   skip_dealii = false;
      for (int i = 1; i < argc; ++i)
        {
          const std::string argument = argv[i];
          if (argument == "--skip-dealii")
            skip_dealii = true;
          else
            {
              std::size_t end = 0;
              try
                {
                  scale = std::stod(argument, &end);
                }
              catch (const std::exception &)
                {
                  end = 0;
                }
              AssertThrow(end == argument.size() && scale > 0,
                          ExcMessage("coloring_benchmark: the argument '" +
                                     argument +
                                     "' is neither a positive scale nor "
                                     "--skip-dealii."));
            }
        }
      const auto n = [&](const double base) {
        return std::max(1u,
                        static_cast<unsigned int>(std::lround(base * scale)));
      };
      std::cout << std::left << std::setw(22) << "mesh" << std::setw(24)
                << "colouring" << std::right << std::setw(9) << "elements"
                << std::setw(8) << "colours" << std::setw(10) << "smallest"
                << std::setw(10) << "largest" << std::setw(10) << "mean"
                << std::setw(12) << "time [ms]" << std::setw(8) << "valid"
                << '\n';
      run<3>("hexahedra Q1", false, 1, n(50), false, skip_dealii);
      run<3>("hexahedra Q2", false, 2, n(25), false, skip_dealii);
      run<3>("hexahedra Q1 hanging", false, 1, n(30), true, skip_dealii);
      run<3>("tetrahedra P1", true, 1, n(30), false, skip_dealii);
      run<3>("tetrahedra P2", true, 2, n(18), false, skip_dealii);
      run<2>("quadrilaterals Q1", false, 1, n(400), false, skip_dealii);
      run<2>("triangles P1", true, 1, n(250), false, skip_dealii);
    }
  catch (const std::exception &exc)
    {
      std::cerr << "coloring_benchmark: " << exc.what() << std::endl;
      return 1;
    }
  return 0;
}

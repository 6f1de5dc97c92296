// SPDX-License-Identifier: LGPL-2.1-or-later
//
// The distributed assembly benchmark's tetrahedral cube, built by each rank
// for itself (benchmarks/subcube_tetrahedra.h), against the description
// deal.II makes from the serial mesh of
// GridGenerator::subdivided_hyper_rectangle_with_simplices() with the same
// Morton-curve partition: the same cells (ids, vertices, owners, boundary
// faces) in the same order, and the same DoFs once both are triangulations.

#include "../benchmarks/subcube_tetrahedra.h"

#include <deal.II/base/mpi.h>

#include <deal.II/distributed/fully_distributed_tria.h>

#include <deal.II/dofs/dof_handler.h>

#include <deal.II/fe/fe_simplex_p.h>
#include <deal.II/fe/fe_system.h>

#include <deal.II/grid/grid_generator.h>
#include <deal.II/grid/tria.h>
#include <deal.II/grid/tria_description.h>

#include "tests.h"

namespace
{
  using namespace dealii;

  // The serial route: the whole mesh, partitioned as the benchmark did
  // before it built the parts on their ranks.
  TriangulationDescription::Description<3, 3>
  serial_description(const unsigned int n, const MPI_Comm comm)
  {
    Triangulation<3> serial;
    GridGenerator::subdivided_hyper_rectangle_with_simplices(serial,
                                                             {n, n, n},
                                                             Point<3>(),
                                                             Point<3>(1, 1, 1));
    const unsigned int n_parts = Utilities::MPI::n_mpi_processes(comm);
    std::vector<std::pair<std::uint64_t, unsigned int>> keys;
    for (const auto &cell : serial.active_cell_iterators())
      {
        const Point<3>              center = cell->center();
        std::array<unsigned int, 3> index;
        for (unsigned int d = 0; d < 3; ++d)
          index[d] =
            std::min<unsigned int>(n - 1,
                                   static_cast<unsigned int>(center[d] * n));
        keys.emplace_back(Benchmarks::SubcubeTetrahedra::morton_code(index[0],
                                                                     index[1],
                                                                     index[2]),
                          cell->active_cell_index());
      }
    std::sort(keys.begin(), keys.end());
    std::vector<types::subdomain_id> part(keys.size());
    for (std::size_t i = 0; i < keys.size(); ++i)
      part[keys[i].second] = i * n_parts / keys.size();
    for (const auto &cell : serial.active_cell_iterators())
      cell->set_subdomain_id(part[cell->active_cell_index()]);
    return TriangulationDescription::Utilities::
      create_description_from_triangulation(serial, comm);
  }
} // namespace



int
main(int argc, char **argv)
{
  Utilities::MPI::MPI_InitFinalize mpi(argc, argv, 1);
  const MPI_Comm                   comm = MPI_COMM_WORLD;
  const unsigned int rank = Utilities::MPI::this_mpi_process(comm);
  Testing::Checks    checks;

  for (const unsigned int n : {1u, 3u, 4u, 7u})
    {
      const std::string name =
        "n = " + std::to_string(n) + ", rank " + std::to_string(rank) + ": ";
      const auto expected = serial_description(n, comm);
      const auto built    = Benchmarks::subcube_tetrahedra_description(n, comm);

      checks.check(built.coarse_cell_index_to_coarse_cell_id ==
                     expected.coarse_cell_index_to_coarse_cell_id,
                   name + "the locally relevant cells (owned and those "
                          "sharing a vertex with them) are the serial "
                          "mesh's, in its order");
      bool same_vertices =
        built.coarse_cells.size() == expected.coarse_cells.size();
      for (std::size_t c = 0; same_vertices && c < built.coarse_cells.size();
           ++c)
        for (unsigned int v = 0; v < 4; ++v)
          same_vertices =
            same_vertices &&
            built.coarse_cell_vertices[built.coarse_cells[c].vertices[v]] ==
              expected
                .coarse_cell_vertices[expected.coarse_cells[c].vertices[v]];
      checks.check(same_vertices,
                   name + "each cell has the serial cell's vertices, in its "
                          "order and bitwise equal coordinates");
      checks.check(built.coarse_cell_vertices.size() ==
                     expected.coarse_cell_vertices.size(),
                   name + "no vertex is held that no relevant cell uses");
      bool same_cells =
        built.cell_infos.size() == 1 && expected.cell_infos.size() == 1 &&
        built.cell_infos[0].size() == expected.cell_infos[0].size();
      for (std::size_t c = 0; same_cells && c < built.cell_infos[0].size(); ++c)
        {
          const auto &a = built.cell_infos[0][c];
          const auto &b = expected.cell_infos[0][c];
          // Level owners are left out: without a multigrid hierarchy
          // deal.II reads none (the serial route copies the serial mesh's
          // unused level subdomain ids).
          same_cells = a.id == b.id && a.subdomain_id == b.subdomain_id &&
                       a.manifold_id == b.manifold_id &&
                       a.boundary_ids == b.boundary_ids;
          if (!same_cells)
            {
              std::cout << "      cell " << c << ": id "
                        << (a.id == b.id ? "equal" : "differs") << ", owner "
                        << a.subdomain_id << " / " << b.subdomain_id
                        << ", manifold " << a.manifold_id << " / "
                        << b.manifold_id << ", boundary faces";
              for (const auto &face : a.boundary_ids)
                std::cout << ' ' << face.first << ':' << int(face.second);
              std::cout << " /";
              for (const auto &face : b.boundary_ids)
                std::cout << ' ' << face.first << ':' << int(face.second);
              std::cout << std::endl;
            }
        }
      checks.check(same_cells,
                   name + "cell ids, owners and boundary faces equal the "
                          "serial description's");

      parallel::fullydistributed::Triangulation<3> a(comm), b(comm);
      a.create_triangulation(built);
      b.create_triangulation(expected);
      const FESystem<3> fe(FE_SimplexP<3>(1), 3);
      DoFHandler<3>     dofs_a(a), dofs_b(b);
      dofs_a.distribute_dofs(fe);
      dofs_b.distribute_dofs(fe);
      checks.check(a.n_global_active_cells() == 5ull * n * n * n &&
                     a.n_locally_owned_active_cells() ==
                       b.n_locally_owned_active_cells() &&
                     dofs_a.locally_owned_dofs() == dofs_b.locally_owned_dofs(),
                   name + "the triangulations have 5 n^3 cells and the same "
                          "owned cells and DoFs");
    }
  return checks.exit_code();
}

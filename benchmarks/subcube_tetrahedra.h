// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_benchmarks_subcube_tetrahedra_h
#define gpu_assembly_benchmarks_subcube_tetrahedra_h

// The unit cube of n^3 subcubes, each split into five tetrahedra exactly as
// GridGenerator::subdivided_hyper_rectangle_with_simplices() splits them,
// cut along the Morton (Z-order) curve of the subcubes into equal parts, one
// per rank, as the description of a parallel::fullydistributed::
// Triangulation. Every rank builds only its own part and the cells around it,
// so no rank ever holds the serial mesh: deal.II's serial
// Triangulation::create_triangulation() runs on one thread at about 16 us a
// tetrahedron (83 s for 5 M), which made it the bulk of a benchmark run at
// millions of cells per rank. The description is the one that
// TriangulationDescription::Utilities::create_description_from_triangulation()
// makes from the serial mesh with the same partition (checked by the test
// subcube_tetrahedra).

#include <deal.II/base/mpi.h>
#include <deal.II/base/point.h>

#include <deal.II/grid/cell_id.h>
#include <deal.II/grid/grid_generator.h>
#include <deal.II/grid/tria.h>
#include <deal.II/grid/tria_description.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

namespace Benchmarks
{
  namespace SubcubeTetrahedra
  {
    constexpr unsigned int tetrahedra_per_subcube = 5;

    /// Corner offsets (0 or 1 per axis) of the vertices of the five
    /// tetrahedra of a subcube, by the parity of its index along each axis.
    using Pattern =
      std::array<std::array<std::array<std::array<unsigned int, 3>, 4>,
                            tetrahedra_per_subcube>,
                 8>;

    inline unsigned int
    parity_class(const unsigned int i,
                 const unsigned int j,
                 const unsigned int k)
    {
      return (i % 2) + 2 * (j % 2) + 4 * (k % 2);
    }

    /**
     * The split of the subcubes, read from deal.II's own generator on 2^3
     * subcubes (one of each parity class), so that the parallel mesh is the
     * serial one whatever the deal.II version. Also checks the numbering
     * this file relies on: the cells of subcube (i, j, k) at indices
     * 5 ((k n + j) n + i) + t.
     */
    inline Pattern
    read_pattern()
    {
      dealii::Triangulation<3> serial;
      dealii::GridGenerator::subdivided_hyper_rectangle_with_simplices(
        serial,
        {2, 2, 2},
        dealii::Point<3>(),
        dealii::Point<3>(2, 2, 2));
      AssertThrow(serial.n_active_cells() == 8 * tetrahedra_per_subcube,
                  dealii::ExcMessage(
                    "GridGenerator::subdivided_hyper_rectangle_with_simplices"
                    "() splits a subcube into other than five tetrahedra."));
      Pattern pattern{};
      for (const auto &cell : serial.active_cell_iterators())
        {
          const unsigned int     index   = cell->active_cell_index();
          const unsigned int     subcube = index / tetrahedra_per_subcube;
          const unsigned int     i       = subcube % 2;
          const unsigned int     j       = (subcube / 2) % 2;
          const unsigned int     k       = subcube / 4;
          const dealii::Point<3> center  = cell->center();
          AssertThrow(static_cast<unsigned int>(center[0]) == i &&
                        static_cast<unsigned int>(center[1]) == j &&
                        static_cast<unsigned int>(center[2]) == k,
                      dealii::ExcMessage(
                        "GridGenerator::subdivided_hyper_rectangle_with_"
                        "simplices() numbers the subcubes other than x "
                        "fastest, five cells each."));
          for (unsigned int v = 0; v < 4; ++v)
            for (unsigned int d = 0; d < 3; ++d)
              pattern[parity_class(i, j, k)][index % tetrahedra_per_subcube][v]
                     [d] = static_cast<unsigned int>(cell->vertex(v)[d] + 0.5) -
                           (d == 0 ? i :
                            d == 1 ? j :
                                     k);
        }
      return pattern;
    }

    inline std::uint64_t
    morton_code(const unsigned int i,
                const unsigned int j,
                const unsigned int k)
    {
      const std::array<unsigned int, 3> index = {{i, j, k}};
      std::uint64_t                     code  = 0;
      for (unsigned int bit = 0; bit < 21; ++bit)
        for (unsigned int d = 0; d < 3; ++d)
          code |= static_cast<std::uint64_t>((index[d] >> bit) & 1u)
                  << (3 * bit + d);
      return code;
    }

    /**
     * The position of each subcube along the Morton curve. Each rank sorts
     * all n^3 codes (O(N log N), a fraction of a second at millions of
     * subcubes), which is cheaper than any communication of the result.
     */
    inline std::vector<std::uint32_t>
    morton_positions(const unsigned int n)
    {
      const std::uint64_t n_subcubes = std::uint64_t(n) * n * n;
      AssertThrow(n_subcubes * tetrahedra_per_subcube < (1ull << 32),
                  dealii::ExcMessage("More than 2^32 tetrahedra."));
      std::vector<std::pair<std::uint64_t, std::uint32_t>> keys;
      keys.reserve(n_subcubes);
      for (unsigned int k = 0; k < n; ++k)
        for (unsigned int j = 0; j < n; ++j)
          for (unsigned int i = 0; i < n; ++i)
            keys.emplace_back(morton_code(i, j, k), (k * n + j) * n + i);
      std::sort(keys.begin(), keys.end());
      std::vector<std::uint32_t> position(n_subcubes);
      for (std::uint32_t p = 0; p < keys.size(); ++p)
        position[keys[p].second] = p;
      return position;
    }
  } // namespace SubcubeTetrahedra



  /**
   * The description of this rank's part of the n^3-subcube tetrahedral
   * unit cube (all boundary faces with boundary id 0) and of its ghost
   * cells (those sharing a vertex with an owned cell), the cells ordered
   * along the Morton curve of their subcubes and cut into equal parts in
   * that order.
   */
  inline dealii::TriangulationDescription::Description<3, 3>
  subcube_tetrahedra_description(const unsigned int n, const MPI_Comm comm)
  {
    using namespace SubcubeTetrahedra;
    using dealii::types::subdomain_id;
    constexpr unsigned int t_per_s = tetrahedra_per_subcube;

    const unsigned int rank    = dealii::Utilities::MPI::this_mpi_process(comm);
    const unsigned int n_ranks = dealii::Utilities::MPI::n_mpi_processes(comm);
    const Pattern      pattern = read_pattern();
    const std::vector<std::uint32_t> position = morton_positions(n);
    const std::uint64_t n_cells = std::uint64_t(n) * n * n * t_per_s;

    const auto owner = [&](const std::uint64_t subcube,
                           const unsigned int  t) -> subdomain_id {
      return static_cast<subdomain_id>(
        (std::uint64_t(position[subcube]) * t_per_s + t) * n_ranks / n_cells);
    };
    const auto vertex_index =
      [n](const unsigned int i, const unsigned int j, const unsigned int k) {
        return (std::uint64_t(k) * (n + 1) + j) * (n + 1) + i;
      };
    const auto cell_vertices = [&](const std::uint64_t subcube,
                                   const unsigned int  t) {
      const unsigned int i = subcube % n, j = (subcube / n) % n,
                         k = subcube / (std::uint64_t(n) * n);
      std::array<std::uint64_t, 4> vertices;
      for (unsigned int v = 0; v < 4; ++v)
        {
          const auto &offset = pattern[parity_class(i, j, k)][t][v];
          vertices[v] =
            vertex_index(i + offset[0], j + offset[1], k + offset[2]);
        }
      return vertices;
    };

    // The owned cells are a contiguous range of the Morton order; their
    // subcubes are found by walking that range of positions.
    std::vector<std::uint32_t> subcube_at(position.size());
    for (std::uint32_t s = 0; s < position.size(); ++s)
      subcube_at[position[s]] = s;
    const std::uint64_t first_cell = (rank * n_cells + n_ranks - 1) / n_ranks;
    const std::uint64_t end_cell =
      ((rank + 1) * n_cells + n_ranks - 1) / n_ranks;
    std::vector<std::uint64_t> owned_vertices;
    std::vector<std::uint32_t> owned_subcubes;
    for (std::uint64_t c = first_cell; c < end_cell; ++c)
      {
        const std::uint32_t subcube = subcube_at[c / t_per_s];
        Assert(owner(subcube, c % t_per_s) == rank, dealii::ExcInternalError());
        if (owned_subcubes.empty() || owned_subcubes.back() != subcube)
          owned_subcubes.push_back(subcube);
        for (const std::uint64_t v : cell_vertices(subcube, c % t_per_s))
          owned_vertices.push_back(v);
      }
    subcube_at.clear();
    subcube_at.shrink_to_fit();
    std::sort(owned_vertices.begin(), owned_vertices.end());
    owned_vertices.erase(std::unique(owned_vertices.begin(),
                                     owned_vertices.end()),
                         owned_vertices.end());
    const auto is_owned_vertex = [&](const std::uint64_t v) {
      return std::binary_search(owned_vertices.begin(),
                                owned_vertices.end(),
                                v);
    };

    // The locally relevant cells (deal.II's rule: a vertex in common with
    // an owned cell) lie in the owned subcubes and their 26 neighbours.
    std::vector<std::uint64_t> relevant;
    for (const std::uint32_t subcube : owned_subcubes)
      {
        const int i = subcube % n, j = (subcube / n) % n,
                  k = subcube / (std::uint64_t(n) * n);
        for (int dk = -1; dk <= 1; ++dk)
          for (int dj = -1; dj <= 1; ++dj)
            for (int di = -1; di <= 1; ++di)
              {
                const int ii = i + di, jj = j + dj, kk = k + dk;
                if (ii < 0 || jj < 0 || kk < 0 || ii >= int(n) ||
                    jj >= int(n) || kk >= int(n))
                  continue;
                const std::uint64_t neighbour =
                  (std::uint64_t(kk) * n + jj) * n + ii;
                for (unsigned int t = 0; t < t_per_s; ++t)
                  for (const std::uint64_t v : cell_vertices(neighbour, t))
                    if (is_owned_vertex(v))
                      {
                        relevant.push_back(neighbour * t_per_s + t);
                        break;
                      }
              }
      }
    std::sort(relevant.begin(), relevant.end());
    relevant.erase(std::unique(relevant.begin(), relevant.end()),
                   relevant.end());

    std::vector<std::uint64_t> vertices;
    vertices.reserve(relevant.size() * 4);
    for (const std::uint64_t c : relevant)
      for (const std::uint64_t v : cell_vertices(c / t_per_s, c % t_per_s))
        vertices.push_back(v);
    std::sort(vertices.begin(), vertices.end());
    vertices.erase(std::unique(vertices.begin(), vertices.end()),
                   vertices.end());

    dealii::TriangulationDescription::Description<3, 3> description;
    description.comm      = comm;
    description.settings  = dealii::TriangulationDescription::default_setting;
    description.smoothing = dealii::Triangulation<3>::none;
    // The same coordinates as the serial generator's p1 + i (p2 - p1) / n.
    const double h = 1. / n;
    description.coarse_cell_vertices.reserve(vertices.size());
    for (const std::uint64_t v : vertices)
      description.coarse_cell_vertices.emplace_back(
        (v % (n + 1)) * h,
        ((v / (n + 1)) % (n + 1)) * h,
        (v / (std::uint64_t(n + 1) * (n + 1))) * h);

    description.coarse_cells.reserve(relevant.size());
    description.coarse_cell_index_to_coarse_cell_id.reserve(relevant.size());
    description.cell_infos.resize(1);
    description.cell_infos[0].reserve(relevant.size());
    const dealii::ReferenceCell tetrahedron =
      dealii::ReferenceCells::Tetrahedron;
    for (const std::uint64_t c : relevant)
      {
        const std::uint64_t subcube = c / t_per_s;
        const unsigned int  t       = c % t_per_s;
        const auto          global  = cell_vertices(subcube, t);

        dealii::CellData<3> cell(4);
        for (unsigned int v = 0; v < 4; ++v)
          cell.vertices[v] =
            std::lower_bound(vertices.begin(), vertices.end(), global[v]) -
            vertices.begin();
        cell.material_id = 0;
        description.coarse_cells.push_back(cell);
        description.coarse_cell_index_to_coarse_cell_id.push_back(c);

        dealii::TriangulationDescription::CellData<3> info;
        info.id = dealii::CellId(c, 0, nullptr).template to_binary<3>();
        info.subdomain_id       = owner(subcube, t);
        info.level_subdomain_id = dealii::numbers::invalid_subdomain_id;
        info.manifold_id        = dealii::numbers::flat_manifold_id;
        info.manifold_line_ids.fill(dealii::numbers::flat_manifold_id);
        info.manifold_quad_ids.fill(dealii::numbers::flat_manifold_id);
        // A face lies on the boundary where its three vertices share a
        // coordinate 0 or n.
        for (unsigned int f = 0; f < tetrahedron.n_faces(); ++f)
          for (unsigned int d = 0; d < 3; ++d)
            {
              std::array<std::uint64_t, 3> coordinate;
              for (unsigned int fv = 0; fv < 3; ++fv)
                {
                  const std::uint64_t v =
                    global[tetrahedron.face_to_cell_vertices(f, fv, 1)];
                  coordinate[fv] =
                    d == 0 ? v % (n + 1) :
                    d == 1 ? (v / (n + 1)) % (n + 1) :
                             v / (std::uint64_t(n + 1) * (n + 1));
                }
              if (coordinate[0] == coordinate[1] &&
                  coordinate[1] == coordinate[2] &&
                  (coordinate[0] == 0 || coordinate[0] == n))
                {
                  info.boundary_ids.emplace_back(f, 0);
                  break;
                }
            }
        description.cell_infos[0].push_back(std::move(info));
      }
    return description;
  }
} // namespace Benchmarks

#endif

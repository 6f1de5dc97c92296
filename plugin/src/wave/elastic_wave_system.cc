// SPDX-License-Identifier: LGPL-2.1-or-later
#include <deal.II/base/exceptions.h>
#include <deal.II/base/parallel.h>

#include <gpu_assembly/wave/elastic_wave_system.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <sstream>
#include <string>

#include "significant.h"

namespace GPUAssembly
{
  namespace Wave
  {
    using dealii::ExcMessage;

    using internal::significant;

    double
    ElasticMaterial::p_wave_speed() const
    {
      return std::sqrt((lambda() + 2 * mu()) / density);
    }



    double
    ElasticMaterial::s_wave_speed() const
    {
      return std::sqrt(mu() / density);
    }



    double
    ElasticMaterial::rayleigh_wave_speed() const
    {
      // Rayleigh equation in xi = (c / c_s)^2:
      // (2 - xi)^2 - 4 sqrt(1 - xi) sqrt(1 - xi k) = 0, k = (c_s / c_p)^2.
      // It has exactly one root in (0, 1); f(0) = 0 is the trivial root, so
      // bisect on (1e-6, 1) where f changes sign once.
      const double k = std::pow(s_wave_speed() / p_wave_speed(), 2);
      const auto   f = [k](const double xi) {
        return (2 - xi) * (2 - xi) -
               4 * std::sqrt(1 - xi) * std::sqrt(1 - xi * k);
      };
      double low = 1e-3, high = 1;
      for (unsigned int i = 0; i < 200; ++i)
        {
          const double middle = 0.5 * (low + high);
          if ((f(low) < 0) == (f(middle) < 0))
            low = middle;
          else
            high = middle;
        }
      return s_wave_speed() * std::sqrt(0.5 * (low + high));
    }



    namespace
    {
      // Gradients of the shape functions and weights (JxW) at the
      // integration points of cell c: one point for triangles, 2x2 Gauss
      // points for quadrilaterals.
      struct CellGradients
      {
        unsigned int                         n_points = 0;
        std::array<double, 4>                jxw{};
        std::array<std::array<double, 8>, 4> gradients{}; // [q][a * 2 + k]
      };

      CellGradients
      cell_gradients(const WaveMesh &mesh, const unsigned int c)
      {
        CellGradients       result;
        const unsigned int  nv   = mesh.nodes_per_cell;
        const unsigned int *node = &mesh.cells[c * nv];
        const auto x = [&](const unsigned int a, const unsigned int k) {
          return mesh.coordinates[2 * node[a] + k];
        };
        if (nv == 3)
          {
            const double two_area = (x(1, 0) - x(0, 0)) * (x(2, 1) - x(0, 1)) -
                                    (x(2, 0) - x(0, 0)) * (x(1, 1) - x(0, 1));
            result.n_points = 1;
            result.jxw[0]   = 0.5 * two_area;
            auto &g         = result.gradients[0];
            g[0]            = (x(1, 1) - x(2, 1)) / two_area;
            g[1]            = (x(2, 0) - x(1, 0)) / two_area;
            g[2]            = (x(2, 1) - x(0, 1)) / two_area;
            g[3]            = (x(0, 0) - x(2, 0)) / two_area;
            g[4]            = (x(0, 1) - x(1, 1)) / two_area;
            g[5]            = (x(1, 0) - x(0, 0)) / two_area;
            return result;
          }
        static const double xi_a[4]  = {-1, 1, 1, -1};
        static const double eta_a[4] = {-1, -1, 1, 1};
        const double        gauss    = 1. / std::sqrt(3.);
        result.n_points              = 4;
        for (unsigned int q = 0; q < 4; ++q)
          {
            const double xi = xi_a[q] * gauss, eta = eta_a[q] * gauss;
            double       dref[4][2];
            for (unsigned int a = 0; a < 4; ++a)
              {
                dref[a][0] = 0.25 * xi_a[a] * (1 + eta * eta_a[a]);
                dref[a][1] = 0.25 * eta_a[a] * (1 + xi * xi_a[a]);
              }
            double J[2][2] = {{0, 0}, {0, 0}};
            for (unsigned int a = 0; a < 4; ++a)
              for (unsigned int i = 0; i < 2; ++i)
                for (unsigned int j = 0; j < 2; ++j)
                  J[i][j] += x(a, i) * dref[a][j];
            const double det = J[0][0] * J[1][1] - J[0][1] * J[1][0];
            result.jxw[q]    = det;
            for (unsigned int a = 0; a < 4; ++a)
              {
                // grad phi = J^{-T} grad_ref phi
                result.gradients[q][2 * a] =
                  (J[1][1] * dref[a][0] - J[1][0] * dref[a][1]) / det;
                result.gradients[q][2 * a + 1] =
                  (-J[0][1] * dref[a][0] + J[0][0] * dref[a][1]) / det;
              }
          }
        return result;
      }
    } // namespace



    double
    WaveMesh::cell_area(const unsigned int c) const
    {
      double             area = 0;
      const unsigned int nv   = nodes_per_cell;
      for (unsigned int a = 0; a < nv; ++a)
        {
          const unsigned int p = cells[c * nv + a],
                             q = cells[c * nv + (a + 1) % nv];
          area += coordinates[2 * p] * coordinates[2 * q + 1] -
                  coordinates[2 * q] * coordinates[2 * p + 1];
        }
      return 0.5 * area;
    }



    double
    WaveMesh::minimum_edge_length() const
    {
      double             result = std::numeric_limits<double>::max();
      const unsigned int nv     = nodes_per_cell;
      for (unsigned int c = 0; c < n_cells(); ++c)
        for (unsigned int a = 0; a < nv; ++a)
          {
            const unsigned int p = cells[c * nv + a],
                               q = cells[c * nv + (a + 1) % nv];
            result =
              std::min(result,
                       std::hypot(coordinates[2 * p] - coordinates[2 * q],
                                  coordinates[2 * p + 1] -
                                    coordinates[2 * q + 1]));
          }
      return result;
    }



    void
    WaveMesh::check_consistency(const unsigned int n_materials) const
    {
      AssertThrow(nodes_per_cell == 3 || nodes_per_cell == 4,
                  ExcMessage("The explicit wave solver supports linear "
                             "triangles (3 nodes) and bilinear "
                             "quadrilaterals (4 nodes), not cells of " +
                             std::to_string(nodes_per_cell) + " nodes."));
      AssertThrow(coordinates.size() == 2 * std::size_t(n_nodes),
                  ExcMessage("WaveMesh: coordinates must hold 2 values per "
                             "node."));
      AssertThrow(cells.size() % nodes_per_cell == 0 && n_cells() > 0,
                  ExcMessage("WaveMesh: the mesh has no cells, or a "
                             "cell with too few nodes."));
      AssertThrow(cell_material.size() == n_cells(),
                  ExcMessage("WaveMesh: one material index per cell is "
                             "needed."));
      AssertThrow(cell_extra_damping.empty() ||
                    cell_extra_damping.size() == n_cells(),
                  ExcMessage("WaveMesh: cell_extra_damping must be empty or "
                             "hold one value per cell."));
      std::vector<unsigned char> used(n_nodes, 0);
      const double               h_min = minimum_edge_length();
      for (unsigned int c = 0; c < n_cells(); ++c)
        {
          std::string nodes;
          for (unsigned int a = 0; a < nodes_per_cell; ++a)
            {
              const unsigned int n = cells[c * nodes_per_cell + a];
              AssertThrow(n < n_nodes,
                          ExcMessage("WaveMesh: cell " + std::to_string(c) +
                                     " refers to node " + std::to_string(n) +
                                     " of " + std::to_string(n_nodes) + "."));
              used[n] = 1;
              nodes += (a > 0 ? ", " : "") + std::to_string(n);
            }
          AssertThrow(cell_material[c] < n_materials,
                      ExcMessage("Cell " + std::to_string(c) +
                                 " has material index " +
                                 std::to_string(cell_material[c]) +
                                 " but only " + std::to_string(n_materials) +
                                 " materials are defined."));
          const CellGradients g = cell_gradients(*this, c);
          for (unsigned int q = 0; q < g.n_points; ++q)
            AssertThrow(g.jxw[q] > 1e-12 * h_min * h_min &&
                          std::isfinite(g.jxw[q]),
                        ExcMessage("Cell " + std::to_string(c) + " (nodes " +
                                   nodes +
                                   ") is inverted or degenerate: its "
                                   "Jacobian determinant is " +
                                   std::to_string(g.jxw[q]) + "."));
        }
      for (unsigned int n = 0; n < n_nodes; ++n)
        AssertThrow(used[n],
                    ExcMessage("WaveMesh: node " + std::to_string(n) +
                               " belongs to no cell."));
    }



    std::vector<std::vector<unsigned int>>
    WaveMesh::boundary_loops() const
    {
      // An edge is on the boundary if exactly one cell has it; cells are
      // counter-clockwise, so boundary edges taken in cell order walk the
      // outer boundary counter-clockwise and holes clockwise.
      std::map<std::pair<unsigned int, unsigned int>, int> edges;
      const unsigned int                                   nv = nodes_per_cell;
      for (unsigned int c = 0; c < n_cells(); ++c)
        for (unsigned int a = 0; a < nv; ++a)
          {
            const unsigned int p = cells[c * nv + a],
                               q = cells[c * nv + (a + 1) % nv];
            const auto key = std::make_pair(std::min(p, q), std::max(p, q));
            auto       it  = edges.find(key);
            if (it == edges.end())
              edges.emplace(key, p < q ? 1 : -1);
            else
              it->second = 0;
          }
      std::multimap<unsigned int, unsigned int> next;
      for (const auto &[key, orientation] : edges)
        if (orientation == 1)
          next.emplace(key.first, key.second);
        else if (orientation == -1)
          next.emplace(key.second, key.first);

      std::vector<std::vector<unsigned int>> loops;
      while (!next.empty())
        {
          std::vector<unsigned int> loop;
          auto                      it    = next.begin();
          const unsigned int        start = it->first;
          unsigned int              node  = start;
          while (it != next.end())
            {
              loop.push_back(node);
              const unsigned int to = it->second;
              next.erase(it);
              node = to;
              if (node == start)
                break;
              it = next.find(node);
            }
          loops.push_back(std::move(loop));
        }
      std::stable_sort(loops.begin(),
                       loops.end(),
                       [](const auto &a, const auto &b) {
                         return a.size() > b.size();
                       });
      return loops;
    }



    std::vector<unsigned int>
    WaveMesh::nodes_in_box(const double x0,
                           const double y0,
                           const double x1,
                           const double y1) const
    {
      // Boxes are written with the round numbers of the geometry; nodes on
      // an edge of the box may miss it by rounding, hence the tolerance.
      const auto   box = bounding_box();
      const double tolerance =
        1e-9 * std::max(box[2] - box[0], box[3] - box[1]);
      std::vector<unsigned int> result;
      for (unsigned int n = 0; n < n_nodes; ++n)
        {
          const double x = coordinates[2 * n], y = coordinates[2 * n + 1];
          if (x >= x0 - tolerance && x <= x1 + tolerance &&
              y >= y0 - tolerance && y <= y1 + tolerance)
            result.push_back(n);
        }
      return result;
    }



    unsigned int
    WaveMesh::nearest_node(const double x, const double y) const
    {
      unsigned int best          = 0;
      double       best_distance = std::numeric_limits<double>::max();
      for (unsigned int n = 0; n < n_nodes; ++n)
        {
          const double d = std::pow(coordinates[2 * n] - x, 2) +
                           std::pow(coordinates[2 * n + 1] - y, 2);
          if (d < best_distance)
            {
              best_distance = d;
              best          = n;
            }
        }
      return best;
    }



    std::array<double, 4>
    WaveMesh::bounding_box() const
    {
      std::array<double, 4> box = {{std::numeric_limits<double>::max(),
                                    std::numeric_limits<double>::max(),
                                    std::numeric_limits<double>::lowest(),
                                    std::numeric_limits<double>::lowest()}};
      for (unsigned int n = 0; n < n_nodes; ++n)
        for (unsigned int k = 0; k < 2; ++k)
          {
            box[k]     = std::min(box[k], coordinates[2 * n + k]);
            box[k + 2] = std::max(box[k + 2], coordinates[2 * n + k]);
          }
      return box;
    }



    void
    apply_absorbing_layers(const std::vector<AbsorbingLayer> &layers,
                           WaveMesh                          &mesh)
    {
      mesh.cell_extra_damping.assign(mesh.n_cells(), 0.);
      if (layers.empty())
        return;
      const auto box = mesh.bounding_box();
      for (const AbsorbingLayer &layer : layers)
        AssertThrow(layer.thickness > 0 && layer.max_damping >= 0,
                    ExcMessage("An absorbing layer needs a positive "
                               "thickness and a non-negative damping."));
      const unsigned int nv = mesh.nodes_per_cell;
      for (unsigned int c = 0; c < mesh.n_cells(); ++c)
        {
          double x = 0, y = 0;
          for (unsigned int a = 0; a < nv; ++a)
            {
              x += mesh.coordinates[2 * mesh.cells[c * nv + a]] / nv;
              y += mesh.coordinates[2 * mesh.cells[c * nv + a] + 1] / nv;
            }
          double damping = 0;
          for (const AbsorbingLayer &layer : layers)
            {
              double distance = 0;
              switch (layer.side)
                {
                  case AbsorbingLayer::Side::left:
                    distance = x - box[0];
                    break;
                  case AbsorbingLayer::Side::right:
                    distance = box[2] - x;
                    break;
                  case AbsorbingLayer::Side::bottom:
                    distance = y - box[1];
                    break;
                  case AbsorbingLayer::Side::top:
                    distance = box[3] - y;
                    break;
                }
              const double depth =
                std::clamp((layer.thickness - distance) / layer.thickness,
                           0.,
                           1.);
              damping =
                std::max(damping, layer.max_damping * depth * depth * depth);
            }
          mesh.cell_extra_damping[c] = damping;
        }
    }



    WaveMesh
    make_wave_mesh(const MeshArrays                &arrays,
                   const std::vector<unsigned int> &cell_material)
    {
      AssertThrow(arrays.dim == 2 && arrays.layout.degree == 1 &&
                    arrays.layout.n_components == 2 &&
                    (arrays.layout.n_nodes == 3 || arrays.layout.n_nodes == 4),
                  ExcMessage("The explicit wave solver needs a 2D mesh of "
                             "linear triangles or bilinear quadrilaterals "
                             "with two displacement components per node."));
      AssertThrow(cell_material.size() == arrays.n_elements,
                  ExcMessage("make_wave_mesh: one material index per cell "
                             "is needed."));
      WaveMesh mesh;
      mesh.n_nodes        = arrays.n_nodes;
      mesh.nodes_per_cell = arrays.layout.n_nodes;
      mesh.coordinates    = arrays.nodal_coordinates;
      mesh.cell_material  = cell_material;
      mesh.cells.resize(arrays.connectivity.size());
      // deal.II numbers quadrilateral vertices lexicographically; the wave
      // mesh walks them counter-clockwise.
      static const unsigned int quad_order[4] = {0, 1, 3, 2};
      const unsigned int        nv            = mesh.nodes_per_cell;
      for (unsigned int e = 0; e < arrays.n_elements; ++e)
        for (unsigned int a = 0; a < nv; ++a)
          mesh.cells[e * nv + a] =
            arrays.connectivity[e * nv + (nv == 4 ? quad_order[a] : a)];
      // Triangles come with positive Jacobians from the adapter; mirror any
      // that do not so every cell is counter-clockwise.
      for (unsigned int e = 0; e < arrays.n_elements; ++e)
        if (nv == 3 && mesh.cell_area(e) < 0)
          std::swap(mesh.cells[3 * e + 1], mesh.cells[3 * e + 2]);
      mesh.cell_extra_damping.assign(mesh.n_cells(), 0.);
      return mesh;
    }



    unsigned int
    NodalSystem::max_links() const
    {
      unsigned int result = 0;
      for (unsigned int i = 0; i < n_nodes; ++i)
        result = std::max(result, n_links(i));
      return result;
    }



    void
    NodalSystem::vmult_add(const std::vector<double> &x,
                           std::vector<double>       &y) const
    {
      AssertThrow(x.size() == 2 * std::size_t(n_nodes),
                  dealii::ExcDimensionMismatch(x.size(),
                                               2 * std::size_t(n_nodes)));
      AssertThrow(y.size() == x.size(),
                  dealii::ExcDimensionMismatch(y.size(), x.size()));
      dealii::parallel::apply_to_subranges(
        0u,
        n_nodes,
        [&](const unsigned int begin, const unsigned int end) {
          for (unsigned int i = begin; i < end; ++i)
            {
              double sx = 0, sy = 0;
              for (unsigned int k = row_offsets[i]; k < row_offsets[i + 1]; ++k)
                {
                  const unsigned int j = columns[k];
                  const double      *K = &stiffness[4 * k];
                  sx += K[0] * x[2 * j] + K[1] * x[2 * j + 1];
                  sy += K[2] * x[2 * j] + K[3] * x[2 * j + 1];
                }
              y[2 * i] += sx;
              y[2 * i + 1] += sy;
            }
        },
        2048);
    }



    double
    NodalSystem::estimate_max_eigenvalue(const unsigned int n_iterations) const
    {
      // Power iteration on the symmetric M^{-1/2} K M^{-1/2}, which has the
      // eigenvalues of M^{-1} K; a deterministic start vector keeps the
      // time step, and so the whole run, reproducible.
      std::vector<double> x(2 * std::size_t(n_nodes)), y(x.size());
      for (std::size_t i = 0; i < x.size(); ++i)
        x[i] = std::sin(12.9898 * i + 78.233) + ((i / 2) % 2 ? 0.5 : -0.5);
      double lambda = 0;
      for (unsigned int it = 0; it < n_iterations; ++it)
        {
          double norm = 0;
          for (const double v : x)
            norm += v * v;
          norm = std::sqrt(norm);
          if (!(norm > 0 && std::isfinite(norm)))
            {
              // Name the first node whose mass or stiffness is at fault:
              // its material (Young's modulus, density) is the input to
              // check.
              std::string culprit;
              for (unsigned int i = 0; i < n_nodes && culprit.empty(); ++i)
                {
                  bool finite = std::isfinite(mass[i]) && mass[i] > 0;
                  for (unsigned int k = 4 * row_offsets[i];
                       k < 4 * row_offsets[i + 1];
                       ++k)
                    finite = finite && std::isfinite(stiffness[k]);
                  if (!finite)
                    {
                      std::ostringstream text;
                      text << " Node " << i << " has the mass " << mass[i]
                           << " and stiffness entries that are "
                           << (std::isfinite(stiffness[4 * row_offsets[i]]) ?
                                 "finite" :
                                 "not finite")
                           << ".";
                      culprit = text.str();
                    }
                }
              std::ostringstream text;
              text << "estimate_max_eigenvalue(): the power iteration "
                      "broke down in iteration "
                   << it << " (norm " << norm
                   << "): the eigenvalues of M^-1 K overflow or vanish."
                   << culprit
                   << " Check the materials' Young's modulus and density: "
                      "their ratio sets the eigenvalues, and it must stay "
                      "well inside the range of double.";
              AssertThrow(false, ExcMessage(text.str()));
            }
          for (std::size_t i = 0; i < x.size(); ++i)
            x[i] /= norm * std::sqrt(mass[i / 2]);
          std::fill(y.begin(), y.end(), 0.);
          vmult_add(x, y);
          double rayleigh = 0;
          for (std::size_t i = 0; i < x.size(); ++i)
            {
              // x = M^{-1/2} v, y = K x: v^T M^{-1/2} K M^{-1/2} v = x.y
              rayleigh += x[i] * y[i];
              y[i] /= std::sqrt(mass[i / 2]);
            }
          lambda = rayleigh;
          std::swap(x, y);
        }
      return 1.02 * lambda;
    }



    double
    NodalSystem::discrete_energy(const std::vector<double> &u0,
                                 const std::vector<double> &u1,
                                 const double               dt) const
    {
      AssertThrow(u0.size() == 2 * std::size_t(n_nodes),
                  dealii::ExcDimensionMismatch(u0.size(),
                                               2 * std::size_t(n_nodes)));
      AssertThrow(u1.size() == u0.size(),
                  dealii::ExcDimensionMismatch(u1.size(), u0.size()));
      double kinetic = 0;
      for (unsigned int i = 0; i < n_nodes; ++i)
        {
          const double vx = u1[2 * i] - u0[2 * i],
                       vy = u1[2 * i + 1] - u0[2 * i + 1];
          kinetic += mass[i] * (vx * vx + vy * vy);
        }
      std::vector<double> Ku(u0.size(), 0.);
      vmult_add(u0, Ku);
      double potential = 0;
      for (std::size_t i = 0; i < Ku.size(); ++i)
        potential += u1[i] * Ku[i];
      return 0.5 * kinetic / (dt * dt) + 0.5 * potential;
    }



    NodalSystem
    assemble_nodal_system(const WaveMesh                     &mesh,
                          const std::vector<ElasticMaterial> &materials)
    {
      mesh.check_consistency(materials.size());
      for (unsigned int m = 0; m < materials.size(); ++m)
        {
          const ElasticMaterial &mat = materials[m];
          AssertThrow(mat.youngs_modulus > 0 && mat.density > 0 &&
                        mat.poissons_ratio >= 0 && mat.poissons_ratio < 0.5 &&
                        mat.damping >= 0,
                      ExcMessage("Material " + std::to_string(m) +
                                 " (E = " + significant(mat.youngs_modulus) +
                                 ", nu = " + significant(mat.poissons_ratio) +
                                 ", rho = " + significant(mat.density) +
                                 ", damping = " + significant(mat.damping) +
                                 "): Young's modulus and density must be "
                                 "positive, Poisson's ratio in [0, 0.5) and "
                                 "damping non-negative."));
        }

      const unsigned int n_nodes = mesh.n_nodes, nv = mesh.nodes_per_cell;
      const unsigned int n_cells = mesh.n_cells();

      // Cells of every node, in increasing order: each row is then summed
      // in a fixed order, whatever the threads do.
      std::vector<unsigned int> cell_offsets(n_nodes + 1, 0), node_cells;
      for (const unsigned int n : mesh.cells)
        ++cell_offsets[n + 1];
      std::partial_sum(cell_offsets.begin(),
                       cell_offsets.end(),
                       cell_offsets.begin());
      node_cells.resize(cell_offsets.back());
      {
        std::vector<unsigned int> fill(cell_offsets.begin(),
                                       cell_offsets.end() - 1);
        for (unsigned int c = 0; c < n_cells; ++c)
          for (unsigned int a = 0; a < nv; ++a)
            node_cells[fill[mesh.cells[c * nv + a]]++] = c;
      }

      NodalSystem system;
      system.n_nodes = n_nodes;
      system.row_offsets.assign(n_nodes + 1, 0);
      for (unsigned int i = 0; i < n_nodes; ++i)
        {
          std::vector<unsigned int> linked;
          for (unsigned int k = cell_offsets[i]; k < cell_offsets[i + 1]; ++k)
            for (unsigned int a = 0; a < nv; ++a)
              linked.push_back(mesh.cells[node_cells[k] * nv + a]);
          std::sort(linked.begin(), linked.end());
          linked.erase(std::unique(linked.begin(), linked.end()), linked.end());
          system.row_offsets[i + 1] = system.row_offsets[i] + linked.size();
          system.columns.insert(system.columns.end(),
                                linked.begin(),
                                linked.end());
        }
      system.stiffness.assign(4 * system.columns.size(), 0.);
      system.mass.assign(n_nodes, 0.);
      system.damping.assign(n_nodes, 0.);

      dealii::parallel::apply_to_subranges(
        0u,
        n_nodes,
        [&](const unsigned int begin, const unsigned int end) {
          for (unsigned int i = begin; i < end; ++i)
            for (unsigned int k = cell_offsets[i]; k < cell_offsets[i + 1]; ++k)
              {
                const unsigned int     c   = node_cells[k];
                const ElasticMaterial &mat = materials[mesh.cell_material[c]];
                const double           lambda = mat.lambda(), mu = mat.mu();
                unsigned int           a = 0;
                while (mesh.cells[c * nv + a] != i)
                  ++a;
                const CellGradients g     = cell_gradients(mesh, c);
                const double        area  = mesh.cell_area(c);
                const double        extra = mesh.cell_extra_damping.empty() ?
                                              0. :
                                              mesh.cell_extra_damping[c];
                system.mass[i] += mat.density * area / nv;
                system.damping[i] +=
                  (mat.damping + extra) * mat.density * area / nv;
                for (unsigned int b = 0; b < nv; ++b)
                  {
                    const unsigned int j = mesh.cells[c * nv + b];
                    const unsigned int slot =
                      std::lower_bound(system.columns.begin() +
                                         system.row_offsets[i],
                                       system.columns.begin() +
                                         system.row_offsets[i + 1],
                                       j) -
                      system.columns.begin();
                    double *K = &system.stiffness[4 * slot];
                    for (unsigned int q = 0; q < g.n_points; ++q)
                      {
                        const double *ga  = &g.gradients[q][2 * a];
                        const double *gb  = &g.gradients[q][2 * b];
                        const double  dot = ga[0] * gb[0] + ga[1] * gb[1];
                        for (unsigned int r = 0; r < 2; ++r)
                          for (unsigned int s = 0; s < 2; ++s)
                            K[2 * r + s] +=
                              g.jxw[q] *
                              (lambda * ga[r] * gb[s] + mu * ga[s] * gb[r] +
                               (r == s ? mu * dot : 0.));
                      }
                  }
              }
        },
        1024);
      return system;
    }



    void
    make_node_graph(const NodalSystem         &system,
                    std::vector<unsigned int> &offsets,
                    std::vector<unsigned int> &neighbours)
    {
      offsets.assign(system.n_nodes + 1, 0);
      neighbours.clear();
      neighbours.reserve(system.columns.size());
      for (unsigned int i = 0; i < system.n_nodes; ++i)
        {
          for (unsigned int k = system.row_offsets[i];
               k < system.row_offsets[i + 1];
               ++k)
            if (system.columns[k] != i)
              neighbours.push_back(system.columns[k]);
          offsets[i + 1] = neighbours.size();
        }
    }
  } // namespace Wave
} // namespace GPUAssembly

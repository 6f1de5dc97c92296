// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_wave_elastic_wave_system_h
#define gpu_assembly_wave_elastic_wave_system_h

#include <gpu_assembly/adapter/mesh_arrays.h>

#include <array>
#include <cstdint>
#include <vector>

namespace GPUAssembly
{
  namespace Wave
  {
    /**
     * An isotropic linear-elastic material in plane strain with
     * mass-proportional damping (C = damping * M, the damping of Pogo and
     * of Abaqus/Explicit's "alpha" Rayleigh coefficient).
     */
    struct ElasticMaterial
    {
      /// E. Units: Pa.
      double youngs_modulus = 0;
      /// nu, in [0, 0.5).
      double poissons_ratio = 0;
      /// rho. Units: kg/m^3.
      double density = 0;
      /// Mass-proportional damping coefficient alpha. Units: 1/s.
      double damping = 0;

      double
      lambda() const
      {
        return youngs_modulus * poissons_ratio /
               ((1 + poissons_ratio) * (1 - 2 * poissons_ratio));
      }

      double
      mu() const
      {
        return youngs_modulus / (2 * (1 + poissons_ratio));
      }

      /// Plane-strain P-wave speed sqrt((lambda + 2 mu) / rho).
      double
      p_wave_speed() const;

      /// S-wave speed sqrt(mu / rho).
      double
      s_wave_speed() const;

      /// Rayleigh-wave speed: the root of the Rayleigh equation in
      /// (0, c_s), found by bisection.
      double
      rayleigh_wave_speed() const;
    };

    /**
     * A 2D mesh of linear triangles (3 nodes per cell) or bilinear
     * quadrilaterals (4 nodes, counter-clockwise) without deal.II types:
     * what the explicit scheme needs from a discretization. The deal.II
     * set-up (wave_setup.h) fills it from a Triangulation through
     * DoFHandlerAdapter; tests and benchmarks may generate it directly.
     */
    struct WaveMesh
    {
      unsigned int n_nodes = 0;
      /// 3 (triangles) or 4 (quadrilaterals, counter-clockwise).
      unsigned int nodes_per_cell = 3;
      /// Node coordinates, x and y of node n at 2 n and 2 n + 1.
      std::vector<double> coordinates;
      /// Node a of cell c at c * nodes_per_cell + a.
      std::vector<unsigned int> cells;
      /// Index into the material list for every cell.
      std::vector<unsigned int> cell_material;
      /// Damping added to the material's (absorbing layers), per cell.
      /// Units: 1/s. Empty means none.
      std::vector<double> cell_extra_damping;

      unsigned int
      n_cells() const
      {
        return nodes_per_cell == 0 ? 0 : cells.size() / nodes_per_cell;
      }

      /**
       * Throws if the arrays are inconsistent, a node index is out of range,
       * a node belongs to no cell, or a cell is inverted or degenerate (the
       * message names the cell and its nodes).
       */
      void
      check_consistency(const unsigned int n_materials) const;

      /**
       * The closed loops of boundary edges (edges that belong to one cell
       * only), each as a list of nodes in walking order; the longest (the
       * outer boundary of a simply connected plate) first.
       */
      std::vector<std::vector<unsigned int>>
      boundary_loops() const;

      /// Area of cell @p c (positive for counter-clockwise cells).
      double
      cell_area(const unsigned int c) const;

      /// Shortest edge over all cells.
      double
      minimum_edge_length() const;

      /// Nodes with x0 <= x <= x1 and y0 <= y <= y1 (within 1e-9 of the
      /// mesh size), in increasing order.
      std::vector<unsigned int>
      nodes_in_box(const double x0,
                   const double y0,
                   const double x1,
                   const double y1) const;

      /// The node nearest to (x, y) (the lowest-numbered one on ties).
      unsigned int
      nearest_node(const double x, const double y) const;

      /// Bounding box {x_min, y_min, x_max, y_max} of the nodes.
      std::array<double, 4>
      bounding_box() const;
    };

    /**
     * An absorbing layer along one side of the mesh's bounding box: cells
     * whose centre lies within @p thickness of the side get the extra
     * mass-proportional damping max_damping * (depth / thickness)^3 (Pogo
     * Sec. 4.3, after Rajagopal et al.). Where layers overlap (corners),
     * the deepest counts.
     */
    struct AbsorbingLayer
    {
      enum class Side
      {
        left,
        right,
        bottom,
        top
      };
      Side   side      = Side::left;
      double thickness = 0;
      /// Damping at the outer edge of the layer. Units: 1/s.
      double max_damping = 0;
    };

    /// Set mesh.cell_extra_damping from @p layers (all zero if empty).
    void
    apply_absorbing_layers(const std::vector<AbsorbingLayer> &layers,
                           WaveMesh                          &mesh);

    /**
     * The WaveMesh of a discretization pulled in by DoFHandlerAdapter: a
     * two-component FE_SimplexP(1) (triangles) or FE_Q(1) (quadrilaterals)
     * system in 2D. Node n of the result is node n of @p arrays (so that
     * DoFHandlerAdapter::scatter_nodal_values() maps results back), and
     * quadrilateral nodes are reordered counter-clockwise.
     * @p cell_material holds the material index of every active cell.
     */
    WaveMesh
    make_wave_mesh(const MeshArrays                &arrays,
                   const std::vector<unsigned int> &cell_material);

    /**
     * The assembled, lumped system M U'' + C U' + K U = F of a WaveMesh,
     * stored by node: K in block-CSR form with one 2x2 block per pair of
     * nodes linked by a cell (the "links" of Pogo's Fig. 1, the node itself
     * included), M and C diagonal with one value per node (both components
     * share it).
     */
    struct NodalSystem
    {
      unsigned int n_nodes = 0;
      /// Links of node i: columns[row_offsets[i] .. row_offsets[i + 1]),
      /// sorted, the node itself included.
      std::vector<unsigned int> row_offsets;
      std::vector<unsigned int> columns;
      /// K_ij as a 2x2 block, row-major (xx, xy, yx, yy), 4 per link.
      std::vector<double> stiffness;
      /// Lumped mass: sum over the node's cells of rho * area / n_vertices.
      std::vector<double> mass;
      /// Lumped damping: as the mass, weighted by the cell's damping.
      std::vector<double> damping;

      unsigned int
      n_links(const unsigned int i) const
      {
        return row_offsets[i + 1] - row_offsets[i];
      }

      unsigned int
      max_links() const;

      /// y += K x for nodal vectors (x, y of node n at 2 n, 2 n + 1).
      void
      vmult_add(const std::vector<double> &x, std::vector<double> &y) const;

      /**
       * The largest eigenvalue of M^{-1} K (power iteration, @p n_iterations
       * steps from a fixed start vector, then rounded up by 2 %). The
       * central-difference scheme is stable for dt < 2 / sqrt(lambda_max).
       */
      double
      estimate_max_eigenvalue(const unsigned int n_iterations = 200) const;

      /**
       * The discrete energy that the undamped central-difference scheme
       * conserves exactly: 1/2 (u1 - u0)^T M (u1 - u0) / dt^2 +
       * 1/2 u1^T K u0, for consecutive states u0 = U_n, u1 = U_{n+1}.
       */
      double
      discrete_energy(const std::vector<double> &u0,
                      const std::vector<double> &u1,
                      const double               dt) const;
    };

    /**
     * Assemble K, the lumped M and the lumped C of @p mesh (plane strain,
     * unit thickness). Triangles are integrated exactly; quadrilaterals
     * with 2x2 Gauss points. Multithreaded over nodes, bitwise the same
     * whatever the number of threads.
     */
    NodalSystem
    assemble_nodal_system(const WaveMesh                     &mesh,
                          const std::vector<ElasticMaterial> &materials);

    /**
     * Node adjacency graph without the diagonal, as CSR (offsets, neighbours):
     * what the partitioners work on.
     */
    void
    make_node_graph(const NodalSystem         &system,
                    std::vector<unsigned int> &offsets,
                    std::vector<unsigned int> &neighbours);
  } // namespace Wave
} // namespace GPUAssembly

#endif

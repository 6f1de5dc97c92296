// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_tled_tled_model_h
#define gpu_assembly_tled_tled_model_h

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace GPUAssembly
{
  /**
   * Total Lagrangian Explicit Dynamics (TLED, Miller, Joldes, Lance and
   * Wittek 2007): nonlinear elastodynamics of a neo-Hookean solid with
   * one-point elements, a lumped mass and the central-difference rule, with
   * element forces computed from reference shape-function gradients and
   * volumes prepared once. No matrix is ever assembled.
   *
   * Use: describe the mesh (TLED::Mesh), build a TLED::Model (the
   * element and nodal arrays, the stable time step), set the boundary
   * conditions (TLED::BoundaryConditions), and step with
   * TLED::HostStepper or TLED::DeviceStepper (tled_stepper.h).
   */
  namespace TLED
  {
    enum class ElementType
    {
      /// Trilinear hexahedron with one integration point (uniform strain)
      /// and Flanagan-Belytschko hourglass control.
      hexahedron,
      /// Linear tetrahedron.
      tetrahedron
    };

    /**
     * A mesh of one cell type: nodes' reference coordinates (x, y, z of
     * node n at 3 n .. 3 n + 2) and cells (8 or 4 node numbers each, in
     * deal.II's vertex order: for a hexahedron, vertex x + 2 y + 4 z of the
     * unit cube).
     */
    struct Mesh
    {
      ElementType               element_type = ElementType::hexahedron;
      std::vector<double>       coordinates;
      std::vector<unsigned int> cells;

      unsigned int
      nodes_per_element() const
      {
        return element_type == ElementType::hexahedron ? 8 : 4;
      }

      unsigned int
      n_nodes() const
      {
        return coordinates.size() / 3;
      }

      unsigned int
      n_elements() const
      {
        return cells.size() / nodes_per_element();
      }
    };

    /**
     * The compressible neo-Hookean material of NeoHookeanKernel,
     * W = mu/2 (tr C - 3) - mu ln J + lambda/2 ln^2 J, a density, and the
     * hourglass coefficient kappa of the hexahedron: each hourglass mode
     * gets kappa times the element's dilatational stiffness,
     * k = kappa (lambda + 2 mu) V sum_aK b_aK^2 / 8 (Flanagan and
     * Belytschko suggest 0.05 to 0.15).
     */
    struct Material
    {
      double mu                    = 1;
      double lambda                = 1;
      double density               = 1;
      double hourglass_coefficient = 0.1;

      /// The dilatational wave speed sqrt((lambda + 2 mu) / density).
      double
      wave_speed() const;
    };

    /**
     * The element and nodal arrays the steppers read, in structure-of-arrays
     * form for coalesced loads: entry (k, e) of a per-element quantity is at
     * k * element_stride + e, element_stride the number of elements rounded
     * up to a multiple of 32; nodal entries (c, n) at c * node_stride + n.
     */
    template <typename Number>
    struct Model
    {
      ElementType  element_type      = ElementType::hexahedron;
      unsigned int nodes_per_element = 8;
      unsigned int n_nodes = 0, n_elements = 0;
      unsigned int element_stride = 0, node_stride = 0;
      Number       mu = 0, lambda = 0;

      /// Node a of element e at a * element_stride + e.
      std::vector<int> connectivity;
      /// Reference gradient b_aK of element e at (3 a + K) * element_stride
      /// + e (for the hexahedron the volume average of grad N_a).
      std::vector<Number> shape_gradients;
      /// Reference volume of element e.
      std::vector<Number> volumes;
      /// Hexahedra: c_K^alpha = h^alpha . X_K at (3 alpha + K) *
      /// element_stride + e, and the hourglass stiffness k at 12 *
      /// element_stride + e. Empty for tetrahedra.
      std::vector<Number> hourglass;

      /// Lumped mass of each node (volume times density over the nodes of
      /// each element), in double.
      std::vector<double> lumped_mass;

      /**
       * The deterministic nodal sum: node n adds, in this fixed order, the
       * element forces at entries node_entries[node_offsets[n]] ..
       * node_entries[node_offsets[n + 1] - 1]; an entry p means component i
       * of the force of element e on its local node a is at p + i *
       * element_stride of the element-force array, p = 3 a element_stride +
       * e. Entries are sorted by element, then local node.
       */
      std::vector<int> node_offsets, node_entries;

      /// The reference coordinates, kept for the hosts' energy, output
      /// and the set-up of boundary conditions.
      std::vector<double> coordinates;

      /**
       * The stability limit of the central-difference rule: the smallest
       * over the elements of L_e / c, c the dilatational wave speed and L_e
       * the element's characteristic length (hexahedron: volume over its
       * largest face area, divided by sqrt(1 + kappa) for the hourglass
       * stiffness; tetrahedron: its smallest height), and the element that
       * sets it.
       */
      double       critical_time_step = 0;
      unsigned int critical_element   = 0;

      /**
       * Bytes one step must move at least (each array read or written
       * once): the element arrays, the element forces written and read
       * back, the nodal-sum lists, and per node the displacements read
       * (current twice: by the elements and the update; previous) and
       * written, the update's coefficient and flags.
       */
      std::size_t
      bytes_per_step() const;

      /**
       * The byte floor of a step whatever the nodal sum: only what must be
       * read and written, each once: the element arrays, and per node the
       * displacements u_n and u_{n-1} read and u_{n+1} written, the
       * update's coefficient and flags.
       */
      std::size_t
      minimum_bytes_per_step() const;

      /// Bytes of the element arrays of one element.
      std::size_t
      bytes_per_element() const;
    };

    /**
     * Build the model of @p mesh with @p material: gradients and volumes
     * (hexahedra: exact 2x2x2 Gauss integrals over the trilinear
     * geometry), hourglass data, lumped mass, nodal-sum lists and the
     * stable time step. Throws, naming the element and its nodes, for an
     * inverted or degenerate element, and for a mesh whose node numbers are
     * out of range or whose nodes are not all used.
     */
    template <typename Number>
    Model<Number>
    make_model(const Mesh &mesh, const Material &material);

    /**
     * Per node: which components are prescribed (bits 0, 1, 2 for x, y, z)
     * and their final values, and the final external force; both ramped by
     * smooth_ramp(t, ramp_time) (tled_element.h). Vectors of 3 values per
     * node; empty vectors mean none.
     */
    struct BoundaryConditions
    {
      std::vector<std::uint8_t> prescribed_components;
      std::vector<double>       prescribed_values;
      std::vector<double>       external_forces;
      double                    ramp_time = 0;
    };

    /**
     * The time step and the damping: mass-proportional damping C = D M
     * with D = @p damping (1/time).
     */
    struct Integration
    {
      double time_step = 0;
      double damping   = 0;
    };

    /**
     * Throw, with the limit printed to significant digits, if @p
     * time_step exceeds the model's stable time step.
     */
    template <typename Number>
    void
    check_time_step(const Model<Number> &model, const double time_step);

    /**
     * Internal forces f_int(u) at every node (3 values per node), summed
     * in the order of the nodal-sum lists, in Number arithmetic: the forces
     * the steppers use. @p u has 3 values per node.
     */
    template <typename Number>
    std::vector<double>
    internal_forces(const Model<Number> &model, const std::vector<double> &u);

    /**
     * Stored energy of displacement @p u: the integral of W(F) at the one
     * point of each element plus the hourglass energy k/2 sum |q^alpha|^2,
     * in double.
     */
    template <typename Number>
    double
    strain_energy(const Model<Number> &model, const std::vector<double> &u);

    /**
     * The discrete energy of the central-difference rule between steps n and
     * n + 1, conserved (to the nonlinearity's third order) without damping
     * and loads:
     *   H = 1/2 v^T M v + (W(u_n) + W(u_{n+1}))/2
     *       - 1/4 (f(u_{n+1}) - f(u_n)) . (u_{n+1} - u_n),
     * v = (u_{n+1} - u_n) / dt. For a linear material it equals
     * 1/2 v^T M v + 1/2 u_n^T K u_{n+1}, which the rule conserves exactly.
     */
    template <typename Number>
    double
    discrete_energy(const Model<Number>       &model,
                    const std::vector<double> &u_n,
                    const std::vector<double> &u_n_plus_1,
                    const double               time_step);

    /**
     * The smallest J = det F over the elements for displacement @p u, and
     * the element where it is.
     */
    template <typename Number>
    std::pair<double, unsigned int>
    minimum_jacobian(const Model<Number> &model, const std::vector<double> &u);
  } // namespace TLED
} // namespace GPUAssembly

#endif

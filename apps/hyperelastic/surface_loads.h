// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef hyperelastic_surface_loads_h
#define hyperelastic_surface_loads_h

// Surface loads on boundary faces as flat arrays: the dead traction as
// consistent nodal forces, and the follower pressure's faces with what
// its force p cof(F) N dA and its load stiffness need at each face
// quadrature point. Like integrator_backend.h this header includes no
// deal.II header; surface_load_setup.h makes the arrays from a DoFHandler.

#include <gpu_assembly/base/config.h>

#include <cstddef>
#include <vector>

namespace Hyperelastic
{
  /**
   * The surface loads of a run, in the DoF indexing of the backend's
   * vectors (the locally owned entries). A constrained DoF's share goes to
   * the DoFs of its line with the line's weights (a hanging node), or is
   * dropped (a held DoF), as for the nodal load pattern.
   */
  struct SurfaceLoadData
  {
    /// Consistent nodal forces of the dead traction at unit amplitude, one
    /// per DoF; empty without a traction (on several ranks: on every rank,
    /// or on none).
    std::vector<double> traction_pattern;

    /// Pressure faces: each a boundary face of a cell, all cells of one
    /// finite element with n_cell_dofs DoFs.
    unsigned int n_pressure_faces = 0;
    unsigned int n_cell_dofs      = 0;
    unsigned int n_face_q_points  = 0;
    /// The vector component of each of the cell's DoFs (n_cell_dofs).
    std::vector<unsigned int> dof_components;
    /// [face][i]: the DoF of local DoF i, whose value is read (on several
    /// ranks: its position among the rank's locally relevant DoFs).
    std::vector<unsigned int> cell_dofs;
    /// [face][q][i]: the value of local DoF i's scalar shape function.
    std::vector<double> shape_values;
    /// [face][q][i][d]: its gradient in reference coordinates.
    std::vector<double> shape_gradients;
    /// [face][q][d]: the outward reference normal times the area weight,
    /// N dA (the face's JxW).
    std::vector<double> area_vectors;

    /// Where the forces and the load stiffness go, with the constraints
    /// condensed: for each face, the entries [force_offsets[f],
    /// force_offsets[f+1]) add weight * force of local DoF force_local[k]
    /// to row force_rows[k] (on several ranks: a global DoF index, which
    /// another rank may own).
    std::vector<unsigned int> force_offsets;
    std::vector<unsigned int> force_local;
    std::vector<unsigned int> force_rows;
    std::vector<double>       force_weights;
    /// The same for the tangent: entries [stiffness_offsets[f],
    /// stiffness_offsets[f+1]) add weight * dforce_i/du_j of local DoFs
    /// (stiffness_local_i[k], stiffness_local_j[k]) at position
    /// stiffness_positions[k] of the matrix values (the adapter's CSR
    /// pattern). On several ranks the entries name the global row and
    /// column instead (stiffness_rows, stiffness_columns), and
    /// stiffness_positions is empty.
    std::vector<unsigned int> stiffness_offsets;
    std::vector<unsigned int> stiffness_local_i;
    std::vector<unsigned int> stiffness_local_j;
    std::vector<std::size_t>  stiffness_positions;
    std::vector<unsigned int> stiffness_rows;
    std::vector<unsigned int> stiffness_columns;
    std::vector<double>       stiffness_weights;

    /// Add the pressure's load stiffness to the Newton tangent. Only
    /// tests turn it off, to show that Newton then loses its quadratic
    /// convergence.
    bool load_stiffness = true;

    bool
    has_traction() const
    {
      return !traction_pattern.empty();
    }

    bool
    has_pressure() const
    {
      return n_pressure_faces > 0;
    }
  };



  /**
   * The per-face pressure quantities gathered by their targets, for the
   * device: target targets[t] (a DoF, or a position of the matrix values)
   * receives sum_k weights[k] * buffer[sources[k]] over k in [offsets[t],
   * offsets[t+1]), the sources in the order of the faces, so that the sums
   * take the same order in every run and need no atomics.
   */
  struct SurfaceLoadGather
  {
    std::vector<unsigned int> targets;
    std::vector<unsigned int> offsets;
    std::vector<unsigned int> sources;
    std::vector<double>       weights;
  };

  /// The place of every force entry's value among the per-face forces
  /// ([face][i]): face * n_cell_dofs + force_local[k].
  std::vector<unsigned int>
  pressure_force_sources(const SurfaceLoadData &data);

  /// The place of every stiffness entry's value among the per-face
  /// matrices ([face][i][j]).
  std::vector<unsigned int>
  pressure_stiffness_sources(const SurfaceLoadData &data);

  /// The forces' gather: sources index [face][i] of the per-face forces.
  SurfaceLoadGather
  pressure_force_gather(const SurfaceLoadData &data);

  /// The load stiffness' gather: sources index [face][i][j] of the
  /// per-face matrices.
  SurfaceLoadGather
  pressure_stiffness_gather(const SurfaceLoadData &data);



  /**
   * The surface loads of the explicit integrator gathered per entry of its
   * state (component c of vertex v at c * node_stride + v): target
   * targets[t] receives a(t_n) traction[t] + p(t_n) sum_k weights[k]
   * face_force[sources[k]], k in [offsets[t], offsets[t+1]) in the order of
   * the faces, face_force the per-face forces at unit pressure
   * ([face][i], pressure_face_forces()). Targets ascend; a target without a
   * traction has traction[t] = 0, one without pressure faces no sources.
   */
  struct SurfaceStepGather
  {
    unsigned int              node_stride = 0;
    std::vector<unsigned int> targets;
    std::vector<double>       traction;
    std::vector<unsigned int> offsets;
    std::vector<unsigned int> sources;
    std::vector<double>       weights;

    /// The vertices of the targets, ascending, each once.
    std::vector<unsigned int>
    nodes() const;
  };

  /// The gather of @p data, made by make_vertex_surface_load_data() with
  /// @p node_stride.
  SurfaceStepGather
  surface_step_gather(const SurfaceLoadData &data,
                      const unsigned int     node_stride);

  /**
   * sum_k weights[k] * buffer[sources[k]] over k in [offsets[t],
   * offsets[t+1]), in this order: the fixed-order sum of a gather
   * (SurfaceLoadGather, SurfaceStepGather) on the host and the device.
   */
  template <typename Number, typename Index>
  GPU_ASSEMBLY_HOST_DEVICE Number
  gathered_sum(const unsigned int t,
               const Index       *offsets,
               const Index       *sources,
               const Number      *weights,
               const Number      *buffer)
  {
    Number sum = 0;
    for (Index k = offsets[t]; k < offsets[t + 1]; ++k)
      sum += weights[k] * buffer[sources[k]];
    return sum;
  }

  /**
   * Target @p t's force of SurfaceStepGather at traction amplitude
   * @p amplitude and pressure @p pressure, the same arithmetic on the host
   * and the device: the pressure faces' shares summed in their fixed
   * order, then scaled, so that the sum is the same in every run.
   */
  template <typename Number, typename Index>
  GPU_ASSEMBLY_HOST_DEVICE Number
  surface_step_force(const unsigned int t,
                     const Number      *traction,
                     const Index       *offsets,
                     const Index       *sources,
                     const Number      *weights,
                     const Number      *face_force,
                     const Number       amplitude,
                     const Number       pressure)
  {
    return amplitude * traction[t] +
           pressure * gathered_sum(t, offsets, sources, weights, face_force);
  }



  /**
   * Column @p j of the pressure's face quantities, the same arithmetic on
   * the host and the device: the force f_j = -p sum_q N_j (cof(F) N dA)_{c_j}
   * on local DoF j into @p force_j and, with @p stiffness non-null, the
   * derivatives df_i/du_j into stiffness[i * n + j]. F = I + grad u is the
   * cell's deformation gradient at the face's quadrature points, so that
   * cof(F) N dA is the current area vector (Nanson's formula) and the
   * derivative the consistent linearization of the discrete force. The
   * arrays are one face's: @p dofs [i], @p N [q][i], @p G [q][i][d],
   * @p A [q][d] (SurfaceLoadData's layout).
   */
  template <typename Number, typename Index>
  GPU_ASSEMBLY_HOST_DEVICE void
  pressure_face_column(const unsigned int n,
                       const unsigned int n_q,
                       const Index       *components,
                       const Index       *dofs,
                       const Number      *N,
                       const Number      *G,
                       const Number      *A,
                       const Number      *u,
                       const Number       pressure,
                       const unsigned int j,
                       Number            &force_j,
                       Number            *stiffness)
  {
    force_j = 0;
    if (stiffness != nullptr)
      for (unsigned int i = 0; i < n; ++i)
        stiffness[i * n + j] = 0;
    const unsigned int c_j = static_cast<unsigned int>(components[j]);
    for (unsigned int q = 0; q < n_q; ++q)
      {
        const Number *Nq = N + q * n;
        const Number *Gq = G + q * n * 3;
        const Number *Aq = A + q * 3;
        // F[r][K]: the columns of F = I + grad u.
        Number F[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
        for (unsigned int i = 0; i < n; ++i)
          for (unsigned int K = 0; K < 3; ++K)
            F[components[i]][K] += u[dofs[i]] * Gq[i * 3 + K];
        // cof(F) N dA = sum_K A_K (F_{.,K+1} x F_{.,K+2}), K cyclic.
        Number area[3] = {0, 0, 0};
        for (unsigned int K = 0; K < 3; ++K)
          {
            const unsigned int K1 = (K + 1) % 3, K2 = (K + 2) % 3;
            for (unsigned int d = 0; d < 3; ++d)
              {
                const unsigned int d1 = (d + 1) % 3, d2 = (d + 2) % 3;
                area[d] +=
                  Aq[K] * (F[d1][K1] * F[d2][K2] - F[d2][K1] * F[d1][K2]);
              }
          }
        force_j -= pressure * Nq[j] * area[c_j];
        if (stiffness == nullptr)
          continue;

        // u_j moves column K of F by G_jK e_{c_j}: the derivative of
        // F_{.,K1} x F_{.,K2} is G_jK1 e x F_{.,K2} + G_jK2 F_{.,K1} x e.
        Number d_area[3] = {0, 0, 0};
        for (unsigned int K = 0; K < 3; ++K)
          {
            const unsigned int K1 = (K + 1) % 3, K2 = (K + 2) % 3;
            for (unsigned int d = 0; d < 3; ++d)
              {
                const unsigned int d1 = (d + 1) % 3, d2 = (d + 2) % 3;
                // (e x a)_d = e_d1 a_d2 - e_d2 a_d1 with e = e_{c_j}.
                const Number e_x_a = (d1 == c_j ? F[d2][K2] : Number(0)) -
                                     (d2 == c_j ? F[d1][K2] : Number(0));
                const Number b_x_e = (d2 == c_j ? F[d1][K1] : Number(0)) -
                                     (d1 == c_j ? F[d2][K1] : Number(0));
                d_area[d] +=
                  Aq[K] * (Gq[j * 3 + K1] * e_x_a + Gq[j * 3 + K2] * b_x_e);
              }
          }
        for (unsigned int i = 0; i < n; ++i)
          stiffness[i * n + j] -= pressure * Nq[i] * d_area[components[i]];
      }
  }

  /**
   * The pressure forces of every local DoF of face @p face at the
   * displacement @p u (per DoF) into @p force, and with @p stiffness
   * non-null their derivatives (row-major, n_cell_dofs^2): the columns of
   * pressure_face_column().
   */
  void
  pressure_face_forces(const SurfaceLoadData &data,
                       const unsigned int     face,
                       const double          *u,
                       const double           pressure,
                       double                *force,
                       double                *stiffness);



  /**
   * The pressure's entries of every face at the displacement @p u (indexed
   * as SurfaceLoadData::cell_dofs), faces in order: @p force_entry(k,
   * value) for each force entry k (value: the force of its local DoF,
   * before the entry's weight) and, unless data.load_stiffness is off,
   * @p stiffness_entry(k, value) for each stiffness entry k (value:
   * dforce_i/du_j of its local DoFs, before the weight). The sums of every
   * backend take this order, the same in every run.
   */
  template <typename ForceEntry, typename StiffnessEntry>
  void
  for_each_pressure_entry(const SurfaceLoadData &data,
                          const double          *u,
                          const double           pressure,
                          const ForceEntry      &force_entry,
                          const StiffnessEntry  &stiffness_entry)
  {
    const unsigned int  n = data.n_cell_dofs;
    std::vector<double> force(n), stiffness(std::size_t(n) * n);
    for (unsigned int f = 0; f < data.n_pressure_faces; ++f)
      {
        pressure_face_forces(data,
                             f,
                             u,
                             pressure,
                             force.data(),
                             data.load_stiffness ? stiffness.data() : nullptr);
        for (unsigned int k = data.force_offsets[f];
             k < data.force_offsets[f + 1];
             ++k)
          force_entry(k, force[data.force_local[k]]);
        if (!data.load_stiffness)
          continue;
        for (unsigned int k = data.stiffness_offsets[f];
             k < data.stiffness_offsets[f + 1];
             ++k)
          stiffness_entry(k,
                          stiffness[std::size_t(data.stiffness_local_i[k]) * n +
                                    data.stiffness_local_j[k]]);
      }
  }



  /**
   * Add @p force_scale times the pressure forces of every face at the
   * displacement @p u (per DoF) to @p residual, and subtract
   * @p stiffness_scale times their load stiffness (unless
   * data.load_stiffness is off) from the tangent's @p matrix_values: the
   * external force grows the residual, its derivative lowers the tangent
   * -dr/du. Faces in order, one after the other: the sums are the same
   * in every run.
   */
  void
  add_pressure_loads(const SurfaceLoadData &data,
                     const double          *u,
                     const double           pressure,
                     const double           force_scale,
                     const double           stiffness_scale,
                     double                *residual,
                     double                *matrix_values);
} // namespace Hyperelastic

#endif

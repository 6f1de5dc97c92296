// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef hyperelastic_surface_loads_h
#define hyperelastic_surface_loads_h

// Surface loads on boundary faces as flat arrays: the dead traction as
// consistent nodal forces, and the follower pressure's faces with what
// its force p cof(F) N dA and its load stiffness need at each face
// quadrature point. Like integrator_backend.h this header includes no
// deal.II header; surface_load_setup.h makes the arrays from a DoFHandler.

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
    /// per DoF; empty without a traction.
    std::vector<double> traction_pattern;

    /// Pressure faces: each a boundary face of a cell, all cells of one
    /// finite element with n_cell_dofs DoFs.
    unsigned int n_pressure_faces = 0;
    unsigned int n_cell_dofs      = 0;
    unsigned int n_face_q_points  = 0;
    /// The vector component of each of the cell's DoFs (n_cell_dofs).
    std::vector<unsigned int> dof_components;
    /// [face][i]: the DoF of local DoF i, whose value is read.
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
    /// to row force_rows[k].
    std::vector<unsigned int> force_offsets;
    std::vector<unsigned int> force_local;
    std::vector<unsigned int> force_rows;
    std::vector<double>       force_weights;
    /// The same for the tangent: entries [stiffness_offsets[f],
    /// stiffness_offsets[f+1]) add weight * dforce_i/du_j of local DoFs
    /// (stiffness_local_i[k], stiffness_local_j[k]) at position
    /// stiffness_positions[k] of the matrix values (the adapter's CSR
    /// pattern).
    std::vector<unsigned int> stiffness_offsets;
    std::vector<unsigned int> stiffness_local_i;
    std::vector<unsigned int> stiffness_local_j;
    std::vector<std::size_t>  stiffness_positions;
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
   * The pressure forces f_i = -p sum_q N_i (cof(F) N dA)_{c_i} of the
   * displacement @p u (per DoF) of face @p face, and with @p stiffness
   * non-null their derivatives df_i/du_j (row-major, n_cell_dofs^2). F is
   * the cell's deformation gradient at the face's quadrature points, so
   * that cof(F) N dA is the current area vector (Nanson's formula) and the
   * derivative is the consistent linearization of the discrete force.
   */
  void
  pressure_face_forces(const SurfaceLoadData &data,
                       const unsigned int     face,
                       const double          *u,
                       const double           pressure,
                       double                *force,
                       double                *stiffness);

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

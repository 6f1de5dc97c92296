// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef hyperelastic_boundary_output_h
#define hyperelastic_boundary_output_h

#include <deal.II/dofs/dof_handler.h>

#include <deal.II/fe/mapping.h>

#include <deal.II/lac/vector.h>

#include <string>

namespace Hyperelastic
{
  /**
   * Writes the boundary faces of the reference mesh to the VTU file
   * @p path (deal.II's DataOutFaces, one patch per face), with the fields
   * of the displacement @p u (a DoF vector of @p dof_handler) at the face
   * vertices: "displacement" (for ParaView's Warp By Vector),
   * "first_Piola_traction" P N (the force per unit reference area that
   * the boundary carries: the applied traction on loaded faces, about zero
   * on free ones, the reaction on held ones) and "Cauchy_stress" (the
   * symmetric tensor sigma = P F^T / J). Each face's values come from its
   * own cell's gradients.
   */
  void
  write_boundary_vtu(const dealii::Mapping<3>     &mapping,
                     const dealii::DoFHandler<3>  &dof_handler,
                     const dealii::Vector<double> &u,
                     const double                  mu,
                     const double                  lambda,
                     const std::string            &path);
} // namespace Hyperelastic

#endif

// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef hyperelastic_boundary_output_h
#define hyperelastic_boundary_output_h

#include <deal.II/dofs/dof_handler.h>

#include <deal.II/fe/mapping.h>

#include <deal.II/lac/trilinos_vector.h>
#include <deal.II/lac/vector.h>

#include <deal.II/numerics/data_out_faces.h>

#include <functional>
#include <memory>
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
   * own cell's gradients. The arrays are compressed at the level of
   * @p flags (the series' 'Output/Compression') on the threads of
   * deal.II's task scheduler (AppUtilities::write_vtu()).
   */
  void
  write_boundary_vtu(const dealii::Mapping<3>            &mapping,
                     const dealii::DoFHandler<3>         &dof_handler,
                     const dealii::Vector<double>        &u,
                     const double                         mu,
                     const double                         lambda,
                     const std::string                   &path,
                     const dealii::DataOutBase::VtkFlags &flags =
                       dealii::DataOutBase::VtkFlags());

  /**
   * The boundary files of a series on one process, each holding what
   * write_boundary_vtu() writes for the same displacement (the same text
   * and the same decoded data). The boundary faces do not change during a
   * run: their geometry and connectivity are written once, at construction,
   * and so are the shape values and gradients of each face's cell at the
   * face's points; a file then costs the fields at those points (summed in
   * the order of deal.II's FEFaceValues) and the compression of its point
   * data, on the threads of deal.II's task scheduler. The construction
   * checks this against DataOutFaces on a displacement of its own, bit for
   * bit; where the two differ (a mesh of hexahedra and tetrahedra, say)
   * or the boundary holds 2^24 field values or more (about 280 000
   * quadrilaterals or 370 000 triangles), each file is written by
   * write_boundary_vtu(). The memory held is, per face point, the values
   * and gradients of the cell's shape functions (32 bytes per DoF of the
   * cell) and the file's text outside the point data. @p mapping and @p
   * dof_handler must stay unchanged and alive as long as the object.
   */
  class BoundarySeries
  {
  public:
    BoundarySeries(const dealii::Mapping<3>            &mapping,
                   const dealii::DoFHandler<3>         &dof_handler,
                   double                               mu,
                   double                               lambda,
                   const dealii::DataOutBase::VtkFlags &flags);

    ~BoundarySeries();

    /// The file of the displacement @p u, written to @p path through
    /// AppUtilities::write_file() (complete under its name or not at all).
    /// May run on several threads at once.
    void
    write(const dealii::Vector<double> &u, const std::string &path) const;

    /// Whether the files reuse the geometry written at construction (or
    /// each is written by write_boundary_vtu()).
    bool
    reuses_geometry() const;

  private:
    struct Faces;
    const dealii::Mapping<3>           &mapping;
    const dealii::DoFHandler<3>        &dof_handler;
    const double                        mu;
    const double                        lambda;
    const dealii::DataOutBase::VtkFlags flags;
    std::unique_ptr<const Faces>        faces;
  };

  /**
   * On several ranks: the boundary faces of the rank's locally owned cells
   * with the fields of write_boundary_vtu(), from the ghosted displacement
   * @p u (the locally relevant entries), handed to @p write, which writes
   * the rank's piece (DataOutFaces::write_vtu()) and on one rank the
   * record naming the pieces (write_pvtu_record()).
   */
  void
  write_boundary_pieces(
    const dealii::Mapping<3>                                   &mapping,
    const dealii::DoFHandler<3>                                &dof_handler,
    const dealii::TrilinosWrappers::MPI::Vector                &u,
    const double                                                mu,
    const double                                                lambda,
    const std::function<void(const dealii::DataOutFaces<3> &)> &write);
} // namespace Hyperelastic

#endif

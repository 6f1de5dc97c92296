// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef hyperelastic_surface_load_setup_h
#define hyperelastic_surface_load_setup_h

#include <deal.II/base/function_parser.h>
#include <deal.II/base/index_set.h>
#include <deal.II/base/tensor.h>

#include <deal.II/dofs/dof_handler.h>

#include <deal.II/fe/mapping.h>

#include <deal.II/lac/affine_constraints.h>

#include <gpu_assembly/adapter/mesh_arrays.h>

#include <string>
#include <utility>
#include <vector>

#include "integrator_backend.h"
#include "parameters.h"
#include "surface_loads.h"

namespace Hyperelastic
{
  /// Boundary faces: a locally owned cell and the number of its face.
  using BoundaryFaces =
    std::vector<std::pair<typename dealii::DoFHandler<3>::active_cell_iterator,
                          unsigned int>>;

  /**
   * The boundary faces of the locally owned cells whose boundary id is one
   * of @p boundary_ids, or whose vertices all lie in @p region (within
   * @p tolerance), each once.
   */
  BoundaryFaces
  select_boundary_faces(const dealii::DoFHandler<3>     &dof_handler,
                        const std::vector<unsigned int> &boundary_ids,
                        const Box                       &region,
                        const double                     tolerance);

  /// The faces of the 'Surface loads'.
  struct SurfaceLoadFaces
  {
    BoundaryFaces traction, pressure;
  };

  /**
   * The boundary faces of the traction and of the pressure of @p entries
   * ('Traction boundary ids' and 'Traction region', and the pressure's),
   * as select_boundary_faces() selects them; none for a load whose entries
   * are empty. Refuses, naming the entries, a load whose entries select no
   * face on any process of @p dof_handler's communicator (collective).
   */
  SurfaceLoadFaces
  select_surface_load_faces(const dealii::DoFHandler<3>    &dof_handler,
                            const Parameters::SurfaceLoads &entries,
                            const double                    tolerance);

  /**
   * The surface loads on one process, in the DoF numbering of
   * @p dof_handler, the tangent's positions in the CSR pattern of
   * @p arrays: the dead traction @p traction (per unit reference area)
   * on @p traction_faces as consistent nodal forces, and the pressure
   * faces @p pressure_faces. The faces are integrated with the Gauss rule
   * of two points per direction (three points on a triangle), exact for
   * the forces of linear elements on flat faces. @p constraints condenses
   * the forces of constrained DoFs as described in SurfaceLoadData.
   */
  SurfaceLoadData
  make_surface_load_data(const dealii::Mapping<3>                &mapping,
                         const dealii::DoFHandler<3>             &dof_handler,
                         const dealii::AffineConstraints<double> &constraints,
                         const GPUAssembly::MeshArrays           &arrays,
                         const BoundaryFaces        &traction_faces,
                         const dealii::Tensor<1, 3> &traction,
                         const BoundaryFaces        &pressure_faces);

  /**
   * The surface loads of the explicit integrator, whose state holds
   * component c of vertex v at c * @p node_stride + v: as
   * make_surface_load_data() makes them, with cell_dofs, force_rows and the
   * traction_pattern (3 @p node_stride entries) in that indexing, without
   * constraints (the explicit steps hold their prescribed components
   * themselves) and without load stiffness. @p dof_handler's element has
   * its DoFs at the vertices only (the linear elements of
   * make_discretization()).
   */
  SurfaceLoadData
  make_vertex_surface_load_data(const dealii::Mapping<3>    &mapping,
                                const dealii::DoFHandler<3> &dof_handler,
                                const BoundaryFaces         &traction_faces,
                                const dealii::Tensor<1, 3>  &traction,
                                const BoundaryFaces         &pressure_faces,
                                const unsigned int           node_stride);

  /**
   * The surface loads of one rank of several, as make_surface_load_data()
   * makes them on one process, from the faces of the locally owned cells
   * (select_boundary_faces()), with the constraints condensed: the
   * traction's nodal forces summed over the ranks into the locally owned
   * entries (collective: @p has_traction must be the same on every rank),
   * the pressure faces' cell_dofs as positions in @p relevant_dofs (the
   * rank's locally relevant DoFs, whose values the backend gathers), and
   * their forces and load stiffness to the global rows and columns of
   * SurfaceLoadData::force_rows, stiffness_rows and stiffness_columns, for
   * the backend to add where other ranks own them.
   */
  SurfaceLoadData
  make_distributed_surface_load_data(
    const dealii::Mapping<3>                &mapping,
    const dealii::DoFHandler<3>             &dof_handler,
    const dealii::AffineConstraints<double> &constraints,
    const dealii::IndexSet                  &relevant_dofs,
    const bool                               has_traction,
    const BoundaryFaces                     &traction_faces,
    const dealii::Tensor<1, 3>              &traction,
    const BoundaryFaces                     &pressure_faces);

  /**
   * The time functions of 'Surface loads', which give each step its
   * traction amplitude and pressure.
   */
  class SurfaceLoadAmplitudes
  {
  public:
    /// Refuses a time function that is not an expression of t, naming
    /// its entry.
    explicit SurfaceLoadAmplitudes(const Parameters::SurfaceLoads &entries);

    /**
     * Sets @p loads' traction_amplitude and pressure for the step from
     * @p time to @p t_new: at t_new quasi-statically, at the midpoint in
     * dynamic runs (@p dynamic), as the nodal load. Refuses a value that
     * is not finite, naming the entry and the time.
     */
    void
    set(const bool   dynamic,
        const double time,
        const double t_new,
        StepLoads   &loads);

  private:
    const Parameters::SurfaceLoads &entries;
    dealii::FunctionParser<1>       traction, pressure;
  };
} // namespace Hyperelastic

#endif

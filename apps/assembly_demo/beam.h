// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef assembly_demo_beam_h
#define assembly_demo_beam_h

// The demo's problem, shared with benchmarks/solver_benchmark: the built-in
// cantilever beam, its finite element, mapping and quadrature, the clamp and
// the isotropic material under its own weight.

#include <deal.II/base/function.h>
#include <deal.II/base/quadrature_lib.h>

#include <deal.II/dofs/dof_handler.h>

#include <deal.II/fe/fe_q.h>
#include <deal.II/fe/fe_simplex_p.h>
#include <deal.II/fe/fe_system.h>
#include <deal.II/fe/mapping_fe.h>
#include <deal.II/fe/mapping_q.h>

#include <deal.II/grid/grid_generator.h>
#include <deal.II/grid/tria.h>

#include <deal.II/lac/affine_constraints.h>

#include <deal.II/numerics/vector_tools.h>

#include <gpu_assembly/kernels/element_kernels.h>

#include <cmath>
#include <memory>
#include <vector>

namespace AssemblyDemo
{
  using namespace dealii;

  /// Cells along the built-in beam of length @p length with @p n cells
  /// across.
  inline unsigned int
  beam_cells_along(const double length, const unsigned int n)
  {
    return static_cast<unsigned int>(std::ceil(n * length));
  }

  /**
   * The built-in beam [0, L] x [0, 1] x [0, 1] with n cells across and
   * ceil(n L) along, hexahedra or each hexahedron split into tetrahedra
   * (deal.II's convert_hypercube_to_simplex_mesh()). The face x = 0 has
   * boundary id 0 (clamped), the other faces 1 to 5. @p tria may be a
   * parallel::shared::Triangulation, whose every rank holds the whole beam.
   */
  inline void
  make_beam(Triangulation<3>  &tria,
            const double       length,
            const unsigned int n,
            const bool         hexahedra)
  {
    const std::vector<unsigned int> repetitions = {beam_cells_along(length, n),
                                                   n,
                                                   n};
    // colorize: the face x = 0 gets boundary id 0, the others 1..5.
    if (hexahedra)
      GridGenerator::subdivided_hyper_rectangle(tria,
                                                repetitions,
                                                Point<3>(),
                                                Point<3>(length, 1, 1),
                                                true);
    else
      {
        Triangulation<3> hexes;
        GridGenerator::subdivided_hyper_rectangle(hexes,
                                                  repetitions,
                                                  Point<3>(),
                                                  Point<3>(length, 1, 1),
                                                  true);
        GridGenerator::convert_hypercube_to_simplex_mesh(hexes, tria);
      }
  }

  /**
   * The displacement's finite element of degree @p degree, the mapping and
   * the quadrature (degree + 1 points per direction, exact for the
   * stiffness on affine cells) for simplices or hypercubes.
   */
  struct Discretization
  {
    Discretization(const bool simplex, const unsigned int degree)
    {
      if (simplex)
        {
          fe         = std::make_unique<FESystem<3>>(FE_SimplexP<3>(degree), 3);
          mapping    = std::make_unique<MappingFE<3>>(FE_SimplexP<3>(1));
          quadrature = std::make_unique<QGaussSimplex<3>>(degree + 1);
        }
      else
        {
          fe         = std::make_unique<FESystem<3>>(FE_Q<3>(degree), 3);
          mapping    = std::make_unique<MappingQ<3>>(1);
          quadrature = std::make_unique<QGauss<3>>(degree + 1);
        }
    }

    std::unique_ptr<FiniteElement<3>> fe;
    std::unique_ptr<Mapping<3>>       mapping;
    std::unique_ptr<Quadrature<3>>    quadrature;
  };

  /// Zero displacement on the faces of boundary id 0, closed.
  inline void
  make_clamp_constraints(const Mapping<3>          &mapping,
                         const DoFHandler<3>       &dof_handler,
                         AffineConstraints<double> &constraints)
  {
    VectorTools::interpolate_boundary_values(mapping,
                                             dof_handler,
                                             0,
                                             Functions::ZeroFunction<3>(3),
                                             constraints);
    constraints.close();
  }

  /**
   * The element kernel of an isotropic material of Young's modulus @p E
   * and Poisson's ratio @p nu under its own weight: density @p rho times
   * gravity @p g along -z.
   */
  inline GPUAssembly::LinearElasticityKernel<3, double>
  make_elasticity_kernel(const double E,
                         const double nu,
                         const double rho,
                         const double g)
  {
    GPUAssembly::LinearElasticityKernel<3, double> kernel;
    kernel.lambda        = E * nu / ((1 + nu) * (1 - 2 * nu));
    kernel.mu            = E / (2 * (1 + nu));
    kernel.body_force[2] = -rho * g;
    return kernel;
  }
} // namespace AssemblyDemo

#endif

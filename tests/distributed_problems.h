// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_tests_distributed_problems_h
#define gpu_assembly_tests_distributed_problems_h

// Distributed meshes, constraints and comparisons shared by the MPI tests.

#include <deal.II/base/function_lib.h>
#include <deal.II/base/mpi.h>

#include <deal.II/distributed/fully_distributed_tria.h>
#include <deal.II/distributed/tria.h>

#include <deal.II/dofs/dof_handler.h>
#include <deal.II/dofs/dof_tools.h>

#include <deal.II/fe/mapping.h>

#include <deal.II/grid/grid_generator.h>
#include <deal.II/grid/grid_tools.h>
#include <deal.II/grid/tria_description.h>

#include <deal.II/lac/affine_constraints.h>
#include <deal.II/lac/trilinos_sparse_matrix.h>

#include <deal.II/numerics/vector_tools.h>

#include <cmath>
#include <exception>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <string>

namespace Testing
{
  using namespace dealii;

  /**
   * Runs the test @p cases, which return whether they passed on this rank,
   * and returns the program's exit code: 0 where they passed on every rank.
   * An exception on a rank aborts all ranks after printing it.
   */
  inline int
  exit_code_on_all_ranks(const std::function<bool()> &cases)
  {
    bool passed = true;
    try
      {
        passed = cases();
      }
    catch (const std::exception &exception)
      {
        std::cerr << "rank " << Utilities::MPI::this_mpi_process(MPI_COMM_WORLD)
                  << ": " << exception.what() << std::endl;
        MPI_Abort(MPI_COMM_WORLD, 1);
      }
    passed = Utilities::MPI::min(passed ? 1 : 0, MPI_COMM_WORLD) == 1;
    return passed ? 0 : 1;
  }

  /**
   * Prints @p line on rank 0, followed, where a rank has @p failures, by
   * "; FAILED:" and each such rank's; returns whether no rank has any.
   * Collective.
   */
  inline bool
  report_on_rank_0(const std::string &line, const std::string &failures)
  {
    const MPI_Comm comm = MPI_COMM_WORLD;
    const bool     passed =
      Utilities::MPI::min(failures.empty() ? 1 : 0, comm) == 1;
    const auto all_failures = Utilities::MPI::gather(comm, failures, 0);
    if (Utilities::MPI::this_mpi_process(comm) == 0)
      {
        std::cout << line;
        if (!passed)
          {
            std::cout << "; FAILED:";
            for (unsigned int rank = 0; rank < all_failures.size(); ++rank)
              if (!all_failures[rank].empty())
                std::cout << " rank " << rank << ":" << all_failures[rank];
          }
        std::cout << std::endl;
      }
    return passed;
  }



  enum class TriaKind
  {
    p4est,
    fully_distributed
  };


  // A non-affine coarse mesh (its vertices moved by a smooth map), the
  // same on every rank, refined once more in the corner at the origin for
  // hanging nodes.
  template <int dim>
  void
  make_coarse_mesh(Triangulation<dim> &tria, const double shear = 0)
  {
    GridGenerator::subdivided_hyper_cube(tria, 2);
    GridTools::transform(
      [shear](const Point<dim> &p) {
        Point<dim> q = p;
        q[0] += 0.1 * std::sin(p[1] + 0.3) * p[0];
        q[1] += 0.07 * p[0] * p[0];
        // Sheared, the fields of a node couple: on a mesh symmetric about
        // its nodes the node blocks of elasticity are nearly diagonal.
        if (shear == 0)
          return q;
        const Point<dim> r = q;
        q[0] += shear * r[1];
        if (dim == 3)
          q[1] += 0.5 * shear * r[2];
        return q;
      },
      tria);
  }

  template <int dim>
  void
  refine(Triangulation<dim> &tria,
         const bool          hanging_nodes,
         const unsigned int  extra_refinements = 0)
  {
    tria.refine_global((dim == 2 ? 2 : 1) + extra_refinements);
    if (!hanging_nodes)
      return;
    for (const auto &cell : tria.active_cell_iterators())
      if (cell->is_locally_owned())
        {
          bool near_origin = true;
          for (unsigned int d = 0; d < dim; ++d)
            near_origin = near_origin && cell->center()[d] < 0.45;
          if (near_origin)
            cell->set_refine_flag();
        }
    tria.execute_coarsening_and_refinement();
  }



  template <int dim>
  std::unique_ptr<parallel::DistributedTriangulationBase<dim>>
  make_triangulation(const TriaKind     kind,
                     const bool         hanging_nodes,
                     const double       shear             = 0,
                     const unsigned int extra_refinements = 0)
  {
    if (kind == TriaKind::p4est)
      {
        auto tria = std::make_unique<parallel::distributed::Triangulation<dim>>(
          MPI_COMM_WORLD);
        make_coarse_mesh(*tria, shear);
        refine(*tria, hanging_nodes, extra_refinements);
        return tria;
      }
    // A serial mesh, partitioned with METIS, described and distributed.
    Triangulation<dim> serial(
      Triangulation<dim>::limit_level_difference_at_vertices);
    make_coarse_mesh(serial, shear);
    refine(serial, hanging_nodes, extra_refinements);
    GridTools::partition_triangulation(Utilities::MPI::n_mpi_processes(
                                         MPI_COMM_WORLD),
                                       serial);
    const auto description = TriangulationDescription::Utilities::
      create_description_from_triangulation(serial, MPI_COMM_WORLD);
    auto tria =
      std::make_unique<parallel::fullydistributed::Triangulation<dim>>(
        MPI_COMM_WORLD);
    tria->create_triangulation(description);
    return tria;
  }



  // step-40's constraints on the locally relevant DoFs: hanging nodes and
  // inhomogeneous Dirichlet values (a cosine in every component) on
  // boundary 0.
  template <int dim>
  void
  make_constraints(const Mapping<dim>        &mapping,
                   const DoFHandler<dim>     &dof_handler,
                   AffineConstraints<double> &constraints)
  {
    constraints.reinit(DoFTools::extract_locally_relevant_dofs(dof_handler));
    DoFTools::make_hanging_node_constraints(dof_handler, constraints);
    VectorTools::interpolate_boundary_values(
      mapping,
      dof_handler,
      0,
      Functions::CosineFunction<dim>(dof_handler.get_fe().n_components()),
      constraints);
    constraints.close();
  }



  // ||A - B||_F / ||A||_F over all ranks, entries of both patterns.
  inline double
  matrix_difference(const TrilinosWrappers::SparseMatrix &reference,
                    const TrilinosWrappers::SparseMatrix &matrix)
  {
    double difference = 0, norm = 0;
    for (const types::global_dof_index row :
         reference.locally_owned_range_indices())
      {
        std::map<types::global_dof_index, double> entries;
        for (auto entry = reference.begin(row); entry != reference.end(row);
             ++entry)
          {
            entries[entry->column()] += entry->value();
            norm += entry->value() * entry->value();
          }
        for (auto entry = matrix.begin(row); entry != matrix.end(row); ++entry)
          entries[entry->column()] -= entry->value();
        for (const auto &[column, value] : entries)
          difference += value * value;
      }
    return std::sqrt(Utilities::MPI::sum(difference, MPI_COMM_WORLD) /
                     Utilities::MPI::sum(norm, MPI_COMM_WORLD));
  }
} // namespace Testing

#endif

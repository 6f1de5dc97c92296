// SPDX-License-Identifier: LGPL-2.1-or-later
// GlobalNZ's plan on the ranks of a distributed mesh with hanging nodes,
// checked on the host: each rank's plan, executed kernel by kernel and
// lane by lane as the device executes it (global_nz_on_host()) and followed
// by the constraint stage, reproduces the rank's HostAssembler assembly.
//
// A rank's DoFs include masters of its hanging nodes that lie on no cell of
// the rank (the far end of a coarse edge whose other fine child is another
// rank's): their rows hold couplings through constraints only, and the
// reduction lists must take nothing from the rank's elements for them. The
// meshes are step-40's: a square refined where the right-hand side jumps,
// FE_Q(2), zero Dirichlet values, constrained DoFs condensed out of the
// pattern. Each plan's reduction arrays are also built as the device builds
// them and compared with the host plan's.

#include <deal.II/base/mpi.h>
#include <deal.II/base/quadrature_lib.h>

#include <deal.II/distributed/grid_refinement.h>
#include <deal.II/distributed/tria.h>

#include <deal.II/dofs/dof_handler.h>
#include <deal.II/dofs/dof_tools.h>

#include <deal.II/fe/fe_q.h>
#include <deal.II/fe/mapping_q.h>

#include <deal.II/grid/grid_generator.h>

#include <deal.II/lac/affine_constraints.h>
#include <deal.II/lac/vector.h>

#include <deal.II/numerics/vector_tools.h>

#include <gpu_assembly/adapter/dof_handler_adapter.h>
#include <gpu_assembly/engine/global_nz/plan.h>
#include <gpu_assembly/engine/host/constraint_stage.h>
#include <gpu_assembly/engine/host/element_stage.h>
#include <gpu_assembly/engine/host_assembler.h>
#include <gpu_assembly/kernels/element_kernels.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <sstream>

#include "distributed_problems.h"
#include "global_nz_host.h"
#include "global_nz_reduction_cases.h"
#include "tests.h"

using namespace dealii;
using namespace GPUAssembly;

namespace
{
  // The first matrix entry where @p values and @p reference differ by more
  // than @p tolerance relative to the largest reference entry, described
  // by its local row and column, both values and whether the row's DoF is
  // a node of one of the rank's elements; empty where none does.
  std::string
  first_difference(const MeshArrays          &arrays,
                   const std::vector<double> &values,
                   const std::vector<double> &reference,
                   const double               tolerance)
  {
    double size = 0;
    for (const double v : reference)
      size = std::max(size, std::abs(v));
    std::vector<bool> on_node(arrays.n_dofs, false);
    for (const index_type dof : arrays.node_dofs)
      on_node[dof] = true;
    for (unsigned int row = 0; row < arrays.n_dofs; ++row)
      for (index_type p = arrays.row_offsets[row];
           p < arrays.row_offsets[row + 1];
           ++p)
        if (std::abs(values[p] - reference[p]) > tolerance * size)
          {
            std::ostringstream text;
            text << "local row " << row << ", column "
                 << arrays.column_indices[p] << ": " << values[p]
                 << " instead of " << reference[p]
                 << (on_node[row] ? "" : " (a DoF on no element of the rank)");
            return text.str();
          }
    return "";
  }



  // step-40's refinement, with a fixed indicator instead of Kelly's
  // estimate of the solution: the cells the curve y = 0.5 + 0.25 sin(4 pi
  // x), where the right-hand side jumps, passes near, weighted by their
  // size, refined and coarsened with step-40's fractions.
  void
  refine_near_curve(parallel::distributed::Triangulation<2> &tria)
  {
    Vector<float> indicator(tria.n_active_cells());
    for (const auto &cell : tria.active_cell_iterators())
      if (cell->is_locally_owned())
        {
          const Point<2> c = cell->center();
          const double   distance =
            std::abs(c[1] - 0.5 - 0.25 * std::sin(4 * numbers::PI * c[0]));
          indicator[cell->active_cell_index()] =
            cell->diameter() * cell->diameter() / (distance + cell->diameter());
        }
    parallel::distributed::GridRefinement::refine_and_coarsen_fixed_number(
      tria,
      indicator,
      0.3,
      0.03);
    tria.execute_coarsening_and_refinement();
  }



  // Each cycle's mesh: the rank's GlobalNZ plan with the device assembler's
  // parameters (and a smaller block of targets, whose blocks end at other
  // rows), executed on the host, against HostAssembler.
  bool
  run(Testing::Checks &checks)
  {
    parallel::distributed::Triangulation<2> tria(MPI_COMM_WORLD);
    GridGenerator::hyper_cube(tria);
    tria.refine_global(5);
    const FE_Q<2>            fe(2);
    const MappingQ<2>        mapping(1);
    const QGauss<2>          quadrature(3);
    DoFHandler<2>            dof_handler(tria);
    LaplaceKernel<2, double> kernel;
    const unsigned int rank = Utilities::MPI::this_mpi_process(MPI_COMM_WORLD);
    bool               all_passed = true;
    // DoFs of a rank on none of its elements, over all cycles.
    std::size_t n_dofs_on_no_node = 0;
    kernel.source                 = 1.;
    for (unsigned int cycle = 0; cycle < 4; ++cycle)
      {
        if (cycle > 0)
          refine_near_curve(tria);
        dof_handler.distribute_dofs(fe);
        AffineConstraints<double> constraints;
        constraints.reinit(
          DoFTools::extract_locally_relevant_dofs(dof_handler));
        DoFTools::make_hanging_node_constraints(dof_handler, constraints);
        VectorTools::interpolate_boundary_values(mapping,
                                                 dof_handler,
                                                 0,
                                                 Functions::ZeroFunction<2>(),
                                                 constraints);
        constraints.close();

        typename DoFHandlerAdapter<2>::AdditionalData data;
        data.keep_constrained_dofs = false;
        const DoFHandlerAdapter<2> adapter(mapping,
                                           dof_handler,
                                           quadrature,
                                           constraints,
                                           data);
        const MeshArrays          &arrays = adapter.get_arrays();

        std::vector<bool> on_node(arrays.n_dofs, false);
        for (const index_type dof : arrays.node_dofs)
          on_node[dof] = true;
        n_dofs_on_no_node += std::count(on_node.begin(), on_node.end(), false);

        const std::vector<double>      nodal(arrays.n_nodes, 0.);
        std::vector<double>            reference_values, reference_rhs;
        const HostAssembler<2, double> reference(arrays);
        reference.assemble(kernel, reference_values, reference_rhs);

        for (const unsigned int targets_per_block : {0u, 96u})
          {
            GlobalNZPlan::Parameters parameters;
            parameters.targets_per_block = targets_per_block;
            GlobalNZPlan plan;
            plan.reinit(arrays, parameters, 1, sizeof(double), 48 * 1024);
            std::vector<double> element_data, values, rhs;
            global_nz_on_host<2>(plan,
                                 arrays,
                                 kernel,
                                 AssemblyOptions(),
                                 nodal,
                                 1,
                                 element_data,
                                 values,
                                 rhs);
            const HostElementStage<double> stage(arrays, 1, AssemblyOptions());
            const HostConstraintStage<double> constraint_stage(arrays);
            constraint_stage.apply<2>(kernel,
                                      stage.data(),
                                      nodal.data(),
                                      values.data(),
                                      rhs.data());

            // The reduction arrays as the device builds them (K by search
            // in the pattern), also for the DoFs on no node of the rank.
            GlobalNZPlan                               partial;
            GPUAssembly::internal::ReductionListSource source;
            partial.reinit(arrays,
                           parameters,
                           1,
                           sizeof(double),
                           48 * 1024,
                           &source);
            all_passed &= Testing::check_same_reduction_arrays(
              checks,
              "rank " + std::to_string(rank) + ", cycle " +
                std::to_string(cycle) + ", " +
                std::to_string(plan.parameters.targets_per_block) +
                " targets per reduction block, built block by block as the "
                "device does",
              plan,
              Testing::reduction_arrays_as_on_device(partial, arrays, source));

            const double error =
              Testing::max_relative_difference(values, reference_values);
            const double rhs_error =
              Testing::max_relative_difference(rhs, reference_rhs);
            const std::string what =
              "rank " + std::to_string(rank) + ", cycle " +
              std::to_string(cycle) + " (" + std::to_string(arrays.n_elements) +
              " elements, " + std::to_string(arrays.n_dofs) + " DoFs), " +
              std::to_string(plan.parameters.targets_per_block) +
              " targets per reduction block: GlobalNZ "
              "executed on the host";
            const std::string first =
              first_difference(arrays, values, reference_values, 1e-13);
            const bool passed = error <= 1e-13 && rhs_error <= 1e-13;
            all_passed &= passed;
            checks.check(error <= 1e-13,
                         what +
                           ": matrix equals HostAssembler's (max "
                           "relative difference " +
                           Testing::scientific(error) + " <= 1e-13)" +
                           (first.empty() ? "" :
                                            "; first difference: " + first));
            checks.check(rhs_error <= 1e-13,
                         what +
                           ": right-hand side equals HostAssembler's "
                           "(max relative difference " +
                           Testing::scientific(rhs_error) + " <= 1e-13)");
          }
      }
    // The case this test is for must occur: without such DoFs it would
    // check nothing a serial mesh does not.
    const std::size_t n_total =
      Utilities::MPI::sum(n_dofs_on_no_node, MPI_COMM_WORLD);
    checks.check(n_total > 0,
                 "the meshes give ranks DoFs on none of their elements (" +
                   std::to_string(n_total) + " over ranks and cycles)");
    return all_passed && n_total > 0;
  }
} // namespace



int
main(int argc, char **argv)
{
  Utilities::MPI::MPI_InitFinalize mpi(argc, argv, 1);
  Testing::Checks                  checks;
  const bool                       passed = run(checks);
  return Utilities::MPI::min(passed ? 1 : 0, MPI_COMM_WORLD) == 1 ?
           EXIT_SUCCESS :
           EXIT_FAILURE;
}

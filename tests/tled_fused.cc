// SPDX-License-Identifier: LGPL-2.1-or-later
// The fused nodal sum of TLED on the host. Its node blocks are a partition:
// every node in exactly one block, each block's elements exactly those
// touching its nodes, stored in the device's (Morton) order and slotted by
// element number, each node's entries the plan's in the plan's order; on a
// structured cube the Morton-ordered blocks are compact (recomputation factor
// printed, and below that of slabs of consecutive node numbers). The fused host
// stepper gives states bitwise equal to the plan's after 300 steps with
// prescribed displacements, loads and damping (the sums are the same additions
// in the same order), on distorted hexahedra, tetrahedra and a refined ball of
// irregular valence, for node blocks of 1, 7, 32 and 128 nodes. The atomic sum
// is refused on the host.

#include <deal.II/grid/grid_generator.h>
#include <deal.II/grid/grid_tools.h>

#include <gpu_assembly/tled/tled_mesh.h>
#include <gpu_assembly/tled/tled_stepper.h>

#include <algorithm>
#include <random>

#include "tests.h"
#include "tled_test_meshes.h"

using namespace GPUAssembly::TLED;

namespace
{
  // Bottom tenth held, top tenth pushed down in z, a sideways load growing
  // with x: every kind of node update, on any mesh.
  BoundaryConditions
  test_conditions(const Model<double> &model, const double ramp_time)
  {
    double lo = model.coordinates[2], hi = lo, width = 0;
    for (unsigned int v = 0; v < model.n_nodes; ++v)
      {
        lo    = std::min(lo, model.coordinates[3 * v + 2]);
        hi    = std::max(hi, model.coordinates[3 * v + 2]);
        width = std::max(width, std::abs(model.coordinates[3 * v]));
      }
    const double       extent = hi - lo;
    BoundaryConditions bc;
    bc.prescribed_components.assign(model.n_nodes, 0);
    bc.prescribed_values.assign(3 * std::size_t(model.n_nodes), 0.);
    bc.external_forces.assign(3 * std::size_t(model.n_nodes), 0.);
    bc.ramp_time = ramp_time;
    for (unsigned int v = 0; v < model.n_nodes; ++v)
      {
        const double z = model.coordinates[3 * v + 2];
        if (z < lo + 0.1 * extent)
          bc.prescribed_components[v] = 7;
        else if (z > hi - 0.1 * extent)
          {
            bc.prescribed_components[v]     = 4;
            bc.prescribed_values[3 * v + 2] = -0.05 * extent;
          }
        bc.external_forces[3 * v + 1] = 0.01 * model.coordinates[3 * v] / width;
      }
    return bc;
  }

  void
  check_blocks(Testing::Checks            &checks,
               const Model<double>        &model,
               const internal::NodeBlocks &blocks,
               const std::string          &name)
  {
    const unsigned int B = blocks.nodes_per_block;
    const std::size_t  s = model.element_stride;
    std::vector<int>   seen(model.n_nodes, 0);
    std::vector<int>   permutation = blocks.element_permutation;
    std::sort(permutation.begin(), permutation.end());
    bool is_permutation = permutation.size() == model.n_elements;
    for (unsigned int e = 0; is_permutation && e < model.n_elements; ++e)
      is_permutation = permutation[e] == int(e);
    bool sorted = true, entries_match = true, touching = true;
    for (unsigned int k = 0; k < blocks.n_blocks; ++k)
      {
        const int e0 = blocks.element_offsets[k],
                  e1 = blocks.element_offsets[k + 1];
        sorted       = sorted &&
                 std::is_sorted(blocks.elements.begin() + e0,
                                blocks.elements.begin() + e1) &&
                 std::adjacent_find(blocks.elements.begin() + e0,
                                    blocks.elements.begin() + e1) ==
                   blocks.elements.begin() + e1 &&
                 e1 - e0 <= int(blocks.max_elements);
        // The block's element numbers by slot: ascending, every slot once.
        std::vector<int> by_slot(e1 - e0, -1);
        for (int q = e0; q < e1; ++q)
          if (blocks.slots[q] >= 0 && blocks.slots[q] < e1 - e0 &&
              blocks.elements[q] >= 0 &&
              blocks.elements[q] < int(model.n_elements))
            by_slot[blocks.slots[q]] =
              blocks.element_permutation[blocks.elements[q]];
        sorted =
          sorted &&
          std::find(by_slot.begin(), by_slot.end(), -1) == by_slot.end() &&
          std::is_sorted(by_slot.begin(), by_slot.end());
        std::vector<bool> used(e1 - e0, false);
        const int         rows =
          (blocks.entry_offsets[k + 1] - blocks.entry_offsets[k]) / B;
        for (unsigned int t = 0; t < B; ++t)
          {
            const int node = blocks.nodes[k * B + t];
            if (node < 0)
              continue;
            ++seen[node];
            const int j0 = model.node_offsets[node],
                      j1 = model.node_offsets[node + 1];
            entries_match &= j1 - j0 <= rows;
            for (int j = 0; j < rows; ++j)
              {
                const int entry =
                  blocks.entries[blocks.entry_offsets[k] + j * B + t];
                if (j >= j1 - j0)
                  {
                    entries_match &= entry == -1;
                    continue;
                  }
                const int p = model.node_entries[j0 + j];
                entries_match &= entry >= 0 && (entry >> 3) < e1 - e0 &&
                                 by_slot[entry >> 3] == int(p % s) &&
                                 (entry & 7) == int(p / (3 * s));
                if (entry >= 0 && (entry >> 3) < e1 - e0)
                  used[entry >> 3] = true;
              }
          }
        touching &= std::all_of(used.begin(), used.end(), [](bool u) {
          return u;
        });
      }
    checks.check(is_permutation,
                 name + ": the device's element order is a permutation");
    checks.check(std::all_of(seen.begin(),
                             seen.end(),
                             [](int c) {
                               return c == 1;
                             }),
                 name + ": every node in exactly one block");
    checks.check(sorted && touching,
                 name + ": each block's elements stored by ascending "
                        "position, without repeats, slotted by ascending "
                        "element number, each touching a node of the block");
    checks.check(entries_match,
                 name + ": each node's entries are its plan entries in the "
                        "plan's order, -1 after the last");
    checks.check(blocks.recomputation_factor >= 1 &&
                   blocks.recomputation_factor ==
                     double(blocks.elements.size()) / model.n_elements,
                 name + ": recomputation factor " +
                   Testing::scientific(blocks.recomputation_factor) +
                   " = computed elements / elements, at least 1");
  }

  void
  check_mesh(Testing::Checks &checks, const Mesh &mesh, const std::string &name)
  {
    const Model<double> model =
      make_model<double>(mesh, Testing::truth_cube_material());
    Integration integration;
    integration.time_step = 0.5 * model.critical_time_step;
    integration.damping   = 2.;
    const BoundaryConditions bc =
      test_conditions(model, 200 * integration.time_step);
    const unsigned int n_steps = 300;

    std::vector<double> plan_prev, plan_curr, prev, curr;
    {
      HostStepper<double> plan(NodalSum::plan);
      plan.reinit(model, bc, integration);
      plan.advance(n_steps);
      plan.get_state(plan_prev, plan_curr);
    }
    double moved = 0;
    for (const double x : plan_curr)
      moved = std::max(moved, std::abs(x));
    checks.check(moved > 0,
                 name + ": the mesh moved (max |u| = " +
                   Testing::scientific(moved) + ")");

    for (const unsigned int B : {1u, 7u, 32u, 128u})
      {
        const std::string what =
          name + ", " + std::to_string(B) + " nodes per block";
        check_blocks(checks, model, internal::make_node_blocks(model, B), what);
        HostStepper<double> fused(NodalSum::fused, B);
        fused.reinit(model, bc, integration);
        fused.advance(n_steps);
        fused.get_state(prev, curr);
        checks.check(prev == plan_prev && curr == plan_curr,
                     what +
                       ": fused states bitwise equal to the plan's after " +
                       std::to_string(n_steps) + " steps (max difference " +
                       Testing::scientific(
                         Testing::max_relative_difference(curr, plan_curr)) +
                       ")");
      }
  }
} // namespace

int
main()
{
  Testing::Checks checks;

  check_mesh(checks, Testing::make_hexahedral_cube(6, 1., 0.25), "hexahedra");
  {
    dealii::Triangulation<3> tria;
    dealii::GridGenerator::subdivided_hyper_rectangle_with_simplices(
      tria,
      {4, 5, 3},
      dealii::Point<3>(),
      dealii::Point<3>(1, 1.2, 0.8));
    dealii::GridTools::distort_random(0.2, tria, true);
    check_mesh(checks, make_mesh(tria), "tetrahedra");
  }
  {
    // Vertices shared by 3 to 8 hexahedra inside.
    dealii::Triangulation<3> tria;
    dealii::GridGenerator::hyper_ball(tria);
    tria.refine_global(1);
    dealii::GridTools::distort_random(0.15, tria, true);
    check_mesh(checks, make_mesh(tria), "ball");
  }

  // Compact blocks: Morton bricks against slabs of consecutive node numbers
  // (the cube's numbering runs along x, then y, then z).
  {
    const Mesh          mesh = Testing::make_hexahedral_cube(20, 1.);
    const Model<double> model =
      make_model<double>(mesh, Testing::truth_cube_material());
    for (const unsigned int B : {64u, 128u, 256u})
      {
        const internal::NodeBlocks blocks =
          internal::make_node_blocks(model, B);
        // Slabs: the elements touching nodes k B .. (k + 1) B - 1.
        std::size_t slab_elements = 0;
        for (unsigned int first = 0; first < model.n_nodes; first += B)
          {
            std::vector<int> list;
            for (unsigned int v = first; v < std::min(first + B, model.n_nodes);
                 ++v)
              for (int j = model.node_offsets[v]; j < model.node_offsets[v + 1];
                   ++j)
                list.push_back(model.node_entries[j] % model.element_stride);
            std::sort(list.begin(), list.end());
            slab_elements +=
              std::unique(list.begin(), list.end()) - list.begin();
          }
        const double slab = double(slab_elements) / model.n_elements;
        std::cout << "      20^3 cube, " << B
                  << " nodes per block: recomputation factor "
                  << Testing::scientific(blocks.recomputation_factor)
                  << " (slabs of node numbers: " << Testing::scientific(slab)
                  << ")" << std::endl;
        checks.check(blocks.recomputation_factor < slab,
                     "20^3 cube, " + std::to_string(B) +
                       " nodes per block: Morton blocks recompute fewer "
                       "elements than slabs of consecutive node numbers");
      }
  }

  checks.check_throws<dealii::ExceptionBase>(
    []() {
      HostStepper<double> stepper(NodalSum::atomic);
    },
    "device only",
    "the host stepper refuses the atomic nodal sum, naming the device");

  return checks.exit_code();
}

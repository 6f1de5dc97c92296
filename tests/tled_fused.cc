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
// irregular valence, for node blocks of 1, 7, 32 and 128 nodes. The same for
// the element-block sum, for element blocks of 1, 7, 32 and 256 elements: its
// blocks hold every element once (Morton order), every node is an interior
// node of the one block holding all its elements or a border node, with the
// plan's entries in the plan's order, every border entry is written once by
// the block of its element, and larger blocks leave fewer border entries
// (printed for a 20^3 cube). The atomic sum is refused on the host.

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
  check_element_blocks(Testing::Checks               &checks,
                       const Model<double>           &model,
                       const internal::ElementBlocks &blocks,
                       const std::string             &name)
  {
    const int         E           = blocks.elements_per_block;
    const std::size_t s           = model.element_stride;
    std::vector<int>  permutation = blocks.element_permutation;
    std::sort(permutation.begin(), permutation.end());
    bool is_permutation = permutation.size() == model.n_elements;
    for (unsigned int e = 0; is_permutation && e < model.n_elements; ++e)
      is_permutation = permutation[e] == int(e);
    checks.check(is_permutation &&
                   blocks.n_blocks == (model.n_elements + E - 1) / E,
                 name + ": the element blocks hold every element once");
    if (!is_permutation)
      return;
    std::vector<int> position(model.n_elements);
    for (unsigned int p = 0; p < model.n_elements; ++p)
      position[blocks.element_permutation[p]] = int(p);
    // Whether @p entry of block k stands for plan entry p.
    const auto is_entry = [&](const int k, const int entry, const int p) {
      const int slot = entry >> 3;
      return entry >= 0 && slot < E && k * E + slot < int(model.n_elements) &&
             blocks.element_permutation[k * E + slot] == int(p % s) &&
             (entry & 7) == int(p / (3 * s));
    };

    std::vector<int> seen(model.n_nodes, 0);
    bool             interior_ok = true, entries_ok = true;
    for (unsigned int k = 0; k < blocks.n_blocks; ++k)
      for (int i = blocks.interior_offsets[k];
           i < blocks.interior_offsets[k + 1];
           ++i)
        {
          const int node = blocks.interior_nodes[i];
          ++seen[node];
          const int j0 = model.node_offsets[node],
                    j1 = model.node_offsets[node + 1];
          const int q0 = blocks.interior_entry_offsets[i],
                    q1 = blocks.interior_entry_offsets[i + 1];
          entries_ok &= q1 - q0 == j1 - j0;
          for (int j = j0; j < j1 && q1 - q0 == j1 - j0; ++j)
            {
              const int p = model.node_entries[j];
              interior_ok &= position[p % s] / E == int(k);
              entries_ok &=
                is_entry(k, blocks.interior_entries[q0 + j - j0], p);
            }
        }
    bool border_ok = true;
    for (std::size_t b = 0; b < blocks.border_nodes.size(); ++b)
      {
        const int node = blocks.border_nodes[b];
        ++seen[node];
        const int j0 = model.node_offsets[node],
                  j1 = model.node_offsets[node + 1];
        border_ok &=
          blocks.border_entry_offsets[b + 1] - blocks.border_entry_offsets[b] ==
          j1 - j0;
        bool several = j1 == j0;
        for (int j = j0 + 1; j < j1; ++j)
          several |= position[model.node_entries[j] % s] / E !=
                     position[model.node_entries[j0] % s] / E;
        border_ok &= several;
      }
    checks.check(std::all_of(seen.begin(),
                             seen.end(),
                             [](int c) {
                               return c == 1;
                             }),
                 name + ": every node once, interior or border");
    checks.check(interior_ok && border_ok,
                 name + ": interior nodes have all their elements in their "
                        "block, border nodes in several");
    checks.check(entries_ok,
                 name + ": each interior node's entries are its plan entries "
                        "in the plan's order");

    // Each border entry written once, by the block of its element.
    std::vector<int> written(blocks.n_border_entries, 0);
    bool             copies_ok = true;
    for (unsigned int k = 0; k < blocks.n_blocks; ++k)
      for (int c = blocks.copy_offsets[k]; c < blocks.copy_offsets[k + 1]; ++c)
        {
          const int target = blocks.copy_targets[c];
          if (target < 0 || target >= int(blocks.n_border_entries))
            {
              copies_ok = false;
              continue;
            }
          ++written[target];
          copies_ok &=
            c == blocks.copy_offsets[k] || blocks.copy_targets[c - 1] < target;
          const std::size_t b =
            std::upper_bound(blocks.border_entry_offsets.begin(),
                             blocks.border_entry_offsets.end(),
                             target) -
            blocks.border_entry_offsets.begin() - 1;
          const int node = blocks.border_nodes[b];
          const int p = model.node_entries[model.node_offsets[node] + target -
                                           blocks.border_entry_offsets[b]];
          copies_ok &= is_entry(k, blocks.copy_sources[c], p);
        }
    checks.check(copies_ok && std::all_of(written.begin(),
                                          written.end(),
                                          [](int c) {
                                            return c == 1;
                                          }),
                 name + ": every border entry written once, by its "
                        "element's block, in ascending positions");
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
    for (const unsigned int E : {1u, 7u, 32u, 256u})
      {
        const std::string what =
          name + ", " + std::to_string(E) + " elements per block";
        check_element_blocks(checks,
                             model,
                             internal::make_element_blocks(model, E),
                             what);
        HostStepper<double> blocked(NodalSum::element_blocks,
                                    default_nodes_per_block,
                                    E);
        blocked.reinit(model, bc, integration);
        blocked.advance(n_steps);
        blocked.get_state(prev, curr);
        checks.check(prev == plan_prev && curr == plan_curr,
                     what +
                       ": element-block states bitwise equal to the plan's "
                       "after " +
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

  // Larger element blocks: fewer entries through the border-force array.
  {
    const Mesh          mesh = Testing::make_hexahedral_cube(20, 1.);
    const Model<double> model =
      make_model<double>(mesh, Testing::truth_cube_material());
    double previous = 1;
    for (const unsigned int E : {64u, 256u, 512u})
      {
        const double fraction =
          internal::make_element_blocks(model, E).border_fraction;
        std::cout << "      20^3 cube, " << E
                  << " elements per block: border entries "
                  << Testing::scientific(fraction) << " of all" << std::endl;
        checks.check(fraction > 0 && fraction < previous,
                     "20^3 cube, " + std::to_string(E) +
                       " elements per block: fewer border entries than "
                       "smaller blocks");
        previous = fraction;
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

// SPDX-License-Identifier: LGPL-2.1-or-later
// SharedNZ's plan, checked on the host: parts, blocks, slots and the
// node-pair lists of every owned node, and the plan executed on the host
// (block by block, lane by lane) reproducing the reference assembly, with
// and without node pairs; its automatic parameters.

#include <gpu_assembly/adapter/dof_handler_adapter.h>
#include <gpu_assembly/engine/host/element_stage.h>
#include <gpu_assembly/engine/host_assembler.h>
#include <gpu_assembly/engine/packing.h>
#include <gpu_assembly/engine/shared_nz/layout.h>
#include <gpu_assembly/engine/shared_nz/plan.h>
#include <gpu_assembly/kernels/element_kernels.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <tuple>

#include "rule_checks.h"
#include "shared_nz_host.h"
#include "test_problems.h"
#include "tests.h"

using namespace dealii;
using namespace GPUAssembly;

// Linear elasticity's accumulated node pairs (kernel_accumulates_node_pairs):
// the sums of accumulate_node_pair() over elements, finished, equal the
// sums of the blocks add_node_pair() adds, for pairs in both orders.
void
test_accumulated_node_pairs(Testing::Checks &checks)
{
  Testing::TestProblem<3> problem;
  Testing::setup_problem(problem,
                         true,
                         1,
                         3,
                         Testing::ConstraintKind::homogeneous,
                         false,
                         2);
  const DoFHandlerAdapter<3>        adapter = Testing::make_adapter(problem);
  const MeshArrays                 &arrays  = adapter.get_arrays();
  const HostElementStage<double>    stage(arrays, 0, AssemblyOptions());
  LinearElasticityKernel<3, double> kernel;
  kernel.lambda = 2.5;
  kernel.mu     = 0.75;
  static_assert(kernel_accumulates_node_pairs<decltype(kernel)>::value);
  double             max_error = 0, max_entry = 0;
  const unsigned int n_en = arrays.layout.n_nodes;
  for (unsigned int a = 0; a < n_en; ++a)
    for (unsigned int b = 0; b < n_en; ++b)
      {
        double sum[3][3] = {}, blocks[3][3] = {}, vector[3] = {};
        // Eight elements, as a list of a node pair sums a few.
        for (unsigned int e = 0; e < 8 && e < arrays.n_elements; ++e)
          {
            const double *supplemental =
              arrays.supplemental.data() + e * arrays.n_supplemental;
            add_node_pair<3,
                          double,
                          decltype(kernel),
                          ElementSpecialization::general,
                          true>(kernel,
                                stage.data(),
                                supplemental,
                                1,
                                a,
                                b,
                                false,
                                sum,
                                vector);
            add_node_pair<3>(kernel,
                             stage.data(),
                             supplemental,
                             1,
                             a,
                             b,
                             false,
                             blocks,
                             vector);
          }
        kernel.finish_node_pairs(sum);
        for (unsigned int i = 0; i < 3; ++i)
          for (unsigned int j = 0; j < 3; ++j)
            {
              max_error =
                std::max(max_error, std::abs(sum[i][j] - blocks[i][j]));
              max_entry = std::max(max_entry, std::abs(blocks[i][j]));
            }
      }
  Testing::check_rules(
    checks,
    "linear elasticity: accumulated node pairs",
    {{max_entry > 0, "the blocks compared are not zero"},
     {max_error <= 1e-14 * max_entry,
      "finished, they equal the sum of their blocks (largest difference " +
        Testing::scientific(max_error) + " of entries up to " +
        Testing::scientific(max_entry) + ")"}});
}



// Laplace with the diagonal entries of an element's first @p zeroed nodes
// set to zero, and, where @p diffusion is 0, no matrix at all: where a
// constrained diagonal entry is zero, the condensation puts the element's
// mean absolute diagonal there, its l1 norm / n_dofs where that is zero
// too, and 1 where that is also zero (zeroed = all nodes). The bundled
// kernels have no zero diagonal entries; this one takes node pairs through
// each of these paths.
template <int dim>
struct ZeroDiagonalKernel
{
  static constexpr unsigned int n_components     = 1;
  static constexpr bool         is_symmetric     = true;
  static constexpr bool         reads_nodal_data = false;
  static constexpr bool         node_pair_form   = true;

  LaplaceKernel<dim, double> laplace;
  unsigned int               zeroed = 1;

  template <class Element, class Output>
  void
  operator()(const Element &element, const Output &output) const
  {
    laplace(element, output);
    for (unsigned int a = 0; a < element.n_nodes && a < zeroed; ++a)
      if constexpr (output_may_discard_rows<Output>::value)
        {
          if (output.keeps_rows(a))
            output.matrix_entry(a, a) = 0;
        }
      else
        output.matrix_entry(a, a) = 0;
  }

  template <class Element>
  void
  add_node_pair(const Element     &element,
                const unsigned int a,
                const unsigned int b,
                double (&matrix)[1][1]) const
  {
    double block[1][1] = {{0}};
    laplace.add_node_pair(element, a, b, block);
    matrix[0][0] += a == b && a < zeroed ? 0. : block[0][0];
  }

  template <class Element>
  void
  add_node_vector(const Element     &element,
                  const unsigned int a,
                  double (&vector)[1]) const
  {
    laplace.add_node_vector(element, a, vector);
  }
};



// The elasticity kernel the plans are assembled with.
template <int dim>
LinearElasticityKernel<dim, double>
plan_test_elasticity()
{
  LinearElasticityKernel<dim, double> elasticity;
  elasticity.lambda        = 3.;
  elasticity.mu            = 1.25;
  elasticity.body_force[0] = 1.;
  return elasticity;
}



// Compact targets (SharedNZPlan::Parameters::compact_targets) against the
// full ones of the same plan: the plan is otherwise the same, every
// record decodes to the row's full targets, the records are smaller (the
// test problems number their DoFs component by component), and the host
// version stores bitwise the same values and right-hand side.
template <int dim>
void
test_compact_targets(Testing::Checks                &checks,
                     const std::string              &name,
                     const MeshArrays               &arrays,
                     const SharedNZPlan             &plan,
                     const SharedNZPlan::Parameters &parameters,
                     const std::size_t               limit,
                     const bool                      vector_valued)
{
  SharedNZPlan::Parameters compact_parameters = parameters;
  compact_parameters.compact_targets          = true;
  SharedNZPlan compact;
  compact.reinit(arrays, compact_parameters, dim, sizeof(double), limit);
  const unsigned int n_c = plan.n_components;
  const bool         same_plan =
    compact.sources == plan.sources && compact.targets == plan.targets &&
    compact.slice_offsets == plan.slice_offsets &&
    compact.target_offsets == plan.target_offsets &&
    compact.elements == plan.elements &&
    compact.block_supplemental == plan.block_supplemental &&
    plan.compact_targets.empty() && plan.compact_target_offsets.empty() &&
    compact.compact_target_offsets.size() == plan.target_offsets.size();

  // Each warp's rows, as the closing entries of its first lane give them,
  // decoded from the records and compared with the full targets.
  bool decodes = same_plan, lanes_decode = same_plan, records_end = same_plan;
  std::size_t n_rows = 0, n_missing_runs = 0;
  for (std::size_t slice = 0;
       same_plan && slice + 1 < plan.slice_offsets.size();
       ++slice)
    {
      constexpr unsigned int chunk = SharedNZLayout::chunk;
      const std::size_t      begin = plan.slice_offsets[slice];
      const std::size_t columns = (plan.slice_offsets[slice + 1] - begin) / 32;
      std::size_t       full    = plan.target_offsets[slice];
      std::size_t       record  = compact.compact_target_offsets[slice];
      for (std::size_t j = 0; j < columns; ++j)
        {
          const std::uint16_t e =
            plan.sources[begin + (j / chunk) * 32 * chunk + j % chunk];
          if (e < SharedNZLayout::end_flag)
            continue;
          ++n_rows;
          const SharedNZLayout::RowClose row =
            SharedNZLayout::decode_row_close(e);
          const index_type *const records = compact.compact_targets.data();
          for (unsigned int l = 0; l < row.n_lists; ++l)
            for (unsigned int c1 = 0; c1 < n_c; ++c1)
              for (unsigned int c2 = 0; c2 < n_c; ++c2)
                decodes &=
                  SharedNZLayout::compact_block_target(records + record,
                                                       c1,
                                                       c2,
                                                       l,
                                                       row,
                                                       n_c) ==
                  plan
                    .targets[full +
                             SharedNZLayout::block_target(c1, c2, l, row, n_c)];
          for (unsigned int l = 0; l < row.n_diagonal; ++l)
            for (unsigned int c1 = 0; c1 < n_c; ++c1)
              decodes &=
                records[record +
                        SharedNZLayout::compact_rhs_target(c1, l, n_c)] ==
                plan
                  .targets[full + SharedNZLayout::rhs_target(c1, l, row, n_c)];
          // Each device lane's targets (compact_lane_targets()).
          for (unsigned int l = 0; l < 32; ++l)
            {
              index_type target[3][3];
              if (n_c != 3 && n_c != 2 && n_c != 1)
                lanes_decode = false;
              const auto lane = [&](const auto n) {
                constexpr unsigned int nc = decltype(n)::value;
                index_type             t[nc][nc];
                SharedNZLayout::compact_lane_targets<nc>(
                  records + record,
                  row,
                  l,
                  [](const index_type *address) {
                    return *address;
                  },
                  t);
                for (unsigned int c1 = 0; c1 < nc; ++c1)
                  for (unsigned int i = 0; i < nc; ++i)
                    target[c1][i] = t[c1][i];
              };
              if (n_c == 1)
                lane(std::integral_constant<unsigned int, 1>());
              else if (n_c == 2)
                lane(std::integral_constant<unsigned int, 2>());
              else
                lane(std::integral_constant<unsigned int, 3>());
              const unsigned int width = n_c * row.n_lists;
              for (unsigned int c1 = 0; c1 < n_c; ++c1)
                for (unsigned int i = 0; i < n_c; ++i)
                  lanes_decode &=
                    target[c1][i] ==
                    (l + 32 * i < width ?
                       plan.targets
                         [full +
                          SharedNZLayout::block_target(c1, 0, 0, row, n_c) + l +
                          32 * i] :
                       -1);
            }
          const std::size_t length = records[record];
          for (std::size_t i =
                 record + SharedNZLayout::compact_header(row, n_c);
               i < record + length;
               ++i)
            n_missing_runs += records[i] == SharedNZLayout::no_target_run;
          full += SharedNZLayout::row_targets(row, n_c);
          record += length;
        }
      records_end &= full == plan.target_offsets[slice + 1] &&
                     record == compact.compact_target_offsets[slice + 1];
    }

  const LinearElasticityKernel<dim, double> elasticity =
    plan_test_elasticity<dim>();
  LaplaceKernel<dim, double> laplace;
  const std::vector<double>  nodal(arrays.nodal_coordinates);
  std::vector<double>        values, rhs, compact_values, compact_rhs;
  // The host version with each plan: full, then compact targets.
  const auto run = [&](const auto &kernel) {
    for (const bool with_records : {false, true})
      shared_nz_on_host<dim>(with_records ? compact : plan,
                             arrays,
                             kernel,
                             AssemblyOptions(),
                             nodal,
                             with_records ? compact_values : values,
                             with_records ? compact_rhs : rhs);
  };
  if (vector_valued)
    run(elasticity);
  else
    run(laplace);
  const bool bitwise =
    values.size() == compact_values.size() &&
    std::memcmp(values.data(),
                compact_values.data(),
                values.size() * sizeof(double)) == 0 &&
    rhs.size() == compact_rhs.size() &&
    std::memcmp(rhs.data(), compact_rhs.data(), rhs.size() * sizeof(double)) ==
      0;
  Testing::check_rules(
    checks,
    name + ", compact targets: " + std::to_string(n_rows) + " rows in " +
      std::to_string(compact.compact_targets.size()) + " entries against " +
      std::to_string(plan.targets.size()) + ", " +
      std::to_string(n_missing_runs) + " runs without nonzeros",
    {{same_plan,
      "the plan is the same but for its compact records (and a plan "
      "without compact_targets has none)"},
     {decodes && n_rows > 0, "every record decodes to its row's full targets"},
     {lanes_decode,
      "every device lane's targets (compact_lane_targets()) are the full "
      "targets of its positions, -1 past the row"},
     {records_end, "each warp's records end where the next warp's begin"},
     {compact.compact_targets.size() < plan.targets.size(),
      "the records take fewer entries than the full targets"},
     {bitwise,
      "the host version stores bitwise the same values and right-hand "
      "side with compact targets"}});

  SharedNZPlan::Parameters without_pairs = compact_parameters;
  without_pairs.node_pairs               = false;
  checks.check_throws<ExcUnsupportedInput>(
    [&] {
      SharedNZPlan refused;
      refused.reinit(arrays, without_pairs, dim, sizeof(double), limit);
    },
    "are read by the node-pair reduction only",
    name + ": compact targets without node pairs are refused");
}



template <int dim>
void
test_shared_nz_plan(Testing::Checks      &checks,
                    const bool            simplex,
                    const bool            vector_valued,
                    const NodePartitioner partitioner,
                    const bool            one_point  = false,
                    const bool            node_pairs = false)
{
  Testing::TestProblem<dim> problem;
  Testing::setup_problem(problem,
                         simplex,
                         1,
                         vector_valued ? dim : 1,
                         Testing::ConstraintKind::inhomogeneous,
                         true,
                         6);
  // One point in 3D: the order of an element's nodes is free, and the plan
  // takes each element's owned nodes first.
  if (one_point)
    problem.quadrature = std::make_unique<QGaussSimplex<dim>>(1);
  const DoFHandlerAdapter<dim> adapter = Testing::make_adapter(problem);
  const MeshArrays            &arrays  = adapter.get_arrays();
  const std::string            name =
    problem.name() +
    (partitioner == NodePartitioner::metis         ? " (METIS parts" :
     partitioner == NodePartitioner::greedy_growth ? " (grown parts" :
                                                     " (greedy union parts") +
    (one_point ? ", one quadrature point, nodes reordered" : "") +
    (node_pairs ? ", node pairs)" : ")");
  // A small limit so that the mesh needs many parts.
  // Small enough that the mesh needs many parts, large enough for the 32
  // tetrahedra around a node of these meshes.
  // With node pairs a 2D block holds S(e) of a triangle (7 numbers)
  // instead of its rows: a smaller limit for as many parts.
  const std::size_t limit =
    (vector_valued ? (node_pairs && dim == 2 ? 6 : 120) : (dim == 2 ? 3 : 24)) *
    1024;
  SharedNZPlan::Parameters parameters;
  parameters.partitioner       = partitioner;
  parameters.threads_per_block = 64;
  parameters.node_pairs        = node_pairs;
  SharedNZPlan plan;
  plan.reinit(arrays, parameters, dim, sizeof(double), limit);

  // Parts: each node in exactly one part, every block within the limit.
  std::vector<unsigned int> parts =
    partition_nodes(arrays,
                    partitioner,
                    dim,
                    sizeof(double),
                    limit,
                    parameters.threads_per_block,
                    node_pairs);
  std::vector<int> owner_seen(arrays.n_nodes, 0);
  for (const index_type n : plan.owned_nodes)
    ++owner_seen[n];
  bool blocks_fit = true;
  for (unsigned int k = 0; k < plan.n_blocks; ++k)
    blocks_fit &= plan.shared_bytes(k, sizeof(double)) <= limit;
  Testing::check_rules(checks,
                       name + ": " + std::to_string(plan.n_blocks) + " parts",
                       {{parts.size() == arrays.n_nodes,
                         "partition_nodes() gives every node a part"},
                        {plan.n_blocks > 1, "the mesh needs several parts"},
                        {Testing::each_once(owner_seen),
                         "each node is owned by exactly one block"},
                        {blocks_fit && plan.max_shared_bytes <= limit,
                         "every block fits the limit (largest " +
                           std::to_string(plan.max_shared_bytes) +
                           " <= " + std::to_string(limit) +
                           " bytes of shared memory)"}});

  // Each block's S(e) where the kernel copies it 16 bytes at a time: with
  // node pairs padded to SharedNZLayout::staged_size() numbers, every block
  // starting at a multiple of 4 (16 bytes in float, 32 in double); without,
  // column by column and unpadded.
  {
    bool aligned =
      plan.supplemental_offsets.size() == plan.n_blocks + 1 &&
      plan.supplemental_offsets.back() == plan.block_supplemental.size();
    for (unsigned int k = 0; k < plan.n_blocks && aligned; ++k)
      {
        const std::size_t n_k =
          plan.element_offsets[k + 1] - plan.element_offsets[k];
        const std::size_t size =
          plan.supplemental_offsets[k + 1] - plan.supplemental_offsets[k];
        aligned &=
          node_pairs ?
            plan.supplemental_offsets[k] % 4 == 0 &&
              size == SharedNZLayout::staged_size(n_k, plan.n_supplemental) :
            size == n_k * plan.n_supplemental;
      }
    checks.check(aligned,
                 name + ": each block's S(e) in place for the kernel's " +
                   (node_pairs ? "16-byte copies" : "element threads"));
  }

  // Node pairs: no element has slots, and the elements without constraints
  // come first in each block, those with them (which carry Dirichlet data)
  // last. On simplices,
  // whose S(e) is smaller than the rows a block keeps of them, blocks hold
  // more elements than those of the same limit without node pairs, so
  // fewer elements are staged twice than computed twice without (checked
  // in 3D: the 2D test mesh is too small for parts to tell); a
  // hexahedron's S(e) at 8 points (200 numbers) is larger, and node pairs
  // do not pay there.
  if (node_pairs)
    {
      SharedNZPlan::Parameters slot_parameters = parameters;
      slot_parameters.node_pairs               = false;
      SharedNZPlan slot_plan;
      slot_plan.reinit(arrays, slot_parameters, dim, sizeof(double), limit);
      const unsigned int n_en       = plan.n_nodes_per_element;
      bool               free_first = true;
      std::size_t        n_free     = 0;
      for (unsigned int k = 0; k < plan.n_blocks; ++k)
        {
          const std::size_t  base = plan.element_offsets[k];
          const unsigned int n_k  = plan.element_offsets[k + 1] - base;
          n_free += plan.n_free_elements[k];
          for (unsigned int j = 0; j < n_k; ++j)
            {
              const bool is_free = int(j) < plan.n_free_elements[k];
              free_first &=
                is_free != bool(plan.block_has_constraints[base + j]);
              for (unsigned int a = 0; a < n_en; ++a)
                free_first &= plan.block_slots[base * n_en + a * n_k + j] ==
                              SharedNZLayout::no_slot;
            }
          free_first &= plan.n_slots[k] == 0;
        }
      Testing::check_rules(
        checks,
        name + ": " + std::to_string(n_free) + " of " +
          std::to_string(plan.elements.size()) + " staged elements",
        {{free_first,
          "elements without constraints come first in each block, and no "
          "element has slots"},
         {n_free > 0 && n_free < plan.elements.size(),
          "the mesh has staged elements with and without constraints"},
         {!simplex || dim == 2 ||
            plan.recomputation_factor < slot_plan.recomputation_factor,
          "on 3D simplices fewer elements are staged twice than computed "
          "twice without node pairs (" +
            Testing::scientific(plan.recomputation_factor) + " against " +
            Testing::scientific(slot_plan.recomputation_factor) + ")"}});
    }

  // Reordered: some element's first local node is not its own first node,
  // and every element's owned nodes come first.
  if (one_point && !node_pairs)
    {
      std::size_t reordered   = 0;
      bool        owned_first = true;
      for (unsigned int k = 0; k < plan.n_blocks; ++k)
        {
          const std::size_t  base = plan.element_offsets[k];
          const unsigned int n_k  = plan.element_offsets[k + 1] - base;
          const unsigned int n_en = plan.n_nodes_per_element;
          for (unsigned int j = 0; j < n_k; ++j)
            {
              const std::size_t e          = plan.elements[base + j];
              bool              seen_other = false;
              for (unsigned int a = 0; a < n_en; ++a)
                {
                  const index_type node =
                    plan.halo_nodes[plan.halo_offsets[k] +
                                    plan.block_connectivity[base * n_en +
                                                            a * n_k + j]];
                  reordered += a == 0 && node != arrays.connectivity[e * n_en];
                  const bool owned = std::binary_search(
                    plan.owned_nodes.begin() + plan.owned_offsets[k],
                    plan.owned_nodes.begin() + plan.owned_offsets[k + 1],
                    node);
                  owned_first &= !(owned && seen_other) ||
                                 plan.block_has_constraints[base + j];
                  seen_other |= !owned;
                }
            }
        }
      Testing::check_rules(
        checks,
        name + ": nodes reordered",
        {{reordered > 0,
          "some elements are reordered (" + std::to_string(reordered) + ")"},
         {owned_first, "every element's owned nodes come first"}});
    }

  // Reduction: decode every source back to (element, row node, column
  // node). Each such triple of the mesh must be summed exactly once, in
  // the block owning the row node, under the list of that node pair; each
  // nonzero and each right-hand-side row is stored exactly once.
  const unsigned int        n_en = plan.n_nodes_per_element;
  const unsigned int        n_ed = plan.n_dofs_per_element;
  const unsigned int        n_c  = plan.n_components;
  std::vector<unsigned int> block_of_node(arrays.n_nodes);
  for (unsigned int k = 0; k < plan.n_blocks; ++k)
    for (index_type i = plan.owned_offsets[k]; i < plan.owned_offsets[k + 1];
         ++i)
      block_of_node[plan.owned_nodes[i]] = k;
  std::vector<int> triple_seen(std::size_t(arrays.n_elements) * n_en * n_en, 0);
  std::vector<int> target_seen(plan.n_nonzeros, 0), rhs_seen(plan.n_dofs, 0);
  bool             lists_right = true;
  // Lanes of a warp that close halved lists, once per row each.
  std::size_t        n_halved_lists = 0;
  const unsigned int T              = parameters.threads_per_block;
  for (unsigned int k = 0; k < plan.n_blocks; ++k)
    {
      const std::size_t  base    = plan.element_offsets[k];
      const unsigned int n_k     = plan.element_offsets[k + 1] - base;
      const unsigned int n_slots = plan.n_slots[k];
      // With node pairs every source is a node pair.
      const unsigned int n_pairs = node_pairs ? n_k * n_en * n_en : 0;
      std::vector<std::pair<unsigned int, unsigned int>> slot_owner(n_slots);
      for (unsigned int a = 0; a < n_en; ++a)
        for (unsigned int j = 0; j < n_k; ++j)
          if (const auto s = plan.block_slots[base * n_en + a * n_k + j];
              s != SharedNZLayout::no_slot)
            slot_owner[s] = {j, a};
      for (unsigned int lane = 0; lane < T; ++lane)
        {
          const std::size_t  slice = std::size_t(k) * (T / 32) + lane / 32;
          const unsigned int n_columns =
            (plan.slice_offsets[slice + 1] - plan.slice_offsets[slice]) / 32;
          constexpr unsigned int     chunk = SharedNZLayout::chunk;
          const unsigned int         l     = lane % 32;
          std::vector<std::uint16_t> pending;
          // The first target of the row the lane walks, in its warp's.
          std::size_t row_first = plan.target_offsets[slice];
          for (unsigned int column = 0; column < n_columns; ++column)
            {
              const std::uint16_t entry =
                plan.sources[plan.slice_offsets[slice] +
                             ((column / chunk) * 32 + lane % 32) * chunk +
                             column % chunk];
              if (entry == 0)
                continue;
              if (entry < SharedNZLayout::end_flag)
                {
                  pending.push_back(entry);
                  continue;
                }
              // Every lane of the warp closes the row; those after its
              // last list hold none, and the lane of a halved list's
              // second half adds to the list of its slot.
              const SharedNZLayout::RowClose row =
                SharedNZLayout::decode_row_close(entry);
              const std::size_t first = row_first;
              row_first += SharedNZLayout::row_targets(row, n_c);
              lists_right &= row.n_halved <= row.n_diagonal &&
                             row.n_diagonal <= row.n_lists &&
                             row.n_lists + row.n_halved <= 32;
              n_halved_lists += l < row.n_halved;
              const SharedNZLayout::RowLane role =
                SharedNZLayout::row_lane(l, row);
              if (role.slot >= row.n_lists)
                {
                  lists_right &= pending.empty();
                  continue;
                }
              const bool diagonal = role.slot < row.n_diagonal;
              const auto block    = [&](const unsigned int c1,
                                     const unsigned int c2) {
                return first + SharedNZLayout::block_target(c1,
                                                            c2,
                                                            role.slot,
                                                            row,
                                                            n_c);
              };
              const auto right_hand_side = [&](const unsigned int c1) {
                return first +
                       SharedNZLayout::rhs_target(c1, role.slot, row, n_c);
              };
              index_type row_node = -1, column_node = -1;
              lists_right &= !pending.empty();
              for (const std::uint16_t source : pending)
                {
                  const unsigned int index = (source - 1) >> 1;
                  // A node pair (its element, row node and column node),
                  // or a slot (whose element and row node the slot says)
                  // and a column node.
                  unsigned int j, a, c;
                  if (index < n_pairs)
                    {
                      const SharedNZLayout::NodePair pair =
                        SharedNZLayout::decode_node_pair(index, n_en);
                      j = pair.element;
                      a = pair.row_node;
                      c = pair.column_node;
                    }
                  else
                    {
                      const unsigned int s = (index - n_pairs) / n_en;
                      c                    = (index - n_pairs) % n_en;
                      lists_right &= s < n_slots;
                      std::tie(j, a) = slot_owner[s < n_slots ? s : 0];
                    }
                  const std::size_t e = plan.elements[base + j];
                  // The plan's local nodes (reordered or not) through its
                  // block connectivity, and their places in the element.
                  const auto global = [&](const unsigned int local) {
                    return plan.halo_nodes
                      [plan.halo_offsets[k] +
                       plan.block_connectivity[base * n_en + local * n_k + j]];
                  };
                  const index_type n = global(a), m = global(c);
                  const auto       own = [&](const index_type node) {
                    unsigned int i = 0;
                    while (i + 1 < n_en &&
                           arrays.connectivity[e * n_en + i] != node)
                      ++i;
                    return i;
                  };
                  lists_right &= arrays.connectivity[e * n_en + own(n)] == n &&
                                 arrays.connectivity[e * n_en + own(m)] == m;
                  const unsigned int a0 = own(n), c0 = own(m);
                  lists_right &= bool((source - 1) & 1) == diagonal &&
                                 (a == c) == diagonal &&
                                 block_of_node[n] == k &&
                                 (row_node < 0 || row_node == n) &&
                                 (column_node < 0 || column_node == m);
                  row_node    = n;
                  column_node = m;
                  ++triple_seen[(e * n_en + a0) * n_en + c0];
                  // The list's nonzeros are those of this element's block.
                  for (unsigned int c1 = 0; c1 < n_c; ++c1)
                    for (unsigned int c2 = 0; c2 < n_c; ++c2)
                      lists_right &=
                        plan.targets[block(c1, c2)] ==
                        arrays.nonzero_map[(e * n_ed + a0 * n_c + c1) * n_ed +
                                           c0 * n_c + c2];
                  if (diagonal)
                    for (unsigned int c1 = 0; c1 < n_c; ++c1)
                      lists_right &= plan.targets[right_hand_side(c1)] ==
                                     arrays.location[e * n_ed + a0 * n_c + c1];
                }
              if (!role.second_half)
                {
                  for (unsigned int c1 = 0; c1 < n_c; ++c1)
                    for (unsigned int c2 = 0; c2 < n_c; ++c2)
                      if (plan.targets[block(c1, c2)] >= 0)
                        ++target_seen[plan.targets[block(c1, c2)]];
                  if (diagonal)
                    for (unsigned int c1 = 0; c1 < n_c; ++c1)
                      ++rhs_seen[plan.targets[right_hand_side(c1)]];
                }
              pending.clear();
            }
          lists_right &=
            pending.empty() && row_first == plan.target_offsets[slice + 1];
        }
    }
  Testing::check_rules(
    checks,
    name + ": reduction lists",
    {{Testing::each_once(triple_seen),
      "each of the " + std::to_string(triple_seen.size()) +
        " element node pairs is summed once, under its own node pair"},
     {Testing::each_once(target_seen), "every nonzero is stored exactly once"},
     {Testing::each_once(rhs_seen),
      "every right-hand-side row is stored exactly once"},
     {lists_right,
      "rows are shaped as their closing entries say (diagonal lists "
      "leading, halves in their lanes)"},
     {n_halved_lists > 0,
      "long diagonal lists are halved (" + std::to_string(n_halved_lists) +
        ")"},
     {plan.slice_offsets.back() == plan.sources.size(),
      "the warps' slices cover the sources"}});

  const LinearElasticityKernel<dim, double> elasticity =
    plan_test_elasticity<dim>();
  LaplaceKernel<dim, double>       laplace;
  std::vector<double>              nodal(arrays.nodal_coordinates);
  std::vector<double>              reference_values, reference_rhs, values, rhs;
  const HostAssembler<dim, double> reference(arrays);
  // The reference and the plan run on the host, each as its matrix and
  // right-hand side together; their relative difference.
  const auto assembly_error = [&](const auto &kernel) {
    reference.assemble(kernel, reference_values, reference_rhs);
    shared_nz_on_host<dim>(plan,
                           arrays,
                           kernel,
                           AssemblyOptions(),
                           nodal,
                           values,
                           rhs);
    std::vector<double> result(values), reference_result(reference_values);
    result.insert(result.end(), rhs.begin(), rhs.end());
    reference_result.insert(reference_result.end(),
                            reference_rhs.begin(),
                            reference_rhs.end());
    return Testing::relative_l2_error(result, reference_result);
  };
  const double error =
    vector_valued ? assembly_error(elasticity) : assembly_error(laplace);
  checks.check(error <= 1e-13,
               name +
                 ": SharedNZ executed on the host equals the reference "
                 "assembly (relative error " +
                 Testing::scientific(error) + " <= 1e-13)");

  if (node_pairs)
    test_compact_targets<dim>(checks,
                              name,
                              arrays,
                              plan,
                              parameters,
                              limit,
                              vector_valued);

  // The condensation's substitutes for a zero diagonal entry, node pair by
  // node pair.
  if (node_pairs && !vector_valued)
    for (const auto &[zeroed, diffusion, what] :
         {std::make_tuple(1u, 1., "the mean absolute diagonal"),
          std::make_tuple(64u, 1., "the l1 norm / n_dofs"),
          std::make_tuple(64u, 0., "1")})
      {
        ZeroDiagonalKernel<dim> kernel;
        kernel.zeroed             = zeroed;
        kernel.laplace.diffusion  = diffusion;
        const double zeroed_error = assembly_error(kernel);
        checks.check(zeroed_error <= 1e-13,
                     name +
                       ": node pairs of elements with zero diagonal "
                       "entries, replaced by " +
                       what + ", equal the reference (relative error " +
                       Testing::scientific(zeroed_error) + " <= 1e-13)");
      }

  if (node_pairs)
    checks.check_throws<ExceptionBase>(
      [&] {
        MassKernel<dim, 1, double> mass;
        shared_nz_on_host<dim>(plan,
                               arrays,
                               mass,
                               AssemblyOptions(),
                               nodal,
                               values,
                               rhs);
      },
      "the kernel has no node-pair form",
      name + ": a kernel without a node-pair form is refused");

  checks.check_throws<ExcUnsupportedInput>(
    [&] {
      SharedNZPlan small;
      small.reinit(arrays, parameters, dim, sizeof(double), 512);
    },
    node_pairs ?
      "shared_memory_per_block), or use SharedNZ without node pairs or "
      "GlobalNZ" :
      "shared_memory_per_block), or use GlobalNZ",
    name + ": SharedNZ refuses a shared-memory limit below one node's "
           "element data");

  // Staging reads an inhomogeneity for every DoF of an element with
  // constraints: arrays without one for each DoF are refused.
  MeshArrays short_arrays = arrays;
  short_arrays.inhomogeneities.pop_back();
  checks.check_throws<ExcUnsupportedInput>(
    [&] {
      SharedNZPlan plan;
      plan.reinit(short_arrays,
                  parameters,
                  dim,
                  sizeof(double),
                  std::size_t(1) << 30);
    },
    "an inhomogeneity for each of their " + std::to_string(arrays.n_dofs) +
      " DoFs, and have " + std::to_string(arrays.n_dofs) + " and " +
      std::to_string(arrays.n_dofs - 1) + ".",
    name + ": SharedNZ refuses arrays with an inhomogeneity missing");
}



// SharedNZ's automatic threads and blocks per multiprocessor: four blocks
// of 128 threads for node pairs on elements of at most 4 nodes, two of 256
// otherwise; values set by hand stay.
void
test_automatic_shared_nz_parameters(Testing::Checks &checks)
{
  SharedNZPlan::Parameters slots, pairs, set;
  pairs.node_pairs              = true;
  set.node_pairs                = true;
  set.threads_per_block         = 192;
  set.blocks_per_multiprocessor = 3;
  const auto is                 = [](const SharedNZPlan::Parameters &p,
                     const unsigned int              threads,
                     const unsigned int              blocks) {
    return p.threads_per_block == threads &&
           p.blocks_per_multiprocessor == blocks;
  };
  Testing::check_rules(
    checks,
    "SharedNZ's automatic parameters",
    {{slots.threads_per_block == 0 && slots.blocks_per_multiprocessor == 0,
      "0 (automatic) by default"},
     {is(slots.resolved(4), 256, 2),
      "2 blocks of 256 threads without node pairs"},
     {is(pairs.resolved(4), 128, 4) && is(pairs.resolved(3), 128, 4),
      "4 blocks of 128 threads for node pairs on elements of at most 4 "
      "nodes"},
     {is(pairs.resolved(8), 256, 2),
      "2 blocks of 256 threads for node pairs on elements of 8 nodes"},
     {is(set.resolved(4), 192, 3), "values set by hand stay"}});
}



int
main()
{
  Testing::Checks checks;
  test_accumulated_node_pairs(checks);
  test_shared_nz_plan<3>(checks, true, true, NodePartitioner::greedy_union);
  test_shared_nz_plan<3>(checks, true, true, NodePartitioner::metis);
  test_shared_nz_plan<3>(checks,
                         true,
                         true,
                         NodePartitioner::greedy_union,
                         true);
  test_shared_nz_plan<3>(checks,
                         true,
                         true,
                         NodePartitioner::greedy_union,
                         true,
                         true);
  test_shared_nz_plan<3>(checks,
                         true,
                         true,
                         NodePartitioner::metis,
                         false,
                         true);
  test_shared_nz_plan<2>(checks,
                         true,
                         true,
                         NodePartitioner::greedy_union,
                         false,
                         true);
  test_shared_nz_plan<3>(checks,
                         false,
                         false,
                         NodePartitioner::greedy_union,
                         false,
                         true);
  test_shared_nz_plan<3>(checks,
                         true,
                         true,
                         NodePartitioner::greedy_growth,
                         false,
                         true);
  test_shared_nz_plan<3>(checks, true, true, NodePartitioner::greedy_growth);
  test_shared_nz_plan<2>(checks, false, false, NodePartitioner::greedy_union);
  test_shared_nz_plan<3>(checks, false, false, NodePartitioner::metis);
  test_automatic_shared_nz_parameters(checks);
  return checks.exit_code();
}

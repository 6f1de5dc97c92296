// SPDX-License-Identifier: LGPL-2.1-or-later
// The node partitioners of the explicit wave solver (Pogo Sec. 3.1): every
// node in exactly one block, blocks and halos within their limits, on meshes
// with internal boundaries (a hole), triangles and quadrilaterals; the
// block efficiency eta is reported. Bad partitions are refused.

#include <deal.II/base/exceptions.h>

#include <gpu_assembly/wave/elastic_wave_system.h>
#include <gpu_assembly/wave/node_partitioner.h>

#include "tests.h"
#include "wave_test_meshes.h"

using namespace GPUAssembly::Wave;

namespace
{
  void
  check_mesh(const std::string &name,
             const WaveMesh    &mesh,
             Testing::Checks   &checks)
  {
    const NodalSystem system =
      assemble_nodal_system(mesh, {ElasticMaterial{210e9, 0.3, 7850, 0}});
    std::vector<unsigned int> offsets, neighbours;
    make_node_graph(system, offsets, neighbours);

    for (const unsigned int block_size : {128u, 512u})
      for (const PartitionerType type :
           {PartitionerType::greedy, PartitionerType::aligned})
        {
          BlockLimits limits;
          limits.max_block_size = block_size;
          limits.max_halo_nodes = block_size;
          const NodeBlocks blocks =
            partition_nodes(type, mesh, offsets, neighbours, limits);
          const std::string what = name + ", " + to_string(type) + ", " +
                                   std::to_string(block_size) +
                                   " nodes per block: ";

          // Independent of check_partition(): count every node.
          std::vector<unsigned int> count(mesh.n_nodes, 0);
          for (const unsigned int v : blocks.nodes)
            if (v < mesh.n_nodes)
              ++count[v];
          checks.check(blocks.nodes.size() == mesh.n_nodes &&
                         std::all_of(count.begin(),
                                     count.end(),
                                     [](const unsigned int c) {
                                       return c == 1;
                                     }),
                       what + "every node in exactly one block");
          unsigned int largest = 0;
          for (unsigned int b = 0; b < blocks.n_blocks(); ++b)
            largest = std::max(largest, blocks.block_size(b));
          checks.check(largest <= block_size,
                       what + "largest block " + std::to_string(largest) +
                         " <= " + std::to_string(block_size));
          const unsigned int halo = blocks.max_halo(offsets, neighbours);
          checks.check(halo <= limits.max_halo_nodes,
                       what + "largest halo " + std::to_string(halo) +
                         " <= " + std::to_string(limits.max_halo_nodes));
          // A partitioner that leaves most of every block empty has failed
          // at its job, whatever the mesh.
          std::cout << "      " << what << blocks.n_blocks()
                    << " blocks, efficiency eta = "
                    << Testing::scientific(blocks.efficiency()) << std::endl;
          checks.check(blocks.efficiency() > 0.6,
                       what + "efficiency above 0.6");
        }
  }
} // namespace

int
main()
{
  Testing::Checks                                          checks;
  const std::map<dealii::types::material_id, unsigned int> materials = {{0, 0}};
  for (const bool triangles : {true, false})
    {
      dealii::Triangulation<2> tria;
      Testing::make_plate_with_hole(triangles ? 4 : 5, triangles, tria);
      WaveDiscretization discretization;
      discretization.reinit(tria, materials);
      check_mesh(std::string(triangles ? "triangles" : "quadrilaterals") +
                   ", plate with a hole (" +
                   std::to_string(discretization.get_mesh().n_nodes) +
                   " nodes)",
                 discretization.get_mesh(),
                 checks);
    }
  {
    // Two pieces that share no node: the fronts of the aligned partitioner
    // never reach the second, which must still be partitioned.
    dealii::Triangulation<2> tria;
    Testing::make_rectangle(0, 0, 4, 1, 32, 8, true, tria);
    WaveDiscretization discretization;
    discretization.reinit(tria, materials);
    WaveMesh           mesh = discretization.get_mesh();
    const unsigned int n    = mesh.n_nodes;
    WaveMesh           two  = mesh;
    two.n_nodes *= 2;
    for (unsigned int i = 0; i < n; ++i)
      {
        two.coordinates.push_back(mesh.coordinates[2 * i]);
        two.coordinates.push_back(mesh.coordinates[2 * i + 1] + 2);
      }
    for (const unsigned int v : mesh.cells)
      two.cells.push_back(v + n);
    two.cell_material.insert(two.cell_material.end(),
                             mesh.cell_material.begin(),
                             mesh.cell_material.end());
    two.cell_extra_damping.insert(two.cell_extra_damping.end(),
                                  mesh.cell_extra_damping.begin(),
                                  mesh.cell_extra_damping.end());
    check_mesh("two disconnected rectangles", two, checks);
  }

  // Refusals: a node missing, a node twice, an oversized block.
  {
    dealii::Triangulation<2> tria;
    Testing::make_rectangle(0, 0, 1, 1, 8, 8, true, tria);
    WaveDiscretization discretization;
    discretization.reinit(tria, materials);
    const NodalSystem system =
      assemble_nodal_system(discretization.get_mesh(),
                            {ElasticMaterial{1, 0.25, 1, 0}});
    std::vector<unsigned int> offsets, neighbours;
    make_node_graph(system, offsets, neighbours);
    BlockLimits limits;
    limits.max_block_size = 64;
    limits.max_halo_nodes = 64;
    NodeBlocks blocks     = partition_greedy(offsets, neighbours, limits);
    enforce_block_limits(offsets, neighbours, blocks);
    NodeBlocks twice   = blocks;
    twice.nodes.back() = twice.nodes.front();
    checks.check_throws<dealii::ExceptionBase>(
      [&]() {
        check_partition(system.n_nodes, offsets, neighbours, twice);
      },
      "is in 2 blocks instead of one",
      "a partition with a node twice is refused");
    NodeBlocks big            = blocks;
    big.limits.max_block_size = 32;
    checks.check_throws<dealii::ExceptionBase>(
      [&]() {
        check_partition(system.n_nodes, offsets, neighbours, big);
      },
      "nodes.",
      "a block larger than the limit is refused");
    NodeBlocks small_halo            = blocks;
    small_halo.limits.max_halo_nodes = 8;
    enforce_block_limits(offsets, neighbours, small_halo);
    check_partition(system.n_nodes, offsets, neighbours, small_halo);
    checks.check(small_halo.n_blocks() > blocks.n_blocks() &&
                   small_halo.max_halo(offsets, neighbours) <= 8,
                 "enforce_block_limits splits blocks until halos have at "
                 "most 8 nodes");
    checks.check_throws<dealii::ExceptionBase>(
      [&]() {
        BlockLimits odd;
        odd.max_block_size = 100;
        partition_nodes(PartitionerType::greedy,
                        discretization.get_mesh(),
                        offsets,
                        neighbours,
                        odd);
      },
      "multiple of 32",
      "a block size that is not a multiple of 32 is refused");
  }
  return checks.exit_code();
}

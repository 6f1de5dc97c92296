// SPDX-License-Identifier: LGPL-2.1-or-later
#include <deal.II/base/exceptions.h>

#include <gpu_assembly/wave/elastic_wave_system.h>
#include <gpu_assembly/wave/node_partitioner.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <queue>
#include <string>

namespace GPUAssembly
{
  namespace Wave
  {
    using dealii::ExcMessage;

    PartitionerType
    parse_partitioner_type(const std::string &name)
    {
      if (name == "greedy")
        return PartitionerType::greedy;
      if (name == "aligned")
        return PartitionerType::aligned;
      AssertThrow(false,
                  ExcMessage("Unknown partitioner '" + name +
                             "': choose greedy or aligned."));
      return PartitionerType::greedy;
    }



    std::string
    to_string(const PartitionerType type)
    {
      return type == PartitionerType::greedy ? "greedy" : "aligned";
    }



    double
    NodeBlocks::efficiency() const
    {
      return n_blocks() == 0 ? 0. :
                               double(nodes.size()) /
                                 (double(n_blocks()) * limits.max_block_size);
    }



    namespace
    {
      using Graph = std::pair<const std::vector<unsigned int> *,
                              const std::vector<unsigned int> *>;

      /**
       * Halo of a set of nodes: the nodes outside it linked to it. @p stamp
       * is scratch of size n_nodes, @p marker a value not yet used in it.
       */
      unsigned int
      halo_size(const std::vector<unsigned int> &offsets,
                const std::vector<unsigned int> &neighbours,
                const unsigned int              *nodes,
                const unsigned int               n,
                std::vector<unsigned int>       &stamp,
                unsigned int                    &marker)
      {
        const unsigned int inside = ++marker, halo = ++marker;
        for (unsigned int i = 0; i < n; ++i)
          stamp[nodes[i]] = inside;
        unsigned int count = 0;
        for (unsigned int i = 0; i < n; ++i)
          for (unsigned int k = offsets[nodes[i]]; k < offsets[nodes[i] + 1];
               ++k)
            {
              const unsigned int w = neighbours[k];
              if (stamp[w] != inside && stamp[w] != halo)
                {
                  stamp[w] = halo;
                  ++count;
                }
            }
        return count;
      }



      /**
       * Split @p nodes in two by Pogo's "find the two ends of the block,
       * advance from both ends until they meet": the ends are found by two
       * breadth-first sweeps inside the set, then both grow one row at a
       * time. @p label is scratch of size n_nodes holding -1.
       */
      std::pair<std::vector<unsigned int>, std::vector<unsigned int>>
      split_in_two(const std::vector<unsigned int> &offsets,
                   const std::vector<unsigned int> &neighbours,
                   const std::vector<unsigned int> &nodes,
                   std::vector<int>                &label)
      {
        if (nodes.size() < 2)
          return {nodes, {}};
        // -2: in the set, not yet reached
        for (const unsigned int v : nodes)
          label[v] = -2;
        const auto farthest = [&](const unsigned int start) {
          std::vector<unsigned int> queue = {start};
          label[start]                    = -3;
          for (std::size_t i = 0; i < queue.size(); ++i)
            for (unsigned int k = offsets[queue[i]]; k < offsets[queue[i] + 1];
                 ++k)
              if (label[neighbours[k]] == -2)
                {
                  label[neighbours[k]] = -3;
                  queue.push_back(neighbours[k]);
                }
          for (const unsigned int v : queue)
            label[v] = -2;
          return queue.back();
        };
        const unsigned int end_a = farthest(nodes.front());
        const unsigned int end_b = farthest(end_a);

        std::vector<unsigned int> front[2] = {{end_a}, {end_b}};
        label[end_a]                       = 0;
        if (end_b != end_a)
          label[end_b] = 1;
        std::size_t size[2] = {1, end_b != end_a ? 1u : 0u};
        while (!front[0].empty() || !front[1].empty())
          for (unsigned int side = 0; side < 2; ++side)
            {
              std::vector<unsigned int> next;
              for (const unsigned int v : front[side])
                for (unsigned int k = offsets[v]; k < offsets[v + 1]; ++k)
                  if (label[neighbours[k]] == -2)
                    {
                      label[neighbours[k]] = side;
                      next.push_back(neighbours[k]);
                    }
              size[side] += next.size();
              front[side] = std::move(next);
            }
        std::pair<std::vector<unsigned int>, std::vector<unsigned int>> parts;
        for (const unsigned int v : nodes)
          {
            // Nodes not connected to either end go to the smaller part.
            const int side =
              label[v] >= 0 ? label[v] : (size[0] <= size[1] ? 0 : 1);
            (side == 0 ? parts.first : parts.second).push_back(v);
            label[v] = -1;
          }
        if (parts.second.empty() || parts.first.empty())
          {
            std::vector<unsigned int> all = nodes;
            parts.first.assign(all.begin(), all.begin() + all.size() / 2);
            parts.second.assign(all.begin() + all.size() / 2, all.end());
          }
        return parts;
      }



      /**
       * Greedy partition of the nodes with owner < 0; appends blocks.
       */
      void
      greedy_fill(const std::vector<unsigned int>        &offsets,
                  const std::vector<unsigned int>        &neighbours,
                  const unsigned int                      block_size,
                  std::vector<int>                       &owner,
                  std::vector<std::vector<unsigned int>> &blocks)
      {
        const unsigned int n_nodes   = offsets.size() - 1;
        unsigned int       next_free = 0;
        int                next_seed = -1;
        while (true)
          {
            unsigned int seed;
            if (next_seed >= 0 && owner[next_seed] < 0)
              seed = next_seed;
            else
              {
                while (next_free < n_nodes && owner[next_free] >= 0)
                  ++next_free;
                if (next_free == n_nodes)
                  break;
                seed = next_free;
              }
            const int                 id    = blocks.size();
            std::vector<unsigned int> block = {seed};
            owner[seed]                     = id;
            for (std::size_t i = 0;
                 i < block.size() && block.size() < block_size;
                 ++i)
              for (unsigned int k = offsets[block[i]];
                   k < offsets[block[i] + 1] && block.size() < block_size;
                   ++k)
                if (owner[neighbours[k]] < 0)
                  {
                    owner[neighbours[k]] = id;
                    block.push_back(neighbours[k]);
                  }
            // The next block starts next to this one, so that blocks stay
            // compact instead of scattering over the mesh.
            next_seed = -1;
            for (auto it = block.rbegin(); it != block.rend() && next_seed < 0;
                 ++it)
              for (unsigned int k = offsets[*it]; k < offsets[*it + 1]; ++k)
                if (owner[neighbours[k]] < 0)
                  {
                    next_seed = neighbours[k];
                    break;
                  }
            blocks.push_back(std::move(block));
          }
      }



      NodeBlocks
      to_node_blocks(const std::vector<std::vector<unsigned int>> &blocks,
                     const BlockLimits                            &limits)
      {
        NodeBlocks result;
        result.limits = limits;
        for (const auto &block : blocks)
          if (!block.empty())
            {
              result.nodes.insert(result.nodes.end(),
                                  block.begin(),
                                  block.end());
              result.block_offsets.push_back(result.nodes.size());
            }
        return result;
      }
    } // namespace



    unsigned int
    NodeBlocks::max_halo(
      const std::vector<unsigned int> &graph_offsets,
      const std::vector<unsigned int> &graph_neighbours) const
    {
      std::vector<unsigned int> stamp(graph_offsets.size() - 1, 0);
      unsigned int              marker = 0, result = 0;
      for (unsigned int b = 0; b < n_blocks(); ++b)
        result = std::max(result,
                          halo_size(graph_offsets,
                                    graph_neighbours,
                                    nodes.data() + block_offsets[b],
                                    block_size(b),
                                    stamp,
                                    marker));
      return result;
    }



    NodeBlocks
    partition_greedy(const std::vector<unsigned int> &graph_offsets,
                     const std::vector<unsigned int> &graph_neighbours,
                     const BlockLimits               &limits)
    {
      std::vector<int> owner(graph_offsets.size() - 1, -1);
      std::vector<std::vector<unsigned int>> blocks;
      greedy_fill(graph_offsets,
                  graph_neighbours,
                  limits.max_block_size,
                  owner,
                  blocks);
      return to_node_blocks(blocks, limits);
    }



    NodeBlocks
    partition_aligned(const WaveMesh                  &mesh,
                      const std::vector<unsigned int> &offsets,
                      const std::vector<unsigned int> &neighbours,
                      const BlockLimits               &limits)
    {
      const unsigned int n_nodes = offsets.size() - 1;
      const unsigned int npb     = limits.max_block_size;
      // Constants of Sec. 3.1 scaled to the block size (B = 32, R = 20,
      // S_l = 390, S_u = 1000 for 512 nodes per block).
      const unsigned int boundary_length =
        std::max(2u, unsigned(std::lround(std::sqrt(2. * npb))));
      const unsigned int n_test_rows =
        std::max(1u, unsigned(std::lround(1.25 * npb / boundary_length)));
      const double mean_size = double(n_test_rows) * boundary_length;
      const double lower = 0.6 * mean_size, upper = 1.55 * mean_size;

      std::vector<int> owner(n_nodes, -1), tentative(n_nodes, -1),
        label(n_nodes, -1);
      std::vector<std::vector<unsigned int>> final_blocks;

      // Steps 1-2: lengths of the outer boundary start the first layer.
      std::vector<std::vector<unsigned int>> seeds;
      {
        const auto loops = mesh.boundary_loops();
        if (!loops.empty())
          {
            const auto        &outer = loops.front();
            const unsigned int n_pieces =
              std::max<unsigned int>(1,
                                     std::lround(double(outer.size()) /
                                                 boundary_length));
            for (unsigned int p = 0; p < n_pieces; ++p)
              seeds.emplace_back(outer.begin() + p * outer.size() / n_pieces,
                                 outer.begin() +
                                   (p + 1) * outer.size() / n_pieces);
          }
      }

      while (!seeds.empty())
        {
          // Steps 3-4: test advance of R rows from the seed rows.
          const unsigned int                     n_seeds = seeds.size();
          std::vector<std::vector<unsigned int>> test = seeds, front = seeds;
          std::vector<unsigned int>              touched;
          for (unsigned int k = 0; k < n_seeds; ++k)
            for (const unsigned int v : seeds[k])
              {
                tentative[v] = k;
                touched.push_back(v);
              }
          for (unsigned int r = 0; r < n_test_rows; ++r)
            for (unsigned int k = 0; k < n_seeds; ++k)
              {
                std::vector<unsigned int> row;
                for (const unsigned int v : front[k])
                  for (unsigned int j = offsets[v]; j < offsets[v + 1]; ++j)
                    {
                      const unsigned int w = neighbours[j];
                      if (owner[w] < 0 && tentative[w] < 0)
                        {
                          tentative[w] = k;
                          touched.push_back(w);
                          row.push_back(w);
                        }
                    }
                test[k].insert(test[k].end(), row.begin(), row.end());
                front[k] = std::move(row);
              }

          // Step 5: join small blocks to a neighbour, split large ones; the
          // decisions act on the seed rows, which are all that is kept.
          std::vector<bool> alive(n_seeds, true);
          for (unsigned int pass = 0; pass < 8; ++pass)
            {
              bool changed = false;
              for (unsigned int k = 0; k < test.size(); ++k)
                if (alive[k] && test[k].size() < lower)
                  {
                    int best = -1;
                    for (const unsigned int v : test[k])
                      for (unsigned int j = offsets[v]; j < offsets[v + 1]; ++j)
                        {
                          const int m = tentative[neighbours[j]];
                          if (m >= 0 && m != int(k) && alive[m] &&
                              (best < 0 || test[m].size() < test[best].size()))
                            best = m;
                        }
                    if (best >= 0 &&
                        test[best].size() + test[k].size() <= upper)
                      {
                        for (const unsigned int v : test[k])
                          tentative[v] = best;
                        test[best].insert(test[best].end(),
                                          test[k].begin(),
                                          test[k].end());
                        seeds[best].insert(seeds[best].end(),
                                           seeds[k].begin(),
                                           seeds[k].end());
                        test[k].clear();
                        seeds[k].clear();
                        alive[k] = false;
                        changed  = true;
                      }
                  }
              for (unsigned int k = 0; k < test.size(); ++k)
                if (alive[k] && test[k].size() > upper && seeds[k].size() > 1)
                  {
                    auto parts =
                      split_in_two(offsets, neighbours, test[k], label);
                    for (const unsigned int v : parts.second)
                      label[v] = 1;
                    std::vector<unsigned int> seed_a, seed_b;
                    for (const unsigned int v : seeds[k])
                      (label[v] == 1 ? seed_b : seed_a).push_back(v);
                    for (const unsigned int v : parts.second)
                      label[v] = -1;
                    if (seed_a.empty() || seed_b.empty())
                      continue;
                    const unsigned int m = test.size();
                    for (const unsigned int v : parts.second)
                      tentative[v] = m;
                    test[k] = std::move(parts.first);
                    test.push_back(std::move(parts.second));
                    seeds[k] = std::move(seed_a);
                    seeds.push_back(std::move(seed_b));
                    alive.push_back(true);
                    changed = true;
                  }
              if (!changed)
                break;
            }
          for (const unsigned int v : touched)
            tentative[v] = -1;

          // Step 6: keep the first rows only (rows longer than a block are
          // cut into block-sized lengths).
          std::vector<std::vector<unsigned int>> blocks;
          for (unsigned int k = 0; k < seeds.size(); ++k)
            if (alive[k] && !seeds[k].empty())
              for (std::size_t start = 0; start < seeds[k].size(); start += npb)
                blocks.emplace_back(seeds[k].begin() + start,
                                    seeds[k].begin() +
                                      std::min<std::size_t>(start + npb,
                                                            seeds[k].size()));
          const int first_id = final_blocks.size();
          for (unsigned int k = 0; k < blocks.size(); ++k)
            for (const unsigned int v : blocks[k])
              owner[v] = first_id + k;

          // Steps 7-8: the smallest block advances by a row until every
          // block is full or trapped.
          std::vector<std::vector<unsigned int>> fronts = blocks;
          using Entry = std::pair<unsigned int, unsigned int>; // size, block
          std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>>
            queue;
          for (unsigned int k = 0; k < blocks.size(); ++k)
            if (blocks[k].size() < npb)
              queue.emplace(blocks[k].size(), k);
          while (!queue.empty())
            {
              const unsigned int k = queue.top().second;
              queue.pop();
              std::vector<unsigned int> row;
              const auto advance = [&](const std::vector<unsigned int> &from) {
                for (const unsigned int v : from)
                  for (unsigned int j = offsets[v];
                       j < offsets[v + 1] &&
                       blocks[k].size() + row.size() < npb;
                       ++j)
                    if (owner[neighbours[j]] < 0)
                      {
                        owner[neighbours[j]] = first_id + k;
                        row.push_back(neighbours[j]);
                      }
              };
              advance(fronts[k]);
              if (row.empty())
                advance(blocks[k]);
              if (row.empty())
                continue; // trapped: the block stays as it is
              blocks[k].insert(blocks[k].end(), row.begin(), row.end());
              fronts[k] = std::move(row);
              if (blocks[k].size() < npb)
                queue.emplace(blocks[k].size(), k);
            }

          // Step 9: each block's next row starts a block of the next layer;
          // a row split by an internal boundary becomes several blocks.
          seeds.clear();
          std::vector<unsigned int> claimed;
          for (unsigned int k = 0; k < blocks.size(); ++k)
            {
              std::vector<unsigned int> row;
              for (const unsigned int v : blocks[k])
                for (unsigned int j = offsets[v]; j < offsets[v + 1]; ++j)
                  {
                    const unsigned int w = neighbours[j];
                    if (owner[w] < 0 && tentative[w] < 0)
                      {
                        tentative[w] = 0;
                        row.push_back(w);
                      }
                  }
              // Connected pieces of the row, in the row's own graph.
              for (const unsigned int v : row)
                label[v] = -2;
              for (const unsigned int v : row)
                if (label[v] == -2)
                  {
                    std::vector<unsigned int> piece = {v};
                    label[v]                        = -1;
                    for (std::size_t i = 0; i < piece.size(); ++i)
                      for (unsigned int j = offsets[piece[i]];
                           j < offsets[piece[i] + 1];
                           ++j)
                        if (label[neighbours[j]] == -2)
                          {
                            label[neighbours[j]] = -1;
                            piece.push_back(neighbours[j]);
                          }
                    seeds.push_back(std::move(piece));
                  }
              claimed.insert(claimed.end(), row.begin(), row.end());
            }
          for (const unsigned int v : claimed)
            tentative[v] = -1;
          for (auto &block : blocks)
            final_blocks.push_back(std::move(block));
        }

      // Step 10 ends when the fronts stop; what they never reached is
      // partitioned greedily.
      greedy_fill(offsets, neighbours, npb, owner, final_blocks);
      return to_node_blocks(final_blocks, limits);
    }



    void
    enforce_block_limits(const std::vector<unsigned int> &offsets,
                         const std::vector<unsigned int> &neighbours,
                         NodeBlocks                      &blocks)
    {
      const unsigned int                     n_nodes = offsets.size() - 1;
      std::vector<unsigned int>              stamp(n_nodes, 0);
      unsigned int                           marker = 0;
      std::vector<int>                       label(n_nodes, -1);
      std::deque<std::vector<unsigned int>>  work;
      std::vector<std::vector<unsigned int>> done;
      for (unsigned int b = 0; b < blocks.n_blocks(); ++b)
        work.emplace_back(blocks.nodes.begin() + blocks.block_offsets[b],
                          blocks.nodes.begin() + blocks.block_offsets[b + 1]);
      while (!work.empty())
        {
          std::vector<unsigned int> block = std::move(work.front());
          work.pop_front();
          const unsigned int halo = halo_size(offsets,
                                              neighbours,
                                              block.data(),
                                              block.size(),
                                              stamp,
                                              marker);
          if (block.size() <= blocks.limits.max_block_size &&
              halo <= blocks.limits.max_halo_nodes)
            {
              done.push_back(std::move(block));
              continue;
            }
          AssertThrow(block.size() > 1,
                      ExcMessage(
                        "A single node has a halo of " + std::to_string(halo) +
                        " nodes, more than the limit of " +
                        std::to_string(blocks.limits.max_halo_nodes) + "."));
          auto parts = split_in_two(offsets, neighbours, block, label);
          work.push_front(std::move(parts.second));
          work.push_front(std::move(parts.first));
        }
      blocks = to_node_blocks(done, blocks.limits);
    }



    void
    check_partition(const unsigned int               n_nodes,
                    const std::vector<unsigned int> &offsets,
                    const std::vector<unsigned int> &neighbours,
                    const NodeBlocks                &blocks)
    {
      AssertThrow(blocks.limits.max_block_size % 32 == 0 &&
                    blocks.limits.max_block_size > 0,
                  ExcMessage("The block size must be a positive multiple of "
                             "32 (a warp)."));
      std::vector<unsigned int> count(n_nodes, 0);
      for (const unsigned int v : blocks.nodes)
        {
          AssertThrow(v < n_nodes,
                      ExcMessage("Partition holds node " + std::to_string(v) +
                                 " of " + std::to_string(n_nodes) + "."));
          ++count[v];
        }
      for (unsigned int v = 0; v < n_nodes; ++v)
        AssertThrow(count[v] == 1,
                    ExcMessage("Node " + std::to_string(v) + " is in " +
                               std::to_string(count[v]) +
                               " blocks instead of one."));
      std::vector<unsigned int> stamp(n_nodes, 0);
      unsigned int              marker = 0;
      for (unsigned int b = 0; b < blocks.n_blocks(); ++b)
        {
          AssertThrow(blocks.block_size(b) > 0 &&
                        blocks.block_size(b) <= blocks.limits.max_block_size,
                      ExcMessage("Block " + std::to_string(b) + " has " +
                                 std::to_string(blocks.block_size(b)) +
                                 " nodes."));
          const unsigned int halo =
            halo_size(offsets,
                      neighbours,
                      blocks.nodes.data() + blocks.block_offsets[b],
                      blocks.block_size(b),
                      stamp,
                      marker);
          AssertThrow(halo <= blocks.limits.max_halo_nodes,
                      ExcMessage("Block " + std::to_string(b) +
                                 " has a halo "
                                 "of " +
                                 std::to_string(halo) + " nodes."));
        }
    }



    NodeBlocks
    partition_nodes(const PartitionerType            type,
                    const WaveMesh                  &mesh,
                    const std::vector<unsigned int> &offsets,
                    const std::vector<unsigned int> &neighbours,
                    const BlockLimits               &limits)
    {
      AssertThrow(limits.max_block_size % 32 == 0 &&
                    limits.max_block_size >= 32 &&
                    limits.max_block_size <= 1024,
                  ExcMessage("Nodes per block must be a multiple of 32 "
                             "between 32 and 1024, not " +
                             std::to_string(limits.max_block_size) + "."));
      NodeBlocks blocks =
        type == PartitionerType::greedy ?
          partition_greedy(offsets, neighbours, limits) :
          partition_aligned(mesh, offsets, neighbours, limits);
      enforce_block_limits(offsets, neighbours, blocks);
      check_partition(offsets.size() - 1, offsets, neighbours, blocks);
      return blocks;
    }
  } // namespace Wave
} // namespace GPUAssembly

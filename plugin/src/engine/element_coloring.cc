// SPDX-License-Identifier: LGPL-2.1-or-later
#include <deal.II/base/exceptions.h>

#include <gpu_assembly/engine/element_coloring.h>

#include <algorithm>
#include <cstdint>

namespace GPUAssembly
{
  namespace
  {
    /**
     * The colours taken at each node, one bit per colour. Word-major (word w
     * of node n at words[w][n]) so that a colour beyond the last word adds a
     * word without moving the others: the number of colours has no cap.
     */
    class NodeColorSets
    {
    public:
      explicit NodeColorSets(const unsigned int n_nodes)
        : n_nodes(n_nodes)
      {}

      unsigned int
      n_words() const
      {
        return words.size();
      }

      void
      add_word()
      {
        words.emplace_back(n_nodes, 0);
      }

      /// The colours of word @p w taken at any of the @p n nodes.
      std::uint64_t
      taken(const unsigned int      w,
            const index_type *const nodes,
            const unsigned int      n) const
      {
        const std::uint64_t *const word = words[w].data();
        std::uint64_t              bits = 0;
        for (unsigned int a = 0; a < n; ++a)
          bits |= word[nodes[a]];
        return bits;
      }

      void
      set(const unsigned int      color,
          const index_type *const nodes,
          const unsigned int      n)
      {
        std::uint64_t *const word = words[color / 64].data();
        const std::uint64_t  bit  = std::uint64_t(1) << (color % 64);
        for (unsigned int a = 0; a < n; ++a)
          {
            AssertIndexRange(nodes[a], n_nodes);
            word[nodes[a]] |= bit;
          }
      }

    private:
      unsigned int                            n_nodes;
      std::vector<std::vector<std::uint64_t>> words;
    };



    unsigned int
    lowest_bit(const std::uint64_t bits)
    {
      Assert(bits != 0, dealii::ExcInternalError());
      return __builtin_ctzll(bits);
    }
  } // namespace



  std::vector<std::vector<unsigned int>>
  color_elements(const MeshArrays &arrays)
  {
    AssertDimension(arrays.connectivity.size(),
                    std::size_t(arrays.n_elements) * arrays.layout.n_nodes);
    const unsigned int n_en     = arrays.layout.n_nodes;
    const auto         nodes_of = [&](const unsigned int e) {
      return arrays.connectivity.data() + static_cast<std::size_t>(e) * n_en;
    };

    // First fit in element order, which is cell order: neighbours come
    // close together, so an element mostly finds a colour its neighbourhood
    // left free among the first ones. Every element costs one pass over its
    // nodes per word of colours, in one thread, so the result depends on
    // nothing but the mesh.
    NodeColorSets             sets(arrays.n_nodes);
    std::vector<unsigned int> color(arrays.n_elements);
    std::vector<unsigned int> size;
    for (unsigned int e = 0; e < arrays.n_elements; ++e)
      {
        const index_type *const nodes = nodes_of(e);
        for (unsigned int w = 0;; ++w)
          {
            if (w == sets.n_words())
              sets.add_word();
            const std::uint64_t free = ~sets.taken(w, nodes, n_en);
            if (free != 0)
              {
                color[e] = 64 * w + lowest_bit(free);
                break;
              }
          }
        sets.set(color[e], nodes, n_en);
        if (color[e] >= size.size())
          size.resize(color[e] + 1, 0);
        ++size[color[e]];
      }

    std::vector<std::vector<unsigned int>> colors(size.size());
    for (unsigned int c = 0; c < size.size(); ++c)
      colors[c].reserve(size[c]);
    // Increasing element numbers in each colour: the assembly order, and so
    // every rounding, is that of the mesh.
    for (unsigned int e = 0; e < arrays.n_elements; ++e)
      colors[color[e]].push_back(e);
    return colors;
  }



  bool
  is_valid_coloring(const MeshArrays                             &arrays,
                    const std::vector<std::vector<unsigned int>> &colors)
  {
    AssertDimension(arrays.connectivity.size(),
                    std::size_t(arrays.n_elements) * arrays.layout.n_nodes);
    std::vector<unsigned int> seen(arrays.n_elements, 0);
    std::vector<int>          node_color(arrays.n_nodes, -1);
    const unsigned int        n_nodes = arrays.layout.n_nodes;
    for (unsigned int c = 0; c < colors.size(); ++c)
      for (const unsigned int e : colors[c])
        {
          if (e >= arrays.n_elements || seen[e]++ > 0)
            return false;
          for (unsigned int a = 0; a < n_nodes; ++a)
            {
              const index_type node =
                arrays.connectivity[static_cast<std::size_t>(e) * n_nodes + a];
              AssertIndexRange(node, arrays.n_nodes);
              if (node_color[node] == static_cast<int>(c))
                return false;
              node_color[node] = c;
            }
        }
    return std::all_of(seen.begin(), seen.end(), [](const unsigned int n) {
      return n == 1;
    });
  }
} // namespace GPUAssembly

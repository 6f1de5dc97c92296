// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_lac_point_block_jacobi_h
#define gpu_assembly_lac_point_block_jacobi_h

#include <gpu_assembly/base/config.h>
#include <gpu_assembly/base/cuda_check.h>
#include <gpu_assembly/lac/index_loops.h>
#include <gpu_assembly/lac/preconditioned_cg.h>
#include <gpu_assembly/lac/resident_array.h>

#include <cmath>
#include <cstddef>
#include <string>
#include <vector>

// isfinite(), fabs() and sqrt() unqualified, as device code calls them.
#include <math.h>

/**
 * @file
 * The pieces of the point-block Jacobi preconditioner: the blocks (the
 * rows of the DoFs of one node, one per nodal field: dim x dim blocks for
 * elasticity), and the per-block bodies, GPU_ASSEMBLY_HOST_DEVICE for the
 * loops of index_loops.h, that extract each block from a CSR matrix and
 * invert it (once per assembly) and that apply the inverses (z = P r, once
 * per CG iteration). Each block is one index of the loop, so no two
 * threads write one entry and nothing is summed across blocks; and
 * PointBlockJacobi, the preconditioner made of them for any matrix and
 * vector types that PreconditionedCG takes.
 *
 * No deal.II or CUDA headers here: both compilers read this header.
 */

namespace GPUAssembly
{
  /**
   * The blocks of a point-block Jacobi preconditioner: block k holds the
   * rows rows[offsets[k]], ..., rows[offsets[k + 1] - 1] (in the node's
   * field order), and every row of the matrix is in exactly one block.
   */
  struct PointBlocks
  {
    /// Largest block the bodies take (a node with more fields is split
    /// into single rows).
    static constexpr unsigned int max_block_size = 8;

    std::vector<int> offsets{0};
    std::vector<int> rows;
    /// The size of the largest block: the stride of the inverses.
    unsigned int block_size = 1;

    unsigned int
    n_blocks() const
    {
      return static_cast<unsigned int>(offsets.size() - 1);
    }

    /**
     * The blocks of the nodes of @p node_dofs (n_fields DoFs per node, the
     * field order of MeshArrays::node_dofs) for a matrix of @p n_rows rows:
     * row_of(dof) is the matrix row of a DoF or -1 where the matrix holds
     * none (a DoF of another process). A node whose DoFs all have rows, not
     * yet taken, is a block; every row left over is a block of its own
     * (DoFs on no node of this process, nodes with more than
     * max_block_size fields, nodes split among processes).
     */
    template <typename IndexType, typename RowOf>
    static PointBlocks
    make(const std::vector<IndexType> &node_dofs,
         const unsigned int            n_fields,
         const unsigned int            n_rows,
         const RowOf                  &row_of)
    {
      if (n_fields == 0 || node_dofs.size() % n_fields != 0)
        internal::throw_error("PointBlocks::make(): the node DoFs (" +
                              std::to_string(node_dofs.size()) +
                              ") are not a multiple of " +
                              std::to_string(n_fields) + " fields per node.");
      PointBlocks       blocks;
      std::vector<char> taken(n_rows, 0);
      const std::size_t n_nodes = node_dofs.size() / n_fields;
      int               node_rows[max_block_size];
      for (std::size_t node = 0;
           n_fields > 1 && n_fields <= max_block_size && node < n_nodes;
           ++node)
        {
          bool complete = true;
          for (unsigned int f = 0; f < n_fields && complete; ++f)
            {
              const long long row = row_of(node_dofs[node * n_fields + f]);
              complete            = row >= 0 && row < n_rows && taken[row] == 0;
              for (unsigned int g = 0; g < f && complete; ++g)
                complete = node_rows[g] != row;
              node_rows[f] = static_cast<int>(row);
            }
          if (!complete)
            continue;
          for (unsigned int f = 0; f < n_fields; ++f)
            {
              taken[node_rows[f]] = 1;
              blocks.rows.push_back(node_rows[f]);
            }
          blocks.offsets.push_back(static_cast<int>(blocks.rows.size()));
          blocks.block_size = n_fields;
        }
      for (unsigned int row = 0; row < n_rows; ++row)
        if (taken[row] == 0)
          {
            blocks.rows.push_back(static_cast<int>(row));
            blocks.offsets.push_back(static_cast<int>(blocks.rows.size()));
          }
      return blocks;
    }
  };



  /**
   * Block k's inverse from a CSR matrix (columns in the numbering of the
   * rows): the block's entries gathered from its rows, inverted by
   * Gauss-Jordan elimination with partial pivoting in double, stored
   * row-major at inverses + k * block_size^2 as Number. A constrained row
   * (a diagonal entry alone) gives its own reciprocal. Where a pivot is
   * zero or not finite (a singular block), the block falls back to the
   * reciprocals of its diagonal (0 for a zero diagonal), as the point
   * Jacobi inverse takes them, and singular[k] is set to 1.
   */
  template <typename Number>
  struct PointBlockInverse
  {
    const int    *row_offsets;
    const int    *columns;
    const Number *values;
    const int    *block_offsets;
    const int    *block_rows;
    unsigned int  block_size;
    Number       *inverses;
    int          *singular;

    GPU_ASSEMBLY_HOST_DEVICE void
    operator()(const std::size_t k) const
    {
      constexpr unsigned int max  = PointBlocks::max_block_size;
      const int             *rows = block_rows + block_offsets[k];
      const unsigned int     n =
        static_cast<unsigned int>(block_offsets[k + 1] - block_offsets[k]);
      double a[max][max], inverse[max][max];
      for (unsigned int i = 0; i < n; ++i)
        for (unsigned int j = 0; j < n; ++j)
          {
            a[i][j]       = 0;
            inverse[i][j] = i == j ? 1. : 0.;
          }
      for (unsigned int i = 0; i < n; ++i)
        for (int e = row_offsets[rows[i]]; e < row_offsets[rows[i] + 1]; ++e)
          for (unsigned int j = 0; j < n; ++j)
            if (columns[e] == rows[j])
              a[i][j] = double(values[e]);
      double diagonal[max];
      for (unsigned int i = 0; i < n; ++i)
        diagonal[i] = a[i][i];

      bool regular = true;
      for (unsigned int c = 0; c < n && regular; ++c)
        {
          unsigned int pivot = c;
          for (unsigned int i = c + 1; i < n; ++i)
            if (fabs(a[i][c]) > fabs(a[pivot][c]))
              pivot = i;
          const double p = a[pivot][c];
          if (p == 0 || !isfinite(p))
            {
              regular = false;
              break;
            }
          for (unsigned int j = 0; j < n; ++j)
            {
              const double s = a[c][j], t = inverse[c][j];
              a[c][j]           = a[pivot][j];
              inverse[c][j]     = inverse[pivot][j];
              a[pivot][j]       = s;
              inverse[pivot][j] = t;
            }
          const double scale = 1. / p;
          for (unsigned int j = 0; j < n; ++j)
            {
              a[c][j] *= scale;
              inverse[c][j] *= scale;
            }
          for (unsigned int i = 0; i < n; ++i)
            if (i != c)
              {
                const double factor = a[i][c];
                for (unsigned int j = 0; j < n; ++j)
                  {
                    a[i][j] -= factor * a[c][j];
                    inverse[i][j] -= factor * inverse[c][j];
                  }
              }
        }
      Number *result = inverses + k * block_size * block_size;
      for (unsigned int i = 0; i < n; ++i)
        for (unsigned int j = 0; j < n; ++j)
          result[i * n + j] = regular ? static_cast<Number>(inverse[i][j]) :
                              i == j && diagonal[i] != 0 ?
                                        static_cast<Number>(1. / diagonal[i]) :
                                        Number(0);
      singular[k] = regular ? 0 : 1;
    }
  };



  /// z = B_k^-1 r on the rows of block k (row-major inverse, sums in
  /// Number in the order of the block's rows).
  template <typename Number>
  struct PointBlockApply
  {
    const int    *block_offsets;
    const int    *block_rows;
    unsigned int  block_size;
    const Number *inverses;
    const Number *r;
    Number       *z;

    GPU_ASSEMBLY_HOST_DEVICE void
    operator()(const std::size_t k) const
    {
      const int         *rows = block_rows + block_offsets[k];
      const unsigned int n =
        static_cast<unsigned int>(block_offsets[k + 1] - block_offsets[k]);
      const Number *inverse = inverses + k * block_size * block_size;
      Number        local[PointBlocks::max_block_size];
      for (unsigned int j = 0; j < n; ++j)
        local[j] = r[rows[j]];
      for (unsigned int i = 0; i < n; ++i)
        {
          Number sum = 0;
          for (unsigned int j = 0; j < n; ++j)
            sum += inverse[i * n + j] * local[j];
          z[rows[i]] = sum;
        }
    }
  };



  /// The CSR arrays of a matrix where its loops run (cg_csr()).
  template <typename Number>
  struct CSRArrays
  {
    const int    *row_offsets;
    const int    *columns;
    const Number *values;
    unsigned int  n_rows;
    bool          on_device;
  };



  /**
   * Point-block Jacobi: a vector operator (vmult()) for PreconditionedCG.
   * The blocks are given once per DoF numbering (reinit()); their inverses
   * are computed for the matrix's current values (initialize(), after every
   * assembly) where the matrix stores them, one block per index, and
   * applied one block per index: the result does not depend on the number
   * of threads. Besides PreconditionedCG's operations it needs cg_csr(A),
   * the matrix's CSRArrays, columns numbered as the rows.
   */
  template <typename MatrixType, typename VectorType>
  class PointBlockJacobi
  {
  public:
    using Number = internal::CGNumber<VectorType>;

    /// The blocks @p new_blocks, in the row numbering of @p A.
    void
    reinit(const PointBlocks &new_blocks, const MatrixType &A)
    {
      const CSRArrays<Number> csr = cg_csr(A);
      if (new_blocks.offsets.empty() || new_blocks.rows.size() != csr.n_rows ||
          static_cast<std::size_t>(new_blocks.offsets.back()) !=
            new_blocks.rows.size() ||
          new_blocks.block_size > PointBlocks::max_block_size)
        internal::throw_error(
          "PointBlockJacobi::reinit(): the blocks hold " +
          std::to_string(new_blocks.rows.size()) + " rows, the matrix " +
          std::to_string(csr.n_rows) + " (or a block is larger than " +
          std::to_string(PointBlocks::max_block_size) + ").");
      blocks = new_blocks;
      offsets.reinit(csr.on_device, blocks.offsets);
      rows.reinit(csr.on_device, blocks.rows);
      singular.reinit(csr.on_device, blocks.n_blocks());
      inverses.reinit(csr.on_device,
                      std::size_t(blocks.n_blocks()) * blocks.block_size *
                        blocks.block_size);
    }

    /// Whether reinit() has given blocks for the rows of @p A.
    bool
    fits(const MatrixType &A) const
    {
      const CSRArrays<Number> csr = cg_csr(A);
      return blocks.rows.size() == csr.n_rows && offsets.size() > 0 &&
             offsets.on_device() == csr.on_device;
    }

    /**
     * The inverses of the blocks of @p A's current values. Returns the
     * number of singular blocks of this process (they take the reciprocals
     * of their diagonal; PointBlockInverse).
     */
    unsigned int
    initialize(const MatrixType &A)
    {
      if (!fits(A))
        internal::throw_error(
          "PointBlockJacobi::initialize(): the blocks were made for another "
          "matrix; reinit() them with this one.");
      const CSRArrays<Number> csr = cg_csr(A);
      for_each_index(csr.on_device,
                     blocks.n_blocks(),
                     PointBlockInverse<Number>{csr.row_offsets,
                                               csr.columns,
                                               csr.values,
                                               offsets.data(),
                                               rows.data(),
                                               blocks.block_size,
                                               inverses.data(),
                                               singular.data()});
      std::vector<int> flags;
      singular.copy_to_host(flags);
      unsigned int n_singular = 0;
      for (const int flag : flags)
        n_singular += flag;
      return n_singular;
    }

    /// z = P r on the owned entries.
    void
    vmult(VectorType &z, const VectorType &r) const
    {
      for_each_index(offsets.on_device(),
                     blocks.n_blocks(),
                     PointBlockApply<Number>{offsets.data(),
                                             rows.data(),
                                             blocks.block_size,
                                             inverses.data(),
                                             r.data(),
                                             z.data()});
    }

    const PointBlocks &
    get_blocks() const
    {
      return blocks;
    }

    /// The inverses, block k's row-major at k * block_size^2.
    void
    copy_inverses_to_host(std::vector<Number> &values) const
    {
      inverses.copy_to_host(values);
    }

  private:
    PointBlocks           blocks;
    ResidentArray<int>    offsets, rows, singular;
    ResidentArray<Number> inverses;
  };
} // namespace GPUAssembly

#endif

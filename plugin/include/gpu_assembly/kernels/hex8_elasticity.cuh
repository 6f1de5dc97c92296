// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_kernels_hex8_elasticity_cuh
#define gpu_assembly_kernels_hex8_elasticity_cuh

// The block kernels of hex8 linear elasticity (Sanfui-Sharma): a thread
// block per group of G elements of a GlobalNZ element cluster, a thread per
// entry (or per row of entries) of each element matrix, element data
// written straight into GlobalNZ's layout
// (GlobalNZPlan::element_data_index(), through ElementOutput::position())
// so that GlobalNZ's reduction kernel sums them unchanged. Device code
// only: include from .cu files.

#include <gpu_assembly/base/cuda_check.h>
#include <gpu_assembly/base/kernel_launch.cuh>
#include <gpu_assembly/element/dirichlet_condensation.h>
#include <gpu_assembly/element/element_views.h>
#include <gpu_assembly/kernels/hex8_elasticity.h>

#include <cuda_runtime.h>

#include <cstddef>
#include <string>
#include <type_traits>

namespace GPUAssembly
{
  namespace internal
  {
    /// Threads per block of the hex8 block kernels but the row form.
    constexpr unsigned int hex8_block_threads = 256;

/// Blocks per multiprocessor that the compiler must fit for the row form,
/// through its registers; 0 leaves it free (94 registers in double, 3
/// blocks of 192 threads). 4 caps it at 80 registers with a 40-byte spill,
/// which gains too little to make spilling the default.
#ifndef GPU_ASSEMBLY_HEX8_ROW_MIN_BLOCKS
#  define GPU_ASSEMBLY_HEX8_ROW_MIN_BLOCKS 0
#endif

    /// Two values in one load: 16 bytes for double, 8 for float.
    template <typename Number>
    struct Hex8Pair;

    template <>
    struct Hex8Pair<double>
    {
      using type = double2;
    };

    template <>
    struct Hex8Pair<float>
    {
      using type = float2;
    };

    /// How the block kernel computes an entry.
    enum class Hex8EntryForm
    {
      /// The seed's standard implementation: B formed in shared memory,
      /// full dot products (Hex8::standard_entry).
      standard,
      /// The seed's shapeMap: the 3 x 3 block of C that shapeMap selects,
      /// four dot products of length 3 per Gauss point
      /// (Hex8::shape_map_entry).
      shape_map_block,
      /// shapeMap with the zeros of the isotropic C's blocks skipped
      /// (Hex8::shape_map_isotropic_entry), a thread per entry: what
      /// ElementStrategy::shape_map_per_entry runs.
      shape_map_isotropic,
      /// The same entries, each computed the same way, but a thread takes
      /// the 24 entries of one row (and the row's vector entry) in turn:
      /// what ElementStrategy::shape_map runs. Loads from shared memory are
      /// what bounds the per-entry form (a 16-byte load per two
      /// multiply-adds); a row's thread loads its node's gradients once
      /// and each column node's once per three entries, a quarter of the
      /// per-entry form's loads.
      shape_map_rows
    };

    /// Threads per block of a hex8 block kernel of @p form with @p G
    /// elements per block.
    constexpr unsigned int
    hex8_threads_per_block(const Hex8EntryForm form, const unsigned int G)
    {
      return form == Hex8EntryForm::shape_map_rows ? Hex8::n_dofs * G :
                                                     hex8_block_threads;
    }

    /**
     * The order in which a block's threads take the entries of a packed
     * upper triangle, as row * 32 + column (full matrices use the closed
     * form Hex8::entry_position_by_component_pair instead): storage order,
     * or, if by_component_pair, first the entries whose two DoFs have the
     * same component, then the others. The two kinds load different
     * numbers of values in Hex8::shape_map_isotropic_entry; ordered so, a
     * warp (4 entries of 8 elements) holds one kind and does not run both
     * branches.
     */
    template <bool symmetric>
    struct Hex8EntryOrder
    {
      static constexpr unsigned int n_entries =
        symmetric ? Hex8::n_symmetric_entries : Hex8::n_matrix_entries;
      unsigned short position[n_entries];

      static Hex8EntryOrder
      make(const bool by_component_pair)
      {
        Hex8EntryOrder order{};
        unsigned int   n = 0;
        for (const bool same_component : {true, false})
          for (unsigned int i = 0; i < n_entries; ++i)
            {
              unsigned int row, column;
              Hex8::entry_position(i, symmetric, row, column);
              if (!by_component_pair ?
                    same_component :
                    (row % 3 == column % 3) == same_component)
                order.position[n++] =
                  static_cast<unsigned short>(row * 32 + column);
            }
        return order;
      }
    };

    /**
     * Shared-memory layout of a block of G elements. Arrays are g-fastest
     * (value x of element g at x * G + g): a warp works on 4 entries of
     * the G = 8 elements side by side, so each quarter warp (the unit of a
     * 16-byte load) reads 8 adjacent pairs. Gradients are stored as pairs
     * (component k of node a at Gauss points 2p and 2p+1) at pair index
     * ((k * 4 + p) * 8 + a) * G + g, so one 16-byte load brings a thread
     * two of the values it needs.
     */
    template <typename Number, unsigned int G>
    struct Hex8SharedLayout
    {
      static constexpr unsigned int n_gradient_pairs =
        3 * (Hex8::n_q_points / 2) * Hex8::n_nodes * G;
      /// The shapeMap blocks C[map(c, k)][map(c2, l)] of the block form,
      /// 9 values padded to 5 pairs, at pair ((3 c + c2) * 5 + j) * G + g.
      static constexpr unsigned int n_block_pairs = 9 * 5 * G;
      static constexpr unsigned int n_constitutive =
        Hex8::n_voigt * Hex8::n_voigt * G;
      static constexpr unsigned int n_weights     = Hex8::n_q_points * G;
      static constexpr unsigned int n_coordinates = Hex8::n_nodes * 3 * G;
      static constexpr unsigned int n_lame        = 2 * G;
      static constexpr unsigned int n_b_matrix =
        Hex8::n_q_points * Hex8::n_voigt * Hex8::n_dofs * G;

      /// Bytes of dynamic shared memory the kernel needs.
      static constexpr std::size_t
      bytes(const Hex8EntryForm form, const unsigned int n_matrix_entries)
      {
        return sizeof(typename Hex8Pair<Number>::type) *
                 (2 * n_gradient_pairs +
                  (form == Hex8EntryForm::shape_map_block ? n_block_pairs :
                                                            0)) +
               sizeof(Number) * (n_weights + n_coordinates + n_lame +
                                 (form == Hex8EntryForm::standard ?
                                    n_constitutive + n_b_matrix :
                                    0)) +
               sizeof(unsigned short) * n_matrix_entries;
      }
    };

    /**
     * What the entry functions of hex8_elasticity.h read, for element g of
     * the block.
     */
    template <typename Number, unsigned int G>
    struct Hex8SharedView
    {
      using Pair = typename Hex8Pair<Number>::type;

      const Pair   *gradients;
      const Pair   *scaled_gradients;
      const Pair   *blocks;
      const Number *constitutive;
      const Number *weights;
      const Number *b_matrix;
      unsigned int  g;

      static __device__ unsigned int
      pair_index(const unsigned int p,
                 const unsigned int a,
                 const unsigned int k)
      {
        return (k * (Hex8::n_q_points / 2) + p) * Hex8::n_nodes + a;
      }

      __device__ void
      component_pair(const unsigned int p,
                     const unsigned int a,
                     const unsigned int k,
                     Number            *v) const
      {
        const Pair w = gradients[pair_index(p, a, k) * G + g];
        v[0]         = w.x;
        v[1]         = w.y;
      }

      __device__ void
      scaled_component_pair(const unsigned int p,
                            const unsigned int a,
                            const unsigned int k,
                            Number            *v) const
      {
        const Pair w = scaled_gradients[pair_index(p, a, k) * G + g];
        v[0]         = w.x;
        v[1]         = w.y;
      }

      __device__ void
      gradient_pair(const unsigned int p, const unsigned int a, Number *v) const
      {
        for (unsigned int k = 0; k < 3; ++k)
          {
            Number w[2];
            component_pair(p, a, k, w);
            v[k]     = w[0];
            v[3 + k] = w[1];
          }
      }

      __device__ void
      scaled_gradient_pair(const unsigned int p,
                           const unsigned int a,
                           Number            *v) const
      {
        for (unsigned int k = 0; k < 3; ++k)
          {
            Number w[2];
            scaled_component_pair(p, a, k, w);
            v[k]     = w[0];
            v[3 + k] = w[1];
          }
      }

      __device__ Number
      gradient(const unsigned int q,
               const unsigned int a,
               const unsigned int k) const
      {
        Number w[2];
        component_pair(q / 2, a, k, w);
        return w[q % 2];
      }

      __device__ Number
      JxW(const unsigned int q) const
      {
        return weights[q * G + g];
      }

      __device__ Number
      C(const unsigned int m, const unsigned int n) const
      {
        return constitutive[(m * Hex8::n_voigt + n) * G + g];
      }

      __device__ void
      constitutive_block(const unsigned int c,
                         const unsigned int c2,
                         Number (&Cs)[3][3]) const
      {
        Number values[10];
        for (unsigned int j = 0; j < 5; ++j)
          {
            const Pair w      = blocks[((3 * c + c2) * 5 + j) * G + g];
            values[2 * j]     = w.x;
            values[2 * j + 1] = w.y;
          }
        for (unsigned int k = 0; k < 3; ++k)
          for (unsigned int l = 0; l < 3; ++l)
            Cs[k][l] = values[3 * k + l];
      }

      __device__ Number
      B(const unsigned int q, const unsigned int m, const unsigned int j) const
      {
        return b_matrix[((q * Hex8::n_voigt + m) * Hex8::n_dofs + j) * G + g];
      }
    };

    /**
     * The index of entry (@p row, @p column) among an element's entries:
     * row-major, or in the packed upper triangle if @p symmetric. Where the
     * hex8 kernels write an entry follows from it through
     * ElementOutput::position(), GlobalNZ's layout.
     */
    template <typename Number, bool symmetric>
    __device__ unsigned int
    hex8_matrix_entry(const unsigned int row, const unsigned int column)
    {
      return symmetric ?
               SymmetricElementOutput<Number>::packed_index(Hex8::n_dofs,
                                                            row,
                                                            column) :
               row * Hex8::n_dofs + column;
    }

    /// GlobalNZ's layout of hex8 element data: full matrices grouped by the
    /// 3 components of a column node where the plan says so.
    template <typename Number>
    using Hex8Output = ElementOutput<Number, Hex8::n_components>;

    /**
     * The view of a thread of the row form for
     * Hex8::shape_map_isotropic_entries: the gradients of the row's node a,
     * which the thread reads for each of its 24 entries, from registers;
     * those of the column nodes (times JxW) from shared memory. The node
     * argument of component_pair() is a by construction and not looked at.
     */
    template <typename Number, unsigned int G>
    struct Hex8RowView
    {
      using Pairs = Number[Hex8::n_q_points / 2][3][2];

      const Pairs                     &row_node;
      const Hex8SharedView<Number, G> &shared;

      __device__ void
      component_pair(const unsigned int p,
                     const unsigned int,
                     const unsigned int k,
                     Number            *v) const
      {
        v[0] = row_node[p][k][0];
        v[1] = row_node[p][k][1];
      }

      __device__ void
      scaled_component_pair(const unsigned int p,
                            const unsigned int b,
                            const unsigned int k,
                            Number            *v) const
      {
        shared.scaled_component_pair(p, b, k, v);
      }
    };

    /**
     * The entries of row 3 a + c (columns from 3 a + c on if @p symmetric)
     * of element g of the block, written to @p out
     * (Hex8Output::position()). The
     * component @p c is a template argument so that every index into the
     * registers is a constant once the loops are unrolled: with a run-time
     * index the arrays would go to local memory.
     */
    template <typename Number, bool symmetric, unsigned int c, unsigned int G>
    __device__ void
    hex8_row_entries(const Hex8SharedView<Number, G> &view,
                     const unsigned int               a,
                     const Number                     lambda,
                     const Number                     mu,
                     Number                          *out,
                     const unsigned int               B,
                     const bool                       grouped)
    {
      Number row_node[Hex8::n_q_points / 2][3][2];
#pragma unroll
      for (unsigned int p = 0; p < Hex8::n_q_points / 2; ++p)
#pragma unroll
        for (unsigned int k = 0; k < 3; ++k)
          view.component_pair(p, a, k, row_node[p][k]);
      const Hex8RowView<Number, G> row_view{row_node, view};
      const unsigned int           row = 3 * a + c;
      for (unsigned int b = symmetric ? a : 0; b < Hex8::n_nodes; ++b)
        {
          Number values[3];
          Hex8::shape_map_isotropic_entries<Number>(row_view,
                                                    a,
                                                    c,
                                                    b,
                                                    lambda,
                                                    mu,
                                                    values);
#pragma unroll
          for (unsigned int c2 = 0; c2 < 3; ++c2)
            {
              // (As ints: for c = 0 an unsigned c2 < c is always false.)
              if (symmetric && b == a && static_cast<int>(c2) < int(c))
                continue;
              out[Hex8Output<Number>::position(
                hex8_matrix_entry<Number, symmetric>(row, 3 * b + c2),
                B,
                grouped)] = values[c2];
            }
        }
    }



    /**
     * The block kernel. Block r covers slots [r G, r G + G) of the GlobalNZ
     * plan (G divides the plan's elements per block B, so a block stays in
     * one cluster). Phase 1 gathers coordinates and material into shared
     * memory; phase 2 computes, a thread per element and Gauss point, the
     * Jacobian and the physical gradients, and with the other threads the
     * constitutive matrices (and the shapeMap blocks of the block form);
     * the standard implementation then forms B. Phase 3 computes the
     * entries, a thread per entry (or, in the row form, per row) and
     * element, and writes them coalesced in runs of G. Since the block
     * size (256, or 24 G) is a multiple of G, a thread always works on the
     * same element and keeps its lambda and mu in registers.
     */
    template <typename Number,
              bool          symmetric,
              Hex8EntryForm form,
              unsigned int  G>
    __global__ void
    __launch_bounds__(hex8_threads_per_block(form, G),
                      form == Hex8EntryForm::shape_map_rows ?
                        GPU_ASSEMBLY_HEX8_ROW_MIN_BLOCKS :
                        0)
      hex8_element_kernel(const Hex8ElasticityKernel<Number> kernel,
                          const Hex8EntryOrder<symmetric>    order,
                          const int *__restrict__ block_element,
                          const int *__restrict__ cluster_node_offsets,
                          const int *__restrict__ cluster_nodes,
                          const int *__restrict__ block_connectivity,
                          const Number *__restrict__ block_supplemental,
                          const unsigned int n_supplemental,
                          const unsigned int B,
                          const unsigned int entry_group,
                          const Number *__restrict__ nodal_data,
                          Number *__restrict__ element_data)
    {
      using Layout       = Hex8SharedLayout<Number, G>;
      const bool grouped = entry_group > 1;
      using Pair         = typename Hex8Pair<Number>::type;
      constexpr unsigned int n_matrix_entries =
        Hex8EntryOrder<symmetric>::n_entries;
      constexpr unsigned int n_entries = n_matrix_entries + Hex8::n_dofs;
      constexpr unsigned int n_nodes   = Hex8::n_nodes;

      extern __shared__ __align__(16) unsigned char shared_bytes[];
      Pair *const   grads  = reinterpret_cast<Pair *>(shared_bytes);
      Pair *const   scaled = grads + Layout::n_gradient_pairs;
      Pair *const   blocks = scaled + Layout::n_gradient_pairs;
      Number *const C      = reinterpret_cast<Number *>(
        blocks +
        (form == Hex8EntryForm::shape_map_block ? Layout::n_block_pairs : 0));
      Number *const weights =
        C + (form == Hex8EntryForm::standard ? Layout::n_constitutive : 0);
      Number *const         x        = weights + Layout::n_weights;
      Number *const         lame     = x + Layout::n_coordinates;
      Number *const         b_matrix = lame + Layout::n_lame;
      unsigned short *const position = reinterpret_cast<unsigned short *>(
        b_matrix + (form == Hex8EntryForm::standard ? Layout::n_b_matrix : 0));

      const unsigned int tid   = threadIdx.x;
      const std::size_t  slot0 = static_cast<std::size_t>(blockIdx.x) * G;
      const unsigned int k     = slot0 / B;
      const unsigned int t0    = slot0 - static_cast<std::size_t>(k) * B;

      // Phase 1: coordinates, Lame parameters, the packed-entry order.
      const int cluster_first = cluster_node_offsets[k];
      for (unsigned int i = tid; i < Layout::n_coordinates; i += blockDim.x)
        {
          const unsigned int g = i % G, ad = i / G;
          const int          node = cluster_nodes
            [cluster_first +
             block_connectivity
               [(static_cast<std::size_t>(k) * n_nodes + ad / 3) * B + t0 + g]];
          x[i] = nodal_data[static_cast<std::size_t>(node) * 3 + ad % 3];
        }
      if (tid < G)
        {
          Number E, nu;
          kernel.material(block_supplemental +
                            static_cast<std::size_t>(k) * n_supplemental * B +
                            t0 + tid,
                          B,
                          E,
                          nu);
          lame[tid]     = Hex8::lame_lambda(E, nu);
          lame[G + tid] = Hex8::lame_mu(E, nu);
        }
      if constexpr (symmetric && form != Hex8EntryForm::shape_map_rows)
        for (unsigned int i = tid; i < n_matrix_entries; i += blockDim.x)
          position[i] = order.position[i];
      __syncthreads();

      // Phase 2: the geometry of every Gauss point of every element (the
      // first 8 G tasks), then the constitutive matrices and blocks.
      constexpr unsigned int n_geometry = Hex8::n_q_points * G;
      constexpr unsigned int n_material =
        form == Hex8EntryForm::standard ?
          Hex8::n_voigt * Hex8::n_voigt :
          (form == Hex8EntryForm::shape_map_block ? 9 * 10 : 0);
      Number *const gradient_values = reinterpret_cast<Number *>(grads);
      Number *const scaled_values   = reinterpret_cast<Number *>(scaled);
      for (unsigned int i = tid; i < n_geometry + n_material * G;
           i += blockDim.x)
        if (i < n_geometry)
          {
            const unsigned int g = i % G, q = i / G;
            // In registers first: shared memory bandwidth is what the
            // kernel is short of, so the gradients are not read back for
            // scaling.
            Number       gradient[n_nodes][3];
            const Number JxW = Hex8::compute_geometry<Number>(
              [&](const unsigned int a, const unsigned int d) {
                return x[(a * 3 + d) * G + g];
              },
              q,
              [&](const unsigned int a, const unsigned int d) -> Number & {
                return gradient[a][d];
              });
            weights[q * G + g] = JxW;
            for (unsigned int a = 0; a < n_nodes; ++a)
              for (unsigned int d = 0; d < 3; ++d)
                {
                  const unsigned int index =
                    (Hex8SharedView<Number, G>::pair_index(q / 2, a, d) * G +
                     g) *
                      2 +
                    q % 2;
                  gradient_values[index] = gradient[a][d];
                  scaled_values[index]   = gradient[a][d] * JxW;
                }
          }
        else
          {
            const unsigned int j = i - n_geometry, g = j % G, r = j / G;
            const Number       lambda = lame[g], mu = lame[G + g];
            if (form == Hex8EntryForm::standard)
              C[r * G + g] = Hex8::constitutive_entry(lambda,
                                                      mu,
                                                      r / Hex8::n_voigt,
                                                      r % Hex8::n_voigt);
            else
              {
                // Value kl of block (c, c2): what the shapeMap table
                // selects for a thread of the component pair (c, c2).
                const unsigned int c = r / 30, c2 = (r / 10) % 3, kl = r % 10;
                reinterpret_cast<Number *>(
                  blocks)[(((3 * c + c2) * 5 + kl / 2) * G + g) * 2 + kl % 2] =
                  kl < 9 ?
                    Hex8::constitutive_entry(lambda,
                                             mu,
                                             Hex8::shape_map(c, kl / 3),
                                             Hex8::shape_map(c2, kl % 3)) :
                    Number(0);
              }
          }
      __syncthreads();

      Hex8SharedView<Number, G>
        view{grads, scaled, blocks, C, weights, b_matrix, tid % G};
      if constexpr (form == Hex8EntryForm::standard)
        {
          for (unsigned int i = tid; i < Layout::n_b_matrix; i += blockDim.x)
            {
              view.g                 = i % G;
              const unsigned int qmj = i / G;
              const unsigned int j   = qmj % Hex8::n_dofs;
              const unsigned int qm  = qmj / Hex8::n_dofs;
              b_matrix[i]            = Hex8::b_matrix_entry<Number>(view,
                                                         qm / Hex8::n_voigt,
                                                         qm % Hex8::n_voigt,
                                                         j);
            }
          view.g = tid % G;
          __syncthreads();
        }

      // Phase 3: a thread per entry (or row) and element; consecutive
      // threads take the G elements of one entry, so a warp writes runs of
      // G values.
      const unsigned int g = tid % G;
      if (block_element[slot0 + g] < 0)
        return;
      const Number  lambda = lame[g], mu = lame[G + g];
      Number *const out = element_data +
                          static_cast<std::size_t>(k) * n_entries * B +
                          (t0 + g) * entry_group;
      if constexpr (form == Hex8EntryForm::shape_map_rows)
        {
          // Component-major, so that the threads of a warp (4 nodes of 8
          // elements at G = 8) share their component and take one branch.
          const unsigned int r = tid / G, c = r / Hex8::n_nodes,
                             a = r % Hex8::n_nodes;
          switch (c)
            {
              case 0:
                hex8_row_entries<Number, symmetric, 0>(view,
                                                       a,
                                                       lambda,
                                                       mu,
                                                       out,
                                                       B,
                                                       grouped);
                break;
              case 1:
                hex8_row_entries<Number, symmetric, 1>(view,
                                                       a,
                                                       lambda,
                                                       mu,
                                                       out,
                                                       B,
                                                       grouped);
                break;
              default:
                hex8_row_entries<Number, symmetric, 2>(view,
                                                       a,
                                                       lambda,
                                                       mu,
                                                       out,
                                                       B,
                                                       grouped);
            }
          out[Hex8Output<Number>::position(n_matrix_entries + 3 * a + c,
                                           B,
                                           grouped)] =
            Hex8::body_force_entry<Number>(view, 3 * a + c, kernel.body_force);
        }
      else
        for (unsigned int i = tid; i < n_entries * G; i += blockDim.x)
          {
            const unsigned int w = i / G;
            Number             value;
            unsigned int       entry = w;
            if (w < n_matrix_entries)
              {
                unsigned int row, column;
                if constexpr (symmetric)
                  {
                    row    = position[w] / 32;
                    column = position[w] % 32;
                  }
                else
                  Hex8::entry_position_by_component_pair(
                    w,
                    form == Hex8EntryForm::shape_map_isotropic,
                    row,
                    column);
                if constexpr (form == Hex8EntryForm::shape_map_isotropic)
                  value = Hex8::shape_map_isotropic_entry<Number>(view,
                                                                  row,
                                                                  column,
                                                                  lambda,
                                                                  mu);
                else if constexpr (form == Hex8EntryForm::shape_map_block)
                  value = Hex8::shape_map_entry<Number>(view, row, column);
                else
                  value = Hex8::standard_entry<Number>(view, row, column);
                entry = hex8_matrix_entry<Number, symmetric>(row, column);
              }
            else
              value = Hex8::body_force_entry<Number>(view,
                                                     w - n_matrix_entries,
                                                     kernel.body_force);
            out[Hex8Output<Number>::position(entry, B, grouped)] = value;
          }
    }



    /**
     * Dirichlet condensation of the element data that the block kernel
     * wrote, a thread per slot, for the slots of constrained elements:
     * condense_dirichlet() needs a whole element matrix, which no thread of
     * the block kernel holds.
     */
    template <typename Number, bool symmetric>
    __global__ void
    hex8_condense_kernel(
      const unsigned int n_slots,
      const unsigned int B,
      const unsigned int n_matrix_entries,
      const unsigned int n_entries,
      const unsigned int entry_group,
      const unsigned char *__restrict__ block_has_constraints,
      const int *__restrict__ block_location,
      const unsigned char *__restrict__ dof_is_constrained,
      const Number *__restrict__ inhomogeneities,
      const bool use_inhomogeneities_for_rhs,
      Number    *element_data)
    {
      const unsigned int slot = blockIdx.x * blockDim.x + threadIdx.x;
      if (slot >= n_slots || block_has_constraints[slot] == 0)
        return;
      const unsigned int k = slot / B, t = slot % B;
      Number *const      matrix = element_data +
                             static_cast<std::size_t>(k) * n_entries * B +
                             t * entry_group;
      using Output = typename std::conditional<symmetric,
                                               SymmetricElementOutput<Number>,
                                               Hex8Output<Number>>::type;
      Output output{matrix,
                    matrix + static_cast<std::size_t>(n_matrix_entries) * B,
                    Hex8::n_dofs,
                    B};
      if constexpr (!symmetric)
        output.grouped = entry_group > 1;
      condense_dirichlet(Hex8::n_dofs,
                         block_location +
                           static_cast<std::size_t>(k) * Hex8::n_dofs * B + t,
                         B,
                         dof_is_constrained,
                         inhomogeneities,
                         use_inhomogeneities_for_rhs,
                         output);
    }



    template <typename Number,
              bool          symmetric,
              Hex8EntryForm form,
              unsigned int  G>
    void
    launch_hex8_element_kernel(const Hex8ElasticityKernel<Number>   &kernel,
                               const GlobalNZStageArguments<Number> &arguments,
                               const cudaStream_t                    stream)
    {
      // Storage order for the other forms: neighbouring columns keep the
      // standard implementation's reads of B free of bank conflicts.
      static const Hex8EntryOrder<symmetric> order =
        Hex8EntryOrder<symmetric>::make(form ==
                                        Hex8EntryForm::shape_map_isotropic);
      const auto function     = hex8_element_kernel<Number, symmetric, form, G>;
      const std::size_t bytes = Hex8SharedLayout<Number, G>::bytes(
        form,
        symmetric && form != Hex8EntryForm::shape_map_rows ?
          Hex8EntryOrder<symmetric>::n_entries :
          0);
      launch_kernel("hex8_element_kernel",
                    function,
                    arguments.n_slots / G,
                    hex8_threads_per_block(form, G),
                    bytes,
                    stream,
                    kernel,
                    order,
                    arguments.block_element,
                    arguments.cluster_node_offsets,
                    arguments.cluster_nodes,
                    arguments.block_connectivity,
                    arguments.block_supplemental,
                    arguments.n_supplemental,
                    arguments.B,
                    arguments.entry_group,
                    arguments.nodal_data,
                    arguments.element_data);
    }

    template <typename Number, bool symmetric, Hex8EntryForm form>
    void
    launch_hex8_element_kernel(const Hex8ElasticityKernel<Number>   &kernel,
                               const unsigned int                    G,
                               const GlobalNZStageArguments<Number> &arguments,
                               const cudaStream_t                    stream)
    {
      switch (G)
        {
          case 1:
            return launch_hex8_element_kernel<Number, symmetric, form, 1>(
              kernel,
              arguments,
              stream);
          case 2:
            return launch_hex8_element_kernel<Number, symmetric, form, 2>(
              kernel,
              arguments,
              stream);
          case 4:
            return launch_hex8_element_kernel<Number, symmetric, form, 4>(
              kernel,
              arguments,
              stream);
          case 8:
            return launch_hex8_element_kernel<Number, symmetric, form, 8>(
              kernel,
              arguments,
              stream);
          default:
            throw_error("The hex8 block kernels take 1, 2, 4 or 8 elements "
                        "per block, not " +
                        std::to_string(G) + ".");
        }
    }

    /**
     * Launch the hex8 block kernel that computes entries in @p form with
     * @p G elements per block (1, 2, 4 or 8, dividing arguments.B) on
     * @p stream, writing full (or, if @p symmetric, packed upper-triangle)
     * element matrices and vectors into GlobalNZ's layout.
     */
    template <typename Number>
    void
    launch_hex8_element_kernel(const Hex8ElasticityKernel<Number>   &kernel,
                               const Hex8EntryForm                   form,
                               const bool                            symmetric,
                               const unsigned int                    G,
                               const GlobalNZStageArguments<Number> &arguments,
                               const cudaStream_t                    stream = 0)
    {
      if (arguments.entry_group != 1 &&
          (symmetric || arguments.entry_group != Hex8::n_components))
        throw_error("launch_hex8_element_kernel(): element data come in "
                    "groups of 1 or, for full matrices, 3 entries, not " +
                    std::to_string(arguments.entry_group) + ".");
      if (G == 0 || arguments.B % G != 0)
        throw_error("launch_hex8_element_kernel(): needs a group size G "
                    "dividing the cluster size.");
      const auto launch = [&](const auto symmetric_constant,
                              const auto form_constant) {
        launch_hex8_element_kernel<Number,
                                   decltype(symmetric_constant)::value,
                                   decltype(form_constant)::value>(kernel,
                                                                   G,
                                                                   arguments,
                                                                   stream);
      };
      using Form = Hex8EntryForm;
      if (symmetric)
        switch (form)
          {
            case Form::standard:
              return launch(std::true_type(),
                            std::integral_constant<Form, Form::standard>());
            case Form::shape_map_block:
              return launch(
                std::true_type(),
                std::integral_constant<Form, Form::shape_map_block>());
            case Form::shape_map_isotropic:
              return launch(
                std::true_type(),
                std::integral_constant<Form, Form::shape_map_isotropic>());
            case Form::shape_map_rows:
              return launch(
                std::true_type(),
                std::integral_constant<Form, Form::shape_map_rows>());
          }
      else
        switch (form)
          {
            case Form::standard:
              return launch(std::false_type(),
                            std::integral_constant<Form, Form::standard>());
            case Form::shape_map_block:
              return launch(
                std::false_type(),
                std::integral_constant<Form, Form::shape_map_block>());
            case Form::shape_map_isotropic:
              return launch(
                std::false_type(),
                std::integral_constant<Form, Form::shape_map_isotropic>());
            case Form::shape_map_rows:
              return launch(
                std::false_type(),
                std::integral_constant<Form, Form::shape_map_rows>());
          }
    }

    /**
     * Launch the hex8 block kernel of @p strategy: shape_map runs the
     * isotropic shapeMap form with a thread per row (Hex8ElasticityKernel's
     * C is isotropic), shape_map_per_entry the same with a thread per
     * entry, standard the seed's standard implementation, each with
     * strategy.elements_per_block elements per block.
     */
    template <typename Number>
    void
    launch_hex8_element_kernel(const Hex8ElasticityKernel<Number>   &kernel,
                               const Hex8BlockStrategy              &strategy,
                               const bool                            symmetric,
                               const GlobalNZStageArguments<Number> &arguments,
                               const cudaStream_t                    stream = 0)
    {
      Hex8EntryForm form = Hex8EntryForm::standard;
      switch (strategy.element_strategy)
        {
          case ElementStrategy::thread_per_element:
            throw_error("launch_hex8_element_kernel(): needs a shapeMap or "
                        "the standard strategy.");
          case ElementStrategy::shape_map:
            form = Hex8EntryForm::shape_map_rows;
            break;
          case ElementStrategy::shape_map_per_entry:
            form = Hex8EntryForm::shape_map_isotropic;
            break;
          case ElementStrategy::standard:
            break;
        }
      launch_hex8_element_kernel(kernel,
                                 form,
                                 symmetric,
                                 strategy.elements_per_block,
                                 arguments,
                                 stream);
    }
  } // namespace internal



  template <typename Number>
  void
  ElementStageTraits<Hex8ElasticityKernel<Number>>::launch_global_nz_stage(
    const Hex8ElasticityKernel<Number>   &kernel,
    const ElementStageData<Number>       &data,
    const GlobalNZStageArguments<Number> &arguments,
    CUstream_st                          *stream)
  {
    const Hex8BlockStrategy &strategy = kernel.block_strategy;
    if (data.n_fields != 3)
      internal::throw_error(
        "The element strategy " + to_string(strategy.element_strategy) +
        " reads the nodal coordinates: set n_nodal_fields to 3 (it is " +
        std::to_string(data.n_fields) + ").");
    const unsigned int G = strategy.elements_per_block;
    if (!((G == 1 || G == 2 || G == 4 || G == 8) && arguments.B % G == 0))
      internal::throw_error(
        "Hex8BlockStrategy::elements_per_block must be 1, 2, 4 or 8 and "
        "divide GlobalNZ's elements per block; it is " +
        std::to_string(G) + ".");
    if (kernel.per_element_material &&
        arguments.n_supplemental < Hex8::material_offset + 2)
      internal::throw_error(
        "DeviceAssembler::assemble(): the kernel reads a per-element "
        "material, but the mesh arrays have none "
        "(append_element_material()).");
    internal::launch_hex8_element_kernel(kernel,
                                         strategy,
                                         arguments.symmetric,
                                         arguments,
                                         stream);
    if (arguments.any_constrained_element)
      {
        const auto condense = arguments.symmetric ?
                                internal::hex8_condense_kernel<Number, true> :
                                internal::hex8_condense_kernel<Number, false>;
        internal::launch_kernel_over("hex8_condense_kernel",
                                     condense,
                                     arguments.n_slots,
                                     128,
                                     stream,
                                     arguments.n_slots,
                                     arguments.B,
                                     arguments.n_matrix_entries,
                                     arguments.n_entries,
                                     arguments.entry_group,
                                     arguments.block_has_constraints,
                                     arguments.block_location,
                                     data.dof_is_constrained,
                                     data.inhomogeneities,
                                     data.use_inhomogeneities_for_rhs,
                                     arguments.element_data);
      }
  }
} // namespace GPUAssembly

#endif

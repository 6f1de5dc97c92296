#ifndef gpu_assembly_kernels_hex8_elasticity_cuh
#define gpu_assembly_kernels_hex8_elasticity_cuh

// The block kernels of hex8 linear elasticity (Sanfui-Sharma): a thread
// block per group of G elements of a GlobalNZ element cluster, a thread per
// entry of each element matrix, element data written straight into
// GlobalNZ's column-major layout (entry i of slot (k, t) at
// (k * n_entries + i) * B + t) so that GlobalNZ's reduction kernel sums them
// unchanged. Device code only: include from .cu files.

#include <gpu_assembly/base/cuda_check.h>
#include <gpu_assembly/kernels/dirichlet_condensation.h>
#include <gpu_assembly/kernels/element_views.h>
#include <gpu_assembly/kernels/hex8_elasticity.h>

#include <cuda_runtime.h>

#include <cstddef>
#include <string>
#include <type_traits>

namespace GPUAssembly
{
  namespace internal
  {
    /// Threads per block of the hex8 block kernels.
    constexpr unsigned int hex8_block_threads = 256;

    /**
     * Shared-memory layout of a block of G elements. Arrays are g-fastest
     * (value x of element g at x * G + g) so that the threads of a warp,
     * which work on the G elements side by side, read adjacent words.
     */
    template <typename Number, unsigned int G>
    struct Hex8SharedLayout
    {
      static constexpr unsigned int n_coordinates = Hex8::n_nodes * 3 * G;
      static constexpr unsigned int n_gradients =
        Hex8::n_q_points * Hex8::n_nodes * 3 * G;
      static constexpr unsigned int n_weights = Hex8::n_q_points * G;
      static constexpr unsigned int n_constitutive =
        Hex8::n_voigt * Hex8::n_voigt * G;
      static constexpr unsigned int n_b_matrix =
        Hex8::n_q_points * Hex8::n_voigt * Hex8::n_dofs * G;

      /// Bytes of dynamic shared memory the kernel needs.
      static constexpr std::size_t
      bytes(const bool standard, const unsigned int n_matrix_entries)
      {
        return sizeof(Number) * (n_coordinates + 2 * n_gradients + n_weights +
                                 n_constitutive + (standard ? n_b_matrix : 0)) +
               sizeof(unsigned short) * n_matrix_entries + 16;
      }
    };

    /**
     * What the entry functions of hex8_elasticity.h read, for element g of
     * the block: gradients, their JxW-scaled copy, the constitutive
     * matrix, the shapeMap table and, for the standard implementation, B.
     */
    template <typename Number, unsigned int G>
    struct Hex8SharedView
    {
      const Number        *gradients;
      const Number        *scaled_gradients;
      const Number        *weights;
      const Number        *constitutive;
      const Number        *b_matrix;
      const unsigned char *map_table;
      unsigned int         g;

      __device__ Number
      gradient(const unsigned int q,
               const unsigned int a,
               const unsigned int k) const
      {
        return gradients[((q * Hex8::n_nodes + a) * 3 + k) * G + g];
      }

      __device__ Number
      scaled_gradient(const unsigned int q,
                      const unsigned int a,
                      const unsigned int k) const
      {
        return scaled_gradients[((q * Hex8::n_nodes + a) * 3 + k) * G + g];
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

      __device__ unsigned int
      map(const unsigned int c, const unsigned int k) const
      {
        return map_table[c * 3 + k];
      }

      __device__ Number
      B(const unsigned int q, const unsigned int m, const unsigned int j) const
      {
        return b_matrix[((q * Hex8::n_voigt + m) * Hex8::n_dofs + j) * G + g];
      }
    };

    /**
     * The block kernel. Block r covers slots [r G, r G + G) of the GlobalNZ
     * plan (G divides the plan's elements per block B, so a block stays in
     * one cluster). Phase 1 gathers coordinates, material and the tables
     * into shared memory; phase 2 computes, a thread per element and Gauss
     * point, the Jacobian and the physical gradients (and, for the
     * standard implementation, B); phase 3 computes the entries, a thread
     * per entry and element, and writes them coalesced in runs of G.
     */
    template <typename Number,
              bool         symmetric,
              bool         use_shape_map,
              unsigned int G>
    __global__ void
    __launch_bounds__(hex8_block_threads)
      hex8_element_kernel(const Hex8ElasticityKernel<Number> kernel,
                          const int *__restrict__ block_element,
                          const int *__restrict__ cluster_node_offsets,
                          const int *__restrict__ cluster_nodes,
                          const int *__restrict__ block_connectivity,
                          const Number *__restrict__ block_supplemental,
                          const unsigned int n_supplemental,
                          const unsigned int B,
                          const Number *__restrict__ nodal_data,
                          Number *__restrict__ element_data)
    {
      using Layout = Hex8SharedLayout<Number, G>;
      constexpr unsigned int n_matrix_entries =
        symmetric ? Hex8::n_symmetric_entries : Hex8::n_matrix_entries;
      constexpr unsigned int n_entries = n_matrix_entries + Hex8::n_dofs;

      extern __shared__ __align__(16) unsigned char shared_bytes[];
      Number *const         x        = reinterpret_cast<Number *>(shared_bytes);
      Number *const         grads    = x + Layout::n_coordinates;
      Number *const         scaled   = grads + Layout::n_gradients;
      Number *const         weights  = scaled + Layout::n_gradients;
      Number *const         C        = weights + Layout::n_weights;
      Number *const         b_matrix = C + Layout::n_constitutive;
      unsigned short *const position = reinterpret_cast<unsigned short *>(
        b_matrix + (use_shape_map ? 0 : Layout::n_b_matrix));
      unsigned char *const map_table =
        reinterpret_cast<unsigned char *>(position + n_matrix_entries);

      const unsigned int tid   = threadIdx.x;
      const std::size_t  slot0 = static_cast<std::size_t>(blockIdx.x) * G;
      const unsigned int k     = slot0 / B;
      const unsigned int t0    = slot0 - static_cast<std::size_t>(k) * B;

      // Phase 1: coordinates, constitutive matrices, index tables.
      const int cluster_first = cluster_node_offsets[k];
      for (unsigned int i = tid; i < Layout::n_coordinates; i += blockDim.x)
        {
          const unsigned int g = i % G, ad = i / G, a = ad / 3, d = ad % 3;
          const int          node =
            cluster_nodes[cluster_first +
                          block_connectivity
                            [(static_cast<std::size_t>(k) * Hex8::n_nodes + a) *
                               B +
                             t0 + g]];
          x[i] = nodal_data[static_cast<std::size_t>(node) * 3 + d];
        }
      for (unsigned int i = tid; i < Layout::n_constitutive; i += blockDim.x)
        {
          const unsigned int g = i % G, mn = i / G;
          Number             E, nu;
          kernel.material(block_supplemental +
                            static_cast<std::size_t>(k) * n_supplemental * B +
                            t0 + g,
                          B,
                          E,
                          nu);
          C[i] = Hex8::constitutive_entry(Hex8::lame_lambda(E, nu),
                                          Hex8::lame_mu(E, nu),
                                          mn / Hex8::n_voigt,
                                          mn % Hex8::n_voigt);
        }
      for (unsigned int i = tid; i < n_matrix_entries; i += blockDim.x)
        {
          unsigned int row, column;
          Hex8::entry_position(i, symmetric, row, column);
          position[i] = static_cast<unsigned short>(row * 32 + column);
        }
      if (tid < 9)
        map_table[tid] = Hex8::shape_map(tid / 3, tid % 3);
      __syncthreads();

      // Phase 2: geometry of every Gauss point of every element.
      for (unsigned int i = tid; i < Hex8::n_q_points * G; i += blockDim.x)
        {
          const unsigned int g = i % G, q = i / G;
          const Number       JxW = Hex8::compute_geometry<Number>(
            [&](const unsigned int a, const unsigned int d) {
              return x[(a * 3 + d) * G + g];
            },
            q,
            [&](const unsigned int a, const unsigned int d) -> Number       &{
              return grads[((q * Hex8::n_nodes + a) * 3 + d) * G + g];
            });
          weights[q * G + g] = JxW;
          for (unsigned int ad = 0; ad < Hex8::n_nodes * 3; ++ad)
            scaled[(q * Hex8::n_nodes * 3 + ad) * G + g] =
              grads[(q * Hex8::n_nodes * 3 + ad) * G + g] * JxW;
        }
      __syncthreads();

      Hex8SharedView<Number, G>
        view{grads, scaled, weights, C, b_matrix, map_table, 0};
      if constexpr (!use_shape_map)
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
          __syncthreads();
        }

      // Phase 3: a thread per entry and element; consecutive threads take
      // the G elements of one entry, so a warp writes runs of G values.
      Number *const out =
        element_data + static_cast<std::size_t>(k) * n_entries * B + t0;
      for (unsigned int i = tid; i < n_entries * G; i += blockDim.x)
        {
          const unsigned int g     = i % G;
          const unsigned int entry = i / G;
          if (block_element[slot0 + g] < 0)
            continue;
          view.g = g;
          Number value;
          if (entry < n_matrix_entries)
            {
              const unsigned int row    = position[entry] / 32;
              const unsigned int column = position[entry] % 32;
              if constexpr (use_shape_map)
                value = Hex8::shape_map_entry<Number>(view, row, column);
              else
                value = Hex8::standard_entry<Number>(view, row, column);
            }
          else
            value = Hex8::body_force_entry<Number>(view,
                                                   entry - n_matrix_entries,
                                                   kernel.body_force);
          out[static_cast<std::size_t>(entry) * B + g] = value;
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
      Number *const      matrix =
        element_data + static_cast<std::size_t>(k) * n_entries * B + t;
      using Output = typename std::conditional<symmetric,
                                               SymmetricElementOutput<Number>,
                                               ElementOutput<Number>>::type;
      const Output output{matrix,
                          matrix +
                            static_cast<std::size_t>(n_matrix_entries) * B,
                          Hex8::n_dofs,
                          B};
      condense_dirichlet(Hex8::n_dofs,
                         block_location +
                           static_cast<std::size_t>(k) * Hex8::n_dofs * B + t,
                         B,
                         dof_is_constrained,
                         inhomogeneities,
                         use_inhomogeneities_for_rhs,
                         output);
    }
    /// The arrays a hex8 block kernel reads and writes: a GlobalNZ plan's
    /// element side (global_nz_plan.h) and the element-data buffer.
    template <typename Number>
    struct Hex8KernelArguments
    {
      const int    *block_element;
      const int    *cluster_node_offsets;
      const int    *cluster_nodes;
      const int    *block_connectivity;
      const Number *block_supplemental;
      unsigned int  n_supplemental;
      /// Elements per GlobalNZ cluster (the plan's elements_per_block).
      unsigned int B;
      /// Slots of the plan: clusters times B.
      std::size_t   n_slots;
      const Number *nodal_data;
      Number       *element_data;
    };

    template <typename Number,
              bool         symmetric,
              bool         use_shape_map,
              unsigned int G>
    void
    launch_hex8_element_kernel(const Hex8ElasticityKernel<Number> &kernel,
                               const Hex8KernelArguments<Number>  &arguments,
                               const cudaStream_t                  stream)
    {
      const auto function =
        hex8_element_kernel<Number, symmetric, use_shape_map, G>;
      const std::size_t bytes =
        Hex8SharedLayout<Number, G>::bytes(!use_shape_map,
                                           symmetric ?
                                             Hex8::n_symmetric_entries :
                                             Hex8::n_matrix_entries);
      GPU_ASSEMBLY_CHECK_CUDA(
        cudaFuncSetAttribute(function,
                             cudaFuncAttributeMaxDynamicSharedMemorySize,
                             static_cast<int>(bytes)));
      function<<<arguments.n_slots / G, hex8_block_threads, bytes, stream>>>(
        kernel,
        arguments.block_element,
        arguments.cluster_node_offsets,
        arguments.cluster_nodes,
        arguments.block_connectivity,
        arguments.block_supplemental,
        arguments.n_supplemental,
        arguments.B,
        arguments.nodal_data,
        arguments.element_data);
      GPU_ASSEMBLY_CHECK_CUDA(cudaGetLastError());
    }

    template <typename Number, bool symmetric, bool use_shape_map>
    void
    launch_hex8_element_kernel(const Hex8ElasticityKernel<Number> &kernel,
                               const unsigned int                  G,
                               const Hex8KernelArguments<Number>  &arguments,
                               const cudaStream_t                  stream)
    {
      switch (G)
        {
          case 1:
            return launch_hex8_element_kernel<Number,
                                              symmetric,
                                              use_shape_map,
                                              1>(kernel, arguments, stream);
          case 2:
            return launch_hex8_element_kernel<Number,
                                              symmetric,
                                              use_shape_map,
                                              2>(kernel, arguments, stream);
          case 4:
            return launch_hex8_element_kernel<Number,
                                              symmetric,
                                              use_shape_map,
                                              4>(kernel, arguments, stream);
          case 8:
            return launch_hex8_element_kernel<Number,
                                              symmetric,
                                              use_shape_map,
                                              8>(kernel, arguments, stream);
          default:
            throw_error("The hex8 block kernels take 1, 2, 4 or 8 elements "
                        "per block, not " +
                        std::to_string(G) + ".");
        }
    }

    /**
     * Launch the hex8 block kernel of @p strategy (shape_map or standard)
     * with @p G elements per block (1, 2, 4 or 8, dividing arguments.B) on
     * @p stream, writing full (or, if @p symmetric, packed upper-triangle)
     * element matrices and vectors into GlobalNZ's layout.
     */
    template <typename Number>
    void
    launch_hex8_element_kernel(const Hex8ElasticityKernel<Number> &kernel,
                               const ElementStrategy               strategy,
                               const bool                          symmetric,
                               const unsigned int                  G,
                               const Hex8KernelArguments<Number>  &arguments,
                               const cudaStream_t                  stream = 0)
    {
      if (strategy == ElementStrategy::thread_per_element || G == 0 ||
          arguments.B % G != 0)
        throw_error("launch_hex8_element_kernel(): needs the shapeMap or "
                    "standard strategy and a group size G dividing the "
                    "cluster size.");
      const bool use_shape_map = strategy == ElementStrategy::shape_map;
      if (symmetric && use_shape_map)
        launch_hex8_element_kernel<Number, true, true>(kernel,
                                                       G,
                                                       arguments,
                                                       stream);
      else if (symmetric)
        launch_hex8_element_kernel<Number, true, false>(kernel,
                                                        G,
                                                        arguments,
                                                        stream);
      else if (use_shape_map)
        launch_hex8_element_kernel<Number, false, true>(kernel,
                                                        G,
                                                        arguments,
                                                        stream);
      else
        launch_hex8_element_kernel<Number, false, false>(kernel,
                                                         G,
                                                         arguments,
                                                         stream);
    }
  } // namespace internal
} // namespace GPUAssembly

#endif

// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_wave_wave_update_h
#define gpu_assembly_wave_wave_update_h

#include <gpu_assembly/base/config.h>

#include <type_traits>

/**
 * @file
 * The arithmetic of one node's central-difference update, shared by the
 * host stepper and the CUDA kernel so that both do the same operations in
 * the same order. On the device every product and sum is rounded on its
 * own (no fused multiply-add): with the host compiled with
 * -ffp-contract=off, double-precision results are then bitwise equal.
 */

namespace GPUAssembly
{
  namespace Wave
  {
    /// @p a times @p b, rounded on its own (never fused with a sum).
    template <typename Number>
    GPU_ASSEMBLY_HOST_DEVICE inline Number
    rounded_mul(const Number a, const Number b)
    {
      static_assert(std::is_same_v<Number, double> ||
                    std::is_same_v<Number, float>);
#if defined(__CUDA_ARCH__)
      if constexpr (std::is_same_v<Number, double>)
        return __dmul_rn(a, b);
      else
        return __fmul_rn(a, b);
#else
      return a * b;
#endif
    }

    /// @p a plus @p b, rounded on its own (never fused with a product).
    template <typename Number>
    GPU_ASSEMBLY_HOST_DEVICE inline Number
    rounded_add(const Number a, const Number b)
    {
      static_assert(std::is_same_v<Number, double> ||
                    std::is_same_v<Number, float>);
#if defined(__CUDA_ARCH__)
      if constexpr (std::is_same_v<Number, double>)
        return __dadd_rn(a, b);
      else
        return __fadd_rn(a, b);
#else
      return a + b;
#endif
    }

    /**
     * (ax, ay) += K'_ij u_j for one link, K' as xx, xy, yx, yy.
     */
    template <typename Number>
    GPU_ASSEMBLY_HOST_DEVICE inline void
    accumulate_link(const Number kxx,
                    const Number kxy,
                    const Number kyx,
                    const Number kyy,
                    const Number ux,
                    const Number uy,
                    Number      &ax,
                    Number      &ay)
    {
      ax = rounded_add(rounded_add(ax, rounded_mul(kxx, ux)),
                       rounded_mul(kxy, uy));
      ay = rounded_add(rounded_add(ay, rounded_mul(kyx, ux)),
                       rounded_mul(kyy, uy));
    }
  } // namespace Wave
} // namespace GPUAssembly

#endif

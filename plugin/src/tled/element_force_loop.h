// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_src_tled_element_force_loop_h
#define gpu_assembly_src_tled_element_force_loop_h

// For the translation units compiled with -ffp-contract=off only
// (plugin/CMakeLists.txt): the host stepper and the model's
// internal_forces() must compute the forces of the GPU's element kernel
// (compiled with -fmad=false) to the last bit.

#include <gpu_assembly/tled/tled_element.h>
#include <gpu_assembly/tled/tled_model.h>

#include <cstddef>

namespace GPUAssembly
{
  namespace TLED
  {
    namespace internal
    {
      /**
       * element_forces() of element @p e into @p f, with the displacement
       * component i of node n read as @p displacement(n, i).
       */
      template <int npe, typename Number, typename Displacement>
      void
      element_force(const Model<Number> &model,
                    const Displacement  &displacement,
                    const unsigned int   e,
                    Number (&f)[npe][3])
      {
        const std::size_t s = model.element_stride;
        Number            ue[npe][3], b[npe][3], c[4][3] = {}, k = 0;
        for (int a = 0; a < npe; ++a)
          {
            const int n = model.connectivity[a * s + e];
            for (int i = 0; i < 3; ++i)
              {
                ue[a][i] = displacement(n, i);
                b[a][i]  = model.shape_gradients[(3 * a + i) * s + e];
              }
          }
        if constexpr (npe == 8)
          {
            for (int alpha = 0; alpha < 4; ++alpha)
              for (int K = 0; K < 3; ++K)
                c[alpha][K] = model.hourglass[(3 * alpha + K) * s + e];
            k = model.hourglass[12 * s + e];
          }
        element_forces<npe>(ue,
                            b,
                            model.volumes[e],
                            c,
                            k,
                            model.mu,
                            model.lambda,
                            f);
      }



      /**
       * element_force() of the elements @p begin to @p end into the
       * element-force array @p element_force (force component i of local
       * node a of element e at (3 a + i) element_stride + e).
       */
      template <int npe, typename Number, typename Displacement>
      void
      element_force_loop(const Model<Number> &model,
                         const Displacement  &displacement,
                         Number              *element_force,
                         const unsigned int   begin,
                         const unsigned int   end)
      {
        const std::size_t s = model.element_stride;
        for (unsigned int e = begin; e < end; ++e)
          {
            Number f[npe][3];
            internal::element_force<npe>(model, displacement, e, f);
            for (int a = 0; a < npe; ++a)
              for (int i = 0; i < 3; ++i)
                element_force[(3 * a + i) * s + e] = f[a][i];
          }
      }
    } // namespace internal
  }   // namespace TLED
} // namespace GPUAssembly

#endif

// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_engine_element_specialization_cuh
#define gpu_assembly_engine_element_specialization_cuh

// The choice of compute_element()'s specialization at launch, shared by
// the methods' launches.

#include <gpu_assembly/element/element_stage.h>
#include <gpu_assembly/engine/element_stage_traits.h>

#include <type_traits>

namespace GPUAssembly
{
  namespace internal
  {
    // Calls f(std::integral_constant<ElementSpecialization, s>()) with the
    // specialization s of compute_element() that fits the mesh: linear
    // simplices get kernels with their sizes as constants. A kernel for
    // one cell type that is not a simplex (ElementStageTraits::
    // simplex_forms) gets the general form only, which also keeps its
    // kernels from being compiled three times.
    template <int dim, class Kernel, typename Number, class Function>
    void
    with_element_specialization(const ElementStageData<Number> &data,
                                const Function                 &f)
    {
      using S = ElementSpecialization;
      if constexpr (ElementStageTraits<Kernel>::simplex_forms)
        switch (element_specialization<dim>(data))
          {
            case S::simplex_edge_matrix:
              f(std::integral_constant<S, S::simplex_edge_matrix>());
              return;
            case S::simplex_gradients:
              f(std::integral_constant<S, S::simplex_gradients>());
              return;
            case S::general:
              break;
          }
      f(std::integral_constant<S, S::general>());
    }
  } // namespace internal
} // namespace GPUAssembly

#endif

// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef custom_kernel_reaction_diffusion_kernel_h
#define custom_kernel_reaction_diffusion_kernel_h

#include <gpu_assembly/base/config.h>
#include <gpu_assembly/element/element_views.h>

/**
 * The program's own element kernel: -div(k grad u) + r u = f with a
 * diffusion coefficient k(x) given by its values at the nodes, a constant
 * reaction rate r and a constant source f,
 *   A_ab = int (k grad phi_a . grad phi_b + r phi_a phi_b),
 *   F_a  = int f phi_a.
 * It follows the contract of the bundled kernels
 * (gpu_assembly/kernels/element_kernels.h): called once per element, on the
 * host by HostAssembler and on the device by every GPU method, it writes
 * every entry of A^e and F^e once.
 */
template <int dim, typename Number>
struct ReactionDiffusionKernel
{
  static constexpr unsigned int n_components = 1;
  /// A^e is symmetric: GlobalNZ may store its upper triangle alone.
  static constexpr bool is_symmetric = true;

  Number reaction = 1;
  Number source   = 1;

  template <class Element, class Output>
  GPU_ASSEMBLY_HOST_DEVICE void
  operator()(const Element &element, const Output &output) const
  {
    for (unsigned int a = 0; a < element.n_nodes; ++a)
      {
        // SharedNZ keeps only the rows of its own nodes: skip the others.
        if constexpr (GPUAssembly::output_may_discard_rows<Output>::value)
          if (!output.keeps_rows(a))
            continue;
        Number rhs = 0;
        for (unsigned int q = 0; q < element.n_q_points; ++q)
          rhs += source * element.shape_value(a, q) * element.JxW(q);
        output.vector_entry(a) = rhs;

        for (unsigned int b = 0; b < element.n_nodes; ++b)
          {
            Number sum = 0;
            for (unsigned int q = 0; q < element.n_q_points; ++q)
              {
                Number grad_dot = 0;
                for (unsigned int d = 0; d < dim; ++d)
                  grad_dot +=
                    element.shape_grad(a, q, d) * element.shape_grad(b, q, d);
                // phi_a phi_b as one product, so that entry (b, a) rounds
                // as (a, b) does and A^e is exactly symmetric.
                sum += (diffusion(element, q) * grad_dot +
                        reaction * (element.shape_value(a, q) *
                                    element.shape_value(b, q))) *
                       element.JxW(q);
              }
            output.matrix_entry(a, b) = sum;
          }
      }
  }

  /// k at quadrature point q, interpolated from its nodal values (the
  /// nodal data, one field).
  template <class Element>
  GPU_ASSEMBLY_HOST_DEVICE Number
  diffusion(const Element &element, const unsigned int q) const
  {
    Number k = 0;
    for (unsigned int c = 0; c < element.n_nodes; ++c)
      k += element.shape_value(c, q) * element.nodal_value(c, 0);
    return k;
  }
};

#endif

// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef step_40_gpu_step_40_kernel_h
#define step_40_gpu_step_40_kernel_h

#include <gpu_assembly/base/config.h>
#include <gpu_assembly/element/element_views.h>

#include <cmath>

/**
 * step-40's element matrix and right-hand side, for the plugin:
 *   A_ab = int grad phi_a . grad phi_b,
 *   F_a  = int f(x) phi_a,  f = 1 above the curve y = 0.5 + 0.25 sin(4 pi x),
 *                           -1 below it.
 * The quadrature points x_q are interpolated from the nodal coordinates (the
 * nodal data, dim fields), which is exact for step-40's mesh of squares.
 * Called per element on the host (HostAssembler) and on the device (every
 * GPU method).
 */
template <int dim, typename Number>
struct Step40Kernel
{
  static constexpr unsigned int n_components     = 1;
  static constexpr bool         is_symmetric     = true;
  static constexpr bool         reads_nodal_data = true;

  template <class Element, class Output>
  GPU_ASSEMBLY_HOST_DEVICE void
  operator()(const Element &element, const Output &output) const
  {
    for (unsigned int a = 0; a < element.n_nodes; ++a)
      {
        // SharedNZ keeps only the rows of its own nodes.
        if constexpr (GPUAssembly::output_may_discard_rows<Output>::value)
          if (!output.keeps_rows(a))
            continue;
        Number rhs = 0;
        for (unsigned int q = 0; q < element.n_q_points; ++q)
          rhs += right_hand_side(element, q) * element.shape_value(a, q) *
                 element.JxW(q);
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
                sum += grad_dot * element.JxW(q);
              }
            output.matrix_entry(a, b) = sum;
          }
      }
  }

  template <class Element>
  GPU_ASSEMBLY_HOST_DEVICE Number
  right_hand_side(const Element &element, const unsigned int q) const
  {
    Number x[dim] = {};
    for (unsigned int c = 0; c < element.n_nodes; ++c)
      for (unsigned int d = 0; d < dim; ++d)
        x[d] += element.shape_value(c, q) * element.nodal_value(c, d);
    const Number pi = 3.14159265358979323846;
    return x[1] > 0.5 + 0.25 * sin(4 * pi * x[0]) ? 1 : -1;
  }
};

#endif

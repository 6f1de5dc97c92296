// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef hyperelastic_resident_updates_h
#define hyperelastic_resident_updates_h

// The element-wise loops of the resident distributed backend
// (resident_backend.cc) around the plugin's resident assembly and
// Jacobi-CG: the midpoint rule's predictor, residual and step update, the
// Newton update and the constraints' distribution, each on the rank's
// owned entries. on_device chooses the CUDA kernel (device pointers) or the
// same loop on the CPU (host pointers), whose arithmetic is that of
// trilinos_backend.cc. No deal.II here: nvcc compiles the definitions.

#include <cstddef>

namespace Hyperelastic
{
  namespace ResidentUpdates
  {
    /// x = x_old + dt p_old / mass (dt > 0), else x = x_old.
    void
    predict(const bool        on_device,
            const std::size_t n,
            const double      dt,
            const double     *x_old,
            const double     *p_old,
            const double     *mass,
            double           *x);

    /// mid = (x + x_old) / 2 (midpoint), else mid = x.
    void
    midpoint(const bool        on_device,
             const std::size_t n,
             const bool        midpoint,
             const double     *x,
             const double     *x_old,
             double           *mid);

    /**
     * r = load_factor load - f, plus p_old - mass (x - x_old) / dt where
     * dt > 0 (the residual of the midpoint rule, the assembled vector f
     * holding dt/2 (f_int - f_body)).
     */
    void
    residual(const bool        on_device,
             const std::size_t n,
             const double      dt,
             const double      load_factor,
             const double     *load,
             const double     *f,
             const double     *mass,
             const double     *x,
             const double     *x_old,
             const double     *p_old,
             double           *r);

    /// values[diagonal_positions[k]] += mass[k] / dt for k < n.
    void
    add_mass_to_diagonal(const bool        on_device,
                         const std::size_t n,
                         const double      dt,
                         const double     *mass,
                         const int        *diagonal_positions,
                         double           *values);

    /// x[indices[k]] = 0 for k < n.
    void
    zero_entries(const bool        on_device,
                 const std::size_t n,
                 const int        *indices,
                 double           *x);

    /**
     * AffineConstraints::distribute() for lines k < n_lines: x[dofs[k]] =
     * sum of weights[j] x[entries[j]] over j in [offsets[k], offsets[k+1])
     * plus inhomogeneities[k]. The constraints are closed, so the lines
     * read no constrained entry and run in any order.
     */
    void
    distribute(const bool        on_device,
               const std::size_t n_lines,
               const int        *dofs,
               const int        *offsets,
               const int        *entries,
               const double     *weights,
               const double     *inhomogeneities,
               double           *x);

    /// x += delta.
    void
    add(const bool        on_device,
        const std::size_t n,
        const double     *delta,
        double           *x);

    /// dst = src (n entries).
    void
    copy(const bool        on_device,
         const std::size_t n,
         const double     *src,
         double           *dst);

    /**
     * The step's end: p_old = 2 mass (x - x_old) / dt - p_old (dt > 0),
     * then x_old = x.
     */
    void
    finish_step(const bool        on_device,
                const std::size_t n,
                const double      dt,
                const double     *x,
                const double     *mass,
                double           *x_old,
                double           *p_old);
  } // namespace ResidentUpdates
} // namespace Hyperelastic

#endif

// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef hyperelastic_host_state_h
#define hyperelastic_host_state_h

// IntegratorBackend's state transfers for the backends whose state lives in
// host vectors of the locally owned entries (dealii::Vector on one process,
// TrilinosWrappers::MPI::Vector on several), whose begin() and end() span
// exactly those entries.

#include <deal.II/base/exceptions.h>

#include <algorithm>
#include <cstddef>
#include <vector>

namespace Hyperelastic
{
  /// IntegratorBackend::set_state(): u_old = u_new, p_old = p_new, and the
  /// Newton iterate u = u_old.
  template <typename VectorType>
  void
  set_host_state(const std::vector<double> &u_new,
                 const std::vector<double> &p_new,
                 VectorType                &u,
                 VectorType                &u_old,
                 VectorType                &p_old)
  {
    const std::size_t n = u_old.end() - u_old.begin();
    AssertDimension(u_new.size(), n);
    AssertDimension(p_new.size(), n);
    (void)n;
    std::copy(u_new.begin(), u_new.end(), u_old.begin());
    std::copy(p_new.begin(), p_new.end(), p_old.begin());
    u = u_old;
  }

  /// IntegratorBackend::get_state(): u_out = u_old, p_out = p_old.
  template <typename VectorType>
  void
  get_host_state(const VectorType    &u_old,
                 const VectorType    &p_old,
                 std::vector<double> &u_out,
                 std::vector<double> &p_out)
  {
    u_out.assign(u_old.begin(), u_old.end());
    p_out.assign(p_old.begin(), p_old.end());
  }
} // namespace Hyperelastic

#endif

// SPDX-License-Identifier: LGPL-2.1-or-later
// Compiled with -ffp-contract=off (plugin/CMakeLists.txt): the compiler must
// not fuse the products and sums of wave_update.h, or the host results
// would differ from the GPU's in the last bit.

#include <deal.II/base/exceptions.h>
#include <deal.II/base/parallel.h>

#include <gpu_assembly/wave/wave_stepper.h>
#include <gpu_assembly/wave/wave_update.h>

#include <algorithm>

namespace GPUAssembly
{
  namespace Wave
  {
    template <typename Number>
    void
    HostStepper<Number>::reinit(const Plan<Number> &new_plan,
                                const unsigned int  record_interval)
    {
      AssertThrow(record_interval > 0,
                  dealii::ExcMessage("The record interval must be positive."));
      plan           = new_plan;
      this->interval = record_interval;
      for (auto &v : u)
        v.assign(2 * std::size_t(plan.n_padded()), Number(0));
      states             = {};
      this->current_step = 0;
      this->history.clear();
    }



    template <typename Number>
    void
    HostStepper<Number>::set_state(const unsigned int         step,
                                   const std::vector<double> &u_previous,
                                   const std::vector<double> &u_current)
    {
      state_layout().set_states(u_previous, u_current, states, u);
      this->current_step = step;
    }



    template <typename Number>
    void
    HostStepper<Number>::get_state(std::vector<double> &u_previous,
                                   std::vector<double> &u_current) const
    {
      state_layout().get_states(states, u, u_previous, u_current);
    }



    template <typename Number>
    void
    HostStepper<Number>::do_step()
    {
      const unsigned int B = plan.block_size, L = plan.max_links;
      const std::size_t  n_padded = plan.n_padded();
      const Number      *u_prev   = u[states.previous].data();
      const Number      *u_curr   = u[states.current].data();
      Number            *u_next   = u[states.next].data();

      dealii::parallel::apply_to_subranges(
        0u,
        plan.n_blocks,
        [&](const unsigned int begin, const unsigned int end) {
          for (unsigned int b = begin; b < end; ++b)
            {
              const int *halo =
                plan.halo_positions.data() + plan.halo_offsets[b];
              for (unsigned int t = 0; t < B; ++t)
                {
                  const std::size_t  p  = std::size_t(b) * B + t;
                  const Number       cp = plan.c_prime[p];
                  Number             ax = rounded_mul(cp, u_prev[p]);
                  Number             ay = rounded_mul(cp, u_prev[n_padded + p]);
                  const unsigned int n_links =
                    plan.warp_links[b * (B / 32) + t / 32];
                  for (unsigned int j = 0; j < n_links; ++j)
                    {
                      const std::size_t link = (std::size_t(b) * L + j) * B + t;
                      const std::uint16_t index = plan.links[link];
                      const std::size_t   q     = index < B ?
                                                    std::size_t(b) * B + index :
                                                    std::size_t(halo[index - B]);
                      const Number       *K =
                        &plan.stiffness[(std::size_t(b) * L + j) * 4 * B + t];
                      accumulate_link(K[0],
                                      K[B],
                                      K[2 * B],
                                      K[3 * B],
                                      u_curr[q],
                                      u_curr[n_padded + q],
                                      ax,
                                      ay);
                    }
                  u_next[p]            = ax;
                  u_next[n_padded + p] = ay;
                }
            }
        },
        16);

      const unsigned int n      = this->current_step;
      const unsigned int row    = plan.n_signal_steps + 1;
      const auto         signal = [&](const int s, const unsigned int step) {
        return step <= plan.n_signal_steps ?
                         plan.signal_values[std::size_t(s) * row + step] :
                         Number(0);
      };
      for (std::size_t k = 0; k < plan.force_dofs.size(); ++k)
        {
          Number value = u_next[plan.force_dofs[k]];
          for (int i = plan.force_offsets[k]; i < plan.force_offsets[k + 1];
               ++i)
            value = rounded_add(value,
                                rounded_mul(plan.force_weights[i],
                                            signal(plan.force_signals[i], n)));
          u_next[plan.force_dofs[k]] = value;
        }
      for (std::size_t k = 0; k < plan.prescribed_dofs.size(); ++k)
        {
          const int i0 = plan.prescribed_offsets[k];
          Number    value =
            rounded_mul(plan.prescribed_weights[i0],
                        signal(plan.prescribed_signals[i0], n + 1));
          for (int i = i0 + 1; i < plan.prescribed_offsets[k + 1]; ++i)
            value = rounded_add(value,
                                rounded_mul(plan.prescribed_weights[i],
                                            signal(plan.prescribed_signals[i],
                                                   n + 1)));
          u_next[plan.prescribed_dofs[k]] = value;
        }
      if ((n + 1) % this->interval == 0)
        for (const int p : plan.receiver_positions)
          {
            this->history.push_back(u_next[p]);
            this->history.push_back(u_next[n_padded + p]);
          }

      states.rotate();
      ++this->current_step;
    }



    template <typename Number>
    void
    HostStepper<Number>::advance(const unsigned int n_steps)
    {
      for (unsigned int i = 0; i < n_steps; ++i)
        do_step();
    }



    template class HostStepper<double>;
    template class HostStepper<float>;
  } // namespace Wave
} // namespace GPUAssembly

// SPDX-License-Identifier: LGPL-2.1-or-later
// The host TLED stepper. Compiled with -ffp-contract=off
// (plugin/CMakeLists.txt): the compiler must not fuse the products and sums
// of tled_element.h, or the host results would differ from the GPU's
// (compiled with -fmad=false) in the last bit.

#include <deal.II/base/exceptions.h>
#include <deal.II/base/parallel.h>

#include <gpu_assembly/base/device.h>
#include <gpu_assembly/tled/tled_element.h>
#include <gpu_assembly/tled/tled_stepper.h>

#include <atomic>
#include <cmath>

#include "element_force_loop.h"

namespace GPUAssembly
{
  namespace TLED
  {
    namespace internal
    {
      template <typename Number>
      void
      make_update_data(const Model<Number>       &model,
                       const BoundaryConditions  &bc,
                       const Integration         &integration,
                       std::vector<Number>       &coefficient,
                       std::vector<std::uint8_t> &flags,
                       std::vector<Number>       &prescribed,
                       std::vector<Number>       &external,
                       Number                    &b,
                       Number                    &c)
      {
        check_time_step(model, integration.time_step);
        AssertThrow(integration.damping >= 0,
                    dealii::ExcMessage("The damping coefficient must not be "
                                       "negative."));
        const std::size_t n = model.n_nodes, ns = model.node_stride;
        AssertThrow(
          (bc.prescribed_components.empty() ||
           bc.prescribed_components.size() == n) &&
            (bc.prescribed_values.empty() ||
             bc.prescribed_values.size() == 3 * n) &&
            (bc.external_forces.empty() || bc.external_forces.size() == 3 * n),
          dealii::ExcMessage("Boundary conditions need one flag and three "
                             "values per node (or none)."));
        const double dt = integration.time_step, D = integration.damping;
        coefficient.assign(ns, Number(0));
        flags.assign(ns, 0);
        prescribed.assign(3 * ns, Number(0));
        external.assign(3 * ns, Number(0));
        for (std::size_t i = 0; i < n; ++i)
          {
            coefficient[i] = Number(
              1. / (model.lumped_mass[i] * (1. / (dt * dt) + D / (2. * dt))));
            if (!bc.prescribed_components.empty())
              flags[i] = bc.prescribed_components[i] & 7;
            bool has_force = false;
            for (unsigned int d = 0; d < 3; ++d)
              {
                if (!bc.prescribed_values.empty())
                  prescribed[d * ns + i] =
                    Number(bc.prescribed_values[3 * i + d]);
                if (!bc.external_forces.empty())
                  {
                    external[d * ns + i] =
                      Number(bc.external_forces[3 * i + d]);
                    has_force = has_force || bc.external_forces[3 * i + d] != 0;
                  }
              }
            if (has_force)
              flags[i] |= 8;
          }
        b = Number(2. / (1. + D * dt / 2.));
        c = Number((D * dt / 2. - 1.) / (1. + D * dt / 2.));
      }

      template void
      make_update_data(const Model<double> &,
                       const BoundaryConditions &,
                       const Integration &,
                       std::vector<double> &,
                       std::vector<std::uint8_t> &,
                       std::vector<double> &,
                       std::vector<double> &,
                       double &,
                       double &);
      template void
      make_update_data(const Model<float> &,
                       const BoundaryConditions &,
                       const Integration &,
                       std::vector<float> &,
                       std::vector<std::uint8_t> &,
                       std::vector<float> &,
                       std::vector<float> &,
                       float &,
                       float &);
    } // namespace internal



    template <typename Number>
    void
    HostStepper<Number>::reinit(const Model<Number>      &new_model,
                                const BoundaryConditions &bc,
                                const Integration        &integration)
    {
      model = new_model;
      internal::make_update_data(model,
                                 bc,
                                 integration,
                                 update_coefficient,
                                 flags,
                                 prescribed,
                                 external,
                                 b,
                                 c);
      dt        = integration.time_step;
      ramp_time = bc.ramp_time;
      element_force.assign(3 * std::size_t(model.nodes_per_element) *
                             model.element_stride,
                           Number(0));
      for (auto &v : u)
        v.assign(3 * std::size_t(model.node_stride), Number(0));
      states                      = {};
      this->current_step          = 0;
      this->first_non_finite_node = static_cast<unsigned int>(-1);
    }



    template <typename Number>
    void
    HostStepper<Number>::set_state(const unsigned int         step,
                                   const std::vector<double> &u_previous,
                                   const std::vector<double> &u_current)
    {
      state_layout().set_states(u_previous, u_current, states, u);
      this->current_step          = step;
      this->first_non_finite_node = static_cast<unsigned int>(-1);
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
    HostStepper<Number>::advance(const unsigned int n_steps)
    {
      AssertThrow(model.n_elements > 0,
                  dealii::ExcMessage(
                    "HostStepper::advance() called before reinit()."));
      for (unsigned int i = 0; i < n_steps && this->first_non_finite_node ==
                                                static_cast<unsigned int>(-1);
           ++i)
        do_step();
    }



    template <typename Number>
    void
    HostStepper<Number>::do_step()
    {
      const Number *u_prev = u[states.previous].data();
      const Number *u_curr = u[states.current].data();
      Number       *u_next = u[states.next].data();
      Number       *fe     = element_force.data();
      dealii::parallel::apply_to_subranges(
        0u,
        model.n_elements,
        [&](const unsigned int begin, const unsigned int end) {
          const auto displacement = [&](const int n, const int i) {
            return u_curr[i * std::size_t(model.node_stride) + n];
          };
          if (model.nodes_per_element == 8)
            internal::element_force_loop<8>(model,
                                            displacement,
                                            fe,
                                            begin,
                                            end);
          else
            internal::element_force_loop<4>(model,
                                            displacement,
                                            fe,
                                            begin,
                                            end);
        },
        512);

      const unsigned int n   = this->current_step;
      const Number       r_n = Number(smooth_ramp(double(n) * dt, ramp_time));
      const Number r_next = Number(smooth_ramp(double(n + 1) * dt, ramp_time));
      const std::size_t s = model.element_stride, ns = model.node_stride;
      // The smallest node with a force or a u_{n+1} that is not finite, over
      // all threads (the smallest: the same node whatever the threads).
      std::atomic<unsigned int> non_finite(static_cast<unsigned int>(-1));
      dealii::parallel::apply_to_subranges(
        0u,
        model.n_nodes,
        [&](const unsigned int begin, const unsigned int end) {
          for (unsigned int node = begin; node < end; ++node)
            {
              const int j0 = model.node_offsets[node],
                        j1 = model.node_offsets[node + 1];
              Number f[3];
              {
                const int p = model.node_entries[j0];
                for (int i = 0; i < 3; ++i)
                  f[i] = fe[p + i * s];
              }
              for (int j = j0 + 1; j < j1; ++j)
                {
                  const int p = model.node_entries[j];
                  for (int i = 0; i < 3; ++i)
                    f[i] = f[i] + fe[p + i * s];
                }
              const std::uint8_t flag = flags[node];
              const Number       a    = update_coefficient[node];
              for (int i = 0; i < 3; ++i)
                {
                  const std::size_t k = i * ns + node;
                  if (flag & (1u << i))
                    u_next[k] = r_next * prescribed[k];
                  else
                    u_next[k] =
                      central_difference(a,
                                         b,
                                         c,
                                         (flag & 8) ? r_n * external[k] :
                                                      Number(0),
                                         f[i],
                                         u_curr[k],
                                         u_prev[k]);
                  if (!std::isfinite(f[i]) || !std::isfinite(u_next[k]))
                    {
                      unsigned int smallest = non_finite.load();
                      while (node < smallest &&
                             !non_finite.compare_exchange_weak(smallest, node))
                        ;
                    }
                }
            }
        },
        1024);
      if (non_finite.load() != static_cast<unsigned int>(-1))
        {
          // The step is not taken: u_{n-1}, u_n stay the state.
          this->first_non_finite_node = non_finite.load();
          return;
        }
      states.rotate();
      ++this->current_step;
    }



    template <typename Number>
    std::unique_ptr<Stepper<Number>>
    make_stepper(const bool use_device)
    {
      if (use_device && n_cuda_devices() > 0)
        return std::make_unique<DeviceStepper<Number>>();
      return std::make_unique<HostStepper<Number>>();
    }



    template class HostStepper<double>;
    template class HostStepper<float>;
    template std::unique_ptr<Stepper<double>>
    make_stepper(const bool);
    template std::unique_ptr<Stepper<float>>
    make_stepper(const bool);
  } // namespace TLED
} // namespace GPUAssembly

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

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <utility>

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
                       Number                    &c,
                       const StepForces<Number>  *step_forces)
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
        if (step_forces != nullptr)
          for (const unsigned int node : step_forces->nodes())
            {
              AssertThrow(node < n,
                          dealii::ExcMessage(
                            "TLED: a node of the step forces, " +
                            std::to_string(node) + ", is not a node of the " +
                            "model, which has " + std::to_string(n) + "."));
              flags[node] |= 16;
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
                       double &,
                       const StepForces<double> *);
      template void
      make_update_data(const Model<float> &,
                       const BoundaryConditions &,
                       const Integration &,
                       std::vector<float> &,
                       std::vector<std::uint8_t> &,
                       std::vector<float> &,
                       std::vector<float> &,
                       float &,
                       float &,
                       const StepForces<float> *);
    } // namespace internal



    namespace internal
    {
      template <typename Number>
      NodeBlocks
      make_node_blocks(const Model<Number> &model,
                       const unsigned int   nodes_per_block)
      {
        AssertThrow(nodes_per_block > 0,
                    dealii::ExcMessage(
                      "A node block needs at least one node."));
        const unsigned int n = model.n_nodes, B = nodes_per_block;
        const std::size_t  s = model.element_stride;

        // Morton order: 21 bits per coordinate over the bounding box,
        // interleaved; ties (coincident points) by number.
        double lo[3], hi[3];
        for (unsigned int d = 0; d < 3; ++d)
          lo[d] = hi[d] = model.coordinates[d];
        for (unsigned int v = 0; v < n; ++v)
          for (unsigned int d = 0; d < 3; ++d)
            {
              lo[d] = std::min(lo[d], model.coordinates[3 * v + d]);
              hi[d] = std::max(hi[d], model.coordinates[3 * v + d]);
            }
        const auto morton_order = [&](const unsigned int size,
                                      const auto        &point) {
          std::vector<std::pair<std::uint64_t, int>> order(size);
          for (unsigned int v = 0; v < size; ++v)
            {
              std::uint64_t code = 0;
              for (unsigned int d = 0; d < 3; ++d)
                {
                  const double  extent = hi[d] - lo[d];
                  std::uint64_t q =
                    extent > 0 ?
                      std::uint64_t((point(v, d) - lo[d]) / extent * 2097151.) :
                      0;
                  for (unsigned int bit = 0; bit < 21; ++bit)
                    code |= ((q >> bit) & 1u) << (3 * bit + d);
                }
              order[v] = {code, int(v)};
            }
          std::sort(order.begin(), order.end());
          return order;
        };
        const auto order =
          morton_order(n, [&](const unsigned int v, const unsigned int d) {
            return model.coordinates[3 * v + d];
          });
        const unsigned int npe           = model.nodes_per_element;
        const auto         element_order = morton_order(
          model.n_elements,
          [&](const unsigned int e, const unsigned int d) {
            double sum = 0;
            for (unsigned int a = 0; a < npe; ++a)
              sum += model.coordinates[3 * model.connectivity[a * s + e] + d];
            return sum / npe;
          });

        NodeBlocks blocks;
        blocks.nodes_per_block = B;
        blocks.n_blocks        = (n + B - 1) / B;
        blocks.nodes.assign(std::size_t(blocks.n_blocks) * B, -1);
        for (unsigned int v = 0; v < n; ++v)
          blocks.nodes[v] = order[v].second;
        blocks.element_permutation.resize(model.n_elements);
        std::vector<int> position(model.n_elements);
        for (unsigned int p = 0; p < model.n_elements; ++p)
          {
            blocks.element_permutation[p]     = element_order[p].second;
            position[element_order[p].second] = int(p);
          }
        blocks.element_offsets.assign(1, 0);
        blocks.entry_offsets.assign(1, 0);
        std::vector<int>                 list;
        std::vector<std::pair<int, int>> by_position;
        // f(t, j0, j1) for each node t of block k, j0 .. j1 - 1 its plan
        // entries.
        const auto for_nodes = [&](const unsigned int k, const auto &f) {
          for (unsigned int t = 0; t < B; ++t)
            {
              const int node = blocks.nodes[k * B + t];
              if (node >= 0)
                f(t, model.node_offsets[node], model.node_offsets[node + 1]);
            }
        };
        for (unsigned int k = 0; k < blocks.n_blocks; ++k)
          {
            list.clear();
            int valence = 0;
            for_nodes(k, [&](unsigned int, const int j0, const int j1) {
              valence = std::max(valence, j1 - j0);
              // Entry p = 3 a s + e with e < s.
              for (int j = j0; j < j1; ++j)
                list.push_back(int(model.node_entries[j] % s));
            });
            std::sort(list.begin(), list.end());
            list.erase(std::unique(list.begin(), list.end()), list.end());
            // Slots by element number, storage by position.
            by_position.clear();
            for (unsigned int slot = 0; slot < list.size(); ++slot)
              by_position.emplace_back(position[list[slot]], int(slot));
            std::sort(by_position.begin(), by_position.end());
            for (const auto &[p, slot] : by_position)
              {
                blocks.elements.push_back(p);
                blocks.slots.push_back(slot);
              }
            blocks.element_offsets.push_back(blocks.elements.size());
            blocks.max_elements =
              std::max<unsigned int>(blocks.max_elements, list.size());

            const std::size_t first = blocks.entries.size();
            blocks.entries.resize(first + std::size_t(valence) * B, -1);
            for_nodes(k, [&](const unsigned int t, const int j0, const int j1) {
              for (int j = j0; j < j1; ++j)
                {
                  const int p = model.node_entries[j];
                  const int slot =
                    std::lower_bound(list.begin(), list.end(), int(p % s)) -
                    list.begin();
                  blocks.entries[first + std::size_t(j - j0) * B + t] =
                    8 * slot + int(p / (3 * s));
                }
            });
            blocks.entry_offsets.push_back(blocks.entries.size());
          }
        AssertThrow(blocks.elements.size() < (std::size_t(1) << 28) &&
                      blocks.entries.size() <
                        std::size_t(std::numeric_limits<int>::max()),
                    dealii::ExcMessage(
                      "The node blocks of this mesh exceed the 32-bit "
                      "indices of the fused nodal sum."));

        blocks.recomputation_factor =
          double(blocks.elements.size()) / model.n_elements;
        blocks.bytes_per_step =
          model.minimum_bytes_per_step() +
          (blocks.elements.size() - model.n_elements) *
            model.bytes_per_element() +
          4 * (blocks.nodes.size() + blocks.element_offsets.size() +
               blocks.elements.size() + blocks.entry_offsets.size() +
               blocks.entries.size());
        return blocks;
      }

      template NodeBlocks
      make_node_blocks(const Model<double> &, const unsigned int);
      template NodeBlocks
      make_node_blocks(const Model<float> &, const unsigned int);
    } // namespace internal



    template <typename Number>
    HostStepper<Number>::HostStepper(const NodalSum     nodal_sum,
                                     const unsigned int nodes_per_block)
      : nodal_sum(nodal_sum)
      , nodes_per_block(nodes_per_block)
    {
      AssertThrow(nodal_sum != NodalSum::atomic,
                  dealii::ExcMessage(
                    "TLED::HostStepper: the atomic nodal sum exists on the "
                    "device only; use NodalSum::plan or NodalSum::fused."));
      AssertThrow(nodes_per_block > 0,
                  dealii::ExcMessage(
                    "TLED::HostStepper: nodes_per_block must be positive."));
    }



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
                                 c,
                                 this->step_forces.get());
      step_force.assign(this->step_forces ? 3 * std::size_t(model.node_stride) :
                                            0,
                        Number(0));
      dt        = integration.time_step;
      ramp_time = bc.ramp_time;
      if (nodal_sum == NodalSum::fused)
        {
          blocks = internal::make_node_blocks(model, nodes_per_block);
          element_force.clear();
        }
      else
        {
          blocks = {};
          element_force.assign(3 * std::size_t(model.nodes_per_element) *
                                 model.element_stride,
                               Number(0));
        }
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
      const Number *u_prev       = u[states.previous].data();
      const Number *u_curr       = u[states.current].data();
      Number       *u_next       = u[states.next].data();
      const auto    displacement = [&](const int n, const int i) {
        return u_curr[i * std::size_t(model.node_stride) + n];
      };

      const unsigned int n   = this->current_step;
      const Number       r_n = Number(smooth_ramp(double(n) * dt, ramp_time));
      const Number r_next = Number(smooth_ramp(double(n + 1) * dt, ramp_time));
      const std::size_t s = model.element_stride, ns = model.node_stride;
      Number *const     step_force_data = step_force.data();
      if (this->step_forces)
        this->step_forces->compute(n, u_curr, step_force_data);
      // The smallest node with a force or a u_{n+1} that is not finite, over
      // all threads (the smallest: the same node whatever the threads).
      std::atomic<unsigned int> non_finite(static_cast<unsigned int>(-1));
      const auto update = [&](const unsigned int node, const Number(&f)[3]) {
        const std::uint8_t flag = flags[node];
        const Number       a    = update_coefficient[node];
        for (int i = 0; i < 3; ++i)
          {
            const std::size_t k = i * ns + node;
            if (flag & (1u << i))
              u_next[k] = r_next * prescribed[k];
            else
              u_next[k] = central_difference(
                a,
                b,
                c,
                external_force(flag, r_n, external.data(), step_force_data, k),
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
      };

      if (nodal_sum == NodalSum::fused)
        {
          // Each block's elements into a buffer of its own, then its nodes'
          // sums in plan's order: what a thread block does on the device.
          const auto fused = [&](const auto         npe_constant,
                                 const unsigned int begin,
                                 const unsigned int end) {
            constexpr int       npe = decltype(npe_constant)::value;
            const unsigned int  B   = blocks.nodes_per_block;
            std::vector<Number> fe;
            for (unsigned int k = begin; k < end; ++k)
              {
                const int e0 = blocks.element_offsets[k],
                          e1 = blocks.element_offsets[k + 1];
                fe.resize(std::size_t(e1 - e0) * 3 * npe);
                for (int q = e0; q < e1; ++q)
                  {
                    Number f[npe][3];
                    internal::element_force<npe>(
                      model,
                      displacement,
                      blocks.element_permutation[blocks.elements[q]],
                      f);
                    std::copy(&f[0][0],
                              &f[0][0] + 3 * npe,
                              fe.data() +
                                std::size_t(3 * npe) * blocks.slots[q]);
                  }
                const int rows =
                  (blocks.entry_offsets[k + 1] - blocks.entry_offsets[k]) / B;
                for (unsigned int t = 0; t < B; ++t)
                  {
                    const int node = blocks.nodes[k * B + t];
                    if (node < 0)
                      continue;
                    // -0 + x = x for every x: the sum starts with the first
                    // entry as plan's does.
                    Number f[3] = {Number(-0.), Number(-0.), Number(-0.)};
                    for (int j = 0; j < rows; ++j)
                      {
                        const int entry =
                          blocks.entries[blocks.entry_offsets[k] +
                                         std::size_t(j) * B + t];
                        if (entry < 0)
                          break;
                        const Number *g =
                          fe.data() + 3 * (npe * (entry >> 3) + (entry & 7));
                        for (int i = 0; i < 3; ++i)
                          f[i] = f[i] + g[i];
                      }
                    update(node, f);
                  }
              }
          };
          dealii::parallel::apply_to_subranges(
            0u,
            blocks.n_blocks,
            [&](const unsigned int begin, const unsigned int end) {
              if (model.nodes_per_element == 8)
                fused(std::integral_constant<int, 8>(), begin, end);
              else
                fused(std::integral_constant<int, 4>(), begin, end);
            },
            4);
        }
      else
        {
          Number *fe = element_force.data();
          dealii::parallel::apply_to_subranges(
            0u,
            model.n_elements,
            [&](const unsigned int begin, const unsigned int end) {
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
                  update(node, f);
                }
            },
            1024);
        }
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
        return std::make_unique<DeviceStepper<Number>>(default_nodal_sum);
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

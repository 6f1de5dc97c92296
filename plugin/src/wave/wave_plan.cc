// SPDX-License-Identifier: LGPL-2.1-or-later
#include <deal.II/base/exceptions.h>

#include <gpu_assembly/wave/wave_plan.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <sstream>
#include <tuple>

#include "significant.h"

namespace GPUAssembly
{
  namespace Wave
  {
    using dealii::ExcMessage;

    using internal::significant;

    double
    Signal::value(const double t) const
    {
      constexpr double pi = 3.14159265358979323846;
      if (type == Type::gaussian)
        {
          const double s = (t - delay) / width;
          return std::exp(-s * s);
        }
      const double tau = t - delay;
      if (tau < 0 || tau > n_cycles / frequency)
        return 0;
      return std::sin(2 * pi * frequency * tau) * 0.5 *
             (1 - std::cos(2 * pi * frequency * tau / n_cycles));
    }



    double
    Signal::end_time() const
    {
      // exp(-s^2) < 1e-16 for s > 6.07
      return type == Type::gaussian ? delay + 6.1 * width :
                                      delay + n_cycles / frequency;
    }



    template <typename Number>
    double
    Plan<Number>::average_warp_links() const
    {
      if (warp_links.empty())
        return 0;
      double sum = 0;
      for (const auto l : warp_links)
        sum += l;
      return sum / warp_links.size();
    }



    template <typename Number>
    std::size_t
    Plan<Number>::bytes_per_step() const
    {
      const std::size_t S     = sizeof(Number);
      std::size_t       bytes = std::size_t(n_padded()) * 7 * S;
      bytes += warp_links.size();
      bytes += halo_positions.size() * (sizeof(int) + 2 * S) +
               halo_offsets.size() * sizeof(int);
      std::size_t warp_link_sum = 0;
      for (const auto l : warp_links)
        warp_link_sum += l;
      bytes += warp_link_sum * 32 * (sizeof(std::uint16_t) + 4 * S);
      return bytes;
    }



    template <typename Number>
    std::string
    Plan<Number>::describe_bytes_per_step() const
    {
      const std::size_t S             = sizeof(Number);
      std::size_t       warp_link_sum = 0;
      for (const auto l : warp_links)
        warp_link_sum += l;
      const double       total = bytes_per_step();
      std::ostringstream out;
      out.precision(3);
      out << "U_prev, U_curr, U_next, C': " << 100. * n_padded() * 7 * S / total
          << " %, K': " << 100. * warp_link_sum * 32 * 4 * S / total
          << " %, link pointers: " << 100. * warp_link_sum * 32 * 2 / total
          << " %, halo: "
          << 100. * halo_positions.size() * (sizeof(int) + 2 * S) / total
          << " %";
      return out.str();
    }



    template <typename Number>
    std::size_t
    Plan<Number>::memory_consumption() const
    {
      return 3 * 2 * std::size_t(n_padded()) * sizeof(Number) +
             c_prime.size() * sizeof(Number) +
             stiffness.size() * sizeof(Number) +
             links.size() * sizeof(std::uint16_t) + warp_links.size() +
             (halo_offsets.size() + halo_positions.size()) * sizeof(int) +
             signal_values.size() * sizeof(Number);
    }



    template <typename Number>
    Plan<Number>
    make_plan(const NodalSystem               &system,
              const NodeBlocks                &blocks,
              const double                     dt,
              const double                     max_stable_time_step,
              const std::vector<Source>       &sources,
              const std::vector<unsigned int> &receiver_nodes,
              const unsigned int               n_steps)
    {
      AssertThrow(dt > 0 && std::isfinite(dt),
                  ExcMessage("The time step must be positive and finite, not " +
                             significant(dt) + " s."));
      AssertThrow(max_stable_time_step <= 0 || dt <= max_stable_time_step,
                  ExcMessage("The time step " + significant(dt) +
                             " s exceeds the stability limit of the "
                             "central-difference scheme, 2 / sqrt(lambda_max"
                             "(M^-1 K)) = " +
                             significant(max_stable_time_step) +
                             " s: the run would blow up. Choose a smaller "
                             "time step or a smaller Courant number."));
      const unsigned int B = blocks.limits.max_block_size;
      AssertThrow(B % 32 == 0 && B > 0,
                  ExcMessage("The block size must be a multiple of 32."));
      AssertThrow(blocks.nodes.size() == system.n_nodes,
                  ExcMessage("The node blocks do not partition the system's "
                             "nodes."));

      Plan<Number> plan;
      plan.n_nodes    = system.n_nodes;
      plan.block_size = B;
      plan.n_blocks   = blocks.n_blocks();
      plan.max_links  = system.max_links();
      plan.time_step  = dt;
      AssertThrow(plan.max_links <= 255,
                  ExcMessage("A node is linked to " +
                             std::to_string(plan.max_links) +
                             " nodes; at most 255 are supported."));
      const unsigned int n_padded = plan.n_padded(), L = plan.max_links;

      // Positions: within a block, nodes by decreasing number of links.
      plan.position.assign(system.n_nodes, 0);
      plan.node_at.assign(n_padded, -1);
      for (unsigned int b = 0; b < plan.n_blocks; ++b)
        {
          std::vector<unsigned int> nodes(blocks.nodes.begin() +
                                            blocks.block_offsets[b],
                                          blocks.nodes.begin() +
                                            blocks.block_offsets[b + 1]);
          AssertThrow(nodes.size() <= B,
                      ExcMessage("Block " + std::to_string(b) +
                                 " is larger than the block size."));
          for (std::size_t w = 0; w < B / 32; ++w)
            {
              unsigned int warp_max = 0;
              for (std::size_t t = 32 * w;
                   t < std::min<std::size_t>(32 * (w + 1), nodes.size());
                   ++t)
                warp_max = std::max(warp_max, system.n_links(nodes[t]));
              plan.unsorted_average_warp_links += warp_max;
            }
          std::stable_sort(nodes.begin(),
                           nodes.end(),
                           [&](const unsigned int a, const unsigned int c) {
                             return system.n_links(a) > system.n_links(c);
                           });
          for (unsigned int t = 0; t < nodes.size(); ++t)
            {
              plan.position[nodes[t]] = b * B + t;
              plan.node_at[b * B + t] = nodes[t];
            }
        }

      plan.unsorted_average_warp_links /=
        std::max<std::size_t>(1, std::size_t(plan.n_blocks) * (B / 32));

      // Halos and shared-memory indices.
      plan.halo_offsets.assign(plan.n_blocks + 1, 0);
      plan.c_prime.assign(n_padded, Number(0));
      plan.stiffness.assign(std::size_t(plan.n_blocks) * L * 4 * B, Number(0));
      plan.links.resize(std::size_t(plan.n_blocks) * L * B);
      for (std::size_t i = 0; i < plan.links.size(); ++i)
        plan.links[i] = i % B;
      plan.warp_links.assign(std::size_t(plan.n_blocks) * (B / 32), 0);
      std::vector<int> local_index(n_padded, -1);
      const double     m_factor = 1. / (dt * dt), c_factor = 0.5 / dt;
      for (unsigned int b = 0; b < plan.n_blocks; ++b)
        {
          std::vector<int> halo;
          for (unsigned int t = 0; t < B; ++t)
            {
              const int node = plan.node_at[b * B + t];
              if (node < 0)
                continue;
              for (unsigned int k = system.row_offsets[node];
                   k < system.row_offsets[node + 1];
                   ++k)
                {
                  const int p = plan.position[system.columns[k]];
                  if (p / int(B) != int(b))
                    halo.push_back(p);
                }
            }
          std::sort(halo.begin(), halo.end());
          halo.erase(std::unique(halo.begin(), halo.end()), halo.end());
          AssertThrow(B + halo.size() <= 0xFFFF,
                      ExcMessage("Block " + std::to_string(b) +
                                 " and its halo exceed 16-bit indices."));
          plan.max_halo = std::max<unsigned int>(plan.max_halo, halo.size());
          for (unsigned int t = 0; t < B; ++t)
            local_index[b * B + t] = t;
          for (unsigned int h = 0; h < halo.size(); ++h)
            local_index[halo[h]] = B + h;
          plan.halo_positions.insert(plan.halo_positions.end(),
                                     halo.begin(),
                                     halo.end());
          plan.halo_offsets[b + 1] = plan.halo_positions.size();

          for (unsigned int t = 0; t < B; ++t)
            {
              const int node = plan.node_at[b * B + t];
              if (node < 0)
                continue;
              const double M = system.mass[node], C = system.damping[node];
              const double A = M * m_factor + C * c_factor;
              plan.c_prime[b * B + t] =
                Number((C * c_factor - M * m_factor) / A);
              unsigned int j = 0;
              for (unsigned int k = system.row_offsets[node];
                   k < system.row_offsets[node + 1];
                   ++k, ++j)
                {
                  const unsigned int col = system.columns[k];
                  const double      *K   = &system.stiffness[4 * k];
                  const double       diagonal =
                    col == unsigned(node) ? 2 * M * m_factor : 0.;
                  const std::size_t link = (std::size_t(b) * L + j) * B + t;
                  plan.links[link]       = local_index[plan.position[col]];
                  for (unsigned int c = 0; c < 4; ++c)
                    plan.stiffness[((std::size_t(b) * L + j) * 4 + c) * B + t] =
                      Number(((c == 0 || c == 3 ? diagonal : 0.) - K[c]) / A);
                }
              auto &count = plan.warp_links[b * (B / 32) + t / 32];
              count       = std::max<unsigned int>(count, j);
            }
          for (unsigned int t = 0; t < B; ++t)
            local_index[b * B + t] = -1;
          for (const int p : halo)
            local_index[p] = -1;
        }

      // Sources, merged by degree of freedom in a fixed order.
      plan.n_signals      = sources.size();
      plan.n_signal_steps = n_steps;
      plan.signal_values.resize(std::size_t(plan.n_signals) * (n_steps + 1));
      using Entry = std::tuple<int, double, int>; // dof, weight, signal
      std::vector<Entry> forces, prescribed;
      for (unsigned int s = 0; s < sources.size(); ++s)
        {
          const Source &source = sources[s];
          for (unsigned int n = 0; n <= n_steps; ++n)
            plan.signal_values[std::size_t(s) * (n_steps + 1) + n] =
              Number(source.signal.value(n * dt));
          for (const unsigned int node : source.nodes)
            {
              AssertThrow(node < system.n_nodes,
                          ExcMessage("Source " + std::to_string(s) +
                                     " refers to node " + std::to_string(node) +
                                     ", which does not exist."));
              const double A =
                system.mass[node] * m_factor + system.damping[node] * c_factor;
              for (unsigned int c = 0; c < 2; ++c)
                {
                  const int dof = c * n_padded + plan.position[node];
                  if (source.type == Source::Type::force)
                    {
                      if (source.direction[c] != 0)
                        forces.emplace_back(dof,
                                            source.amplitude *
                                              source.direction[c] / A,
                                            s);
                    }
                  else
                    prescribed.emplace_back(dof,
                                            source.amplitude *
                                              source.direction[c],
                                            s);
                }
            }
        }
      const auto merge = [](std::vector<Entry>  &entries,
                            std::vector<int>    &dofs,
                            std::vector<int>    &offsets,
                            std::vector<Number> &weights,
                            std::vector<int>    &signals) {
        std::stable_sort(entries.begin(),
                         entries.end(),
                         [](const Entry &a, const Entry &b) {
                           return std::get<0>(a) < std::get<0>(b);
                         });
        offsets = {0};
        for (std::size_t i = 0; i < entries.size(); ++i)
          {
            if (i == 0 ||
                std::get<0>(entries[i]) != std::get<0>(entries[i - 1]))
              {
                if (i > 0)
                  offsets.push_back(i);
                dofs.push_back(std::get<0>(entries[i]));
              }
            weights.push_back(Number(std::get<1>(entries[i])));
            signals.push_back(std::get<2>(entries[i]));
          }
        if (!entries.empty())
          offsets.push_back(entries.size());
      };
      // A prescribed value overwrites whatever a force adds to the same
      // degree of freedom, so such force entries are dropped: the GPU then
      // applies both kinds in one kernel without a race.
      {
        std::vector<int> fixed;
        for (const Entry &e : prescribed)
          fixed.push_back(std::get<0>(e));
        std::sort(fixed.begin(), fixed.end());
        forces.erase(std::remove_if(forces.begin(),
                                    forces.end(),
                                    [&](const Entry &e) {
                                      return std::binary_search(fixed.begin(),
                                                                fixed.end(),
                                                                std::get<0>(e));
                                    }),
                     forces.end());
      }
      merge(forces,
            plan.force_dofs,
            plan.force_offsets,
            plan.force_weights,
            plan.force_signals);
      merge(prescribed,
            plan.prescribed_dofs,
            plan.prescribed_offsets,
            plan.prescribed_weights,
            plan.prescribed_signals);

      for (const unsigned int node : receiver_nodes)
        {
          AssertThrow(node < system.n_nodes,
                      ExcMessage("A receiver refers to node " +
                                 std::to_string(node) +
                                 ", which does not exist."));
          plan.receiver_positions.push_back(plan.position[node]);
        }
      return plan;
    }



    template struct Plan<double>;
    template struct Plan<float>;
    template Plan<double>
    make_plan<double>(const NodalSystem &,
                      const NodeBlocks &,
                      const double,
                      const double,
                      const std::vector<Source> &,
                      const std::vector<unsigned int> &,
                      const unsigned int);
    template Plan<float>
    make_plan<float>(const NodalSystem &,
                     const NodeBlocks &,
                     const double,
                     const double,
                     const std::vector<Source> &,
                     const std::vector<unsigned int> &,
                     const unsigned int);
  } // namespace Wave
} // namespace GPUAssembly

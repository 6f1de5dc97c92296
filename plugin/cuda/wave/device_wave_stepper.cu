// SPDX-License-Identifier: LGPL-2.1-or-later
// The GPU time stepper of Pogo (Huthwaite 2014, Sec. 2.3): one thread per
// node, one CUDA block per node block, neighbour data through shared memory.

#include <gpu_assembly/base/cuda_check.h>
#include <gpu_assembly/base/device.h>
#include <gpu_assembly/lac/device_vector.h>
#include <gpu_assembly/wave/wave_stepper.h>
#include <gpu_assembly/wave/wave_update.h>

#include <cuda_runtime.h>

#include <cstdint>
#include <string>

namespace GPUAssembly
{
  namespace Wave
  {
    namespace
    {
      /**
       * Eq. 4 for every node of block blockIdx.x: the block's U_curr and
       * its halo go to shared memory (own nodes coalesced, halo through its
       * index list), then each thread runs over its warp's links; K' and
       * the link pointers are read coalesced, one array row per link.
       */
      template <typename Number>
      __global__ void __launch_bounds__(1024)
        wave_step_kernel(const Number *__restrict__ u_prev,
                         const Number *__restrict__ u_curr,
                         Number *__restrict__ u_next,
                         const Number *__restrict__ c_prime,
                         const Number *__restrict__ stiffness,
                         const std::uint16_t *__restrict__ links,
                         const std::uint8_t *__restrict__ warp_links,
                         const int *__restrict__ halo_offsets,
                         const int *__restrict__ halo_positions,
                         const unsigned int n_padded,
                         const unsigned int max_links,
                         const unsigned int shared_stride)
      {
        extern __shared__ unsigned char shared_bytes[];
        Number *const      sx = reinterpret_cast<Number *>(shared_bytes);
        Number *const      sy = sx + shared_stride;
        const unsigned int B = blockDim.x, b = blockIdx.x, t = threadIdx.x;
        const std::size_t  p = std::size_t(b) * B + t;

        sx[t]        = u_curr[p];
        sy[t]        = u_curr[n_padded + p];
        const int h0 = halo_offsets[b], h1 = halo_offsets[b + 1];
        for (int h = h0 + int(t); h < h1; h += B)
          {
            const int q      = halo_positions[h];
            sx[B + (h - h0)] = u_curr[q];
            sy[B + (h - h0)] = u_curr[n_padded + q];
          }
        const Number         cp      = c_prime[p];
        Number               ax      = rounded_mul(cp, u_prev[p]);
        Number               ay      = rounded_mul(cp, u_prev[n_padded + p]);
        const unsigned int   n_links = warp_links[b * (B / 32) + t / 32];
        const std::uint16_t *my_links =
          links + std::size_t(b) * max_links * B + t;
        const Number *K = stiffness + std::size_t(b) * max_links * 4 * B + t;
        __syncthreads();

#pragma unroll 4
        for (unsigned int j = 0; j < n_links; ++j)
          {
            const unsigned int index = my_links[std::size_t(j) * B];
            const Number      *k     = K + std::size_t(j) * 4 * B;
            accumulate_link(k[0],
                            k[B],
                            k[2 * B],
                            k[3 * B],
                            sx[index],
                            sy[index],
                            ax,
                            ay);
          }
        u_next[p]            = ax;
        u_next[n_padded + p] = ay;
      }



      /**
       * F' f(t_n) added to, and prescribed values g(t_{n+1}) written into,
       * U_next; one thread per degree of freedom (the plan merged entries
       * by degree of freedom and dropped forces on prescribed ones, so no
       * two threads touch the same value).
       */
      template <typename Number>
      __global__ void
      sources_kernel(Number *__restrict__ u_next,
                     const int *__restrict__ force_dofs,
                     const int *__restrict__ force_offsets,
                     const int *__restrict__ force_signals,
                     const Number *__restrict__ force_weights,
                     const int n_force,
                     const int *__restrict__ prescribed_dofs,
                     const int *__restrict__ prescribed_offsets,
                     const int *__restrict__ prescribed_signals,
                     const Number *__restrict__ prescribed_weights,
                     const int n_prescribed,
                     const Number *__restrict__ signal_values,
                     const unsigned int n_signal_steps,
                     const unsigned int step)
      {
        const int  i      = blockIdx.x * blockDim.x + threadIdx.x;
        const auto row    = std::size_t(n_signal_steps) + 1;
        const auto signal = [&](const int s, const unsigned int n) {
          return n <= n_signal_steps ? signal_values[s * row + n] : Number(0);
        };
        if (i < n_force)
          {
            Number value = u_next[force_dofs[i]];
            for (int e = force_offsets[i]; e < force_offsets[i + 1]; ++e)
              value = rounded_add(value,
                                  rounded_mul(force_weights[e],
                                              signal(force_signals[e], step)));
            u_next[force_dofs[i]] = value;
          }
        else if (i - n_force < n_prescribed)
          {
            const int k  = i - n_force;
            const int e0 = prescribed_offsets[k];
            Number    value =
              rounded_mul(prescribed_weights[e0],
                          signal(prescribed_signals[e0], step + 1));
            for (int e = e0 + 1; e < prescribed_offsets[k + 1]; ++e)
              value = rounded_add(value,
                                  rounded_mul(prescribed_weights[e],
                                              signal(prescribed_signals[e],
                                                     step + 1)));
            u_next[prescribed_dofs[k]] = value;
          }
      }



      template <typename Number>
      __global__ void
      record_kernel(const Number *__restrict__ u,
                    const int *__restrict__ positions,
                    const int          n_receivers,
                    const unsigned int n_padded,
                    double *__restrict__ records)
      {
        const int k = blockIdx.x * blockDim.x + threadIdx.x;
        if (k < n_receivers)
          {
            records[2 * k]     = u[positions[k]];
            records[2 * k + 1] = u[n_padded + positions[k]];
          }
      }
    } // namespace



    template <typename Number>
    struct DeviceStepper<Number>::Implementation
    {
      unsigned int n_nodes = 0, n_padded = 0, block_size = 0, max_links = 0,
                   max_halo = 0, n_blocks = 0, n_signal_steps = 0;
      std::vector<unsigned int> position;

      DeviceVector<Number>                u[3];
      GPUAssembly::internal::StateBuffers states;

      GPUAssembly::internal::StateLayout
      state_layout() const
      {
        return {2, n_nodes, n_padded, position.data()};
      }

      DeviceVector<Number> c_prime, stiffness, force_weights,
        prescribed_weights, signal_values;
      DeviceVector<std::uint16_t> links;
      DeviceVector<std::uint8_t>  warp_links;
      DeviceVector<int> halo_offsets, halo_positions, force_dofs, force_offsets,
        force_signals, prescribed_dofs, prescribed_offsets, prescribed_signals,
        receiver_positions;
      int n_force = 0, n_prescribed = 0, n_receivers = 0;
      /// Whether any force signal is non-zero at step n: once a burst has
      /// ended its kernel is skipped (adding F' times zero changes nothing).
      std::vector<char>    force_active;
      DeviceVector<double> records;
      std::size_t          shared_bytes = 0;
    };



    template <typename Number>
    DeviceStepper<Number>::DeviceStepper()
      : implementation(std::make_unique<Implementation>())
    {
      if (n_cuda_devices() == 0)
        internal::throw_error("DeviceStepper needs a CUDA device, "
                              "and none was found. Use the host stepper "
                              "(HostStepper) instead.");
    }



    template <typename Number>
    DeviceStepper<Number>::~DeviceStepper() = default;



    template <typename Number>
    void
    DeviceStepper<Number>::reinit(const Plan<Number> &plan,
                                  const unsigned int  record_interval)
    {
      if (record_interval == 0)
        internal::throw_error("The record interval must be positive.");
      Implementation &d = *implementation;
      d.n_nodes         = plan.n_nodes;
      d.n_padded        = plan.n_padded();
      d.block_size      = plan.block_size;
      d.max_links       = plan.max_links;
      d.max_halo        = plan.max_halo;
      d.n_blocks        = plan.n_blocks;
      d.n_signal_steps  = plan.n_signal_steps;
      d.position        = plan.position;
      for (auto &v : d.u)
        v.reinit(2 * std::size_t(d.n_padded));
      d.states = {};
      d.c_prime.copy_from_host(plan.c_prime);
      d.stiffness.copy_from_host(plan.stiffness);
      d.links.copy_from_host(plan.links);
      d.warp_links.copy_from_host(plan.warp_links);
      d.halo_offsets.copy_from_host(plan.halo_offsets);
      d.halo_positions.copy_from_host(plan.halo_positions);
      d.force_dofs.copy_from_host(plan.force_dofs);
      d.force_offsets.copy_from_host(plan.force_offsets);
      d.force_signals.copy_from_host(plan.force_signals);
      d.force_weights.copy_from_host(plan.force_weights);
      d.prescribed_dofs.copy_from_host(plan.prescribed_dofs);
      d.prescribed_offsets.copy_from_host(plan.prescribed_offsets);
      d.prescribed_signals.copy_from_host(plan.prescribed_signals);
      d.prescribed_weights.copy_from_host(plan.prescribed_weights);
      d.signal_values.copy_from_host(plan.signal_values);
      std::vector<int> receivers(plan.receiver_positions.begin(),
                                 plan.receiver_positions.end());
      d.receiver_positions.copy_from_host(receivers);
      d.force_active.assign(plan.n_signal_steps + 1, 0);
      for (std::size_t e = 0; e < plan.force_signals.size(); ++e)
        for (unsigned int n = 0; n <= plan.n_signal_steps; ++n)
          if (plan.signal_values[std::size_t(plan.force_signals[e]) *
                                   (plan.n_signal_steps + 1) +
                                 n] != Number(0))
            d.force_active[n] = 1;
      d.n_force      = plan.force_dofs.size();
      d.n_prescribed = plan.prescribed_dofs.size();
      d.n_receivers  = receivers.size();

      d.shared_bytes =
        2 * std::size_t(d.block_size + d.max_halo) * sizeof(Number);
      if (d.shared_bytes > 48 * 1024)
        GPU_ASSEMBLY_CHECK_CUDA(
          cudaFuncSetAttribute(wave_step_kernel<Number>,
                               cudaFuncAttributeMaxDynamicSharedMemorySize,
                               int(d.shared_bytes)));
      this->interval     = record_interval;
      this->current_step = 0;
      this->history.clear();
    }



    template <typename Number>
    void
    DeviceStepper<Number>::set_state(const unsigned int         step,
                                     const std::vector<double> &u_previous,
                                     const std::vector<double> &u_current)
    {
      Implementation &d = *implementation;
      d.state_layout().set_states(u_previous, u_current, d.states, d.u);
      this->current_step = step;
    }



    template <typename Number>
    void
    DeviceStepper<Number>::get_state(std::vector<double> &u_previous,
                                     std::vector<double> &u_current) const
    {
      const Implementation &d = *implementation;
      d.state_layout().get_states(d.states, d.u, u_previous, u_current);
    }



    template <typename Number>
    void
    DeviceStepper<Number>::advance(const unsigned int n_steps)
    {
      Implementation &d = *implementation;
      if (d.block_size == 0)
        internal::throw_error(
          "DeviceStepper::advance() called before reinit().");
      const unsigned int first = this->current_step;
      // Records in this call: steps first + 1 .. first + n_steps that are
      // multiples of the interval.
      const unsigned int n_records =
        (first + n_steps) / this->interval - first / this->interval;
      const std::size_t record_size = 2 * std::size_t(d.n_receivers);
      if (d.records.size() < n_records * record_size)
        d.records.reinit(n_records * record_size,
                         /*omit_zeroing_entries=*/true);

      const int    n_source_threads = d.n_force + d.n_prescribed;
      unsigned int record           = 0;
      for (unsigned int i = 0; i < n_steps; ++i)
        {
          const unsigned int n = first + i;
          wave_step_kernel<Number>
            <<<d.n_blocks, d.block_size, d.shared_bytes>>>(
              d.u[d.states.previous].data(),
              d.u[d.states.current].data(),
              d.u[d.states.next].data(),
              d.c_prime.data(),
              d.stiffness.data(),
              d.links.data(),
              d.warp_links.data(),
              d.halo_offsets.data(),
              d.halo_positions.data(),
              d.n_padded,
              d.max_links,
              d.block_size + d.max_halo);
          const bool forces =
            d.n_force > 0 && n <= d.n_signal_steps && d.force_active[n];
          if (d.n_prescribed > 0 || forces)
            sources_kernel<Number><<<(n_source_threads + 255) / 256, 256>>>(
              d.u[d.states.next].data(),
              d.force_dofs.data(),
              d.force_offsets.data(),
              d.force_signals.data(),
              d.force_weights.data(),
              d.n_force,
              d.prescribed_dofs.data(),
              d.prescribed_offsets.data(),
              d.prescribed_signals.data(),
              d.prescribed_weights.data(),
              d.n_prescribed,
              d.signal_values.data(),
              d.n_signal_steps,
              n);
          if ((n + 1) % this->interval == 0)
            {
              if (d.n_receivers > 0)
                record_kernel<Number><<<(d.n_receivers + 127) / 128, 128>>>(
                  d.u[d.states.next].data(),
                  d.receiver_positions.data(),
                  d.n_receivers,
                  d.n_padded,
                  d.records.data() + record * record_size);
              ++record;
            }
          d.states.rotate();
        }
      GPU_ASSEMBLY_CHECK_CUDA(cudaGetLastError());
      GPU_ASSEMBLY_CHECK_CUDA(cudaDeviceSynchronize());
      this->current_step += n_steps;
      if (n_records > 0 && record_size > 0)
        {
          std::vector<double> new_records;
          d.records.copy_to_host(new_records, n_records * record_size);
          this->history.insert(this->history.end(),
                               new_records.begin(),
                               new_records.end());
        }
    }



    template <typename Number>
    std::size_t
    DeviceStepper<Number>::memory_consumption() const
    {
      const Implementation &d     = *implementation;
      std::size_t           bytes = 0;
      for (const auto *v : {&d.u[0],
                            &d.u[1],
                            &d.u[2],
                            &d.c_prime,
                            &d.stiffness,
                            &d.force_weights,
                            &d.prescribed_weights,
                            &d.signal_values})
        bytes += v->memory_consumption();
      for (const auto *v : {&d.halo_offsets,
                            &d.halo_positions,
                            &d.force_dofs,
                            &d.force_offsets,
                            &d.force_signals,
                            &d.prescribed_dofs,
                            &d.prescribed_offsets,
                            &d.prescribed_signals,
                            &d.receiver_positions})
        bytes += v->memory_consumption();
      return bytes + d.links.memory_consumption() +
             d.warp_links.memory_consumption() + d.records.memory_consumption();
    }



    template class DeviceStepper<double>;
    template class DeviceStepper<float>;
  } // namespace Wave
} // namespace GPUAssembly

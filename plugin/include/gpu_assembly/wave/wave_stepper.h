// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_wave_wave_stepper_h
#define gpu_assembly_wave_wave_stepper_h

#include <gpu_assembly/base/central_difference_stepper.h>
#include <gpu_assembly/wave/wave_plan.h>

#include <memory>
#include <vector>

namespace GPUAssembly
{
  namespace Wave
  {
    /**
     * Time stepping with the central-difference update of Pogo's eq. 4 on
     * a Plan. Step n (from time n dt) computes
     *   U_{n+1} = C' U_{n-1} + K' U_n            (one thread per node)
     *   U_{n+1} += F' f(t_n)                      (force sources)
     *   U_{n+1} = g(t_{n+1})                      (prescribed displacements)
     * and records U_{n+1} at the receivers when n + 1 is a multiple of the
     * record interval. States (CentralDifferenceStepper) have two
     * components per node: x, y of node i at 2 i, 2 i + 1.
     */
    template <typename Number>
    class Stepper : public CentralDifferenceStepper
    {
    public:
      /**
       * Take the plan (copied: to the device for the GPU stepper) and start
       * from rest at step 0 with no receiver records.
       */
      virtual void
      reinit(const Plan<Number> &plan, const unsigned int record_interval) = 0;

      /**
       * Receiver records so far: record r, receiver k, component c at
       * (r * n_receivers + k) * 2 + c; record r is step (r + 1) times the
       * record interval.
       */
      const std::vector<double> &
      receiver_history() const
      {
        return history;
      }

      /// Replace the records (a restart).
      void
      set_receiver_history(const std::vector<double> &records)
      {
        history = records;
      }

    protected:
      unsigned int        interval = 1;
      std::vector<double> history;
    };



    /**
     * The reference: the same arithmetic as the GPU kernel, in the same
     * order (wave_update.h), run over blocks by all host threads.
     * Bitwise reproducible whatever the number of threads, since every
     * node is computed by one thread from the previous states only.
     */
    template <typename Number>
    class HostStepper : public Stepper<Number>
    {
    public:
      void
      reinit(const Plan<Number> &plan,
             const unsigned int  record_interval) override;

      void
      set_state(const unsigned int         step,
                const std::vector<double> &u_previous,
                const std::vector<double> &u_current) override;

      void
      get_state(std::vector<double> &u_previous,
                std::vector<double> &u_current) const override;

      void
      advance(const unsigned int n_steps) override;

    private:
      void
      do_step();

      GPUAssembly::internal::StateLayout
      state_layout() const
      {
        return {2, plan.n_nodes, plan.n_padded(), plan.position.data()};
      }

      Plan<Number>                        plan;
      std::vector<Number>                 u[3];
      GPUAssembly::internal::StateBuffers states;
    };



    /**
     * The GPU stepper: one thread per node, one CUDA block per node block;
     * a block loads its own U_curr and its halo into shared memory, then
     * every thread loops over its warp's links reading K' coalesced. Throws
     * if no CUDA device exists.
     */
    template <typename Number>
    class DeviceStepper : public Stepper<Number>
    {
    public:
      DeviceStepper();
      ~DeviceStepper() override;

      void
      reinit(const Plan<Number> &plan,
             const unsigned int  record_interval) override;

      void
      set_state(const unsigned int         step,
                const std::vector<double> &u_previous,
                const std::vector<double> &u_current) override;

      void
      get_state(std::vector<double> &u_previous,
                std::vector<double> &u_current) const override;

      void
      advance(const unsigned int n_steps) override;

      /// Bytes of device memory held.
      std::size_t
      memory_consumption() const;

    private:
      struct Implementation;
      std::unique_ptr<Implementation> implementation;
    };
  } // namespace Wave
} // namespace GPUAssembly

#endif

// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_base_central_difference_stepper_h
#define gpu_assembly_base_central_difference_stepper_h

#include <gpu_assembly/base/cuda_check.h>

#include <cstddef>
#include <string>
#include <vector>

namespace GPUAssembly
{
  /**
   * The interface the time steppers of the two explicit solvers share
   * (Wave::Stepper for elastic waves, TLED::Stepper for Total Lagrangian
   * Explicit Dynamics, each on the host and the device): a central-difference
   * rule computes u_{n+1} from u_n and u_{n-1}, so the state at step n is
   * that pair. States are exchanged in node numbering with the components of
   * a node interleaved (component c of node i at i * dim + c), in double
   * whatever number type the stepper computes in: the conversion of float
   * values to double is exact, so a checkpoint written from them restarts
   * bitwise. Each solver's stepper adds its own reinit(), which takes its
   * own data and starts from rest at step 0.
   *
   * Code that drives a stepper (a time loop, output, checkpoints, timing)
   * needs only this interface, and so serves both solvers and both number
   * types.
   */
  class CentralDifferenceStepper
  {
  public:
    virtual ~CentralDifferenceStepper() = default;

    /// Continue from u_{n-1} = @p u_previous, u_n = @p u_current at step
    /// n = @p step (a restart).
    virtual void
    set_state(const unsigned int         step,
              const std::vector<double> &u_previous,
              const std::vector<double> &u_current) = 0;

    /// u_{n-1} and u_n at the current step n.
    virtual void
    get_state(std::vector<double> &u_previous,
              std::vector<double> &u_current) const = 0;

    /// Do @p n_steps steps.
    virtual void
    advance(const unsigned int n_steps) = 0;

    /// Steps done so far (the n of u_n).
    unsigned int
    step() const
    {
      return current_step;
    }

  protected:
    unsigned int current_step = 0;
  };



  namespace internal
  {
    /**
     * Which of a stepper's three state buffers holds u_{n-1}, u_n and the
     * u_{n+1} a step writes; rotate() after the step makes u_{n+1} the
     * current state without copying.
     */
    struct StateBuffers
    {
      unsigned int previous = 0, current = 1, next = 2;

      void
      rotate()
      {
        const unsigned int old_previous = previous;
        previous                        = current;
        current                         = next;
        next                            = old_previous;
      }
    };

    /**
     * Where a stepper keeps the states it computes in: component c of node
     * i at c * stride + position[i] (component-major, padded or reordered
     * as the stepper needs), or at c * stride + i without @p position.
     */
    struct StateLayout
    {
      unsigned int        dim      = 0;
      std::size_t         n_nodes  = 0;
      std::size_t         stride   = 0;
      const unsigned int *position = nullptr;

      std::size_t
      index(const std::size_t i, const unsigned int c) const
      {
        return c * stride + (position != nullptr ? position[i] : i);
      }

      /// The interleaved @p state (node numbering) into @p buffer.
      template <typename Number>
      void
      scatter(const std::vector<double> &state, Number *buffer) const
      {
        for (std::size_t i = 0; i < n_nodes; ++i)
          for (unsigned int c = 0; c < dim; ++c)
            buffer[index(i, c)] = Number(state[dim * i + c]);
      }

      /// @p buffer into the interleaved @p state, resized to dim n_nodes.
      template <typename Number>
      void
      gather(const Number *buffer, std::vector<double> &state) const
      {
        state.resize(dim * n_nodes);
        for (std::size_t i = 0; i < n_nodes; ++i)
          for (unsigned int c = 0; c < dim; ++c)
            state[dim * i + c] = buffer[index(i, c)];
      }

      /// Throw unless @p u_previous and @p u_current, the states
      /// set_state() takes, hold dim values per node each.
      void
      check_states(const std::vector<double> &u_previous,
                   const std::vector<double> &u_current) const
      {
        if (u_previous.size() != dim * n_nodes ||
            u_current.size() != dim * n_nodes)
          throw_error("set_state: the states must hold " + std::to_string(dim) +
                      " values per node (" + std::to_string(dim * n_nodes) +
                      " for " + std::to_string(n_nodes) + " nodes), not " +
                      std::to_string(u_previous.size()) + " and " +
                      std::to_string(u_current.size()) + ".");
      }

      /// @p state into a host buffer of the stepper, in place (entries of
      /// no node keep their values).
      template <typename Number>
      void
      store(const std::vector<double> &state, std::vector<Number> &buffer) const
      {
        scatter(state, buffer.data());
      }

      /// @p state into a device buffer of the stepper (a DeviceVector),
      /// through a host copy of dim stride entries whose entries of no node
      /// are zero.
      template <template <typename> class DeviceBuffer, typename Number>
      void
      store(const std::vector<double> &state,
            DeviceBuffer<Number>      &buffer) const
      {
        std::vector<Number> host(dim * stride, Number(0));
        scatter(state, host.data());
        buffer.copy_from_host(host);
      }

      /// A host buffer of the stepper into the interleaved @p state.
      template <typename Number>
      void
      load(const std::vector<Number> &buffer, std::vector<double> &state) const
      {
        gather(buffer.data(), state);
      }

      /// A device buffer of the stepper into the interleaved @p state.
      template <template <typename> class DeviceBuffer, typename Number>
      void
      load(const DeviceBuffer<Number> &buffer, std::vector<double> &state) const
      {
        std::vector<Number> host;
        buffer.copy_to_host(host);
        gather(host.data(), state);
      }

      /// set_state() of a stepper whose three state buffers are @p u:
      /// checks the sizes, then u_{n-1} and u_n into the buffers @p states
      /// names.
      template <typename Buffer>
      void
      set_states(const std::vector<double> &u_previous,
                 const std::vector<double> &u_current,
                 const StateBuffers        &states,
                 Buffer (&u)[3]) const
      {
        check_states(u_previous, u_current);
        store(u_previous, u[states.previous]);
        store(u_current, u[states.current]);
      }

      /// get_state() of a stepper whose three state buffers are @p u.
      template <typename Buffer>
      void
      get_states(const StateBuffers &states,
                 const Buffer (&u)[3],
                 std::vector<double> &u_previous,
                 std::vector<double> &u_current) const
      {
        load(u[states.previous], u_previous);
        load(u[states.current], u_current);
      }
    };
  } // namespace internal
} // namespace GPUAssembly

#endif

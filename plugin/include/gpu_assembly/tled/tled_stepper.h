// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_tled_tled_stepper_h
#define gpu_assembly_tled_tled_stepper_h

#include <gpu_assembly/base/central_difference_stepper.h>
#include <gpu_assembly/tled/tled_model.h>

#include <memory>
#include <vector>

namespace GPUAssembly
{
  namespace TLED
  {
    /**
     * How element forces reach the nodes.
     */
    enum class NodalSum
    {
      /// Each node adds its (element, local node) entries in the fixed
      /// order of Model::node_entries: no atomics, bitwise reproducible.
      plan,
      /// Each element adds its forces to the nodes with atomicAdd (the
      /// usual GPU form, kept as the measured peer): the order of the
      /// additions, and so the last bits, vary from run to run. Device
      /// only.
      atomic
    };

    /**
     * The TLED step n -> n + 1 (time t_n = n dt):
     *   f_int = sum over elements of element_forces(u_n)  (tled_element.h)
     *   u_{n+1} = a (r(t_n) f_ext - f_int) + b u_n + c u_{n-1}
     *             (central_difference(), per node component)
     *   u_{n+1} = r(t_{n+1}) g   on prescribed components,
     * r the smooth ramp. States (CentralDifferenceStepper) have three
     * components per node: x, y, z of node n at 3 n .. 3 n + 2.
     *
     * Every step checks, in the pass over the nodes it makes anyway, that
     * each node's summed force f_int and its u_{n+1} are finite numbers (an
     * inverted element, J <= 0, gives NaN forces; a load beyond the number
     * range an infinity). A step that fails the check is not taken: the
     * stepper stays at u_{n-1}, u_n, the last finite state, and
     * non_finite_node() names the node.
     */
    template <typename Number>
    class Stepper : public CentralDifferenceStepper
    {
    public:
      /**
       * Take the model, boundary conditions and integration settings
       * (copied: to the device for the GPU stepper) and start from rest at
       * step 0. Throws if the time step exceeds the stable limit.
       */
      virtual void
      reinit(const Model<Number>      &model,
             const BoundaryConditions &boundary_conditions,
             const Integration        &integration) = 0;

      /**
       * dealii::numbers::invalid_unsigned_int while every step was finite.
       * Else the smallest node whose force or displacement in the step from
       * step() to step() + 1 is not finite: that step was not taken,
       * get_state() returns the last finite state, and advance() does no
       * more steps until reinit() or set_state().
       */
      unsigned int
      non_finite_node() const
      {
        return first_non_finite_node;
      }

    protected:
      unsigned int first_non_finite_node = static_cast<unsigned int>(-1);
    };



    /**
     * The reference: element forces over all host threads into the
     * element-force array, then each node's sum and update, in the order
     * of the device kernels. Bitwise reproducible whatever the number of
     * threads.
     */
    template <typename Number>
    class HostStepper : public Stepper<Number>
    {
    public:
      void
      reinit(const Model<Number>      &model,
             const BoundaryConditions &boundary_conditions,
             const Integration        &integration) override;

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

      Model<Number>                       model;
      std::vector<Number>                 element_force;
      std::vector<Number>                 u[3];
      std::vector<Number>                 update_coefficient;
      std::vector<std::uint8_t>           flags;
      std::vector<Number>                 prescribed, external;
      Number                              b = 0, c = 0;
      double                              dt = 0, ramp_time = 0;
      GPUAssembly::internal::StateBuffers states;

      GPUAssembly::internal::StateLayout
      state_layout() const
      {
        return {3, model.n_nodes, model.node_stride};
      }
    };



    /**
     * The GPU stepper: a thread per element computes its forces from the
     * structure-of-arrays model into the element-force array (coalesced
     * stores), then a thread per node sums its entries in the plan's order
     * and applies the update and the boundary conditions. With
     * NodalSum::atomic the element kernel adds to nodal forces with
     * atomicAdd instead. A batch of steps is one CUDA graph launch (graphs
     * are built on the first advance() of that size and kept). Throws if no
     * CUDA device exists.
     */
    template <typename Number>
    class DeviceStepper : public Stepper<Number>
    {
    public:
      /// @p steps_per_graph steps per graph launch (a multiple of 3 keeps
      /// the three state buffers in place, so one graph serves every batch).
      explicit DeviceStepper(const NodalSum     nodal_sum = NodalSum::plan,
                             const unsigned int steps_per_graph = 300);
      ~DeviceStepper() override;

      void
      reinit(const Model<Number>      &model,
             const BoundaryConditions &boundary_conditions,
             const Integration        &integration) override;

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

    namespace internal
    {
      /**
       * The per-node data of the update, shared by both steppers (after
       * check_time_step()): coefficient a of central_difference() per node,
       * b and c, and the boundary data in structure-of-arrays form
       * (component i of node n at i * node_stride + n); flags: bits 0-2
       * the prescribed components, bit 3 a node with an external force.
       */
      template <typename Number>
      void
      make_update_data(const Model<Number>       &model,
                       const BoundaryConditions  &boundary_conditions,
                       const Integration         &integration,
                       std::vector<Number>       &coefficient,
                       std::vector<std::uint8_t> &flags,
                       std::vector<Number>       &prescribed,
                       std::vector<Number>       &external,
                       Number                    &b,
                       Number                    &c);
    } // namespace internal

    /**
     * A DeviceStepper where a CUDA device exists, else a HostStepper.
     */
    template <typename Number>
    std::unique_ptr<Stepper<Number>>
    make_stepper(const bool use_device);
  } // namespace TLED
} // namespace GPUAssembly

#endif

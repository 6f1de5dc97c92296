// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_tled_tled_stepper_h
#define gpu_assembly_tled_tled_stepper_h

#include <gpu_assembly/base/central_difference_stepper.h>
#include <gpu_assembly/base/cuda_handles.h>
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
      atomic,
      /// No element force leaves the block that computes it: the nodes are
      /// cut into blocks of nearby nodes (internal::NodeBlocks); a block
      /// computes every element that touches one of its nodes (into shared
      /// memory on the device) and sums, for each of its nodes, the entries
      /// in the order of plan, so the results are bitwise equal to plan's.
      /// Elements on the border of two blocks are computed by both (the
      /// recomputation factor, NodeBlocks::recomputation_factor).
      fused
    };

    /// The nodal sum of DeviceStepper, and of make_stepper()'s device
    /// stepper, unless one is named.
    constexpr NodalSum default_nodal_sum = NodalSum::plan;

    /// Nodes per block of NodalSum::fused unless told otherwise (on the
    /// device also the threads of a block: a multiple of 32, at most 256).
    constexpr unsigned int default_nodes_per_block = 128;

    namespace internal
    {
      /**
       * The blocks of NodalSum::fused. The nodes, ordered along a Morton
       * (Z-order) curve through their reference coordinates so that a
       * block is a compact brick of the mesh, are cut into blocks of
       * nodes_per_block; each block lists the elements that touch one of
       * its nodes and, for each of its nodes, its entries of
       * Model::node_entries, in their order, as slots of those elements.
       * The device stores the elements in Morton order of their centroids
       * (element_permutation), so that a block's elements lie close
       * together in memory; slots count a block's elements by ascending
       * element number, the order of the plan.
       */
      struct NodeBlocks
      {
        unsigned int nodes_per_block = 0, n_blocks = 0;
        /// The most elements of one block.
        unsigned int max_elements = 0;
        /// Node t of block k at k nodes_per_block + t; -1 pads the last
        /// block.
        std::vector<int> nodes;
        /// Position p of the device's element arrays holds element
        /// element_permutation[p].
        std::vector<int> element_permutation;
        /// Block k's elements at element_offsets[k] ..
        /// element_offsets[k + 1] - 1 of elements, as ascending positions
        /// of the device's order, and their slots (0 for the block's
        /// smallest element number, 1 for the next, ...).
        std::vector<int> element_offsets, elements, slots;
        /**
         * Entry j of node t of block k at entry_offsets[k] + j
         * nodes_per_block + t (a row per j, for coalesced loads): 8 times
         * the slot of the element plus the local node, or -1 after the
         * node's last entry. entry_offsets[k + 1] - entry_offsets[k] is
         * nodes_per_block times the block's largest valence.
         */
        std::vector<int> entry_offsets, entries;

        /// Elements computed per step over the number of elements.
        double recomputation_factor = 0;
        /// Bytes one step of the fused sum moves at least: the byte floor
        /// (Model::minimum_bytes_per_step()), the element data of the
        /// elements computed twice or more read again, and these lists.
        std::size_t bytes_per_step = 0;
      };

      /**
       * The node blocks of @p model; @p nodes_per_block at least 1.
       */
      template <typename Number>
      NodeBlocks
      make_node_blocks(const Model<Number> &model,
                       const unsigned int   nodes_per_block);

    } // namespace internal

    /**
     * Nodal forces g_n(u_n) that a stepper adds to the ramped external
     * force r(t_n) f_ext of step n: loads with their own time function, or
     * that follow the deformation (a pressure on the current surface).
     * Forces are exchanged in the steppers' layout: component i of node m
     * at i * node_stride + m (Model::node_stride), u_n in the same layout.
     * The stepper keeps the force array between steps and zeroes it once:
     * an implementation writes, in every step, every entry it ever writes.
     * The arrays are host memory for the HostStepper and device memory for
     * the DeviceStepper, which calls only the device functions.
     */
    template <typename Number>
    class StepForces
    {
    public:
      virtual ~StepForces() = default;

      /// The nodes that may receive a force (the update reads the force
      /// array at these nodes only).
      virtual std::vector<unsigned int>
      nodes() const = 0;

      /// Host: the forces of step @p step at @p u into @p forces.
      virtual void
      compute(const unsigned int step, const Number *u, Number *forces) = 0;

      /**
       * Device: called on the host before the steps @p first_step ..
       * @p first_step + @p n_steps - 1 are launched on @p stream (at most
       * the steps of one graph launch): what those steps need from the host
       * (their time functions' values), copied in stream order (the steps
       * launched before may still read the previous values) for the
       * kernels that enqueue() enqueued.
       */
      virtual void
      prepare(CUstream_st       *stream,
              const unsigned int first_step,
              const unsigned int n_steps) = 0;

      /**
       * Device: enqueue on @p stream the forces of step number @p k of the
       * prepared steps at @p u into @p forces. Launches are captured into a
       * CUDA graph that is launched again for later batches of steps, after
       * their prepare(): the kernels must take what changes from step to
       * step from device memory that prepare() fills, not from their
       * arguments.
       */
      virtual void
      enqueue(CUstream_st       *stream,
              const unsigned int k,
              const Number      *u,
              Number            *forces) = 0;
    };



    /**
     * The TLED step n -> n + 1 (time t_n = n dt):
     *   f_int = sum over elements of element_forces(u_n)  (tled_element.h)
     *   u_{n+1} = a (r(t_n) f_ext + g_n(u_n) - f_int) + b u_n + c u_{n-1}
     *             (central_difference(), per node component)
     *   u_{n+1} = r(t_{n+1}) g   on prescribed components,
     * r the smooth ramp, g_n the StepForces if set. States
     * (CentralDifferenceStepper) have three
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

      /**
       * Add @p forces, g_n(u_n), to every step from the next reinit() on
       * (nullptr: none). The HostStepper calls StepForces::compute(), the
       * DeviceStepper StepForces::prepare() and enqueue().
       */
      void
      set_step_forces(std::shared_ptr<StepForces<Number>> forces)
      {
        step_forces = std::move(forces);
      }

    protected:
      unsigned int first_non_finite_node = static_cast<unsigned int>(-1);
      std::shared_ptr<StepForces<Number>> step_forces;
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
      /// @p nodal_sum: plan (the default: each element computed once) or
      /// fused (the blocks of the device's fused sum, on host threads;
      /// bitwise equal to plan). The atomic sum exists on the device only
      /// and is refused.
      explicit HostStepper(
        const NodalSum     nodal_sum       = NodalSum::plan,
        const unsigned int nodes_per_block = default_nodes_per_block);

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

      NodalSum                  nodal_sum;
      unsigned int              nodes_per_block;
      Model<Number>             model;
      std::vector<Number>       element_force;
      internal::NodeBlocks      blocks;
      std::vector<Number>       u[3];
      std::vector<Number>       update_coefficient;
      std::vector<std::uint8_t> flags;
      std::vector<Number>       prescribed, external;
      /// g_n of the StepForces (empty without them).
      std::vector<Number>                 step_force;
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
     * atomicAdd instead; with NodalSum::fused one kernel does both, a
     * thread block per node block (elements in shared memory, no element
     * force in global memory). A batch of steps is one CUDA graph launch
     * (graphs are built on the first advance() of that size and kept). Throws
     * if no CUDA device exists.
     */
    template <typename Number>
    class DeviceStepper : public Stepper<Number>
    {
    public:
      /// @p steps_per_graph steps per graph launch (a multiple of 3 keeps
      /// the three state buffers in place, so one graph serves every batch).
      /// @p nodes_per_block: the node blocks of NodalSum::fused, also the
      /// threads per block (a multiple of 32, at most 256; others are
      /// refused with the fused sum, unused with the others).
      explicit DeviceStepper(
        const NodalSum     nodal_sum       = default_nodal_sum,
        const unsigned int steps_per_graph = 300,
        const unsigned int nodes_per_block = default_nodes_per_block);
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

      /**
       * Whether the plan's element kernel reads the element data as the
       * lines L2 evicts first, as reinit() decided for the model: for
       * hexahedra where the element forces and the nodal state fit in the
       * device's L2 but the step's data, element data included, take more
       * than half of it, so that the forces and the state stay in L2 from
       * the element kernel to the node kernel rather than give way to
       * element data that are read once a step. The values are the same
       * either way.
       */
      bool
      streams_element_data() const;

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
       * the prescribed components, bit 3 a node with an external force,
       * bit 4 one of @p step_forces' nodes (if not null).
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
                       Number                    &c,
                       const StepForces<Number>  *step_forces = nullptr);
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

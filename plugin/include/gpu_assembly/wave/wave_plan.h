// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_wave_wave_plan_h
#define gpu_assembly_wave_wave_plan_h

#include <gpu_assembly/wave/elastic_wave_system.h>
#include <gpu_assembly/wave/node_partitioner.h>

#include <cstdint>
#include <string>
#include <vector>

namespace GPUAssembly
{
  namespace Wave
  {
    /**
     * A time signal: Pogo's Hann-windowed tone burst or Gaussian.
     */
    struct Signal
    {
      enum class Type
      {
        /// sin(2 pi f (t - t0)) * 0.5 (1 - cos(2 pi f (t - t0) / n)) for
        /// t0 <= t <= t0 + n / f, zero elsewhere.
        hann_tone_burst,
        /// exp(-((t - t0) / width)^2).
        gaussian
      };
      Type type = Type::hann_tone_burst;
      /// Centre frequency f. Units: Hz.
      double frequency = 1e6;
      /// Cycles n of the tone burst.
      double n_cycles = 5;
      /// Start t0 of the burst, or centre of the Gaussian. Units: s.
      double delay = 0;
      /// Width of the Gaussian. Units: s.
      double width = 1e-6;

      double
      value(const double t) const;

      /// Time after which the signal is negligible (zero for the burst,
      /// below 1e-16 of the peak for the Gaussian).
      double
      end_time() const;
    };

    /**
     * A source on a set of nodes: a force (eq. 1's F, per node, in N per
     * unit thickness) or a prescribed displacement (m). A prescribed
     * displacement fixes both components of its nodes: a zero amplitude
     * clamps them.
     */
    struct Source
    {
      enum class Type
      {
        force,
        displacement
      };
      Type                      type = Type::force;
      std::vector<unsigned int> nodes;
      /// Direction (x, y), used as given (not normalized).
      double direction[2] = {0, 1};
      double amplitude    = 1;
      Signal signal;
    };

    /**
     * Everything the central-difference update U_next = F' + C' U_prev +
     * K' U_curr (Pogo eq. 4) needs, arranged for one GPU thread per node:
     * the nodes of block b occupy the padded positions b B .. b B + B - 1
     * (B = block size), so the per-node arrays of a block are contiguous and
     * read coalesced. Inside a block, nodes are sorted by decreasing number
     * of links so that the threads of a warp loop over about the same number
     * of K' entries (Pogo's L_av of Appendix A shrinks towards the mean).
     * The halo of a block (nodes of other blocks it links to) is listed per
     * block and loaded into shared memory after the block's own nodes;
     * link entries are 16-bit indices into that shared array, as Pogo's
     * "link pointers".
     *
     * Displacements are stored component-major: x of position p at p, y at
     * n_padded + p.
     */
    template <typename Number>
    struct Plan
    {
      unsigned int n_nodes    = 0;
      unsigned int block_size = 0;
      unsigned int n_blocks   = 0;
      /// Fixed maximum of links per node (padding beyond a node's own).
      unsigned int max_links = 0;
      /// Largest halo of a block.
      unsigned int max_halo  = 0;
      double       time_step = 0;

      /// Padded position of every node.
      std::vector<unsigned int> position;
      /// Node at every padded position, or -1 for padding.
      std::vector<int> node_at;

      /// C' per padded position (0 for padding).
      std::vector<Number> c_prime;
      /// K' at ((b * max_links + j) * 4 + c) * block_size + t for link j
      /// of thread t of block b, c = xx, xy, yx, yy.
      std::vector<Number> stiffness;
      /// Shared-memory index of link j of thread t of block b at
      /// (b * max_links + j) * block_size + t. Unused slots point at the
      /// thread's own node with K' = 0, so that the loop has no branch (the
      /// slot costs its bytes either way: the warp loads them for the
      /// lanes that use it).
      std::vector<std::uint16_t> links;
      /// Links the threads of warp w of block b loop over (the warp's
      /// maximum), at b * (block_size / 32) + w.
      std::vector<std::uint8_t> warp_links;
      /// Halo of block b: halo_positions[halo_offsets[b] ..
      /// halo_offsets[b + 1]), padded positions in increasing order.
      std::vector<int> halo_offsets;
      std::vector<int> halo_positions;

      /// Force terms F' = (M / dt^2 + C / 2 dt)^{-1} F, merged by degree of
      /// freedom (component * n_padded + position): entries
      /// force_offsets[k] .. force_offsets[k + 1] of force_dofs[k] add
      /// force_weights[i] * signal force_signals[i] in this order.
      std::vector<int>    force_dofs, force_offsets, force_signals;
      std::vector<Number> force_weights;
      /// Prescribed displacements, merged the same way: the value is the
      /// sum of weight * signal at the new time.
      std::vector<int> prescribed_dofs, prescribed_offsets, prescribed_signals;
      std::vector<Number> prescribed_weights;
      /// Signal s at step n (time n dt) at s * (n_signal_steps + 1) + n;
      /// beyond the table signals are zero.
      unsigned int        n_signals      = 0;
      unsigned int        n_signal_steps = 0;
      std::vector<Number> signal_values;

      /// Padded positions of the receiver nodes.
      std::vector<int> receiver_positions;

      unsigned int
      n_padded() const
      {
        return n_blocks * block_size;
      }

      /// Pogo's block efficiency eta.
      double
      efficiency() const
      {
        return n_blocks == 0 ? 0. : double(n_nodes) / n_padded();
      }

      /// Pogo's L_av: the mean over warps of the links they loop over.
      double
      average_warp_links() const;

      /// L_av had the nodes of each block kept in the partitioner's order
      /// instead of being sorted by their number of links: what the sort
      /// saves.
      double unsorted_average_warp_links = 0;

      /**
       * The bytes one time step must move between global memory and the
       * chip, by inspection of the kernel (Pogo's Appendix A for this
       * implementation): displacements U_prev, U_curr, U_next and C' of
       * every padded position, the warp link counts, the halo (indices and
       * both components), and for every warp and each of its links the
       * link indices and the four K' coefficients of its 32 threads.
       * Sources and receivers are left out, as in the paper.
       */
      std::size_t
      bytes_per_step() const;

      /// The same by component, for the benchmark table.
      std::string
      describe_bytes_per_step() const;

      /// Memory the plan's arrays take on the device.
      std::size_t
      memory_consumption() const;
    };

    /**
     * Build the plan: K', C', F' of eq. 4 from @p system and the time step
     * @p time_step (in double, then rounded to Number), the padded block
     * layout from @p blocks, the signal table for steps 0 .. n_steps.
     * Throws if the time step exceeds the stability limit 2 / sqrt(
     * lambda_max(M^{-1} K)) given as @p max_stable_time_step (pass 0 to
     * skip the check), if a node has more than 255 links, or if a block
     * and its halo do not fit 16-bit indices.
     */
    template <typename Number>
    Plan<Number>
    make_plan(const NodalSystem               &system,
              const NodeBlocks                &blocks,
              const double                     time_step,
              const double                     max_stable_time_step,
              const std::vector<Source>       &sources,
              const std::vector<unsigned int> &receiver_nodes,
              const unsigned int               n_steps);
  } // namespace Wave
} // namespace GPUAssembly

#endif

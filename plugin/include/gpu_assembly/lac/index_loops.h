// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_lac_index_loops_h
#define gpu_assembly_lac_index_loops_h

#include <gpu_assembly/base/config.h>
#include <gpu_assembly/lac/device_vector.h>

#include <cstddef>

/**
 * @file
 * Loops over an index range 0 <= i < n whose body is written once, as a
 * function object with a GPU_ASSEMBLY_HOST_DEVICE call operator, and runs
 * where the arrays it reads and writes live: with @p on_device false one
 * index after another on the host, else as a CUDA kernel on the default
 * stream, one index a thread (grid-stride). The body holds host or device
 * pointers accordingly; ResidentArray::on_device() says which.
 *
 * The device branch calls a launch template of index_loops.cuh, which a
 * .cu file instantiates for each body
 * (GPU_ASSEMBLY_INSTANTIATE_FOR_EACH_INDEX and its siblings): host code
 * cannot launch kernels, so a body that a .cc file runs on the device must
 * be instantiated in some .cu file of the program. The plugin instantiates
 * the bodies of its resident distributed linear algebra, among them
 * ResidentOperations::Gather.
 *
 * Sums over the indices (sum_over_indices()) are accumulated in double in
 * an order that depends on n alone: on the host in index order, on the
 * device per thread, then per block in a fixed tree, then over the blocks
 * in one block; so each is bitwise reproducible from call to call.
 *
 * No deal.II or CUDA headers here: both compilers read this header.
 */

namespace GPUAssembly
{
  /**
   * Device scratch space of sum_over_indices(): partial sums per block and
   * the finished sums. Host loops use none.
   */
  class ReductionWorkspace
  {
  public:
    /// Blocks of a device reduction at most.
    static constexpr unsigned int max_blocks = 1024;
    /// Sums that one reduction computes together at most.
    static constexpr unsigned int max_sums = 2;

    /// Room for the device reductions if @p on_device, else none.
    void
    reinit(const bool on_device)
    {
      storage.reinit(on_device ? max_sums * (max_blocks + 1) : 0);
    }

    /// max_sums values per block.
    double *
    partial() const
    {
      return storage.data();
    }

    /// max_sums values.
    double *
    result() const
    {
      return storage.data() + max_sums * max_blocks;
    }

  private:
    mutable DeviceVector<double> storage;
  };



  namespace internal
  {
    // The device branches: definitions in index_loops.cuh.
    template <typename Body>
    void
    launch_for_each_index(const std::size_t n, const Body &body);

    template <unsigned int n_sums, typename Body>
    void
    launch_sum_over_indices(const std::size_t         n,
                            const Body               &body,
                            const ReductionWorkspace &workspace,
                            double (&sums)[n_sums]);

    template <typename Body>
    void
    launch_for_each_row(const std::size_t n, const Body &body);
  } // namespace internal



  /// sums[0] += x[i] y[i] in double (sum_over_indices()).
  template <typename Number>
  struct DotProduct
  {
    const Number *x;
    const Number *y;

    GPU_ASSEMBLY_HOST_DEVICE void
    operator()(const std::size_t i, double (&sums)[1]) const
    {
      sums[0] += double(x[i]) * double(y[i]);
    }
  };



  /// body(i) for 0 <= i < n; no two indices may write one entry.
  template <typename Body>
  void
  for_each_index(const bool on_device, const std::size_t n, const Body &body)
  {
    if (on_device)
      {
        if (n > 0)
          internal::launch_for_each_index(n, body);
        return;
      }
    for (std::size_t i = 0; i < n; ++i)
      body(i);
  }



  /**
   * body(i, sums) for 0 <= i < n, where the body adds index i's terms to
   * @p n_sums running sums; @p sums are the totals (this process's, in
   * double). @p workspace is used on the device.
   */
  template <unsigned int n_sums, typename Body>
  void
  sum_over_indices(const bool                on_device,
                   const std::size_t         n,
                   const ReductionWorkspace &workspace,
                   const Body               &body,
                   double (&sums)[n_sums])
  {
    static_assert(n_sums >= 1 && n_sums <= ReductionWorkspace::max_sums,
                  "a reduction computes one or two sums");
    if (on_device)
      return internal::launch_sum_over_indices(n, body, workspace, sums);
    for (unsigned int s = 0; s < n_sums; ++s)
      sums[s] = 0;
    for (std::size_t i = 0; i < n; ++i)
      body(i, sums);
  }



  /**
   * For 0 <= i < n, body.store(i, value) with value the sum of what
   * body.part(i, lane, n_lanes) returns over the lanes: a value per index
   * that is itself a sum over a range of its own, such as a row of a
   * sparse matrix times a vector. The host computes it in one part
   * (part(i, 0, 1)); the device splits it among lanes_per_row threads,
   * whose parts are added by a butterfly of shuffles, the same order for
   * every index.
   */
  template <typename Body>
  void
  for_each_row(const bool on_device, const std::size_t n, const Body &body)
  {
    if (on_device)
      {
        if (n > 0)
          internal::launch_for_each_row(n, body);
        return;
      }
    for (std::size_t i = 0; i < n; ++i)
      body.store(i, body.part(i, 0u, 1u));
  }
} // namespace GPUAssembly

#endif

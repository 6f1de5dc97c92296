// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_src_base_first_touch_h
#define gpu_assembly_src_base_first_touch_h

// Sizing of large set-up arrays with their pages first touched by all
// threads (not installed).

#include <deal.II/base/parallel.h>

#include <cstddef>
#include <type_traits>
#include <vector>

namespace GPUAssembly
{
  namespace internal
  {
    /**
     * Makes @p v hold @p n copies of @p value, as v.assign(n, value), on
     * fresh storage whose pages all threads touch first. The first write
     * to a fresh page faults, and the kernel zeroes the page; one thread
     * filling a vector of a gigabyte spends most of its time there (about
     * 0.4 s on the machines measured, against 0.1 s to fill pages already
     * present). Touched in parallel, the faults spread over the cores, and
     * the fill that follows writes present pages. The values are those of
     * v.assign(n, value), bit for bit.
     */
    template <typename T>
    void
    assign_first_touched_in_parallel(std::vector<T>   &v,
                                     const std::size_t n,
                                     const T          &value = T())
    {
      static_assert(std::is_trivially_copyable_v<T>,
                    "Only arrays of plain numbers are sized this way.");
      // Storage of less than a few pages gains nothing.
      constexpr std::size_t page = 4096;
      if (n * sizeof(T) < 64 * page)
        {
          v.assign(n, value);
          return;
        }
      // Old storage is released first, and new storage is not reused
      // memory: a fresh mapping, whose pages no thread has touched yet.
      std::vector<T>().swap(v);
      v.reserve(n);
      // Bytes of the allocated storage, written before any element lives
      // there; the assignment below then gives every element its value.
      unsigned char *const bytes = reinterpret_cast<unsigned char *>(v.data());
      const std::size_t    n_pages = (n * sizeof(T) + page - 1) / page;
      dealii::parallel::apply_to_subranges(
        std::size_t(0),
        n_pages,
        [&](const std::size_t begin, const std::size_t end) {
          for (std::size_t p = begin; p < end; ++p)
            bytes[p * page] = 0;
        },
        256);
      v.assign(n, value);
    }
  } // namespace internal
} // namespace GPUAssembly

#endif

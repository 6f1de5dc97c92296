// SPDX-License-Identifier: LGPL-2.1-or-later
// The host threads' part of StagedUpload; the CUDA side is in
// cuda/base/staged_upload.cu.

#include "staged_upload.h"

#include <deal.II/base/parallel.h>

#include <algorithm>
#include <cstring>

namespace GPUAssembly
{
  namespace internal
  {
    void
    StagedUpload::copy(void *device, const void *host, const std::size_t bytes)
    {
      const auto *source = static_cast<const unsigned char *>(host);
      auto       *target = static_cast<unsigned char *>(device);
      if (!staged())
        {
          if (bytes > 0)
            send(2, device, host, bytes);
          return;
        }
      for (std::size_t offset = 0; offset < bytes; offset += buffer_bytes)
        {
          const std::size_t  n = std::min(buffer_bytes, bytes - offset);
          const unsigned int b = next;
          next                 = 1 - next;
          wait_until_free(b);
          // Pieces of 1 MiB: large enough that a thread streams, small
          // enough that a buffer spreads over all threads.
          constexpr std::size_t piece = std::size_t(1) << 20;
          auto *const       buffer   = static_cast<unsigned char *>(buffers[b]);
          const std::size_t n_pieces = (n + piece - 1) / piece;
          dealii::parallel::apply_to_subranges(
            std::size_t(0),
            n_pieces,
            [&](const std::size_t begin, const std::size_t end) {
              const std::size_t first = begin * piece;
              const std::size_t last  = std::min(n, end * piece);
              std::memcpy(buffer + first,
                          source + offset + first,
                          last - first);
            },
            1);
          send(b, target + offset, buffer, n);
        }
    }
  } // namespace internal
} // namespace GPUAssembly

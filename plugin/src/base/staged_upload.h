// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_src_base_staged_upload_h
#define gpu_assembly_src_base_staged_upload_h

// Host-to-device copies of large set-up arrays through pinned staging
// buffers (not installed).

#include <cstddef>
#include <memory>

namespace GPUAssembly
{
  namespace internal
  {
    /**
     * Copies host arrays into device memory, large uploads through two
     * pinned (page-locked) staging buffers. A copy from pageable memory
     * runs at a fraction of the host link's bandwidth, since the driver
     * stages it through small pinned buffers of its own on one thread.
     * Here the task threads fill one buffer (a parallel memcpy) while the
     * DMA engine drains the other, so that filling and transfer overlap,
     * across the arrays of one object too. Pinning the buffers costs
     * milliseconds, more than it saves on small uploads: below 32 buffers'
     * worth in all (1 GiB with the default buffers), and where no pinned
     * memory is left, the copies go straight from the pageable arrays.
     *
     * copy() reads the host array before it returns: the array may change
     * or go away right after. The device memory holds the data once
     * finish() has returned (or the destructor, which waits too). The
     * copies run on a blocking stream of their own: like cudaMemcpy() on
     * the default stream, they start after the work already queued on the
     * default stream (which may still read the memory they overwrite), and
     * work queued there later waits for them.
     *
     * Every CUDA call is checked; an error throws ExcCudaError (the
     * destructor reports on std::cerr instead).
     */
    class StagedUpload
    {
    public:
      /**
       * Prepares the upload of about @p total_bytes, in as many copy()
       * calls as needed: from 32 * @p buffer_bytes on, through two pinned
       * buffers of @p buffer_bytes each. The default of 32 MiB keeps a
       * buffer's transfer (about a millisecond) long against the cost of
       * a hand-over between the threads and the DMA engine.
       */
      explicit StagedUpload(const std::size_t total_bytes,
                            const std::size_t buffer_bytes = std::size_t(32)
                                                             << 20);

      /// Waits for the copies, then frees the buffers and the stream.
      ~StagedUpload();

      StagedUpload(const StagedUpload &) = delete;
      StagedUpload &
      operator=(const StagedUpload &) = delete;

      /**
       * Copy @p bytes from @p host to @p device (device memory of at
       * least that size). Returns once @p host has been read; the transfer
       * of its last part may still run.
       */
      void
      copy(void *device, const void *host, const std::size_t bytes);

      /// Wait until every copy has reached the device.
      void
      finish();

      /// Whether the copies go through pinned buffers.
      bool
      staged() const
      {
        return buffers[0] != nullptr;
      }

    private:
      // Wait until the transfer out of buffer @p b is done, so that it can
      // be filled again.
      void
      wait_until_free(const unsigned int b);

      // Queue the transfer of @p bytes from @p host (a staging buffer or,
      // without staging, the pageable array) to @p device, and, for
      // buffer @p b < 2, mark when the buffer is free again.
      void
      send(const unsigned int b,
           void              *device,
           const void        *host,
           const std::size_t  bytes);

      // The CUDA objects (stream, events), kept out of this header.
      struct Cuda;
      std::unique_ptr<Cuda> cuda;

      std::size_t  buffer_bytes;
      void        *buffers[2] = {nullptr, nullptr};
      unsigned int next       = 0;
    };
  } // namespace internal
} // namespace GPUAssembly

#endif

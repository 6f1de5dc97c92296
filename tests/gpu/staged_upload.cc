// SPDX-License-Identifier: LGPL-2.1-or-later
// Host arrays copied to the device through StagedUpload, read back and
// compared byte for byte with the host's: through pinned buffers (small
// ones, so that arrays span many buffers, end inside one, and follow each
// other in the alternation) and straight from pageable memory, with host
// arrays that go away right after copy() returns.

#include "../../plugin/src/base/staged_upload.h"

#include <gpu_assembly/lac/device_vector.h>

#include <random>
#include <string>
#include <vector>

#include "../tests.h"
#include "gpu_tests.h"

using namespace GPUAssembly;

namespace
{
  std::vector<unsigned char>
  random_bytes(const std::size_t n, const unsigned int seed)
  {
    std::mt19937                       generator(seed);
    std::uniform_int_distribution<int> byte(0, 255);
    std::vector<unsigned char>         result(n);
    for (unsigned char &b : result)
      b = static_cast<unsigned char>(byte(generator));
    return result;
  }



  void
  check_upload(Testing::Checks  &checks,
               const std::size_t unit,
               const std::size_t buffer_bytes,
               const bool        expect_staged)
  {
    // Empty, one byte, one byte either side of a unit, many units and a
    // part of one; with units of a buffer: shorter than a buffer, one byte
    // either side of a buffer, many buffers with a partial last one.
    const std::vector<std::size_t> sizes =
      {0, 1, unit - 1, unit, unit + 1, 37 * unit + 5};
    std::size_t total = 0;
    for (const std::size_t n : sizes)
      total += n;
    std::vector<DeviceVector<unsigned char>> device(sizes.size());
    internal::StagedUpload                   staging(total, buffer_bytes);
    checks.check(staging.staged() == expect_staged,
                 std::to_string(total) + " bytes in all with buffers of " +
                   std::to_string(buffer_bytes) + " bytes go " +
                   (expect_staged ? "through pinned buffers" :
                                    "straight from pageable memory"));
    for (unsigned int i = 0; i < sizes.size(); ++i)
      {
        device[i].reinit(sizes[i], true);
        // The host array is gone before the transfer need be done.
        const std::vector<unsigned char> host = random_bytes(sizes[i], i);
        staging.copy(device[i].data(), host.data(), host.size());
      }
    staging.finish();
    for (unsigned int i = 0; i < sizes.size(); ++i)
      checks.check(device[i].to_host() == random_bytes(sizes[i], i),
                   "an array of " + std::to_string(sizes[i]) +
                     " bytes reaches the device unchanged (buffers of " +
                     std::to_string(buffer_bytes) + " bytes, " +
                     (expect_staged ? "staged" : "pageable") + ")");
  }
} // namespace



int
main()
{
  if (!Testing::cuda_device_present())
    return Testing::no_device_exit_code();
  Testing::Checks checks;
  // 4 KiB buffers: 32 of them is 128 KiB, less than the arrays' total
  // (about 160 KiB), so the copies go through the pinned buffers.
  check_upload(checks, 4096, 4096, true);
  // 1 MiB buffers: 32 MiB is more than the total, so the copies go
  // straight from pageable memory.
  check_upload(checks, 4096, 1 << 20, false);
  // Buffers of a few MiB and an odd byte: the threads fill each in
  // pieces of 1 MiB, the last one short.
  check_upload(checks, (3 << 20) + 17, (3 << 20) + 17, true);
  return checks.exit_code();
}

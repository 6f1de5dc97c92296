// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_src_engine_upload_h
#define gpu_assembly_src_engine_upload_h

// Conversions of plan arrays into the forms the device arrays hold (not
// installed).

#include <deal.II/base/parallel.h>

#include <gpu_assembly/lac/device_vector.h>

#include <cstddef>
#include <type_traits>
#include <vector>

#include "../base/first_touch.h"
#include "../base/staged_upload.h"

namespace GPUAssembly
{
  namespace internal
  {
    // Values in the device's precision: for double the values themselves,
    // not a copy (S(e) of a plan is hundreds of megabytes on large meshes,
    // and its copy would lengthen the upload); for float converted in
    // parallel.
    template <typename Number>
    std::conditional_t<std::is_same_v<Number, double>,
                       const std::vector<double> &,
                       std::vector<Number>>
    convert(const std::vector<double> &values)
    {
      if constexpr (std::is_same_v<Number, double>)
        return values;
      else
        {
          std::vector<Number> result;
          assign_first_touched_in_parallel(result, values.size());
          dealii::parallel::apply_to_subranges(
            std::size_t(0),
            values.size(),
            [&](const std::size_t begin, const std::size_t end) {
              for (std::size_t i = begin; i < end; ++i)
                result[i] = static_cast<Number>(values[i]);
            },
            4096);
          return result;
        }
    }

    /**
     * Copy @p host into @p device, resized to its size, through the pinned
     * buffers of @p staging: on the device once staging.finish() returns.
     */
    template <typename T>
    void
    upload(StagedUpload         &staging,
           DeviceVector<T>      &device,
           const std::vector<T> &host)
    {
      // Every entry is overwritten: a new allocation needs no zeroing.
      device.reinit(host.size(), /*omit_zeroing_entries=*/true);
      if (!host.empty())
        staging.copy(device.data(), host.data(), host.size() * sizeof(T));
    }

    inline std::vector<int>
    as_int(const std::vector<std::size_t> &values)
    {
      return std::vector<int>(values.begin(), values.end());
    }

    /// Offsets into device arrays that may exceed 32 bits (DeviceVector is
    /// instantiated for unsigned long long, which std::size_t need not be).
    inline std::vector<unsigned long long>
    as_uint64(const std::vector<std::size_t> &values)
    {
      return std::vector<unsigned long long>(values.begin(), values.end());
    }
  } // namespace internal
} // namespace GPUAssembly

#endif

// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_src_engine_upload_h
#define gpu_assembly_src_engine_upload_h

// Conversions of plan arrays into the forms the device arrays hold (not
// installed).

#include <cstddef>
#include <vector>

namespace GPUAssembly
{
  namespace internal
  {
    template <typename Number>
    std::vector<Number>
    convert(const std::vector<double> &values)
    {
      return std::vector<Number>(values.begin(), values.end());
    }

    inline std::vector<int>
    as_int(const std::vector<std::size_t> &values)
    {
      return std::vector<int>(values.begin(), values.end());
    }
  } // namespace internal
} // namespace GPUAssembly

#endif

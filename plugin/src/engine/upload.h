// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_src_engine_upload_h
#define gpu_assembly_src_engine_upload_h

// Conversions of plan arrays into the forms the device arrays hold (not
// installed).

#include <cstdint>
#include <cstring>
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

    // DeviceVector has no 16-bit instantiation: 16-bit arrays go up as
    // bytes.
    inline std::vector<unsigned char>
    as_bytes(const std::vector<std::uint16_t> &values)
    {
      std::vector<unsigned char> bytes(values.size() * sizeof(std::uint16_t));
      std::memcpy(bytes.data(), values.data(), bytes.size());
      return bytes;
    }
  } // namespace internal
} // namespace GPUAssembly

#endif

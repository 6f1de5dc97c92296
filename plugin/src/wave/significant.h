// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_src_wave_significant_h
#define gpu_assembly_src_wave_significant_h

// Numbers in the wave solver's error messages (not installed).

#include <sstream>
#include <string>

namespace GPUAssembly
{
  namespace Wave
  {
    namespace internal
    {
      /// @p value with four significant digits: std::to_string's six
      /// decimals print a 25 ns time step as 0.000000.
      inline std::string
      significant(const double value)
      {
        std::ostringstream out;
        out.precision(4);
        out << value;
        return out.str();
      }
    } // namespace internal
  }   // namespace Wave
} // namespace GPUAssembly

#endif

#include <gpu_assembly/base/exceptions.h>

#include <string>

namespace GPUAssembly
{
  namespace internal
  {
    [[noreturn]] void
    throw_device_memory_error(const std::size_t  requested,
                              const std::size_t  free,
                              const std::size_t  total,
                              const std::string &cuda_message)
    {
      AssertThrow(false, ExcDeviceMemory(requested, free, total, cuda_message));
      __builtin_unreachable();
    }
  } // namespace internal
} // namespace GPUAssembly

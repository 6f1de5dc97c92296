// SPDX-License-Identifier: LGPL-2.1-or-later
#include <gpu_assembly/base/setup_times.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <mutex>

namespace GPUAssembly
{
  namespace SetupTimes
  {
    namespace
    {
      bool
      environment_asks()
      {
        const char *value = std::getenv("GPU_ASSEMBLY_SETUP_TIMES");
        return value != nullptr && std::strcmp(value, "0") != 0;
      }

      // Read by every step: atomic, as steps may run on tasks.
      std::atomic<bool> &
      flag()
      {
        static std::atomic<bool> on(environment_asks());
        return on;
      }

      struct Record
      {
        std::mutex                                  mutex;
        std::vector<std::pair<std::string, double>> times;
        const bool                                  print = environment_asks();
      };

      Record &
      record()
      {
        static Record r;
        return r;
      }
    } // namespace



    void
    set_recording(const bool on)
    {
      flag().store(on, std::memory_order_relaxed);
    }



    bool
    recording()
    {
      return flag().load(std::memory_order_relaxed);
    }



    void
    clear()
    {
      std::lock_guard<std::mutex> lock(record().mutex);
      record().times.clear();
    }



    std::vector<std::pair<std::string, double>>
    get()
    {
      std::lock_guard<std::mutex> lock(record().mutex);
      return record().times;
    }



    double
    seconds(const std::string &name)
    {
      std::lock_guard<std::mutex> lock(record().mutex);
      for (const auto &[n, s] : record().times)
        if (n == name)
          return s;
      return 0.;
    }



    namespace
    {
      void
      add(const std::string &name, const double seconds)
      {
        Record                     &r = record();
        std::lock_guard<std::mutex> lock(r.mutex);
        if (r.print)
          std::cerr << "[set-up] " << name << ": " << seconds << " s"
                    << std::endl;
        for (auto &[n, s] : r.times)
          if (n == name)
            {
              s += seconds;
              return;
            }
        r.times.emplace_back(name, seconds);
      }
    } // namespace



    Scope::Scope(const char *name)
      : active(recording())
    {
      if (!active)
        return;
      this->name = name;
      start      = std::chrono::steady_clock::now();
    }



    Scope::~Scope()
    {
      if (active)
        add(name, internal::seconds_since(start));
    }



    Steps::Steps(const char *stage)
      : stage(stage)
      , active(recording())
    {
      if (active)
        stage_start = std::chrono::steady_clock::now();
    }



    Steps::~Steps()
    {
      if (!active)
        return;
      end_step();
      add(stage, internal::seconds_since(stage_start));
    }



    void
    Steps::next(const char *new_step)
    {
      if (!active)
        return;
      end_step();
      step       = std::string(stage) + ": " + new_step;
      step_start = std::chrono::steady_clock::now();
    }



    void
    Steps::end_step()
    {
      if (!step.empty())
        add(step, internal::seconds_since(step_start));
      step.clear();
    }
  } // namespace SetupTimes
} // namespace GPUAssembly

// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_base_setup_times_h
#define gpu_assembly_base_setup_times_h

#include <chrono>
#include <string>
#include <utility>
#include <vector>

namespace GPUAssembly
{
  /**
   * Wall-clock times of the steps of set-up (the adapter's arrays, the
   * plans), for profiling an adaptive program, which pays set-up after
   * every refinement. Recording is off by default, and a step then costs one
   * load of a flag. It is turned on by set_recording(true), or for a whole
   * program by the environment variable GPU_ASSEMBLY_SETUP_TIMES (any value
   * but 0), which also prints every step to std::cerr as it ends.
   *
   * Steps are named "what" for a whole stage ("GlobalNZ plan") and
   * "what: step" for its parts; seconds of a name add up over repeats.
   */
  namespace SetupTimes
  {
    /// Turns recording on or off.
    void
    set_recording(const bool on);

    /// Whether steps are recorded.
    bool
    recording();

    /// Forgets what was recorded.
    void
    clear();

    /// (name, seconds) in the order the names were first recorded.
    std::vector<std::pair<std::string, double>>
    get();

    /// The seconds recorded under @p name, 0 if none.
    double
    seconds(const std::string &name);

    /// Records the wall-clock time of its own lifetime under a name.
    class Scope
    {
    public:
      explicit Scope(const char *name);
      ~Scope();
      Scope(const Scope &) = delete;
      Scope &
      operator=(const Scope &) = delete;

    private:
      std::string                           name;
      bool                                  active;
      std::chrono::steady_clock::time_point start;
    };

    /**
     * The steps of one stage, one after another: records the stage as a
     * whole under its name, and each step, from its next() to the following
     * next() or the end of the stage, under "stage: step".
     */
    class Steps
    {
    public:
      explicit Steps(const char *stage);
      ~Steps();
      Steps(const Steps &) = delete;
      Steps &
      operator=(const Steps &) = delete;

      /// Ends the current step, if any, and begins @p step.
      void
      next(const char *step);

    private:
      void
      end_step();

      const char                           *stage;
      bool                                  active;
      std::chrono::steady_clock::time_point stage_start, step_start;
      std::string                           step;
    };
  } // namespace SetupTimes



  namespace internal
  {
    /// Wall-clock seconds from @p start to now.
    inline double
    seconds_since(const std::chrono::steady_clock::time_point start)
    {
      return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                           start)
        .count();
    }
  } // namespace internal
} // namespace GPUAssembly

#endif

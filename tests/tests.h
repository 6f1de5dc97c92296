#ifndef gpu_assembly_tests_tests_h
#define gpu_assembly_tests_tests_h

#include <cstdlib>
#include <functional>
#include <iostream>
#include <string>

/**
 * A minimal check collector for the unit tests: each check prints one line
 * and a failed check makes the program exit non-zero, so ctest reports it.
 * Timings never go into test output.
 */
namespace Testing
{
  /// Exit code that ctest maps to "skipped" (SKIP_RETURN_CODE).
  constexpr int skip_return_code = 77;

  class Checks
  {
  public:
    void
    check(const bool condition, const std::string &what)
    {
      ++n_checks;
      if (!condition)
        ++n_failures;
      std::cout << (condition ? "ok    " : "FAIL  ") << what << std::endl;
    }

    /**
     * Run @p action, which must throw an exception of type Exception whose
     * message contains @p expected.
     */
    template <class Exception>
    void
    check_throws(const std::function<void()> &action,
                 const std::string           &expected,
                 const std::string           &what)
    {
      try
        {
          action();
          check(false, what + " (no exception was thrown)");
        }
      catch (const Exception &exc)
        {
          const std::string message = exc.what();
          const bool matches = message.find(expected) != std::string::npos;
          if (!matches)
            std::cout << "      message was: " << message << std::endl;
          check(matches, what);
        }
      catch (const std::exception &exc)
        {
          std::cout << "      unexpected exception: " << exc.what()
                    << std::endl;
          check(false, what + " (wrong exception type)");
        }
    }

    int
    exit_code() const
    {
      std::cout << n_checks - n_failures << " of " << n_checks
                << " checks passed" << std::endl;
      return n_failures == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
    }

  private:
    unsigned int n_checks   = 0;
    unsigned int n_failures = 0;
  };
} // namespace Testing

#endif

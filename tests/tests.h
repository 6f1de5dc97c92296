// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_tests_tests_h
#define gpu_assembly_tests_tests_h

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <iomanip>
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

/**
 * A minimal check collector for the unit tests: each check prints one line
 * and a failed check makes the program exit non-zero, so ctest reports it.
 * Timings never go into test output.
 */
namespace Testing
{
  /// A number in the form that test output uses for errors.
  inline std::string
  scientific(const double value)
  {
    std::ostringstream out;
    out << std::scientific << std::setprecision(2) << value;
    return out.str();
  }

  /**
   * [sum (a_i - b_i)^2 / sum b_i^2]^(1/2): the relative L2 error of @p a
   * against the reference @p b (Table 16.1's measure).
   */
  template <typename NumberA, typename NumberB>
  double
  relative_l2_error(const std::vector<NumberA> &a,
                    const std::vector<NumberB> &b)
  {
    double error = 0, norm = 0;
    for (std::size_t i = 0; i < b.size(); ++i)
      {
        const double difference = double(a[i]) - double(b[i]);
        error += difference * difference;
        norm += double(b[i]) * double(b[i]);
      }
    return norm > 0 ? std::sqrt(error / norm) : std::sqrt(error);
  }

  /**
   * max |a_i - b_i| / max |b_i|: the largest entry-wise difference relative
   * to the size of the reference @p b.
   */
  inline double
  max_relative_difference(const std::vector<double> &a,
                          const std::vector<double> &b)
  {
    double difference = 0, size = 0;
    for (std::size_t i = 0; i < b.size(); ++i)
      {
        difference = std::max(difference, std::abs(a[i] - b[i]));
        size       = std::max(size, std::abs(b[i]));
      }
    return size > 0 ? difference / size : difference;
  }

  /// max |a_i - b_i| over the entries of @p a.
  template <class VectorA, class VectorB>
  double
  max_difference(const VectorA &a, const VectorB &b)
  {
    double difference = 0;
    for (std::size_t i = 0; i < a.size(); ++i)
      difference = std::max(difference, std::abs(double(a[i]) - double(b[i])));
    return difference;
  }

  /// @p n values drawn uniformly from [-1, 1): the same on every run for
  /// the same @p seed.
  inline std::vector<double>
  random_values(const std::size_t n, const unsigned int seed)
  {
    std::mt19937                           generator(seed);
    std::uniform_real_distribution<double> random(-1., 1.);
    std::vector<double>                    values(n);
    for (double &value : values)
      value = random(generator);
    return values;
  }

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
          // deal.II breaks the additional information of an exception into
          // indented lines of at most 80 characters, so white space is
          // collapsed before comparing: a match must not depend on where
          // the lines break.
          const std::string message = exc.what();
          const bool        matches =
            collapse_whitespace(message).find(collapse_whitespace(expected)) !=
            std::string::npos;
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

    /// @p text with every run of white space one blank: messages compared
    /// whatever their line breaks.
    static std::string
    collapse_whitespace(const std::string &text)
    {
      std::string result;
      bool        in_space = false;
      for (const char c : text)
        if (c == ' ' || c == '\n' || c == '\t' || c == '\r')
          in_space = true;
        else
          {
            if (in_space && !result.empty())
              result += ' ';
            in_space = false;
            result += c;
          }
      if (in_space)
        result += ' ';
      return result;
    }

  private:
    unsigned int n_checks   = 0;
    unsigned int n_failures = 0;
  };

  /**
   * Whether @p action throws an exception whose message contains
   * @p expected (white space collapsed): for checks that collect their
   * failures on every MPI rank instead of printing each.
   */
  inline bool
  throws_naming(const std::function<void()> &action,
                const std::string           &expected)
  {
    try
      {
        action();
      }
    catch (const std::exception &exception)
      {
        return Checks::collapse_whitespace(exception.what())
                 .find(Checks::collapse_whitespace(expected)) !=
               std::string::npos;
      }
    return false;
  }
} // namespace Testing

#endif

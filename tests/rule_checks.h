// SPDX-License-Identifier: LGPL-2.1-or-later
#ifndef gpu_assembly_tests_rule_checks_h
#define gpu_assembly_tests_rule_checks_h

#include <algorithm>
#include <string>
#include <vector>

#include "tests.h"

namespace Testing
{
  /// A rule of a plan or a packing and whether it holds.
  struct Rule
  {
    bool        holds;
    std::string rule;
  };

  /**
   * One check per rule, reported as "what: rule", so that a failure names
   * the rule that broke rather than a conjunction of them.
   */
  inline void
  check_rules(Checks                  &checks,
              const std::string       &what,
              const std::vector<Rule> &rules)
  {
    for (const Rule &rule : rules)
      checks.check(rule.holds, what + ": " + rule.rule);
  }

  /// Whether every count in [@p begin, @p end) is 1: each item seen exactly
  /// once.
  template <typename Iterator>
  bool
  each_once(const Iterator begin, const Iterator end)
  {
    return std::all_of(begin, end, [](const int n) {
      return n == 1;
    });
  }

  /// Whether every count of @p counts is 1.
  template <typename Counts>
  bool
  each_once(const Counts &counts)
  {
    return each_once(counts.begin(), counts.end());
  }
} // namespace Testing

#endif

#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Runs a command that must fail, and checks that its error output contains
# the expected message: bad input gives a clear error, not a crash.
# deal.II wraps messages at 80 columns: the text is also searched with line
# breaks and runs of spaces turned into one space.
#   expect_failure.sh "expected text" command args...
set -uo pipefail
expected=$1; shift
output=$("$@" 2>&1)
rc=$?
echo "$output"
if [[ $rc -eq 0 ]]; then echo "FAIL: the command succeeded"; exit 1; fi
if [[ $rc -gt 128 ]]; then echo "FAIL: the command crashed (exit code $rc)"; exit 1; fi
flat=$(tr -s ' \n' '  ' <<<"$output")
grep -q -F -- "$expected" <<<"$output" || grep -q -F -- "$expected" <<<"$flat" ||
  { echo "FAIL: no '$expected' in the output"; exit 1; }
echo "ok: failed with exit code $rc and the expected message"

#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Runs a command that must end with exactly the exit code CODE and print the
# expected text: for runs that must fail (1, not the skip code 77 and not a
# crash) or report themselves skipped (77, never 0), whatever ctest's
# SKIP_RETURN_CODE would make of them.
#   expect_exit_code.sh CODE "expected text" command args...
set -uo pipefail
code=$1 expected=$2
shift 2
output=$("$@" 2>&1)
rc=$?
echo "$output"
[[ $rc -eq $code ]] || { echo "FAIL: exit code $rc, expected $code"; exit 1; }
flat=$(tr -s ' \n' '  ' <<<"$output")
grep -q -F -- "$expected" <<<"$output" || grep -q -F -- "$expected" <<<"$flat" ||
  { echo "FAIL: no '$expected' in the output"; exit 1; }
echo "ok: exit code $rc and the expected message"

#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Runs an app on a parameter file in a scratch directory; it must succeed
# and its output must contain each of the expected texts.
#   run_and_expect.sh APP PARAMETER_FILE WORK_DIRECTORY [expected text ...]
set -uo pipefail
app=$1 prm=$2 work=$3; shift 3
rm -rf "$work"; mkdir -p "$work"; cd "$work" || exit 1
output=$("$app" "$prm" 2>&1)
rc=$?
echo "$output"
[[ $rc -eq 0 ]] || { echo "FAIL: the app failed (exit code $rc)"; exit 1; }
for text in "$@"; do
  grep -q -F -- "$text" <<<"$output" || { echo "FAIL: no '$text' in the output"; exit 1; }
done
echo "ok: ran and reported what was expected"

#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A run whose state stops being finite (a parameter file that drives it out
# of the number range) must stop with an error (exit code not 0, no crash)
# whose message contains the expected text, write no NaN or infinity into
# any text file of its output directory, and leave the files it names (the
# last finite state, the traces) whole.
# Every .vtu file the message names must be whole as well. With --regex the
# expected text is an extended regular expression (for a rule whose numbers,
# such as the step, differ between the host and the GPU).
#   non_finite_stop.sh [--regex] APP PARAMETER_FILE WORK_DIRECTORY "expected text" [FILE ...]
set -uo pipefail
grep_mode=-F
if [[ $1 == --regex ]]; then grep_mode=-E; shift; fi
app=$1 prm=$2 work=$3 expected=$4; shift 4
rm -rf "$work"; mkdir -p "$work"; cd "$work" || exit 1
fail() { echo "FAIL: $*"; exit 1; }

"$app" "$prm" > log 2>&1
rc=$?
cat log
[[ $rc -ne 0 ]] || fail "the run reported success although its state is not finite"
[[ $rc -lt 128 ]] || fail "the run crashed (exit code $rc)"
flat=$(tr -s " \n" "  " <log)
grep -q "$grep_mode" -- "$expected" <<<"$flat" || fail "no '$expected' in the output"
named=$(grep -o -E '[A-Za-z0-9_./-]+\.vtu' <<<"$flat" | sort -u)
for f in "$@" $named; do
  [[ -s $f ]] || fail "$f, which the message names, was not written"
done
while IFS= read -r f; do
  # Text files only: VTU data are compressed.
  ! grep -q -i -E '(^|[^a-z])(nan|inf)' "$f" || fail "$f holds a NaN or an infinity"
done < <(find . -name '*.csv' -o -name '*.pvd')
while IFS= read -r f; do
  tail -c 200 "$f" | grep -q "</VTKFile>" || fail "$f is truncated"
done < <(find . -name '*.vtu')
echo "ok: stopped with exit code $rc and the expected message; no NaN or infinity written"

#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Runs a command that must succeed without writing into the source tree (so
# that the test suite runs from a read-only copy of the sources, which a
# test run as root could not otherwise tell): no file or folder below
# SOURCE_DIR (but for BUILD_DIR and .git, where they lie below it) may be
# newer than a mark set before the run. A file written and removed again
# still changes its folder's modification time.
#   sources_untouched.sh SOURCE_DIR BUILD_DIR SCRATCH_DIR command args...
set -uo pipefail
source=$1 build=$2 scratch=$3
shift 3
rm -rf "$scratch"; mkdir -p "$scratch" || exit 1
touch "$scratch/mark"
sleep 1 # modification times may have a resolution of one second
"$@" || { echo "FAIL: the command failed"; exit 1; }
written=$(find "$source" \( -path "$source/.git" -o -path "$build" \) -prune \
  -o -newer "$scratch/mark" -print)
[[ -z $written ]] || { echo "FAIL: the run wrote into the sources: $written"; exit 1; }
echo "ok: the run left the sources untouched"

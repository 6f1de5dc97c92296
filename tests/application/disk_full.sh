#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# An app whose output cannot be written (a full disk: the file's partial
# copy, through which the apps write every file, is made a link to
# /dev/full) must fail with a message naming the file and the reason, and
# leave the result of an earlier run under that name intact; the files it
# wrote before the failure must be whole.
#   disk_full.sh APP PARAMETER_FILE WORK_DIRECTORY OUTPUT_DIRECTORY FILE
set -uo pipefail
app=$1 prm=$2 work=$3 out=$4 file=$5
rm -rf "$work"; mkdir -p "$work"; cd "$work" || exit 1
fail() { echo "FAIL: $*"; exit 1; }

"$app" "$prm" > first.log 2>&1 || { cat first.log; fail "the first run failed"; }
[[ -s $out/$file ]] || fail "the first run wrote no $out/$file"
cp "$out/$file" earlier-result

# Only this file meets the full disk; the others are written as before.
ln -s /dev/full "$out/$file.partial"
"$app" "$prm" > second.log 2>&1
rc=$?
cat second.log
[[ $rc -ne 0 ]] || fail "the run reported success although $out/$file could not be written"
[[ $rc -lt 128 ]] || fail "the run crashed (exit code $rc)"
expected="Could not write $out/$file (writing: No space left on device)"
flat=$(tr -s " \n" "  " <second.log)
grep -q -F -- "$expected" <<<"$flat" || fail "no '$expected' in the output"
grep -q -F -- "The disk is full." <<<"$flat" || fail "the message must say that the disk is full"
grep -q -E "^Wrote .*$file" second.log && fail "the log claims to have written $file"
cmp -s earlier-result "$out/$file" || fail "the earlier $out/$file was changed or destroyed"
[[ ! -e $out/$file.partial ]] || fail "$out/$file.partial was left behind"
# Every VTU written (before the failure, or by the first run) is whole.
for vtu in "$out"/*.vtu; do
  [[ -e $vtu ]] || continue
  tail -c 200 "$vtu" | grep -q "</VTKFile>" || fail "$vtu is truncated"
done
echo "ok: exit code $rc, the message names $out/$file and the full disk, the earlier file is intact"

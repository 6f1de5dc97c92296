#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A restart of apps/wave2d from a damaged or foreign checkpoint.bin is
# refused with the file named and what is wrong (exit code not 0, no
# crash), never continued: one byte changed anywhere in it, the file cut
# short at several points, emptied, replaced by another file, and one of
# another model.
#   wave2d_damaged_checkpoint.sh WAVE2D PARAMETER_FILE WORK_DIRECTORY
set -uo pipefail
wave2d=$1 prm=$2 work=$3
rm -rf "$work"; mkdir -p "$work"; cd "$work" || exit 1
fail() { echo "FAIL: $*"; exit 1; }
{ cat "$prm"; printf 'subsection Output\n  set Directory = out\nend\nsubsection Checkpoint\n  set Stop after steps = 170\nend\n'; } > first.prm
{ cat "$prm"; printf 'subsection Output\n  set Directory = out\nend\nsubsection Checkpoint\n  set Restart = true\nend\n'; } > restart.prm
"$wave2d" first.prm > first.log 2>&1 || { cat first.log; fail "the first run failed"; }
cp out/checkpoint.bin good.bin
size=$(stat -c %s good.bin)

# The restart from checkpoint.bin as it is now must fail with $1 in the message.
refused() {
  local expected=$1 what=$2 rc flat
  "$wave2d" restart.prm > restart.log 2>&1
  rc=$?
  [[ $rc -ne 0 ]] || { cat restart.log; fail "$what: the restart was continued"; }
  [[ $rc -lt 128 ]] || { cat restart.log; fail "$what: the restart crashed (exit code $rc)"; }
  flat=$(tr -s " \n" "  " <restart.log)
  grep -q -F -- "out/checkpoint.bin cannot be continued: $expected" <<<"$flat" ||
    { cat restart.log; fail "$what: no 'out/checkpoint.bin cannot be continued: $expected' in the output"; }
  echo "ok: $what: refused ($expected)"
}

# One byte changed: in the header, the state, the records, the snapshot
# list, the checksum, the end marker.
for offset in 9 20 40 $((size / 3)) $((size / 2)) $((size - 100)) $((size - 12)) $((size - 3)); do
  cp good.bin out/checkpoint.bin
  byte=$(od -An -tu1 -j "$offset" -N1 good.bin | tr -d ' ')
  printf "$(printf '\\%03o' $(((byte + 1) % 256)))" |
    dd of=out/checkpoint.bin bs=1 seek="$offset" conv=notrunc status=none
  cmp -s good.bin out/checkpoint.bin && fail "the byte at $offset was not changed"
  case $offset in
    $((size - 3))) expected="it is cut short" ;;
    *) expected="its checksum does not match its contents (the file is damaged)" ;;
  esac
  refused "$expected" "byte $offset of $size changed"
done
for length in 0 5 100 $((size / 2)) $((size - 1)); do
  head -c "$length" good.bin > out/checkpoint.bin
  case $length in
    0|5) expected="it is not a wave2d checkpoint" ;;
    *) expected="it is cut short" ;;
  esac
  refused "$expected" "cut to $length of $size bytes"
done
cp "$prm" out/checkpoint.bin
refused "it is not a wave2d checkpoint" "a parameter file named checkpoint.bin"
# Another model: the same run with a different time step.
cp good.bin out/checkpoint.bin
{ cat restart.prm; printf 'subsection Time\n  set Time step = 1e-8\nend\n'; } > other.prm
mv other.prm restart.prm
refused "it was written for another model" "a checkpoint of another model"
echo "ok: every damaged or foreign checkpoint refused"

#!/usr/bin/env bash
# Runs one test's command, shows its output as it comes, and passes only when the command
# exits with the expected status AND (with --line) its output matches the expected line.
# ctest's PASS_REGULAR_EXPRESSION alone would ignore the exit status, so a program that
# printed its line and then crashed or aborted at teardown would pass; every ctest entry
# goes through zipfcoll_add_test (tests/common/ZipfcollTest.cmake), which runs this.
#
# usage: expect_line.sh [--status N] [--line REGEX] [--needs-dir DIR]
#                       [--needs-python-module PYTHON MODULE] -- COMMAND [ARGS...]
#   --status N     the exit status the command must end with (0 unless given; the refusal
#                  tests name the status their program documents)
#   --line REGEX   an extended regular expression (bash's =~) the whole output, stdout and
#                  stderr together, must match; newlines in it match the output's newlines
#   --needs-dir D  skip (exit 77) saying why when directory D does not exist (the corpora)
#   --needs-python-module PYTHON MODULE
#                  skip (exit 77) saying why when PYTHON cannot import MODULE
# Exit status: 0 when both hold; 77 when the command itself exits 77 (skipped: ctest's
# SKIP_RETURN_CODE decides, and a test without it fails) or a need is missing; 1 otherwise,
# saying which check failed.
set -u
status=0
line=""
has_line=0
while [ $# -gt 0 ]; do
  case "$1" in
    --status) status="$2"; shift 2 ;;
    --line) line="$2"; has_line=1; shift 2 ;;
    --needs-dir)
      if [ ! -d "$2" ]; then echo "expect_line: no directory '$2': skipped"; exit 77; fi
      shift 2 ;;
    --needs-python-module)
      if ! "$2" -c "import $3" 2> /dev/null; then
        echo "expect_line: $2 cannot import $3: skipped"
        exit 77
      fi
      shift 3 ;;
    --) shift; break ;;
    *) echo "expect_line: unknown option '$1'" >&2; exit 2 ;;
  esac
done
if [ $# -eq 0 ]; then
  echo "expect_line: no command given" >&2
  exit 2
fi
case "$status" in
  ''|*[!0-9]*) echo "expect_line: --status '$status' is not a number" >&2; exit 2 ;;
esac

log="$(mktemp)"
trap 'rm -f "$log"' EXIT
# The output is shown as it comes (a test that hangs still shows how far it got) and kept
# for the match.
"$@" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}

if [ "$rc" = 77 ] && [ "$status" != 77 ]; then
  # ctest counts it as skipped only where the test sets SKIP_RETURN_CODE 77.
  echo "expect_line: the command exited 77 (skipped, where the test allows it)"
  exit 77
fi
failed=0
if [ "$rc" != "$status" ]; then
  if [ "$rc" -gt 128 ]; then
    echo "expect_line: exit status $rc (signal $((rc - 128))), expected $status"
  else
    echo "expect_line: exit status $rc, expected $status"
  fi
  failed=1
fi
if [ "$has_line" = 1 ]; then
  # The whole output, its trailing newlines kept (a pattern may end with one); matched
  # byte for byte, so that output that is not valid in the locale's encoding still matches.
  out="$(cat "$log"; echo x)"
  out="${out%x}"
  LC_ALL=C
  if ! [[ $out =~ $line ]]; then
    echo "expect_line: no output matches: $line"
    failed=1
  fi
fi
if [ "$failed" = 1 ]; then exit 1; fi
echo "expect_line: exit status $rc${line:+ and the expected line}: passed"

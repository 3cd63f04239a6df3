#!/usr/bin/env bash
# zfc_fault_trial's command line: --help prints every option and exits with 0; a bad value
# or an unknown option exits with 64 and a message naming the option and the value.
# usage: check_command_line.sh PROGRAM
set -u
prog="$1"
failed=0

# expect STATUS PATTERN ARGS...: runs PROGRAM ARGS, checks its status and that its output
# holds PATTERN (a fixed string).
expect() {
  local want_status=$1 pattern=$2 out status
  shift 2
  out=$("$prog" "$@" 2>&1)
  status=$?
  if [ "$status" != "$want_status" ] || [[ "$out" != *"$pattern"* ]]; then
    echo "FAILED: $* exited with $status (want $want_status), output lacks '$pattern':"
    echo "$out" | sed 's/^/  /'
    failed=1
  else
    echo "ok: $* -> $status, names '$pattern'"
  fi
}

expect 0 "--timeout-ms" --help
expect 0 "--free-port" --help
expect 64 "--fault: melt not in" --fault melt
expect 64 "--phase" --phase 9
expect 64 "--timeout-ms" --timeout-ms 0
expect 64 "--victim" --victim -1
expect 64 "/no/such/folder" --report /no/such/folder
expect 64 "--blast" --blast 3
expect 64 "--launch" --launch ssh
[ $failed = 0 ] && echo "command line checks passed"
exit $failed

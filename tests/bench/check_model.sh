#!/usr/bin/env bash
# Runs zfc_model and checks every row of its table against a committed reference: the same
# rows (algorithm, wire, G) in the same order, and every figure of each (U_g, MB, xnode_MB,
# peak_ws_MB, exchange_ms, step_ms, eff) equal to the reference's within one unit of its
# last printed digit (0.001 for the figures printed with three decimals, 1 for U_g). The
# model is deterministic given its inputs (its machine model is given on its command line
# or by its defaults, never measured), so the only slack is a last-digit rounding that a
# different libm may flip; a change of the model's formulas or of the corpus's measured
# Heaps law shows as a difference here.
#
# usage: check_model.sh REFERENCE ZFC_MODEL [ARGS...]
# Exits with zfc_model's status when that is not 0, 1 when a row differs, 0 when all match
# ("model rows match REFERENCE: N rows").
set -u
ref="$1"
shift
out="$(mktemp)"
trap 'rm -f "$out"' EXIT
"$@" > "$out"
rc=$?
cat "$out"
if [ "$rc" != 0 ]; then
  echo "check_model: zfc_model exited with status $rc"
  exit "$rc"
fi
# The table's rows: not the comments (#) nor the column heads.
rows() { grep -v -e '^#' -e '^ *algo ' "$1"; }
rows "$out" | awk -v ref="$ref" '
  # One unit of the last printed digit of a reference figure.
  function unit(s,   d) {
    d = index(s, ".")
    return d == 0 ? 1 : 10 ^ -(length(s) - d)
  }
  function abs(x) { return x < 0 ? -x : x }
  BEGIN {
    while ((getline line < ref) > 0) {
      if (line !~ /^#/ && line !~ /^ *algo /) want_row[++n] = line
    }
    if (n == 0) { print "check_model: " ref " has no rows"; exit 1 }
  }
  {
    ++m
    if (m > n) { printf "check_model: row %d is not in the reference: %s\n", m, $0; bad = 1; next }
    split(want_row[m], want)
    if (NF != 10 || $1 != want[1] || $2 != want[2] || $3 != want[3]) {
      printf "check_model: row %d is\n  %s\nthe reference has\n  %s\n", m, $0, want_row[m]
      bad = 1
      next
    }
    for (i = 4; i <= NF; ++i) {
      if (abs($i - want[i]) > unit(want[i]) * 1.0001) {
        printf "check_model: row %d (%s %s G=%s), column %d: %s, the reference has %s\n",
               m, $1, $2, $3, i, $i, want[i]
        bad = 1
      }
    }
  }
  END {
    if (n == 0) exit 1
    if (m != n) { printf "check_model: %d rows, the reference has %d\n", m, n; bad = 1 }
    if (bad) exit 1
    n_ref = split(ref, parts, "/")
    printf "model rows match %s: %d rows\n", parts[n_ref], n
  }
'

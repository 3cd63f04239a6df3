#!/usr/bin/env bash
# The shared library and its plugins, checked as a user's program meets them.
#
# usage: plugin_checks.sh MODE LIB_DIR PROBE LAUNCH HAVE_MPI HAVE_UCX HAVE_NCCL [DEMO MPIEXEC...]
#   needed        libzipfcoll.so needs no MPI, UCX, NCCL, hwloc or CUDA library; each
#                 plugin the build has is beside it and exports only its table
#   query         zfcQueryTransport finds what the build has, and names what is missing
#   ucx_world     3 ranks over UCX from its plugin, placed by hwloc's plugin where built
#   missing_ucx   3 ranks, none with plugins: every rank gets the same zfcUnsupported
#   one_missing   3 ranks, rank 2 without plugins: every rank gets rank 2's zfcUnsupported
#   nccl_alone    3 ranks with only the NCCL plugin: start-up never asks for UCX
#   missing_mpi   zfc_demo under mpiexec without plugins names the MPI plugin
set -uo pipefail
mode="$1" lib="$2" probe="$3" launch="$4" have_mpi="$5" have_ucx="$6" have_nccl="$7"
shift 7
fail() { echo "plugin_checks $mode: $*" >&2; exit 1; }
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
mkdir "$scratch/empty"

# Runs the probe on 3 ranks; the lines they print, sorted, in $scratch/out, what else they
# and the launcher say (warnings, debug output) in $scratch/err, which is shown but not
# judged. The probe exits 0 whenever the library answered, failure or not, so a rank that
# exits otherwise crashed.
three_ranks() {
  local launched=0
  bash "$launch" 3 "$probe" "$probe" init "$1" > "$scratch/all" 2> "$scratch/err" ||
    launched=$?
  grep '^rank [0-2]: ' "$scratch/all" | sort > "$scratch/out"
  cat "$scratch/all" "$scratch/err"
  [ "$launched" = 0 ] || fail "a rank of the probe did not finish (exit $launched)"
}

# Every rank printed the same failure, of result $3 (default unsupported), which says $1
# and $2 (each after the probe's own "rank R: " prefix).
all_fail_alike() {
  local code="${3:-unsupported}"
  [ "$(grep -c "^rank [0-2]: $code: " "$scratch/out")" = 3 ] ||
    fail "expected '$code' on all 3 ranks"
  [ "$(sed 's/^rank [0-2]: //' "$scratch/out" | sort -u | wc -l)" = 1 ] ||
    fail "the ranks' messages differ"
  grep -q -- "$1" "$scratch/out" || fail "the message does not say '$1'"
  grep -q -- "$2" "$scratch/out" || fail "the message does not say '$2'"
}

case "$mode" in
  needed)
    needed="$(readelf -d "$lib/libzipfcoll.so" | grep NEEDED)" || fail "readelf failed"
    echo "$needed"
    if echo "$needed" | grep -Eiq 'mpi|ucp|ucs|uct|ucm|nccl|hwloc|cuda'; then
      fail "libzipfcoll.so needs a transport's library"
    fi
    for kind in mpi:$have_mpi ucx:$have_ucx nccl:$have_nccl; do
      [ "${kind#*:}" != ON ] || [ -f "$lib/libzipfcoll-${kind%%:*}.so" ] ||
        fail "libzipfcoll-${kind%%:*}.so is missing"
    done
    for plugin in "$lib"/libzipfcoll-*.so; do  # the transports' and hwloc's
      [ -f "$plugin" ] || continue
      exported="$(nm -D --defined-only "$plugin" | awk '{print $3}' | sort -u | tr '\n' ' ')"
      [ "$exported" = "zipfcoll_plugin_v1 " ] || fail "$plugin exports $exported"
    done
    ;;
  query)
    "$probe" query | tee "$scratch/out"
    for kind in mpi:$have_mpi ucx:$have_ucx nccl:$have_nccl; do
      name="${kind%%:*}"
      if [ "${kind#*:}" = ON ]; then
        grep -q "^$name: host 1" "$scratch/out" || fail "$name is not available"
      else
        grep -q "^$name: unsupported: .*built without\|^$name: unsupported: this build has no" \
          "$scratch/out" || fail "$name's absence is not explained"
      fi
    done
    grep -q "zfcTransportAuto was not refused" "$scratch/out" && fail "auto was accepted"
    ZIPFCOLL_PLUGIN_PATH="$scratch/empty" "$probe" query | tee "$scratch/out"
    if [ "$have_ucx" = ON ]; then
      grep -q "^ucx: unsupported: the UCX transport's plugin libzipfcoll-ucx.so is not in $scratch/empty" \
        "$scratch/out" || fail "a missing UCX plugin is not named"
    fi
    if [ "$have_mpi" = ON ] && [ "$have_ucx" = ON ]; then
      # Another kind's plugin under the UCX plugin's name is refused, naming both.
      cp "$lib/libzipfcoll-mpi.so" "$scratch/empty/libzipfcoll-ucx.so"
      ZIPFCOLL_PLUGIN_PATH="$scratch/empty" "$probe" query | tee "$scratch/out"
      grep -q "^ucx: unsupported: .*libzipfcoll-ucx.so is the mpi plugin of" "$scratch/out" ||
        fail "a plugin of another kind is not refused"
      # A file that is no shared library: dlopen's reason is passed on.
      echo "not a library" > "$scratch/empty/libzipfcoll-ucx.so"
      ZIPFCOLL_PLUGIN_PATH="$scratch/empty" "$probe" query | tee "$scratch/out"
      grep -q "^ucx: unsupported: the UCX transport's plugin .*libzipfcoll-ucx.so cannot be loaded: " \
        "$scratch/out" || fail "an unloadable plugin is not named"
    fi
    ;;
  ucx_world)
    three_ranks ucx
    [ "$(grep -c 'allreduce no error, sum 6$' "$scratch/out")" = 3 ] ||
      fail "the 3 ranks did not sum to 6"
    if [ -f "$lib/libzipfcoll-hwloc.so" ]; then where="(hwloc)"; else where="no hwloc"; fi
    [ "$(grep -c "topology .*$where" "$scratch/out")" = 3 ] || fail "the topology is not '$where'"
    ;;
  missing_ucx)
    ZIPFCOLL_PLUGIN_PATH="$scratch/empty" three_ranks ucx
    all_fail_alike "rank 0: the UCX transport's plugin libzipfcoll-ucx.so is not in" \
      "$scratch/empty"
    ;;
  one_missing)
    PROBE_NO_PLUGINS_RANK=2 three_ranks ucx
    all_fail_alike "unsupported: rank 2: " \
      "libzipfcoll-ucx.so is not in /nonexistent/zipfcoll-plugins"
    ;;
  nccl_alone)
    if [ "$have_nccl" = ON ]; then
      ln -s "$lib/libzipfcoll-nccl.so" "$scratch/empty/libzipfcoll-nccl.so"
    fi
    ZIPFCOLL_PLUGIN_PATH="$scratch/empty" three_ranks nccl
    grep -qi "ucx" "$scratch/out" && fail "starting NCCL asked for UCX"
    # Rank R asks for device R: what happens depends on the machine's devices, but every
    # rank sees the same.
    if [ "$have_nccl" != ON ]; then
      all_fail_alike "unsupported: rank 0: " "built without the NCCL transport"
    elif grep -q "^rank [0-2]: no error" "$scratch/out"; then
      # A device for each rank: NCCL ran.
      [ "$(grep -c 'allreduce no error, sum 6$' "$scratch/out")" = 3 ] ||
        fail "NCCL started but its allreduce is wrong"
    elif grep -q "but there are [12] devices" "$scratch/out"; then
      all_fail_alike "invalid argument: rank [12]: config device [12], " "but there are" \
        "invalid argument"
    else
      all_fail_alike "unsupported: rank 0 has no device" "for the NCCL transport"
    fi
    ;;
  missing_mpi)
    demo="$1"
    shift
    ZIPFCOLL_PLUGIN_PATH="$scratch/empty" "$@" -n 1 "$demo" > "$scratch/out" 2>&1 &&
      fail "zfc_demo started MPI without its plugin"
    cat "$scratch/out"
    grep -q "unsupported: the MPI transport's plugin libzipfcoll-mpi.so is not in $scratch/empty" \
      "$scratch/out" || fail "a missing MPI plugin is not named"
    ;;
  *)
    fail "unknown mode"
    ;;
esac
echo "plugin_checks $mode: ok"

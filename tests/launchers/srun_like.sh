#!/usr/bin/env bash
# Starts N copies of a program as srun starts the tasks of one job step on this host: only
# Slurm's variables (SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID, the step's node list, the job
# and step ids), no MASTER_ADDR or MASTER_PORT, none of torchrun's or mpirun's. The ranks
# must find each other from those alone. Fails when any task fails.
#
# usage: srun_like.sh N PROGRAM [ARGS...]
set -u
n="$1"
shift
# A job id of this run's own, so that concurrent runs derive different meeting ports.
job="$((RANDOM * 32768 + RANDOM))"
pids=()
for ((r = 0; r < n; ++r)); do
  env -u RANK -u WORLD_SIZE -u LOCAL_RANK -u MASTER_ADDR -u MASTER_PORT \
    -u ZIPFCOLL_RANK -u ZIPFCOLL_WORLD_SIZE -u ZIPFCOLL_MASTER_ADDR -u ZIPFCOLL_MASTER_PORT \
    -u OMPI_COMM_WORLD_RANK -u OMPI_COMM_WORLD_SIZE -u PMIX_RANK \
    SLURM_PROCID="$r" SLURM_NTASKS="$n" SLURM_NPROCS="$n" SLURM_LOCALID="$r" \
    SLURM_STEP_NODELIST=localhost SLURM_JOB_NODELIST=localhost SLURM_NODELIST=localhost \
    SLURM_JOB_ID="$job" SLURM_STEP_ID=0 SLURM_STEP_NUM_TASKS="$n" "$@" &
  pids+=($!)
done
status=0
for ((r = 0; r < n; ++r)); do
  if ! wait "${pids[$r]}"; then
    echo "srun_like.sh: task $r failed" >&2
    status=1
  fi
done
exit $status

// How a process started without mpirun's MPI learns its place. Each of rank, size and local
// rank is the first set of ZIPFCOLL_<name>, torchrun's <name> (RANK, WORLD_SIZE, LOCAL_RANK)
// and the launcher's own: Open MPI's (OMPI_COMM_WORLD_*), else Slurm's for srun's tasks
// (SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID, with SLURM_STEP_ID set), else PMIx's
// (PMIX_RANK), one launcher's for all three, so that a program started by torchrun, mpirun or
// srun forms one world. The
// ranks meet at MASTER_ADDR:MASTER_PORT (either ZIPFCOLL_-prefixed); without them, as the
// launcher of the rank says: srun's first node of the step and mpirun's loopback when every
// rank is on one host, and a port derived from the job's id. A real torchrun also says that
// its agent serves a store at MASTER_ADDR:MASTER_PORT (TORCHELASTIC_USE_AGENT_STORE=True),
// and names the run and its restart.
#pragma once

#include <string>

#include "host_device/status.hpp"

namespace zfc {

struct LaunchInfo {
  int rank = 0;
  int size = 1;
  int local_rank = -1;  // -1 when the launcher did not say
  std::string master_addr;
  int master_port = 0;
  // torchrun's agent serves its store at master_addr:master_port: the ranks meet through it
  // (bootstrap/torch_store.hpp) instead of rank 0 listening there. False when either was
  // given as ZIPFCOLL_MASTER_ADDR or ZIPFCOLL_MASTER_PORT: the caller's own meeting point.
  bool agent_store = false;
  std::string run_id;     // TORCHELASTIC_RUN_ID ("none" when unset)
  int restart_count = 0;  // TORCHELASTIC_RESTART_COUNT: a restarted run uses fresh keys
  // Whose variable gave the rank: "torchrun" (RANK, ZIPFCOLL_RANK), "mpirun", "pmix", "srun".
  std::string launcher;
};

// The first host of a Slurm host list ("node[07-09,12],gpu1" is node07), its zero padding kept.
std::string first_slurm_host(const std::string& list);

// Reads the variables through `get` (std::getenv in use; a map in tests). Each missing or
// malformed variable is a zfcInvalidUsage error that names it and its value.
using EnvLookup = const char* (*)(const char* name, void* context);
Status read_launch_env(EnvLookup get, void* context, LaunchInfo* out);

// read_launch_env over the process environment.
Status read_launch_env(LaunchInfo* out);

}  // namespace zfc

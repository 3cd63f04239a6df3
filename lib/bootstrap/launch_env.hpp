// How a process launched without mpirun learns its place: torchrun's variables (RANK,
// WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT), the same names prefixed ZIPFCOLL_ (which
// win), or mpirun's OMPI_COMM_WORLD_RANK / _SIZE / _LOCAL_RANK for rank and size. A real
// torchrun also says that its agent serves a store at MASTER_ADDR:MASTER_PORT
// (TORCHELASTIC_USE_AGENT_STORE=True), and names the run and its restart.
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
};

// Reads the variables through `get` (std::getenv in use; a map in tests). Each missing or
// malformed variable is a zfcInvalidUsage error that names it and its value.
using EnvLookup = const char* (*)(const char* name, void* context);
Status read_launch_env(EnvLookup get, void* context, LaunchInfo* out);

// read_launch_env over the process environment.
Status read_launch_env(LaunchInfo* out);

}  // namespace zfc

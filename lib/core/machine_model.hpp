// What the cost model knows of the machine: the alpha-beta parameters of the links inside
// and between nodes, and how fast one rank streams through its own memory. Given in the
// config or measured once when a communicator is made, then agreed (each figure's
// median over ranks), so that every rank predicts the same times and makes the same choices.
#pragma once

#include "base/status.hpp"
#include "core/config.hpp"

struct zfcComm;

namespace zfc {

struct MachineModel {
  LinkParams intra;               // between ranks of one node
  LinkParams inter;               // between nodes (the same as intra on one node)
  double local_bytes_per_s = 0.0; // bytes read plus written per second by one rank
};

// Collective over the communicator's transports (the node and cross-node transports too,
// when it has them). Fills comm->machine.
Status calibrate_machine(zfcComm* comm);

}  // namespace zfc

// The standalone collectives behind the C API: communicator set-up and split, and
// unique-merge (the allreduce is in algo/allreduce_call.hpp). Each one agrees on its arguments
// through the operation header; every local check, the `stream` argument's included, feeds
// that header so that no rank leaves early.
#pragma once

#include <memory>
#include <vector>

#include "core/comm.hpp"

namespace zfc {

// An index type of zfcInt32 or zfcInt64 and a vocabulary 0 < V that the type can address.
Status check_index_space(zfcDataType_t index_type, int64_t vocab);

// Every one of the n indices (of index_type) in [0, vocab); else zfcInvalidArgument naming
// the first bad one's position and value.
Status check_index_values(const void* indices, zfcDataType_t index_type, size_t n,
                          int64_t vocab);

// Where a rank sits among the ranks of its machine.
struct NodePlacement {
  int local_rank = 0;  // among the ranks on this machine, in rank order
  int local_size = 1;
  std::vector<uint64_t> host_of_rank;  // an id of every rank's host
};

// Collective, right after the transport exists: every rank learns whether any rank's
// configuration was refused (`local`), and all fail alike; the config's node and link
// choices must agree. The same exchange tells each rank which ranks share its machine
// (`node`: an id of this rank's host), into *placement.
Status agree_init(Transport& t, const Status& local, const Config& config, uint64_t node,
                  NodePlacement* placement);

// Records the placement in the communicator and reads the machine's topology (binding the
// process to its share of the cores when `bind`).
void place_comm(zfcComm* comm, const NodePlacement& placement, bool bind);

// Collective, after place_comm: the node map (hosts, or the config's ranks_per_node), the
// node transports, and the machine model.
Status finish_comm_setup(zfcComm* comm, const NodePlacement& placement);

// Whether ZIPFCOLL_BIND=1 asks to bind each rank to its share of its machine's cores.
bool bind_requested();

// Collective. Ranks with the same color >= 0 form *out; ZFC_SPLIT_NOCOLOR yields null.
Status comm_split(zfcComm& comm, int color, int key, std::unique_ptr<zfcComm>* out);

Status unique_merge(zfcComm& comm, const void* indices, zfcDataType_t index_type, size_t count,
                    int64_t vocab, void* unique_out, size_t capacity, size_t* num_unique,
                    int32_t* positions, const void* stream);

}  // namespace zfc

#include "algo/collectives.hpp"

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>

#include "algo/agreement.hpp"
#include "algo/collective_call.hpp"
#include "algo/index_set.hpp"
#include "exec/host_staging.hpp"
#include "topo/topology.hpp"

namespace zfc {

Status check_index_space(zfcDataType_t index_type, int64_t vocab) {
  if (index_type != zfcInt32 && index_type != zfcInt64) {
    return error(zfcInvalidArgument, "index_type %d must be zfcInt32 or zfcInt64",
                 static_cast<int>(index_type));
  }
  if (vocab <= 0) {
    return error(zfcInvalidArgument, "vocab_size %lld must be > 0",
                 static_cast<long long>(vocab));
  }
  if (index_type == zfcInt32 && vocab > static_cast<int64_t>(INT32_MAX) + 1) {
    return error(zfcInvalidArgument, "vocab_size %lld does not fit zfcInt32 indices",
                 static_cast<long long>(vocab));
  }
  return Status::Ok();
}

Status check_index_values(const void* indices, zfcDataType_t index_type, size_t n,
                          int64_t vocab) {
  const kernels::BadIndex bad = kernels::find_bad_index(indices, index_type, n, vocab);
  if (!bad.found) return Status::Ok();
  return error(zfcInvalidArgument, "indices[%zu] = %lld is outside [0, %lld)", bad.position,
               static_cast<long long>(bad.value), static_cast<long long>(vocab));
}

Status agree_init(Transport& t, const Status& local, const Config& config, uint64_t node,
                  NodePlacement* placement) {
  Workspace ws;
  LocalHeader mine{make_header(OpKind::kInit)};
  mine.node = node;
  mine.count = config.ranks_per_node;
  mine.key = config.model.given_mask();
  mine.color = static_cast<int32_t>(config.transport);
  header_fail(&mine, local);
  Agreed agreed;
  ZFC_RETURN_IF_ERROR(exchange_headers(t, ws, mine, nullptr, 0, &agreed));
  ZFC_RETURN_IF_ERROR(agree(agreed.headers, t.size(), agreed.messages));
  const OpHeader* all = agreed.headers;
  NodePlacement p;
  p.local_size = 0;
  for (int r = 0; r < t.size(); ++r) {
    p.host_of_rank.push_back(all[r].node);
    if (all[r].node != node) continue;
    if (r < t.rank()) ++p.local_rank;
    ++p.local_size;
  }
  *placement = std::move(p);
  return Status::Ok();
}

Status finish_comm_setup(zfcComm* comm, const NodePlacement& placement) {
  const int rpn = comm->config.ranks_per_node;
  NodeMap nodes = rpn > 0 ? NodeMap::blocks(comm->size(), rpn)
                          : NodeMap::from_ids(placement.host_of_rank);
  ZFC_RETURN_IF_ERROR(setup_nodes(comm, std::move(nodes)));
  return calibrate_machine(comm);
}

void place_comm(zfcComm* comm, const NodePlacement& placement, bool bind) {
  comm->local_rank = placement.local_rank;
  comm->local_size = placement.local_size;
  comm->topology = discover_topology(placement.local_rank, placement.local_size, bind).summary;
}

bool bind_requested() {
  const char* v = std::getenv("ZIPFCOLL_BIND");
  return v != nullptr && std::strcmp(v, "1") == 0;
}

namespace {

// A split's new ranks are ordered by (key, old rank); this rank's place among the members of
// its color on its machine.
NodePlacement split_placement(const OpHeader* all, int size, int me) {
  NodePlacement p;
  p.local_size = 0;
  const OpHeader& mine = all[me];
  for (int r = 0; r < size; ++r) {
    const OpHeader& h = all[r];
    if (h.color != mine.color || h.node != mine.node) continue;
    ++p.local_size;
    if (h.key < mine.key || (h.key == mine.key && r < me)) ++p.local_rank;
  }
  return p;
}

// The parent's node of each member of this rank's color, in the split's rank order.
std::vector<uint64_t> member_nodes(const zfcComm& comm, const OpHeader* all, int me) {
  std::vector<std::pair<std::pair<int32_t, int>, int>> members;  // ((key, rank), node)
  for (int r = 0; r < comm.size(); ++r) {
    if (all[r].color != all[me].color) continue;
    members.push_back({{all[r].key, r}, comm.nodes.node_of(r)});
  }
  std::sort(members.begin(), members.end());
  std::vector<uint64_t> ids;
  for (const auto& m : members) ids.push_back(static_cast<uint64_t>(m.second));
  return ids;
}

}  // namespace

Status comm_split(zfcComm& comm, int color, int key, std::unique_ptr<zfcComm>* out) {
  LocalHeader mine{make_header(OpKind::kSplit)};
  mine.color = color;
  mine.key = key;
  mine.node = host_id();
  if (color < ZFC_SPLIT_NOCOLOR) {
    header_fail(&mine, error(zfcInvalidArgument,
                             "color %d is negative (use >= 0, or ZFC_SPLIT_NOCOLOR)", color));
  }
  if (out == nullptr) header_fail(&mine, error(zfcInvalidArgument, "newcomm is NULL"));
  report_async_errors(comm, &mine);
  Agreed agreed;
  ZFC_RETURN_IF_ERROR(exchange_headers(*comm.transport, comm.workspace, mine, nullptr, 0,
                                       &agreed));
  ZFC_RETURN_IF_ERROR(agree(agreed.headers, comm.size(), agreed.messages));
  const OpHeader* all = agreed.headers;
  std::unique_ptr<Transport> child;
  ZFC_RETURN_IF_ERROR(comm.transport->split(color, key, &child));
  if (!child) {
    *out = nullptr;
    return Status::Ok();
  }
  std::unique_ptr<zfcComm> made = comm_wrap(std::move(child), comm.config);
  place_comm(made.get(), split_placement(all, comm.size(), comm.rank()), false);
  // The members keep the nodes they had in the parent, and its measured links.
  ZFC_RETURN_IF_ERROR(
      setup_nodes(made.get(), NodeMap::from_ids(member_nodes(comm, all, comm.rank()))));
  made->machine = comm.machine;
  made->machine_figures = comm.machine_figures;
  *out = std::move(made);
  return Status::Ok();
}

namespace {

Status check_merge_args(const void* indices, zfcDataType_t index_type, size_t count,
                        int64_t vocab, const void* unique_out, size_t capacity,
                        const size_t* num_unique) {
  ZFC_RETURN_IF_ERROR(check_index_space(index_type, vocab));
  if (count > 0 && indices == nullptr) {
    return error(zfcInvalidArgument, "indices is NULL with count %zu", count);
  }
  if (capacity > 0 && unique_out == nullptr) {
    return error(zfcInvalidArgument, "unique_out is NULL with unique_capacity %zu", capacity);
  }
  if (num_unique == nullptr) return error(zfcInvalidArgument, "num_unique is NULL");
  if (count > static_cast<size_t>(INT32_MAX)) {
    return error(zfcInvalidArgument, "count %zu exceeds %d", count, INT32_MAX);
  }
  return Status::Ok();
}

// The local phase of a merge: checks, the indices copied to the host if they are device
// memory, and the local distinct set.
template <class K>
Status load_merge(zfcComm& comm, HostStaging& staging, const void* indices,
                  zfcDataType_t index_type, size_t count, int64_t vocab, void* unique_out,
                  size_t capacity, size_t* num_unique, int32_t* positions, const void* stream,
                  IndexSet<K>& set) {
  ZFC_RETURN_IF_ERROR(staging.begin(
      {{"indices", indices}, {"unique_out", unique_out}, {"positions", positions}}, stream));
  ZFC_RETURN_IF_ERROR(
      check_merge_args(indices, index_type, count, vocab, unique_out, capacity, num_unique));
  const void* host_indices = nullptr;
  ZFC_RETURN_IF_ERROR(
      staging.input(0, indices, count * (index_type == zfcInt32 ? 4 : 8), &host_indices));
  return set.load(host_indices, index_type, count, comm.config.bounds_check, true);
}

template <class K>
Status run_unique_merge(zfcComm& comm, const void* indices, zfcDataType_t index_type,
                        size_t count, int64_t vocab, void* unique_out, size_t capacity,
                        size_t* num_unique, int32_t* positions, const void* stream) {
  Transport& t = *comm.transport;
  Workspace& ws = comm.workspace;
  OpRecorder recorder(&comm, &ws);
  zfcOpStats_t* op = recorder.op();
  op->tokens = count;
  LocalHeader mine{make_header(OpKind::kUniqueMerge)};
  mine.count = static_cast<int64_t>(count);
  mine.vocab = vocab;
  mine.index_type = index_type;
  mine.capacity = static_cast<int64_t>(capacity > static_cast<size_t>(INT64_MAX) ? INT64_MAX
                                                                                  : capacity);
  IndexSet<K> set(ws, vocab);
  HostStaging staging(comm.staging);
  {
    PhaseTimer timer(op, zfcPhaseLocal);
    header_fail(&mine, load_merge(comm, staging, indices, index_type, count, vocab, unique_out,
                                  capacity, num_unique, positions, stream, set));
    mine.local_unique = static_cast<int64_t>(set.local_unique_count());
  }
  report_async_errors(comm, &mine);
  // The distinct keys ride with the header (the first exchange).
  Agreed agreed;
  const bool loaded = mine.status == zfcSuccess;
  ZFC_RETURN_IF_ERROR(exchange_and_agree(t, ws, mine, op, &agreed,
                                         loaded ? set.local_unique() : nullptr,
                                         loaded ? set.local_unique_count() * sizeof(K) : 0));
  const OpHeader* all = agreed.headers;
  {
    PhaseTimer timer(op, zfcPhaseIndexExchange);
    ZFC_RETURN_IF_ERROR(set.gather(t, agreed));
  }
  PhaseTimer timer(op, zfcPhaseMerge);
  set.merge_gathered(t.rank());
  const size_t ug = set.global_count();
  for (int r = 0; r < t.size(); ++r) {
    if (all[r].capacity < static_cast<int64_t>(ug)) {
      return error(zfcInvalidArgument,
                   "rank %d: unique_capacity %lld is smaller than the %zu distinct indices",
                   r, static_cast<long long>(all[r].capacity), ug);
    }
  }
  void* host_unique = nullptr;
  void* host_positions = nullptr;
  ZFC_RETURN_IF_ERROR(
      staging.output(1, unique_out, ug * (index_type == zfcInt32 ? 4 : 8), &host_unique));
  ZFC_RETURN_IF_ERROR(staging.output(2, positions, count * sizeof(int32_t), &host_positions));
  kernels::store_keys(set.global(), ug, index_type, host_unique);
  if (positions != nullptr) set.token_positions(static_cast<int32_t*>(host_positions));
  ZFC_RETURN_IF_ERROR(staging.finish());
  *num_unique = ug;
  timer.stop();
  op->local_unique = set.local_unique_count();
  op->global_unique = ug;
  recorder.commit();
  return Status::Ok();
}

}  // namespace

Status unique_merge(zfcComm& comm, const void* indices, zfcDataType_t index_type, size_t count,
                    int64_t vocab, void* unique_out, size_t capacity, size_t* num_unique,
                    int32_t* positions, const void* stream) {
  return with_key_type(vocab, [&](auto tag) {
    using K = typename decltype(tag)::type;
    return run_unique_merge<K>(comm, indices, index_type, count, vocab, unique_out, capacity,
                               num_unique, positions, stream);
  });
}

}  // namespace zfc

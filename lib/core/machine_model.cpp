#include "core/machine_model.hpp"

#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "core/comm.hpp"

namespace zfc {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// The fastest of `reps` allgathers of `bytes` per rank: the least disturbed one.
Status time_allgather(Transport& t, size_t bytes, int reps, double* best) {
  std::vector<char> send(bytes, 1), recv(bytes * static_cast<size_t>(t.size()));
  *best = 1e30;
  for (int i = 0; i < reps; ++i) {
    const Clock::time_point start = Clock::now();
    ZFC_RETURN_IF_ERROR(t.allgather(send.data(), bytes, recv.data()));
    *best = std::min(*best, seconds_since(start));
  }
  return Status::Ok();
}

// Latency per step and bandwidth of `t`: a tiny allgather takes G-1 latencies, a large one
// adds (G-1) m bytes received per rank.
Status measure_link(Transport& t, LinkParams* out) {
  constexpr size_t kLarge = 256 * 1024;
  const int peers = t.size() - 1;
  if (peers == 0) {
    *out = LinkParams{};
    return Status::Ok();
  }
  double small = 0.0, large = 0.0;
  ZFC_RETURN_IF_ERROR(time_allgather(t, 8, 2, &small));  // the first warms the path up
  ZFC_RETURN_IF_ERROR(time_allgather(t, 8, 9, &small));
  ZFC_RETURN_IF_ERROR(time_allgather(t, kLarge, 5, &large));
  out->latency_s = small / peers;
  out->bytes_per_s = static_cast<double>(kLarge) * peers / std::max(large - small, 1e-7);
  return Status::Ok();
}

// Bytes read plus written per second by a copy that misses the caches, as the exchanges'
// local passes over U_g x D do.
double measure_local_memory() {
  constexpr size_t kBytes = 8u << 20;
  std::vector<char> a(kBytes, 1), b(kBytes, 2);
  double best = 1e30;
  for (int i = 0; i < 3; ++i) {
    const Clock::time_point start = Clock::now();
    std::memcpy(b.data(), a.data(), kBytes);
    best = std::min(best, seconds_since(start));
    a[static_cast<size_t>(i)] = b[kBytes - 1 - static_cast<size_t>(i)];  // keep the copies
  }
  return 2.0 * kBytes / std::max(best, 1e-9);
}

// The share of a core each rank of this host gets: below 1 when more ranks than cores run
// here, as when ranks are oversubscribed for testing.
double core_share(int ranks_on_host) {
  cpu_set_t set;
  int cpus = 0;
  if (sched_getaffinity(0, sizeof set, &set) == 0) cpus = CPU_COUNT(&set);
  if (cpus <= 0) cpus = static_cast<int>(std::thread::hardware_concurrency());
  if (cpus <= 0 || ranks_on_host <= cpus) return 1.0;
  return static_cast<double>(cpus) / ranks_on_host;
}

}  // namespace

Status calibrate_machine(zfcComm* comm) {
  const Config& cfg = comm->config;
  const bool two_levels = comm->node_transport != nullptr;
  // Every rank takes the same branches (the links given, and the node map, are agreed).
  LinkParams intra = cfg.intra_node, inter = cfg.inter_node;
  Transport& flat = *comm->transport;
  const bool many_nodes = comm->nodes.node_count() > 1;
  if (two_levels) {
    if (!intra.given()) ZFC_RETURN_IF_ERROR(measure_link(*comm->node_transport, &intra));
    if (!inter.given()) ZFC_RETURN_IF_ERROR(measure_link(*comm->rail_transport, &inter));
  } else if (many_nodes ? !inter.given() : !intra.given()) {
    LinkParams measured;
    ZFC_RETURN_IF_ERROR(measure_link(flat, &measured));
    (many_nodes ? inter : intra) = measured;
  }
  if (!intra.given()) intra = inter;
  if (!inter.given()) inter = intra;
  // The median over ranks of each figure, on every rank: the same model everywhere, and
  // one rank descheduled while it measured does not set it.
  const double mine[5] = {intra.latency_s, intra.bytes_per_s, inter.latency_s,
                          inter.bytes_per_s,
                          measure_local_memory() * core_share(comm->local_size)};
  const size_t ranks = static_cast<size_t>(flat.size());
  std::vector<double> all(5 * ranks);
  ZFC_RETURN_IF_ERROR(flat.allgather(mine, sizeof mine, all.data()));
  double agreed[5];
  for (size_t i = 0; i < 5; ++i) {
    std::vector<double> v;
    for (size_t r = 0; r < ranks; ++r) v.push_back(all[5 * r + i]);
    std::sort(v.begin(), v.end());
    agreed[i] = v[(ranks - 1) / 2];
  }
  comm->machine.intra = {agreed[0], agreed[1]};
  comm->machine.inter = {agreed[2], agreed[3]};
  comm->machine.local_bytes_per_s = agreed[4];
  return Status::Ok();
}

}  // namespace zfc

#include "core/machine_model.hpp"

#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <thread>
#include <vector>

#include "core/comm.hpp"
#include "core/logging.hpp"
#include "topo/topology.hpp"

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
  // The allgathers take as many steps as the cost model prices (transport.hpp): a small
  // one runs in log depth, a large one may run as a ring.
  const int ranks = t.size();
  out->latency_s = small / gather_steps(ranks, 8.0 * ranks);
  const double wait = gather_steps(ranks, static_cast<double>(kLarge) * ranks) * out->latency_s;
  out->bytes_per_s = static_cast<double>(kLarge) * peers / std::max(large - wait, 1e-7);
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

// A measured figure rounded to the 4 significant digits the model is printed with.
double round4(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return std::strtod(buf, nullptr);
}

// A link measured among ranks that share cores `crowd` to one, in the C API's units for a
// rank with a core to itself (4 significant digits): the transfer ran 1/crowd as fast, and
// the model divides by the crowd again, so it predicts what was measured.
void store_link(const LinkParams& link, double crowd, double* latency_us, double* gbs) {
  *latency_us = round4(link.latency_s * 1e6);
  *gbs = round4(link.bytes_per_s * crowd / 1e9);
}

// This rank's figures: the given ones, the rest measured (4 significant digits), each for a
// rank with a core to itself (the local pass is timed at its best of three, which had one).
Status measure_missing(zfcComm* comm, double crowd, ModelFigures* f) {
  const bool two_levels = comm->node_transport != nullptr;
  const bool many_nodes = comm->nodes.node_count() > 1;
  // Every rank takes the same branches (which figures are given, and the node map, are
  // agreed).
  LinkParams link;
  if (two_levels) {
    if (!f->intra_given()) {
      ZFC_RETURN_IF_ERROR(measure_link(*comm->node_transport, &link));
      store_link(link, crowd, &f->intra_latency_us, &f->intra_gbs);
    }
    if (!f->inter_given()) {
      ZFC_RETURN_IF_ERROR(measure_link(*comm->rail_transport, &link));
      store_link(link, crowd, &f->inter_latency_us, &f->inter_gbs);
    }
  } else if (many_nodes ? !f->inter_given() : !f->intra_given()) {
    ZFC_RETURN_IF_ERROR(measure_link(*comm->transport, &link));
    if (many_nodes) {
      store_link(link, crowd, &f->inter_latency_us, &f->inter_gbs);
    } else {
      store_link(link, crowd, &f->intra_latency_us, &f->intra_gbs);
    }
  }
  // One class stands for the other where only one was measured or given.
  if (!f->intra_given()) {
    f->intra_latency_us = f->inter_latency_us;
    f->intra_gbs = f->inter_gbs;
  }
  if (!f->inter_given()) {
    f->inter_latency_us = f->intra_latency_us;
    f->inter_gbs = f->intra_gbs;
  }
  if (!f->local_given()) {
    f->local_gbs = round4(measure_local_memory() / 1e9);
  }
  return Status::Ok();
}

constexpr int kFigures = 5;
const char* const kFigureNames[kFigures] = {"intra latency_us", "intra bandwidth_gbs",
                                            "inter latency_us", "inter bandwidth_gbs",
                                            "local_gbs"};

// Where a rank runs: its host and the CPUs it may run on, and its ZIPFCOLL_ROUTE (the
// RoutePolicy, -1 when it cannot be read), which every rank must set alike (a plain struct
// for one allgather).
struct RankPlace {
  uint64_t host;
  cpu_set_t cpus;
  int32_t route;
};

// A rank's figures, in the order of kFigureNames.
struct RankFigures {
  double figures[kFigures];
};

// Given figures must be equal everywhere; measured ones are taken as the median over ranks,
// so the same model holds everywhere and one rank descheduled while it measured does not
// set it.
Status agree_figures(const std::vector<RankFigures>& all, int given_mask, double* agreed) {
  const int given_bit[kFigures] = {1, 1, 2, 2, 4};
  for (int i = 0; i < kFigures; ++i) {
    std::vector<double> v;
    for (const RankFigures& r : all) v.push_back(r.figures[i]);
    if ((given_mask & given_bit[i]) != 0) {
      for (size_t r = 1; r < v.size(); ++r) {
        if (v[r] == v[0]) continue;
        return error(zfcMismatch, "rank %zu gives the machine model's %s as %.17g, rank 0 "
                     "as %.17g: give the same model on every rank", r, kFigureNames[i], v[r],
                     v[0]);
      }
    }
    std::sort(v.begin(), v.end());
    agreed[i] = v[(v.size() - 1) / 2];
  }
  return Status::Ok();
}

// Ranks per core on the most crowded host: its ranks over the CPUs any of them may run on
// (ranks bound to a core each count one per core; unbound ones share the host's). A count,
// not a timing, so a model given in full prices a crowded host the same way every time.
double most_ranks_per_core(const std::vector<RankPlace>& all) {
  struct Host {
    int ranks = 0;
    cpu_set_t cpus;
  };
  std::map<uint64_t, Host> hosts;
  for (const RankPlace& r : all) {
    auto it = hosts.find(r.host);
    if (it == hosts.end()) {
      it = hosts.emplace(r.host, Host{}).first;
      CPU_ZERO(&it->second.cpus);
    }
    Host& h = it->second;
    ++h.ranks;
    cpu_set_t both;
    CPU_OR(&both, &h.cpus, &r.cpus);
    h.cpus = both;
  }
  double crowd = 1.0;
  for (const auto& entry : hosts) {
    const int count = CPU_COUNT(&entry.second.cpus);
    if (count > 0) crowd = std::max(crowd, static_cast<double>(entry.second.ranks) / count);
  }
  return crowd;
}

// This process's CPUs; all of the machine's when the affinity cannot be read.
cpu_set_t my_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) return set;
  const int n = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  for (int i = 0; i < n && i < CPU_SETSIZE; ++i) CPU_SET(i, &set);
  return set;
}

const char* route_name(int32_t policy) {
  return policy == 1 ? "direct" : policy == 2 ? "forwarded" : "auto";
}

}  // namespace

Status read_route_policy(RoutePolicy* out) {
  const char* v = std::getenv("ZIPFCOLL_ROUTE");
  if (v == nullptr || *v == '\0' || std::strcmp(v, "auto") == 0) {
    *out = RoutePolicy::kAuto;
  } else if (std::strcmp(v, "direct") == 0) {
    *out = RoutePolicy::kDirect;
  } else if (std::strcmp(v, "forwarded") == 0) {
    *out = RoutePolicy::kForwarded;
  } else {
    return error(zfcInvalidArgument, "ZIPFCOLL_ROUTE is \"%s\"; it may be auto, direct or "
                 "forwarded", v);
  }
  return Status::Ok();
}

Status calibrate_machine(zfcComm* comm) {
  Transport& flat = *comm->transport;
  const size_t ranks = static_cast<size_t>(flat.size());
  // Every rank must route alike, or the ranks of one exchange would not meet.
  RoutePolicy route = RoutePolicy::kAuto;
  const Status read = read_route_policy(&route);
  RankPlace place{};
  place.host = host_id();
  place.cpus = my_cpus();
  place.route = read.ok() ? static_cast<int32_t>(route) : -1;
  std::vector<RankPlace> places(ranks);
  ZFC_RETURN_IF_ERROR(flat.allgather(&place, sizeof place, places.data()));
  ZFC_RETURN_IF_ERROR(read);
  for (size_t r = 0; r < ranks; ++r) {
    if (places[r].route == -1) {
      return error(zfcInvalidArgument, "rank %zu: ZIPFCOLL_ROUTE is not auto, direct or "
                   "forwarded", r);
    }
  }
  for (size_t r = 0; r < ranks; ++r) {
    if (places[r].route != place.route) {
      return error(zfcMismatch, "rank %zu sets ZIPFCOLL_ROUTE to %s, rank %d to %s: set the "
                   "same on every rank", r, route_name(places[r].route), flat.rank(),
                   route_name(place.route));
    }
  }
  const double crowd = most_ranks_per_core(places);

  const ModelFigures& given = comm->config.model;
  ModelFigures f = given;
  ZFC_RETURN_IF_ERROR(measure_missing(comm, crowd, &f));
  const RankFigures mine{{f.intra_latency_us, f.intra_gbs, f.inter_latency_us, f.inter_gbs,
                          f.local_gbs}};
  std::vector<RankFigures> all(ranks);
  ZFC_RETURN_IF_ERROR(flat.allgather(&mine, sizeof mine, all.data()));
  double agreed[kFigures];
  ZFC_RETURN_IF_ERROR(agree_figures(all, given.given_mask(), agreed));
  f = ModelFigures{agreed[0], agreed[1], agreed[2], agreed[3], agreed[4], crowd};
  comm->machine_figures = f;
  comm->machine = model_from_figures(f);
  // A transport that cannot forward (NCCL) runs every exchange direct: the model prices
  // what runs.
  comm->machine.route = flat.forwards() ? route : RoutePolicy::kDirect;
  // The transports that forward (MPI, UCX) are those that probe a message's length, and they
  // gather blocks by the same means.
  comm->machine.probed_block_gathers = flat.forwards();
  const int mask = given.given_mask();
  if (flat.rank() == 0) {
    ZFC_LOG(kInfo, 0,
            "machine model (%s; %.4g ranks per core) of communicator '%s': "
            "ZIPFCOLL_MACHINE_MODEL=%s",
            mask == 7 ? "given" : mask == 0 ? "measured" : "partly given", f.ranks_per_core,
            comm->config.name.c_str(), format_model(f).c_str());
  }
  return Status::Ok();
}

}  // namespace zfc

#include "perf_floor.hpp"

#include <sched.h>

#include <cstring>
#include <vector>

namespace {

// Large enough to leave the caches of a few ranks sharing them, as a step's rows do.
constexpr size_t kCopyBytes = size_t{8} << 20;
constexpr int kRepeats = 9;

// The slowest rank's seconds for `body` on every rank, started together and ended by a
// barrier, so that ranks sharing a core count the time they waited for it: median of
// kRepeats.
template <class F>
double slowest_median(F&& body) {
  std::vector<double> samples;
  for (int i = 0; i < kRepeats; ++i) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    body();
    MPI_Barrier(MPI_COMM_WORLD);
    samples.push_back(MPI_Wtime() - t0);
  }
  max_over_ranks(&samples);
  return median(samples);
}

// kCopyBytes sent and as many received by every rank, split evenly over its peers, all
// posted at once and waited for as the MPI transport waits (testing, and giving the core to
// ranks that share it once nothing arrives).
void exchange_all_pairs(const PerfContext& ctx, std::vector<char>& out, std::vector<char>& in,
                        std::vector<MPI_Request>& requests) {
  const size_t peers = static_cast<size_t>(ctx.ranks - 1);
  const int part = static_cast<int>(kCopyBytes / peers);
  requests.clear();
  for (int j = 0, slot = 0; j < ctx.ranks; ++j) {
    if (j == ctx.rank) continue;
    const size_t at = static_cast<size_t>(slot++) * static_cast<size_t>(part);
    requests.emplace_back();
    MPI_Irecv(in.data() + at, part, MPI_BYTE, j, 0, MPI_COMM_WORLD, &requests.back());
    requests.emplace_back();
    MPI_Isend(out.data() + at, part, MPI_BYTE, j, 0, MPI_COMM_WORLD, &requests.back());
  }
  int done = 0;
  for (unsigned idle = 0; !done; ++idle) {
    MPI_Testall(static_cast<int>(requests.size()), requests.data(), &done, MPI_STATUSES_IGNORE);
    if (idle > 64) sched_yield();
  }
}

}  // namespace

FloorRates measure_floor_rates(const PerfContext& ctx) {
  std::vector<char> src(kCopyBytes, 1), dst(kCopyBytes, 0);
  std::memcpy(dst.data(), src.data(), kCopyBytes);  // both buffers in memory before timing
  FloorRates r;
  const double copy = slowest_median([&] {
    std::memcpy(dst.data(), src.data(), kCopyBytes);
    src[0] = dst[kCopyBytes - 1];  // a use of the copy the compiler cannot drop
  });
  r.copy_bytes_per_s = 2.0 * static_cast<double>(kCopyBytes) / copy;
  std::vector<uint64_t> out(static_cast<size_t>(ctx.ranks), 1), in(out.size(), 0);
  r.round_seconds = slowest_median([&] {
    MPI_Alltoall(out.data(), 1, MPI_UINT64_T, in.data(), 1, MPI_UINT64_T, MPI_COMM_WORLD);
  });
  if (ctx.ranks > 1) {
    std::vector<MPI_Request> requests;
    exchange_all_pairs(ctx, src, dst, requests);  // pages touched, connections made
    const double exchange = slowest_median([&] { exchange_all_pairs(ctx, src, dst, requests); });
    r.exchange_bytes_per_s = 2.0 * static_cast<double>(kCopyBytes) / exchange;
  }
  return r;
}

double least_touched_bytes(double sent, double received, double tokens, double dim,
                           double global_unique, double fp32_per_wire_byte) {
  const double wire = sent + received;
  // The wire side of an encode or decode is the wire bytes themselves, counted once; its
  // fp32 side is fp32_per_wire_byte bytes per wire byte. The keys are counted as if encoded
  // too (within 1/D of the rows).
  const double codec = fp32_per_wire_byte * wire;
  return wire + codec + 4.0 * tokens * dim + 4.0 * global_unique * dim;
}

double floor_seconds(const FloorRates& rates, double busiest_bytes, double rounds) {
  return busiest_bytes / rates.copy_bytes_per_s + rounds * rates.round_seconds;
}

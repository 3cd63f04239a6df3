// Helpers for the multi-rank tests: the world communicator and cross-rank comparisons.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <gtest/gtest.h>

#include "workload/zipf.hpp"
#include "workload/random.hpp"
#include "zipfcoll/zipfcoll.h"

namespace zfc {
namespace test {

inline int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

inline int world_size() {
  int s = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &s);
  return s;
}

// The transport the multi-rank tests run the library over: ZIPFCOLL_TEST_TRANSPORT=ucx (set
// by ctest for the *_ucx_np* runs) or MPI. MPI itself stays the tests' own harness.
inline bool testing_over_ucx() {
  const char* t = std::getenv("ZIPFCOLL_TEST_TRANSPORT");
  return t != nullptr && std::strcmp(t, "ucx") == 0;
}

// A zipfcoll communicator over MPI_COMM_WORLD's processes, over the transport under test:
// from MPI directly, or over UCX with an id made on rank 0 and broadcast by MPI.
// ZIPFCOLL_TEST_TIMEOUT_MS (set by ctest for the *_unbounded_* runs) gives every communicator
// whose config keeps the default timeout that one instead (0: MPI's blocking waits).
inline zfcResult_t open_world_comm(zfcComm_t* comm, const zfcConfig_t* config) {
  MPI_Comm world = MPI_COMM_WORLD;
  zfcConfig_t cfg = ZFC_CONFIG_INITIALIZER;
  if (config != nullptr) cfg = *config;
  const char* bound = std::getenv("ZIPFCOLL_TEST_TIMEOUT_MS");
  const bool bounded = bound != nullptr && cfg.size == sizeof cfg &&
                       cfg.timeout_ms == ZFC_DEFAULT_TIMEOUT_MS;
  if (bounded) cfg.timeout_ms = std::atoi(bound);
  if (!testing_over_ucx()) {
    return zfcCommInitMpi(comm, &world, config == nullptr && !bounded ? nullptr : &cfg);
  }
  zfcUniqueId id{};
  if (world_rank() == 0 && zfcGetUniqueId(&id) != zfcSuccess) return zfcSystemError;
  MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
  if (cfg.transport == zfcTransportAuto) cfg.transport = zfcTransportUcx;
  return zfcCommInitRank(comm, world_size(), id, world_rank(), &cfg);
}

// A zipfcoll communicator over MPI_COMM_WORLD's processes, destroyed with the fixture.
class WorldTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(open_world_comm(&comm_, nullptr), zfcSuccess) << zfcGetLastError(nullptr);
    rank_ = world_rank();
    size_ = world_size();
  }
  void TearDown() override {
    if (comm_ != nullptr) EXPECT_EQ(zfcCommDestroy(comm_), zfcSuccess);
  }
  // This rank's statistics of its last call on comm_ (a failed query fails the test).
  zfcOpStats_t last_stats() {
    zfcStats_t s = ZFC_STATS_INITIALIZER;
    EXPECT_EQ(zfcCommGetStats(comm_, &s), zfcSuccess);
    return s.last;
  }
  zfcComm_t comm_ = nullptr;
  int rank_ = 0;
  int size_ = 1;
};

// Whether every rank passed the same value.
inline bool same_on_all_ranks(uint64_t value) {
  std::vector<uint64_t> all(static_cast<size_t>(world_size()));
  MPI_Allgather(&value, 1, MPI_UINT64_T, all.data(), 1, MPI_UINT64_T, MPI_COMM_WORLD);
  for (uint64_t v : all) {
    if (v != all[0]) return false;
  }
  return true;
}

// Seeded Zipf indices of rank r, so that any rank can regenerate any other's.
inline std::vector<int64_t> zipf_indices(const workload::ZipfDistribution& zipf, size_t count,
                                         uint64_t seed, int rank) {
  std::vector<int32_t> ids = zipf.draw(count, workload::mix_seed(seed, 17, rank));
  return std::vector<int64_t>(ids.begin(), ids.end());
}

// Seeded rows in [-1, 1) of rank r.
inline std::vector<float> random_rows(size_t count, size_t dim, uint64_t seed, int rank) {
  workload::SplitMix64 rng(workload::mix_seed(seed, 29, rank));
  std::vector<float> rows(count * dim);
  for (float& v : rows) v = static_cast<float>(rng.uniform() * 2.0 - 1.0);
  return rows;
}

}  // namespace test
}  // namespace zfc

// The library over UCX, started without MPI: each process is one rank, launched by
// launch_ranks.sh with torchrun-style variables. Every result must equal the reference that
// each rank computes from all ranks' seeded inputs, so equal results mean identical bits on
// every rank too.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bootstrap/tcp_rendezvous.hpp"
#include "common/free_port.hpp"
#include "common/rank_failure_printer.hpp"
#include "common/reference.hpp"
#include "workload/random.hpp"
#include "workload/zipf.hpp"
#include "zipfcoll/zipfcoll.h"

#include <unistd.h>

namespace zfc {
namespace {

zfcComm_t g_comm = nullptr;
// Ranks per node: ZIPFCOLL_TEST_RANKS_PER_NODE (then also the config's, to stand in for
// several hosts on one), else the launcher's ranks per host. Sums follow these nodes.
size_t g_per_node = 1;
int g_rank = 0, g_size = 1;

std::vector<float> rows_of(int rank, size_t n, uint64_t seed) {
  workload::SplitMix64 rng(workload::mix_seed(seed, 3, static_cast<uint64_t>(rank)));
  std::vector<float> v(n);
  for (float& x : v) x = static_cast<float>(rng.uniform() * 2 - 1);
  return v;
}

std::vector<int64_t> ids_of(int rank, size_t n, int64_t vocab, uint64_t seed) {
  const workload::ZipfDistribution zipf(1.1, vocab);
  const std::vector<int32_t> ids =
      zipf.draw(n, workload::mix_seed(seed, 5, static_cast<uint64_t>(rank)));
  return std::vector<int64_t>(ids.begin(), ids.end());
}

TEST(Ucx, RanksComeFromTheEnvironment) {
  int rank = -1, count = -1, local_rank = -1, local_count = -1;
  ASSERT_EQ(zfcCommRank(g_comm, &rank), zfcSuccess);
  ASSERT_EQ(zfcCommCount(g_comm, &count), zfcSuccess);
  ASSERT_EQ(zfcCommLocalRank(g_comm, &local_rank, &local_count), zfcSuccess);
  EXPECT_EQ(rank, std::atoi(std::getenv("RANK")));
  EXPECT_EQ(count, std::atoi(std::getenv("WORLD_SIZE")));
  // The launchers start LOCAL_WORLD_SIZE ranks per host, numbered in rank order.
  EXPECT_EQ(local_rank, std::atoi(std::getenv("LOCAL_RANK")));
  EXPECT_EQ(local_count, std::atoi(std::getenv("LOCAL_WORLD_SIZE")));
}

// The allgather takes log-depth steps up to 1 MiB in all and a ring above: 400003 fp32
// values take the ring, compressed the log-depth path, like the smaller sizes.
TEST(Ucx, AllReduceMatchesTheReference) {
  for (size_t n : {size_t{1}, size_t{1000}, size_t{100003}, size_t{400003}}) {
    std::vector<std::vector<float>> all;
    for (int r = 0; r < g_size; ++r) all.push_back(rows_of(r, n, n));
    for (zfcCompressionKind_t kind : {zfcCompressNone, zfcCompressFp16, zfcCompressBf16}) {
      const zfcCompression_t how{kind, kind == zfcCompressFp16 ? 64.0f : 1.0f};
      std::vector<float> out(n);
      int overflowed = -1;
      ASSERT_EQ(zfcAllReduce(g_comm, all[static_cast<size_t>(g_rank)].data(), out.data(), n,
                             zfcFloat32, &how, &overflowed, nullptr),
                zfcSuccess)
          << zfcGetLastError(g_comm);
      EXPECT_EQ(overflowed, 0);
      const std::vector<float> want =
          test::reference_allreduce_nodes(all, kind, how.scale, g_per_node);
      ASSERT_EQ(std::memcmp(out.data(), want.data(), n * sizeof(float)), 0) << n << " " << kind;
    }
  }
}

TEST(Ucx, SparseReduceOfEveryAlgorithmMatchesTheReference) {
  const size_t dim = 24, count = 640;
  const int64_t vocab = 5000;
  std::vector<test::RankInput> inputs;
  for (int r = 0; r < g_size; ++r) {
    inputs.push_back({ids_of(r, count, vocab, 9), rows_of(r, count * dim, 10 + r)});
  }
  const test::SparseReference ref = test::reference_sparse_nodes(inputs, dim, g_per_node);
  const test::RankInput& mine = inputs[static_cast<size_t>(g_rank)];
  std::vector<zfcAlgorithm_t> algos = {zfcAlgoAllGather, zfcAlgoUniqueAllReduce,
                                       zfcAlgoUniqueAllGather, zfcAlgoOwnerPartitioned,
                                       zfcAlgoDenseVocab, zfcAlgoAuto};
  const size_t size = static_cast<size_t>(g_size);
  if (g_per_node > 1 && g_per_node < size && size % g_per_node == 0) {
    algos.push_back(zfcAlgoHierarchical);
  }
  for (zfcAlgorithm_t algo : algos) {
    zfcSparsePlanConfig_t cfg = ZFC_SPARSE_PLAN_CONFIG_INITIALIZER;
    cfg.dim = dim;
    cfg.vocab_size = vocab;
    cfg.index_type = zfcInt64;
    cfg.algorithm = algo;
    zfcSparsePlan_t plan = nullptr;
    ASSERT_EQ(zfcSparsePlanCreate(g_comm, &cfg, &plan), zfcSuccess);
    zfcSparseResult_t out = ZFC_SPARSE_RESULT_INITIALIZER;
    ASSERT_EQ(zfcSparseReduce(plan, mine.indices.data(), count, mine.rows.data(), &out, nullptr),
              zfcSuccess)
        << zfcGetLastError(g_comm);
    ASSERT_EQ(out.num_unique, ref.unique.size()) << algo;
    if (algo == zfcAlgoUniqueAllReduce && g_rank == 0) {
      // For comparing runs (tests/ucx/two_hosts.sh): the same inputs, the same bits.
      std::printf("result hash: %016llx\n",
                  static_cast<unsigned long long>(test::fnv1a(out.rows, ref.rows.size() * 4)));
    }
    EXPECT_EQ(std::memcmp(out.indices, ref.unique.data(), ref.unique.size() * 8), 0) << algo;
    EXPECT_EQ(std::memcmp(out.rows, ref.rows.data(), ref.rows.size() * 4), 0) << algo;
    zfcSparsePlanDestroy(plan);
  }
}

TEST(Ucx, SplitCommunicatorsRunTheirOwnCollectives) {
  zfcComm_t half = nullptr;
  ASSERT_EQ(zfcCommSplit(g_comm, g_rank % 2, g_rank, &half), zfcSuccess);
  int hr = -1, hs = -1;
  ASSERT_EQ(zfcCommRank(half, &hr), zfcSuccess);
  ASSERT_EQ(zfcCommCount(half, &hs), zfcSuccess);
  EXPECT_EQ(hr, g_rank / 2);
  EXPECT_EQ(hs, (g_size - g_rank % 2 + 1) / 2);
  // Each half sums its members' ranks, while the parent stays usable.
  float mine = static_cast<float>(g_rank), sum = -1;
  ASSERT_EQ(zfcAllReduce(half, &mine, &sum, 1, zfcFloat32, nullptr, nullptr, nullptr),
            zfcSuccess);
  float want = 0;
  for (int r = g_rank % 2; r < g_size; r += 2) want += static_cast<float>(r);
  EXPECT_EQ(sum, want);
  float total = -1;
  ASSERT_EQ(zfcAllReduce(g_comm, &mine, &total, 1, zfcFloat32, nullptr, nullptr, nullptr),
            zfcSuccess);
  EXPECT_EQ(total, static_cast<float>(g_size * (g_size - 1) / 2));
  EXPECT_EQ(zfcCommDestroy(half), zfcSuccess);
}

TEST(Ucx, ArgumentErrorsAreAgreed) {
  if (g_size < 2) GTEST_SKIP() << "agreement needs two ranks";
  float v = 1, out = 0;
  // Rank 1 asks for another element count: every rank gets the same mismatch.
  const size_t count = g_rank == 1 ? 2 : 1;
  std::vector<float> buf(2, 1.0f), res(2);
  EXPECT_EQ(zfcAllReduce(g_comm, buf.data(), res.data(), count, zfcFloat32, nullptr, nullptr,
                         nullptr),
            zfcMismatch);
  // And the communicator still works.
  ASSERT_EQ(zfcAllReduce(g_comm, &v, &out, 1, zfcFloat32, nullptr, nullptr, nullptr),
            zfcSuccess);
  EXPECT_EQ(out, static_cast<float>(g_size));
}

}  // namespace

// Rank 1 vanishes right after the communicator is made, as a crashed process would; every
// other rank's next collective must fail with zfcRemoteError (or zfcTimeout) instead of
// hanging (a hang fails by the test's own time limit; the time taken is printed, not
// checked). Returns the process's exit status.
int peer_dies(zfcConfig_t cfg) {
  cfg.timeout_ms = 10000;
  zfcComm_t comm = nullptr;
  if (zfcCommInitFromEnv(&comm, &cfg) != zfcSuccess) {
    std::fprintf(stderr, "zfcCommInitFromEnv: %s\n", zfcGetLastError(nullptr));
    return 1;
  }
  int rank = 0;
  zfcCommRank(comm, &rank);
  if (rank == 1) _exit(0);  // no goodbye
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<float> v(1 << 16, 1.0f), out(v.size());
  zfcResult_t r = zfcSuccess;
  for (int i = 0; i < 100 && r == zfcSuccess; ++i) {
    r = zfcAllReduce(comm, v.data(), out.data(), v.size(), zfcFloat32, nullptr, nullptr,
                     nullptr);
  }
  const double waited =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("rank %d: %s after %.1f s: %s\n", rank, zfcGetErrorString(r), waited,
              zfcGetLastError(comm));
  zfcCommAbort(comm);
  const bool failed_cleanly = r == zfcRemoteError || r == zfcTimeout;
  return failed_cleanly ? 0 : 1;
}

}  // namespace zfc

int main(int argc, char** argv) {
  if (argc == 2 && std::strcmp(argv[1], "--free-port") == 0) {
    return zfc::test::print_free_port();
  }
  testing::InitGoogleTest(&argc, argv);
  zfcConfig_t cfg = ZFC_CONFIG_INITIALIZER;
  cfg.timeout_ms = 60000;  // a rank that dies ends the run with an error, never a hang
  if (argc == 2 && std::strcmp(argv[1], "--peer-dies") == 0) return zfc::peer_dies(cfg);
  const char* per_node = std::getenv("ZIPFCOLL_TEST_RANKS_PER_NODE");
  if (per_node != nullptr) cfg.ranks_per_node = std::atoi(per_node);
  if (zfcCommInitFromEnv(&zfc::g_comm, &cfg) != zfcSuccess) {
    std::fprintf(stderr, "zfcCommInitFromEnv: %s\n", zfcGetLastError(nullptr));
    return 1;
  }
  int per_host = 1;
  zfcCommLocalRank(zfc::g_comm, nullptr, &per_host);
  zfc::g_per_node = static_cast<size_t>(per_node != nullptr ? std::atoi(per_node) : per_host);
  zfcCommRank(zfc::g_comm, &zfc::g_rank);
  zfcCommCount(zfc::g_comm, &zfc::g_size);
  zfc::test::report_failures_per_rank(zfc::g_rank);
  const int failed = RUN_ALL_TESTS() != 0 ? 1 : 0;
  if (failed) std::fprintf(stderr, "[rank %d] failed\n", zfc::g_rank);
  zfcCommDestroy(zfc::g_comm);
  return failed;
}

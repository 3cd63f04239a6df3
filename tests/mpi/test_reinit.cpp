// Abort and re-init: after zfcCommAbort a new communicator on the same processes works, and
// 50 cycles of make, use and abort leave no file descriptors or heap behind.
#include <malloc.h>
#include <unistd.h>
#include <dirent.h>

#include <chrono>
#include <thread>

#include "common/mpi_world.hpp"

namespace zfc {
namespace test {
namespace {

size_t open_fds() {
  size_t n = 0;
  DIR* d = opendir("/proc/self/fd");
  if (d == nullptr) return 0;
  while (readdir(d) != nullptr) ++n;
  closedir(d);
  return n;
}

// Bytes the allocator has handed out and not had back (0 under a sanitizer's allocator,
// whose leak checker then does this job at exit).
size_t heap_in_use() {
  const struct mallinfo2 m = mallinfo2();
  return m.uordblks + m.hblkhd;
}

zfcConfig_t bounded_config(int timeout_ms) {
  zfcConfig_t cfg = ZFC_CONFIG_INITIALIZER;
  cfg.timeout_ms = timeout_ms;
  // Given links: no measurement of the machine at every init.
  cfg.intra_node = {2.0, 10.0};
  cfg.inter_node = {10.0, 10.0};
  return cfg;
}

// One fused reduce and one allreduce on `comm`, checked; the plan is destroyed before the
// abort in one cycle out of two and after it in the other (both are allowed).
void use_and_abort(zfcComm_t comm, int cycle) {
  const int rank = world_rank(), size = world_size();
  zfcSparsePlanConfig_t pc = ZFC_SPARSE_PLAN_CONFIG_INITIALIZER;
  pc.dim = 8;
  pc.vocab_size = 1000;
  zfcSparsePlan_t plan = nullptr;
  ASSERT_EQ(zfcSparsePlanCreate(comm, &pc, &plan), zfcSuccess) << zfcGetLastError(comm);
  const std::vector<int32_t> idx = {rank, 7, 500 + cycle};
  const std::vector<float> rows(idx.size() * pc.dim, 1.0f);
  zfcSparseResult_t out;
  ASSERT_EQ(zfcSparseReduce(plan, idx.data(), idx.size(), rows.data(), &out, nullptr),
            zfcSuccess)
      << zfcGetLastError(comm);
  EXPECT_EQ(out.num_unique, static_cast<size_t>(size) + 2);
  float v = 1.0f, sum = 0.0f;
  ASSERT_EQ(zfcAllReduce(comm, &v, &sum, 1, zfcFloat32, nullptr, nullptr, nullptr),
            zfcSuccess);
  EXPECT_EQ(sum, static_cast<float>(size));
  if (cycle % 2 == 0) zfcSparsePlanDestroy(plan);
  // Every rank is done with the communicator before any lets it go without a word.
  MPI_Barrier(MPI_COMM_WORLD);
  EXPECT_EQ(zfcCommAbort(comm), zfcSuccess);
  if (cycle % 2 == 1) zfcSparsePlanDestroy(plan);
}

TEST(AbortReinit, FiftyCyclesLeaveNothingBehind) {
  constexpr int kCycles = 50, kWarmup = 5;
  size_t fds_before = 0, heap_before = 0;
  for (int c = 0; c < kCycles; ++c) {
    if (c == kWarmup) {
      fds_before = open_fds();
      heap_before = heap_in_use();
    }
    zfcComm_t comm = nullptr;
    const zfcConfig_t cfg = bounded_config(30000);
    ASSERT_EQ(open_world_comm(&comm, &cfg), zfcSuccess) << zfcGetLastError(nullptr);
    use_and_abort(comm, c);
    if (HasFatalFailure()) return;
  }
  const size_t fds_after = open_fds(), heap_after = heap_in_use();
  const double grown_kib =
      (static_cast<double>(heap_after) - static_cast<double>(heap_before)) / 1024.0;
  if (world_rank() == 0) {
    std::printf("abort/re-init over %s: %d cycles; after cycle %d: %zu -> %zu open file "
                "descriptors, heap in use %+.1f KiB\n",
                testing_over_ucx() ? "ucx" : "mpi", kCycles, kWarmup, fds_before, fds_after,
                grown_kib);
  }
  EXPECT_EQ(fds_after, fds_before);
  // A communicator's workspace alone is tens of KiB: 45 leaked ones could not hide here.
  EXPECT_LT(grown_kib, 64.0);
}

// A rank late for a collective: the others time out, find the communicator refusing more
// work, abort it, and a new communicator on the same processes works.
TEST(AbortReinit, AfterATimeoutANewCommunicatorWorks) {
  const int rank = world_rank(), size = world_size();
  if (size < 2) GTEST_SKIP() << "a late peer needs a second rank";
  zfcComm_t comm = nullptr;
  const zfcConfig_t cfg = bounded_config(500);
  ASSERT_EQ(open_world_comm(&comm, &cfg), zfcSuccess) << zfcGetLastError(nullptr);
  float v = 1.0f, sum = 0.0f;
  if (rank == 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    // Late: over MPI this completes the others' abandoned operation; over UCX they have
    // withdrawn it, and this call fails. Either way this rank then aborts too.
    (void)zfcAllReduce(comm, &v, &sum, 1, zfcFloat32, nullptr, nullptr, nullptr);
  } else {
    EXPECT_EQ(zfcAllReduce(comm, &v, &sum, 1, zfcFloat32, nullptr, nullptr, nullptr),
              zfcTimeout)
        << zfcGetLastError(comm);
    EXPECT_EQ(zfcAllReduce(comm, &v, &sum, 1, zfcFloat32, nullptr, nullptr, nullptr),
              zfcInvalidUsage);
    EXPECT_NE(std::string(zfcGetLastError(comm)).find("failed earlier"), std::string::npos)
        << zfcGetLastError(comm);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  zfcCommAbort(comm);
  const zfcConfig_t fresh = bounded_config(30000);
  ASSERT_EQ(open_world_comm(&comm, &fresh), zfcSuccess) << zfcGetLastError(nullptr);
  v = static_cast<float>(rank + 1);
  ASSERT_EQ(zfcAllReduce(comm, &v, &sum, 1, zfcFloat32, nullptr, nullptr, nullptr),
            zfcSuccess)
      << zfcGetLastError(comm);
  EXPECT_EQ(sum, static_cast<float>(size * (size + 1) / 2));
  EXPECT_EQ(zfcCommDestroy(comm), zfcSuccess);
}

}  // namespace
}  // namespace test
}  // namespace zfc

// Abort and re-init: after zfcCommAbort a new communicator on the same processes works, and
// 50 cycles of make, use and abort leave no file descriptors, heap blocks, MPI
// communicators or MPI datatypes behind.
#include <malloc.h>
#include <unistd.h>
#include <dirent.h>


#include "common/mpi_world.hpp"
#include "mpi/live_resources.hpp"

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

// Bytes the allocator has handed out and not had back, MPI's and UCX's included (0 under a
// sanitizer's allocator). Printed, not checked: MPI's and UCX's own memory grows by an
// amount that depends on how the ranks happen to be scheduled (docs/reliability.md).
size_t malloc_in_use() {
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
  zfcSparseResult_t out = ZFC_SPARSE_RESULT_INITIALIZER;
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
  size_t fds_before = 0, malloc_before = 0;
  LiveResources before;
  for (int c = 0; c < kCycles; ++c) {
    // From here on every cycle must give back all it takes (the first cycles may set up
    // what lives as long as the process, such as MPI's and UCX's own state).
    if (c == kWarmup) {
      fds_before = open_fds();
      malloc_before = malloc_in_use();
      before = live_resources();
    }
    zfcComm_t comm = nullptr;
    const zfcConfig_t cfg = bounded_config(30000);
    ASSERT_EQ(open_world_comm(&comm, &cfg), zfcSuccess) << zfcGetLastError(nullptr);
    use_and_abort(comm, c);
    if (HasFatalFailure()) return;
  }
  const LiveResources after = live_resources();
  const size_t fds_after = open_fds(), malloc_after = malloc_in_use();
  const double malloc_kib =
      (static_cast<double>(malloc_after) - static_cast<double>(malloc_before)) / 1024.0;
  std::printf("[rank %d] abort/re-init over %s, %d cycles, from cycle %d: open file "
              "descriptors %zu -> %zu; operator new %lld -> %lld blocks, %lld -> %lld bytes; "
              "MPI communicators %ld -> %ld, datatypes %ld -> %ld; malloc in use %+.1f KiB "
              "(MPI's and UCX's caches included)\n",
              world_rank(), testing_over_ucx() ? "ucx" : "mpi", kCycles, kWarmup, fds_before,
              fds_after, before.heap_blocks, after.heap_blocks, before.heap_bytes,
              after.heap_bytes, before.mpi_comms, after.mpi_comms, before.mpi_types,
              after.mpi_types, malloc_kib);
  EXPECT_EQ(fds_after, fds_before);
  EXPECT_EQ(after.heap_blocks, before.heap_blocks);
  EXPECT_EQ(after.heap_bytes, before.heap_bytes);
  EXPECT_EQ(after.mpi_comms, before.mpi_comms);
  EXPECT_EQ(after.mpi_types, before.mpi_types);
}

// A rank late for a collective: the others time out, find the communicator refusing more
// work, abort it, and a new communicator on the same processes works. The late rank waits
// (on MPI, outside the library) until the others have timed out, so that no scheduling can
// let it arrive in time.
TEST(AbortReinit, AfterATimeoutANewCommunicatorWorks) {
  const int rank = world_rank(), size = world_size();
  if (size < 2) GTEST_SKIP() << "a late peer needs a second rank";
  zfcComm_t comm = nullptr;
  const zfcConfig_t cfg = bounded_config(500);
  ASSERT_EQ(open_world_comm(&comm, &cfg), zfcSuccess) << zfcGetLastError(nullptr);
  float v = 1.0f, sum = 0.0f;
  if (rank == 0) {
    MPI_Barrier(MPI_COMM_WORLD);  // the others have timed out
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
    MPI_Barrier(MPI_COMM_WORLD);
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

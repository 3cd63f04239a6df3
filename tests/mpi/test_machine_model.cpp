// The machine model behind zfcAlgoAuto, across ranks: a measured model is agreed (the same
// bits on every rank) and well formed, never checked for a timing; a given model (config or
// ZIPFCOLL_MACHINE_MODEL) comes back exactly; the printed form given back reproduces the
// model; and ranks that give different figures all fail alike.
#include <sched.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "common/mpi_world.hpp"
#include "core/comm.hpp"
#include "core/machine_model.hpp"

namespace zfc {
namespace test {
namespace {

constexpr const char* kEnv = "ZIPFCOLL_MACHINE_MODEL";

uint64_t hash_model(const zfcMachineModel_t& m) {
  const double v[6] = {m.intra_node.latency_us, m.intra_node.bandwidth_gbs,
                       m.inter_node.latency_us, m.inter_node.bandwidth_gbs, m.local_gbs,
                       m.ranks_per_core};
  uint64_t h = 1469598103934665603ull;
  const unsigned char* p = reinterpret_cast<const unsigned char*>(v);
  for (size_t i = 0; i < sizeof v; ++i) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

bool four_digits(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return std::strtod(buf, nullptr) == v;
}

zfcMachineModel_t model_of(zfcComm_t comm) {
  zfcMachineModel_t m = ZFC_MACHINE_MODEL_INITIALIZER;
  EXPECT_EQ(zfcCommGetMachineModel(comm, &m), zfcSuccess) << zfcGetLastError(comm);
  return m;
}

// Opens a communicator with ZIPFCOLL_MACHINE_MODEL set to `env` on this rank (NULL: unset).
zfcResult_t open_with_env(const char* env, const zfcConfig_t* cfg, zfcComm_t* comm) {
  if (env != nullptr) setenv(kEnv, env, 1); else unsetenv(kEnv);
  const zfcResult_t r = open_world_comm(comm, cfg);
  unsetenv(kEnv);
  return r;
}

class MachineModelTest : public ::testing::Test {
 protected:
  void SetUp() override { unsetenv(kEnv); }
  void TearDown() override {
    if (comm_ != nullptr) EXPECT_EQ(zfcCommDestroy(comm_), zfcSuccess);
  }
  zfcComm_t comm_ = nullptr;
};

TEST_F(MachineModelTest, AMeasuredModelIsAgreedAndWellFormed) {
  ASSERT_EQ(open_with_env(nullptr, nullptr, &comm_), zfcSuccess) << zfcGetLastError(nullptr);
  const zfcMachineModel_t m = model_of(comm_);
  EXPECT_TRUE(same_on_all_ranks(hash_model(m))) << "ranks disagree on the measured model";
  const double figures[5] = {m.intra_node.latency_us, m.intra_node.bandwidth_gbs,
                             m.inter_node.latency_us, m.inter_node.bandwidth_gbs, m.local_gbs};
  for (double f : figures) {
    EXPECT_TRUE(std::isfinite(f) && f >= 0.0) << f;
    EXPECT_TRUE(four_digits(f)) << f << " has more than 4 significant digits";
  }
  EXPECT_GT(m.local_gbs, 0.0);
  if (world_size() > 1) {
    EXPECT_GT(m.intra_node.bandwidth_gbs, 0.0);
  } else {
    EXPECT_EQ(m.intra_node.bandwidth_gbs, 0.0);  // no link to measure
  }
  // All ranks of these tests share one host: one node, whose links stand for both classes.
  EXPECT_EQ(m.intra_node.latency_us, m.inter_node.latency_us);
  EXPECT_EQ(m.intra_node.bandwidth_gbs, m.inter_node.bandwidth_gbs);
}

// Ranks per core is counted, not timed: the host's ranks (all of these tests' ranks share one)
// over the CPUs any of them may run on, whatever else the model is given. Ranks bound to a
// core each count one per core.
TEST_F(MachineModelTest, RanksPerCoreIsTheHostsCount) {
  ASSERT_EQ(open_with_env("intra=1:1,local=1", nullptr, &comm_), zfcSuccess)
      << zfcGetLastError(nullptr);
  cpu_set_t mine;
  ASSERT_EQ(sched_getaffinity(0, sizeof mine, &mine), 0);
  std::vector<cpu_set_t> all(static_cast<size_t>(world_size()));
  MPI_Allgather(&mine, sizeof mine, MPI_BYTE, all.data(), sizeof mine, MPI_BYTE,
                MPI_COMM_WORLD);
  cpu_set_t any;
  CPU_ZERO(&any);
  for (const cpu_set_t& s : all) {
    for (int c = 0; c < CPU_SETSIZE; ++c) {
      if (CPU_ISSET(c, &s)) CPU_SET(c, &any);
    }
  }
  const double expected = std::max(1.0, double(world_size()) / CPU_COUNT(&any));
  EXPECT_EQ(model_of(comm_).ranks_per_core, expected);
}

TEST_F(MachineModelTest, TheConfigsModelComesBackExactly) {
  zfcConfig_t cfg = ZFC_CONFIG_INITIALIZER;
  cfg.intra_node = {1.0 / 3.0, 12.25};
  cfg.inter_node = {7.5, 0.1 + 0.2};
  cfg.local_gbs = 2.0 / 7.0;
  ASSERT_EQ(open_with_env("intra=9:9,inter=9:9,local=9", &cfg, &comm_), zfcSuccess)
      << zfcGetLastError(nullptr);
  const zfcMachineModel_t m = model_of(comm_);
  EXPECT_EQ(m.intra_node.latency_us, 1.0 / 3.0);  // the config wins over the environment
  EXPECT_EQ(m.intra_node.bandwidth_gbs, 12.25);
  EXPECT_EQ(m.inter_node.latency_us, 7.5);
  EXPECT_EQ(m.inter_node.bandwidth_gbs, 0.1 + 0.2);
  EXPECT_EQ(m.local_gbs, 2.0 / 7.0);
}

// A program built against the 0.2.0 header passes the shorter config of that release: its
// links are taken, and the figure it cannot give (local_gbs) is measured.
TEST_F(MachineModelTest, AConfigOfThe020LayoutOpensACommunicator) {
  std::vector<unsigned char> memory(sizeof(zfcConfig_t), 0xff);  // poison past the struct
  zfcConfig_t cfg = ZFC_CONFIG_INITIALIZER;
  cfg.size = offsetof(zfcConfig_t, local_gbs);
  cfg.version = 200;
  cfg.intra_node = {4.0, 16.0};
  cfg.inter_node = {4.0, 16.0};
  std::memcpy(memory.data(), &cfg, cfg.size);
  const auto* old = reinterpret_cast<const zfcConfig_t*>(memory.data());
  MPI_Comm world = MPI_COMM_WORLD;
  const zfcResult_t r = testing_over_ucx() ? open_world_comm(&comm_, old)
                                           : zfcCommInitMpi(&comm_, &world, old);
  ASSERT_EQ(r, zfcSuccess) << zfcGetLastError(nullptr);
  const zfcMachineModel_t m = model_of(comm_);
  EXPECT_EQ(m.intra_node.latency_us, 4.0);
  EXPECT_EQ(m.inter_node.bandwidth_gbs, 16.0);
  EXPECT_GT(m.local_gbs, 0.0);
  EXPECT_TRUE(four_digits(m.local_gbs));
}

TEST_F(MachineModelTest, TheEnvironmentGivesWhatTheConfigLeavesOut) {
  zfcConfig_t cfg = ZFC_CONFIG_INITIALIZER;
  cfg.local_gbs = 3.5;
  ASSERT_EQ(open_with_env("intra=2:8,inter=40:1.25,local=9", &cfg, &comm_), zfcSuccess)
      << zfcGetLastError(nullptr);
  const zfcMachineModel_t m = model_of(comm_);
  EXPECT_EQ(m.intra_node.latency_us, 2.0);
  EXPECT_EQ(m.intra_node.bandwidth_gbs, 8.0);
  EXPECT_EQ(m.inter_node.latency_us, 40.0);
  EXPECT_EQ(m.inter_node.bandwidth_gbs, 1.25);
  EXPECT_EQ(m.local_gbs, 3.5);
}

TEST_F(MachineModelTest, ThePrintedModelGivenBackIsTheSameModel) {
  ASSERT_EQ(open_with_env(nullptr, nullptr, &comm_), zfcSuccess) << zfcGetLastError(nullptr);
  const zfcMachineModel_t measured = model_of(comm_);
  // What ZIPFCOLL_DEBUG=INFO prints after "ZIPFCOLL_MACHINE_MODEL=".
  const std::string printed = format_model(comm_->machine_figures);
  zfcComm_t again = nullptr;
  ASSERT_EQ(open_with_env(printed.c_str(), nullptr, &again), zfcSuccess)
      << zfcGetLastError(nullptr);
  const zfcMachineModel_t given = model_of(again);
  EXPECT_EQ(hash_model(given), hash_model(measured)) << printed;
  EXPECT_EQ(std::memcmp(&again->machine, &comm_->machine, sizeof(MachineModel)), 0) << printed;
  EXPECT_EQ(zfcCommDestroy(again), zfcSuccess);
}

TEST_F(MachineModelTest, FiguresGivenOnOneRankOnlyFailEveryRank) {
  if (world_size() == 1) GTEST_SKIP() << "needs two ranks";
  const bool last = world_rank() == world_size() - 1;
  const zfcResult_t r = open_with_env(last ? "local=4" : nullptr, nullptr, &comm_);
  EXPECT_EQ(r, zfcMismatch);
  const std::string msg = zfcGetLastError(nullptr);
  EXPECT_NE(msg.find("rank " + std::to_string(world_size() - 1) + " gives local_gbs"),
            std::string::npos) << msg;
  EXPECT_EQ(comm_, nullptr);
}

TEST_F(MachineModelTest, DifferentGivenFiguresFailEveryRank) {
  if (world_size() == 1) GTEST_SKIP() << "needs two ranks";
  const bool last = world_rank() == world_size() - 1;
  const zfcResult_t r = open_with_env(last ? "intra=2:8,local=4" : "intra=2:8,local=5",
                                      nullptr, &comm_);
  EXPECT_EQ(r, zfcMismatch);
  const std::string msg = zfcGetLastError(nullptr);
  EXPECT_NE(msg.find("local_gbs as 4, rank 0 as 5"), std::string::npos) << msg;
  EXPECT_EQ(comm_, nullptr);
}

TEST_F(MachineModelTest, BadTextOnOneRankFailsEveryRank) {
  const bool last = world_rank() == world_size() - 1;
  const zfcResult_t r = open_with_env(last ? "intra=fast" : nullptr, nullptr, &comm_);
  EXPECT_EQ(r, zfcInvalidArgument);
  const std::string msg = zfcGetLastError(nullptr);
  EXPECT_NE(msg.find("ZIPFCOLL_MACHINE_MODEL='intra=fast'"), std::string::npos) << msg;
  EXPECT_EQ(comm_, nullptr);
}

// Opens a communicator with ZIPFCOLL_ROUTE set to `route` on this rank, then restores the
// run's setting.
zfcResult_t open_with_route(const char* route, zfcComm_t* comm) {
  const char* was = std::getenv("ZIPFCOLL_ROUTE");
  const std::string saved = was != nullptr ? was : "";
  setenv("ZIPFCOLL_ROUTE", route, 1);
  const zfcResult_t r = open_world_comm(comm, nullptr);
  if (was != nullptr) setenv("ZIPFCOLL_ROUTE", saved.c_str(), 1); else unsetenv("ZIPFCOLL_ROUTE");
  return r;
}

// A route set differently on the last rank fails every rank; one rank alone always agrees
// with itself, and any of the three settings opens it.
TEST_F(MachineModelTest, RoutesSetDifferentlyFailEveryRank) {
  if (world_size() == 1) {
    for (const char* route : {"auto", "direct", "forwarded"}) {
      EXPECT_EQ(open_with_route(route, &comm_), zfcSuccess) << route;
      EXPECT_EQ(zfcCommDestroy(comm_), zfcSuccess);
      comm_ = nullptr;
    }
    return;
  }
  const bool last = world_rank() == world_size() - 1;
  EXPECT_EQ(open_with_route(last ? "forwarded" : "direct", &comm_), zfcMismatch);
  const std::string msg = zfcGetLastError(nullptr);
  EXPECT_NE(msg.find("sets ZIPFCOLL_ROUTE to"), std::string::npos) << msg;
  EXPECT_EQ(comm_, nullptr);
}

TEST_F(MachineModelTest, AnUnknownRouteFailsEveryRank) {
  const int last = world_size() - 1;
  EXPECT_EQ(open_with_route(world_rank() == last ? "sideways" : "auto", &comm_),
            zfcInvalidArgument);
  const std::string msg = zfcGetLastError(nullptr);
  const std::string want = world_rank() == last
                               ? "ZIPFCOLL_ROUTE is \"sideways\""
                               : "rank " + std::to_string(last) + ": ZIPFCOLL_ROUTE is not";
  EXPECT_NE(msg.find(want), std::string::npos) << msg;
  EXPECT_EQ(comm_, nullptr);
}

}  // namespace
}  // namespace test
}  // namespace zfc

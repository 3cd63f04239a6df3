// Starting without MPI: the launcher's variables, the TCP meeting of the ranks with its
// deadlines, the client of torchrun's store (its errors; tests/torchrun meets through a real
// one), and zfcGetUniqueId / zfcCommInitRank.
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "bootstrap/launch_env.hpp"
#include "bootstrap/tcp_rendezvous.hpp"
#include "bootstrap/torch_store.hpp"
#include "bootstrap/unique_id.hpp"
#include "transport/ucx/ucx_transport.hpp"
#include "zipfcoll/zipfcoll.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace zfc {
namespace {

using Env = std::map<std::string, std::string>;

const char* lookup(const char* name, void* context) {
  const Env& env = *static_cast<const Env*>(context);
  auto it = env.find(name);
  return it == env.end() ? nullptr : it->second.c_str();
}

Status read(const Env& env, LaunchInfo* info) {
  return read_launch_env(lookup, const_cast<Env*>(&env), info);
}

TEST(LaunchEnv, TorchrunVariables) {
  LaunchInfo info;
  ASSERT_TRUE(read({{"RANK", "3"}, {"WORLD_SIZE", "8"}, {"LOCAL_RANK", "1"},
                    {"MASTER_ADDR", "node7"}, {"MASTER_PORT", "29500"}},
                   &info).ok());
  EXPECT_EQ(info.rank, 3);
  EXPECT_EQ(info.size, 8);
  EXPECT_EQ(info.local_rank, 1);
  EXPECT_EQ(info.master_addr, "node7");
  EXPECT_EQ(info.master_port, 29500);
}

TEST(LaunchEnv, PrefixedNamesWinAndMpirunFillsIn) {
  LaunchInfo info;
  ASSERT_TRUE(read({{"OMPI_COMM_WORLD_RANK", "2"}, {"OMPI_COMM_WORLD_SIZE", "4"},
                    {"RANK", "9"}, {"ZIPFCOLL_RANK", "1"}, {"MASTER_ADDR", "h"},
                    {"MASTER_PORT", "1234"}},
                   &info).ok());
  EXPECT_EQ(info.rank, 1);  // ZIPFCOLL_RANK over RANK over OMPI_COMM_WORLD_RANK
  EXPECT_EQ(info.size, 4);  // from mpirun
  EXPECT_EQ(info.local_rank, -1);
}

TEST(LaunchEnv, TorchrunsAgentStoreIsRead) {
  const Env base{{"RANK", "1"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "h"}, {"MASTER_PORT", "5"}};
  LaunchInfo info;
  ASSERT_TRUE(read(base, &info).ok());
  EXPECT_FALSE(info.agent_store);  // plain processes: rank 0 listens at MASTER_PORT
  Env env = base;
  env["TORCHELASTIC_USE_AGENT_STORE"] = "True";
  env["TORCHELASTIC_RUN_ID"] = "job7";
  env["TORCHELASTIC_RESTART_COUNT"] = "2";
  ASSERT_TRUE(read(env, &info).ok());
  EXPECT_TRUE(info.agent_store);
  EXPECT_EQ(info.run_id, "job7");
  EXPECT_EQ(info.restart_count, 2);
  env["TORCHELASTIC_USE_AGENT_STORE"] = "False";
  ASSERT_TRUE(read(env, &info).ok());
  EXPECT_FALSE(info.agent_store);
  // A meeting point of the caller's own, inside a torchrun launch: rank 0 listens there.
  const Env own_points[] = {{{"ZIPFCOLL_MASTER_PORT", "6000"}},
                            {{"ZIPFCOLL_MASTER_ADDR", "10.0.0.1"}}};
  for (const Env& own : own_points) {
    Env mine = env;
    mine["TORCHELASTIC_USE_AGENT_STORE"] = "True";
    mine.insert(own.begin(), own.end());
    ASSERT_TRUE(read(mine, &info).ok());
    EXPECT_FALSE(info.agent_store) << own.begin()->first;
  }
  env["TORCHELASTIC_USE_AGENT_STORE"] = "True";
  env["TORCHELASTIC_RESTART_COUNT"] = "-1";
  const Status s = read(env, &info);
  EXPECT_EQ(s.code(), zfcInvalidUsage);
  EXPECT_NE(s.message().find("TORCHELASTIC_RESTART_COUNT='-1'"), std::string::npos)
      << s.message();
}

TEST(LaunchEnv, MissingOrBadVariablesAreNamed) {
  LaunchInfo info;
  Status s = read({{"WORLD_SIZE", "2"}, {"MASTER_ADDR", "h"}, {"MASTER_PORT", "1"}}, &info);
  EXPECT_EQ(s.code(), zfcInvalidUsage);
  EXPECT_NE(s.message().find("RANK is not set"), std::string::npos) << s.message();
  s = read({{"RANK", "2"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "h"}, {"MASTER_PORT", "1"}},
           &info);
  EXPECT_NE(s.message().find("RANK='2' is not an integer in [0, 1]"), std::string::npos)
      << s.message();
  s = read({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "h"}, {"MASTER_PORT", "http"}},
           &info);
  EXPECT_NE(s.message().find("MASTER_PORT='http'"), std::string::npos) << s.message();
  s = read({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_PORT", "80"}}, &info);
  EXPECT_NE(s.message().find("MASTER_ADDR is not set"), std::string::npos) << s.message();
}

// The variables srun sets for task 5 of 8 on its second node (srun -N 2 -n 8).
Env srun_task5() {
  return {{"SLURM_PROCID", "5"}, {"SLURM_NTASKS", "8"}, {"SLURM_LOCALID", "1"},
          {"SLURM_STEP_NODELIST", "gpu[007-008]"}, {"SLURM_NODELIST", "gpu[001-016]"},
          {"SLURM_JOB_ID", "41234"}, {"SLURM_STEP_ID", "0"}};
}

TEST(LaunchEnv, SrunsTasksMeetOnTheStepsFirstNode) {
  LaunchInfo info;
  ASSERT_TRUE(read(srun_task5(), &info).ok());
  EXPECT_EQ(info.rank, 5);
  EXPECT_EQ(info.size, 8);
  EXPECT_EQ(info.local_rank, 1);
  EXPECT_EQ(info.launcher, "srun");
  EXPECT_EQ(info.master_addr, "gpu007");
  EXPECT_FALSE(info.agent_store);
  // Every task of the step derives the same port from the job and step ids, below the
  // ephemeral ports; another step of the job gets its own.
  Env other = srun_task5();
  other["SLURM_PROCID"] = "0";
  other["SLURM_LOCALID"] = "0";
  LaunchInfo first;
  ASSERT_TRUE(read(other, &first).ok());
  EXPECT_EQ(first.master_port, info.master_port);
  EXPECT_GE(info.master_port, 10000);
  EXPECT_LT(info.master_port, 30000);
  other["SLURM_STEP_ID"] = "1";
  ASSERT_TRUE(read(other, &first).ok());
  EXPECT_NE(first.master_port, info.master_port);
  // An explicit meeting point wins, and without a step's list the job's is used.
  Env own = srun_task5();
  own["MASTER_ADDR"] = "login1";
  own["ZIPFCOLL_MASTER_PORT"] = "29400";
  ASSERT_TRUE(read(own, &info).ok());
  EXPECT_EQ(info.master_addr, "login1");
  EXPECT_EQ(info.master_port, 29400);
  Env job_list = srun_task5();
  job_list.erase("SLURM_STEP_NODELIST");
  ASSERT_TRUE(read(job_list, &info).ok());
  EXPECT_EQ(info.master_addr, "gpu001");
}

TEST(LaunchEnv, SrunWithPmixAndABatchScriptAreToldApart) {
  // srun --mpi=pmix: PMIx's rank too, but Slurm's node list says where to meet.
  Env pmix = srun_task5();
  pmix["PMIX_RANK"] = "5";
  pmix["PMIX_NAMESPACE"] = "slurm.pmix.41234.0";
  LaunchInfo info;
  ASSERT_TRUE(read(pmix, &info).ok());
  EXPECT_EQ(info.launcher, "srun");
  EXPECT_EQ(info.master_addr, "gpu007");
  // A batch script's own variables (no job step): not a launch of 8 tasks.
  Env batch = srun_task5();
  batch.erase("SLURM_STEP_ID");
  batch["SLURM_PROCID"] = "0";
  const Status s = read(batch, &info);
  EXPECT_EQ(s.code(), zfcInvalidUsage);
  EXPECT_NE(s.message().find("WORLD_SIZE is not set"), std::string::npos) << s.message();
}

TEST(LaunchEnv, SlurmHostListsGiveTheirFirstHost) {
  EXPECT_EQ(first_slurm_host("node7"), "node7");
  EXPECT_EQ(first_slurm_host("a1,b2"), "a1");
  EXPECT_EQ(first_slurm_host("node[007-012,020]"), "node007");
  EXPECT_EQ(first_slurm_host("node[3,5-6],gpu1"), "node3");
  EXPECT_EQ(first_slurm_host("rack[2-3]-node[01-04]"), "rack2-node01");
  EXPECT_EQ(first_slurm_host("x[1-2"), "x1");  // unterminated: what it can read
}

// The variables Open MPI 4.1's mpirun sets (mpirun -np 3 on one host).
Env mpirun_rank2() {
  return {{"OMPI_COMM_WORLD_RANK", "2"}, {"OMPI_COMM_WORLD_SIZE", "3"},
          {"OMPI_COMM_WORLD_LOCAL_RANK", "2"}, {"OMPI_COMM_WORLD_LOCAL_SIZE", "3"},
          {"OMPI_MCA_ess_base_jobid", "903806977"}, {"PMIX_NAMESPACE", "903806977"},
          {"PMIX_RANK", "2"}};
}

TEST(LaunchEnv, MpirunsRanksMeetOnTheirOneHost) {
  LaunchInfo info, rank0;
  ASSERT_TRUE(read(mpirun_rank2(), &info).ok());
  EXPECT_EQ(info.rank, 2);
  EXPECT_EQ(info.size, 3);
  EXPECT_EQ(info.local_rank, 2);
  EXPECT_EQ(info.launcher, "mpirun");
  EXPECT_EQ(info.master_addr, "127.0.0.1");
  Env env = mpirun_rank2();
  env["OMPI_COMM_WORLD_RANK"] = env["PMIX_RANK"] = env["OMPI_COMM_WORLD_LOCAL_RANK"] = "0";
  ASSERT_TRUE(read(env, &rank0).ok());
  EXPECT_EQ(rank0.master_port, info.master_port);
  // Across hosts mpirun does not say where rank 0 runs: the address must be given.
  env["OMPI_COMM_WORLD_LOCAL_SIZE"] = "2";
  Status s = read(env, &info);
  EXPECT_EQ(s.code(), zfcInvalidUsage);
  EXPECT_NE(s.message().find("MASTER_ADDR is not set"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("several hosts"), std::string::npos) << s.message();
  env["ZIPFCOLL_MASTER_ADDR"] = "node1";
  ASSERT_TRUE(read(env, &info).ok());
  EXPECT_EQ(info.master_addr, "node1");
  // mpirun inside a Slurm allocation: the ranks are Open MPI's, not the batch step's.
  env = mpirun_rank2();
  Env batch = srun_task5();
  env.insert(batch.begin(), batch.end());
  ASSERT_TRUE(read(env, &info).ok());
  EXPECT_EQ(info.rank, 2);
  EXPECT_EQ(info.size, 3);
  EXPECT_EQ(info.launcher, "mpirun");
  EXPECT_EQ(info.master_addr, "127.0.0.1");
}

TEST(LaunchEnv, PmixWithoutASizeOrJobIsNamed) {
  LaunchInfo info;
  Status s = read({{"PMIX_RANK", "1"}, {"PMIX_NAMESPACE", "prterun-h-1@1"}}, &info);
  EXPECT_EQ(s.code(), zfcInvalidUsage);
  EXPECT_NE(s.message().find("WORLD_SIZE is not set"), std::string::npos) << s.message();
  ASSERT_TRUE(read({{"PMIX_RANK", "1"}, {"PMIX_NAMESPACE", "prterun-h-1@1"},
                    {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "h"}},
                   &info).ok());
  EXPECT_EQ(info.launcher, "pmix");
  EXPECT_GE(info.master_port, 10000);
  s = read({{"PMIX_RANK", "1"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "h"}}, &info);
  EXPECT_NE(s.message().find("MASTER_PORT is not set and pmix names no job"),
            std::string::npos) << s.message();
}

int free_port() {
  int fd = -1, port = 0;
  EXPECT_TRUE(listen_on(0, &fd, &port).ok());
  close(fd);
  return port;
}

// A loopback port that refuses connections for as long as `held` lives: bound, so no other
// program can listen there, and not listening.
struct RefusingPort {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  int port = 0;
  RefusingPort() {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t n = sizeof a;
    EXPECT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    EXPECT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&a), &n), 0);
    port = ntohs(a.sin_port);
  }
  ~RefusingPort() { close(fd); }
};

TEST(Rendezvous, RanksMeetAndExchangeBlocks) {
  const int size = 3, port = free_port();
  std::vector<std::vector<std::string>> got(size);
  std::vector<Status> status(size);
  std::vector<std::thread> ranks;
  for (int r = 0; r < size; ++r) {
    ranks.emplace_back([&, r] {
      std::unique_ptr<Rendezvous> m;
      status[r] = Rendezvous::create("127.0.0.1", port, r, size, 10000, &m);
      if (status[r].ok()) status[r] = m->allgather(std::string(r + 1, 'a' + r), &got[r]);
    });
  }
  for (std::thread& t : ranks) t.join();
  for (int r = 0; r < size; ++r) {
    ASSERT_TRUE(status[r].ok()) << r << ": " << status[r].message();
    EXPECT_EQ(got[r], (std::vector<std::string>{"a", "bb", "ccc"}));
  }
}

TEST(Rendezvous, AbsentRanksAndClosedPortsTimeOut) {
  const int port = free_port();
  std::unique_ptr<Rendezvous> m;
  Status s = Rendezvous::create("127.0.0.1", port, 0, 3, 300, &m);
  EXPECT_EQ(s.code(), zfcTimeout);
  EXPECT_NE(s.message().find("1 of 3 ranks arrived within 300 ms (missing: 1, 2)"),
            std::string::npos)
      << s.message();
  const RefusingPort refusing;
  s = Rendezvous::create("127.0.0.1", refusing.port, 2, 3, 300, &m);
  EXPECT_EQ(s.code(), zfcTimeout);
  EXPECT_NE(s.message().find("rank 2: could not reach rank 0"), std::string::npos)
      << s.message();
}

TEST(Rendezvous, APortInUseIsNamed) {
  int fd = -1, port = 0;
  ASSERT_TRUE(listen_on(0, &fd, &port).ok());
  std::unique_ptr<Rendezvous> m;
  const Status s = Rendezvous::create("127.0.0.1", port, 0, 2, 300, &m);
  close(fd);
  EXPECT_EQ(s.code(), zfcSystemError);
  EXPECT_NE(s.message().find("port " + std::to_string(port)), std::string::npos) << s.message();
}

TEST(TorchStore, NoStoreAndAnotherServerAreNamed) {
  std::unique_ptr<TorchStore> store;
  const RefusingPort refusing;
  Status s = TorchStore::connect("127.0.0.1", refusing.port, 300, &store);
  EXPECT_EQ(s.code(), zfcTimeout);
  EXPECT_NE(s.message().find("torchrun's store (MASTER_ADDR)"), std::string::npos)
      << s.message();
  // A port that accepts but does not answer the ping (here: nobody accepts, the kernel's
  // backlog does), as any program other than torch's store would.
  int fd = -1, port = 0;
  ASSERT_TRUE(listen_on(0, &fd, &port).ok());
  s = TorchStore::connect("127.0.0.1", port, 300, &store);
  close(fd);
  EXPECT_EQ(s.code(), zfcInvalidUsage);
  EXPECT_NE(s.message().find("is not a torch.distributed TCPStore"), std::string::npos)
      << s.message();
  EXPECT_EQ(store, nullptr);
}

TEST(Rendezvous, TwoRanksClaimingOneRankAreRefused) {
  // Rank 0's port is listening before anyone connects, and the first rank 1 has sent its
  // hello (its create returned) before the second connects: the kernel queues the two
  // connections in that order, so rank 0 reads the first claim, then refuses the second.
  int listener = -1, port = 0;
  ASSERT_TRUE(listen_on(0, &listener, &port).ok());
  Status s0;
  std::thread root([&] {
    std::unique_ptr<Rendezvous> m;
    s0 = Rendezvous::create_with_listener(listener, "127.0.0.1", port, 0, 3, 3000, &m);
  });
  std::unique_ptr<Rendezvous> first, second;
  const Status s1 = Rendezvous::create("127.0.0.1", port, 1, 3, 3000, &first);
  ASSERT_TRUE(s1.ok()) << s1.message();
  const Status s2 = Rendezvous::create("127.0.0.1", port, 1, 3, 3000, &second);
  root.join();
  EXPECT_TRUE(s2.ok()) << s2.message();  // its hello was sent; rank 0 is the one to refuse
  EXPECT_EQ(s0.code(), zfcInvalidUsage);
  EXPECT_NE(s0.message().find("rank 1 of 3"), std::string::npos) << s0.message();
  EXPECT_NE(s0.message().find("already arrived"), std::string::npos) << s0.message();
}

TEST(UniqueId, RoundTripsAndHandsItsListenerOverOnce) {
  zfcUniqueId id;
  ASSERT_EQ(zfcGetUniqueId(&id), zfcSuccess);
  std::string addr;
  int port = 0;
  ASSERT_TRUE(parse_unique_id(id.internal, &addr, &port).ok());
  EXPECT_FALSE(addr.empty());
  const int fd = take_listener(port);
  EXPECT_GE(fd, 0);
  EXPECT_EQ(take_listener(port), -1);
  close(fd);
  zfcUniqueId junk{};
  EXPECT_EQ(parse_unique_id(junk.internal, &addr, &port).code(), zfcInvalidArgument);
  zfcComm_t comm = nullptr;
  EXPECT_EQ(zfcCommInitRank(&comm, 2, junk, 0, nullptr), zfcInvalidArgument);
  EXPECT_EQ(zfcCommInitRank(&comm, 2, id, 2, nullptr), zfcInvalidArgument);
  EXPECT_EQ(comm, nullptr);
}

TEST(UniqueId, ThreadsFormACommunicatorOverUcx) {
  if (!ucx_transport_available()) GTEST_SKIP() << "this build has no UCX transport";
  zfcUniqueId id;
  ASSERT_EQ(zfcGetUniqueId(&id), zfcSuccess);
  const int size = 2;
  std::vector<zfcResult_t> result(size, zfcInternalError);
  std::vector<float> sums(size, -1);
  std::vector<std::thread> ranks;
  for (int r = 0; r < size; ++r) {
    ranks.emplace_back([&, r] {
      zfcComm_t comm = nullptr;
      zfcConfig_t cfg = ZFC_CONFIG_INITIALIZER;
      cfg.timeout_ms = 20000;
      result[r] = zfcCommInitRank(&comm, size, id, r, &cfg);
      if (result[r] != zfcSuccess) return;
      const float mine = static_cast<float>(r + 1);
      result[r] = zfcAllReduce(comm, &mine, &sums[r], 1, zfcFloat32, nullptr, nullptr, nullptr);
      zfcCommDestroy(comm);
    });
  }
  for (std::thread& t : ranks) t.join();
  for (int r = 0; r < size; ++r) {
    EXPECT_EQ(result[r], zfcSuccess) << r;
    EXPECT_EQ(sums[r], 3.0f);
  }
  // MPI cannot bound its waits: a timeout with it is refused (tests/mpi cover MPI itself).
  zfcConfig_t cfg = ZFC_CONFIG_INITIALIZER;
  cfg.transport = zfcTransportMpi;
  zfcComm_t comm = nullptr;
  EXPECT_EQ(zfcCommInitRank(&comm, 1, id, 0, &cfg), zfcUnsupported);
}

}  // namespace
}  // namespace zfc

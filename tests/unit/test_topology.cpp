// The machine topology and a rank's share of it.
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "topo/topology.hpp"

namespace zfc {
namespace {

TEST(Topology, CoresAreSharedEvenlyOrRoundRobin) {
  EXPECT_EQ(share_cores(8, 0, 3), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(share_cores(8, 1, 3), (std::vector<int>{3, 4, 5}));
  EXPECT_EQ(share_cores(8, 2, 3), (std::vector<int>{6, 7}));
  EXPECT_EQ(share_cores(4, 0, 1), (std::vector<int>{0, 1, 2, 3}));
  // More ranks than cores: one shared core each.
  EXPECT_EQ(share_cores(2, 0, 3), (std::vector<int>{0}));
  EXPECT_EQ(share_cores(2, 1, 3), (std::vector<int>{1}));
  EXPECT_EQ(share_cores(2, 2, 3), (std::vector<int>{0}));
  EXPECT_TRUE(share_cores(0, 0, 1).empty());
  EXPECT_TRUE(share_cores(4, 3, 3).empty());
  // Every core is given out exactly once when ranks <= cores.
  for (int cores = 1; cores <= 17; ++cores) {
    for (int ranks = 1; ranks <= cores; ++ranks) {
      std::vector<int> all;
      for (int r = 0; r < ranks; ++r) {
        const std::vector<int> mine = share_cores(cores, r, ranks);
        EXPECT_FALSE(mine.empty());
        all.insert(all.end(), mine.begin(), mine.end());
      }
      ASSERT_EQ(all.size(), static_cast<size_t>(cores));
      for (int c = 0; c < cores; ++c) ASSERT_EQ(all[static_cast<size_t>(c)], c);
    }
  }
}

// What a child process computed, read back through a pipe: its ids, or, when it could not
// do what it was asked, its errno (ok false).
struct ChildIds {
  bool ok = false;
  int error = 0;
  std::vector<uint64_t> ids;
};

// Forks a child that runs `body` (which writes uint64_t ids to the pipe, or a failed
// call's errno as the single value with the top bit set) and collects what it wrote.
template <class Body>
ChildIds run_child(Body body) {
  ChildIds out;
  int fds[2];
  if (pipe(fds) != 0) return out;
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    body(fds[1]);
    _exit(0);
  }
  close(fds[1]);
  uint64_t v = 0;
  while (read(fds[0], &v, sizeof v) == static_cast<ssize_t>(sizeof v)) out.ids.push_back(v);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  const uint64_t failed = uint64_t{1} << 63;
  if (out.ids.size() == 1 && (out.ids[0] & failed) != 0) {
    out.error = static_cast<int>(out.ids[0] & ~failed);
    out.ids.clear();
    return out;
  }
  out.ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  return out;
}

void write_id(int fd, uint64_t v) {
  if (write(fd, &v, sizeof v) != static_cast<ssize_t>(sizeof v)) _exit(1);
}

// Every process of one machine computes the same id (the communicators group ranks into
// nodes by it), and it does not vary between calls.
TEST(Topology, HostIdIsTheSameInEveryProcessOfTheHost) {
  const uint64_t mine = host_id();
  EXPECT_NE(mine, 0u);
  const ChildIds child = run_child([](int fd) {
    write_id(fd, host_id());
    write_id(fd, host_id());
  });
  ASSERT_TRUE(child.ok);
  ASSERT_EQ(child.ids.size(), 2u);
  EXPECT_EQ(child.ids[0], mine);
  EXPECT_EQ(child.ids[1], mine);
}

// Two hosts are two ids: in a UTS namespace of its own a child names its host twice, and
// each name gives its own id, neither this host's; the first name again gives the first id.
TEST(Topology, HostIdFollowsTheHostName) {
  const uint64_t failed = uint64_t{1} << 63;
  const ChildIds child = run_child([failed](int fd) {
    if (unshare(CLONE_NEWUTS) != 0) {
      write_id(fd, failed | static_cast<uint64_t>(errno));
      return;
    }
    for (const char* name : {"zfc-topology-a", "zfc-topology-b", "zfc-topology-a"}) {
      if (sethostname(name, std::strlen(name)) != 0) {
        write_id(fd, failed | static_cast<uint64_t>(errno));
        return;
      }
      write_id(fd, host_id());
    }
  });
  if (!child.ok && (child.error == EPERM || child.error == EINVAL)) {
    GTEST_SKIP() << "no UTS namespace here (" << std::strerror(child.error)
                 << "): needs root or user namespaces";
  }
  ASSERT_TRUE(child.ok) << std::strerror(child.error);
  ASSERT_EQ(child.ids.size(), 3u);
  EXPECT_NE(child.ids[0], child.ids[1]);
  EXPECT_EQ(child.ids[0], child.ids[2]);
  EXPECT_NE(child.ids[0], host_id());
  EXPECT_NE(child.ids[1], host_id());
}

TEST(Topology, ThisMachineIsDescribed) {
  const Topology t = discover_topology(1, 4, false);
  EXPECT_GE(t.cores, 1);
  EXPECT_GE(t.hardware_threads, t.cores);
  EXPECT_GE(t.numa_nodes, 1);
  EXPECT_EQ(t.rank_cores, share_cores(t.cores, 1, 4));
  EXPECT_FALSE(t.rank_numa.empty());
  EXPECT_FALSE(t.bound);
  EXPECT_NE(t.summary.find("local rank 1 of 4"), std::string::npos) << t.summary;
  EXPECT_NE(t.summary.find(hwloc_available() ? "(hwloc)" : "no hwloc"), std::string::npos);
}

}  // namespace
}  // namespace zfc

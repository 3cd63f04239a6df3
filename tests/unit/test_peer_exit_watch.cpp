// The watch a transport keeps on the processes of its peers on this host: a child process
// stands in for a peer.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>

#include "transport/peer_exit_watch.hpp"

namespace zfc {
namespace {

TEST(PeerExitWatch, IdentityIsThisProcessAndMatchesItself) {
  const HostIdentity me = this_host_identity();
  EXPECT_EQ(me.pid, static_cast<int32_t>(getpid()));
  ASSERT_EQ(me.can_watch, 1) << "this kernel cannot open pidfds (Linux 5.3 or later can)";
  EXPECT_TRUE(same_watchable_host(me, me));
}

TEST(PeerExitWatch, AnotherBootOrPidNamespaceIsNotWatchable) {
  const HostIdentity me = this_host_identity();
  HostIdentity other = me;
  other.boot_id[0] = me.boot_id[0] == 'x' ? 'y' : 'x';
  EXPECT_FALSE(same_watchable_host(me, other));
  EXPECT_FALSE(same_watchable_host(other, me));
  other = me;
  other.pid_ns += 1;
  EXPECT_FALSE(same_watchable_host(me, other));
  EXPECT_FALSE(same_watchable_host(other, me));
  other = me;
  other.can_watch = 0;
  EXPECT_FALSE(same_watchable_host(me, other));
  EXPECT_FALSE(same_watchable_host(other, me));
}

TEST(PeerExitWatch, ReportsAnExitedPeerOnce) {
  int go[2];
  ASSERT_EQ(pipe(go), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {  // waits for the word, then exits without a goodbye
    char c = 0;
    close(go[1]);
    if (read(go[0], &c, 1) < 0) _exit(2);
    _exit(0);
  }
  close(go[0]);
  PeerExitWatch watch;
  ASSERT_TRUE(watch.watch(5, static_cast<int32_t>(child)));
  EXPECT_FALSE(watch.empty());
  EXPECT_EQ(watch.wait(-1, 0), -1) << "a live peer is not reported";
  ASSERT_EQ(write(go[1], "x", 1), 1);
  // Reported within one wait, however long the wait would otherwise be.
  EXPECT_EQ(watch.wait(-1, 60000), 5);
  EXPECT_TRUE(watch.empty());
  EXPECT_EQ(watch.wait(-1, 0), -1) << "an exited peer is reported once";
  close(go[1]);
  int status = 0;
  waitpid(child, &status, 0);
}

TEST(PeerExitWatch, AGoneProcessCannotBeWatched) {
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) _exit(0);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);  // reaped: its pid names nothing now
  PeerExitWatch watch;
  EXPECT_FALSE(watch.watch(1, static_cast<int32_t>(child)));
  EXPECT_TRUE(watch.empty());
}

}  // namespace
}  // namespace zfc

// Watching the exit of peers that run on this host, for transports whose fast paths cannot
// report a failed peer themselves (UCX's shared-memory transports: a rank that dies leaves
// its peers waiting on a memory segment). A process exit is seen through a pidfd, which
// becomes readable when the process ends, so a waiter learns of it within one sleep.
#pragma once

#include <poll.h>

#include <cstdint>
#include <vector>

namespace zfc {

// Who a process is on its host, exchanged between ranks: two processes can watch each
// other's exit when they share the kernel (the boot id) and the pid namespace (a pid means
// the same process to both) and both can open a pidfd.
struct HostIdentity {
  char boot_id[40];   // /proc/sys/kernel/random/boot_id, NUL-terminated; empty if unknown
  uint64_t pid_ns;    // the inode of /proc/self/ns/pid; 0 if unknown
  int32_t pid;
  int32_t can_watch;  // 1 when this process can open pidfds
};

// This process's identity.
HostIdentity this_host_identity();

// Whether `a` and `b` can watch each other's exit; the same answer on both sides.
bool same_watchable_host(const HostIdentity& a, const HostIdentity& b);

// The pidfds of the watched peers. Not thread-safe: used under the transport's own
// serialisation, as the worker it sits beside.
class PeerExitWatch {
 public:
  PeerExitWatch() = default;
  PeerExitWatch(const PeerExitWatch&) = delete;
  PeerExitWatch& operator=(const PeerExitWatch&) = delete;
  ~PeerExitWatch();

  // Starts watching `peer` (a rank) with process id `pid`; false when no pidfd can be opened.
  bool watch(int peer, int32_t pid);
  bool empty() const { return fds_.empty(); }

  // Sleeps at most timeout_ms until `wake_fd` (ignored when < 0) is readable or a watched
  // peer has exited; returns that peer's rank (the lowest, once) or -1. timeout_ms 0 only
  // looks. Each exited peer is reported once and is no longer watched.
  int wait(int wake_fd, int timeout_ms);

 private:
  struct Watched {
    int peer;
    int fd;
  };
  std::vector<Watched> fds_;
  std::vector<pollfd> polls_ = std::vector<pollfd>(1);  // sized in watch(): wait() never allocates
};

}  // namespace zfc

#include "transport/peer_exit_watch.hpp"

#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

namespace zfc {
namespace {

// The system call itself: glibc's wrapper is newer (2.36) than the kernels that have it (5.3).
int open_pidfd(int32_t pid) { return static_cast<int>(syscall(SYS_pidfd_open, pid, 0)); }

}  // namespace

HostIdentity this_host_identity() {
  HostIdentity id{};
  if (FILE* f = std::fopen("/proc/sys/kernel/random/boot_id", "r")) {
    if (std::fgets(id.boot_id, sizeof id.boot_id, f) == nullptr) id.boot_id[0] = '\0';
    std::fclose(f);
    id.boot_id[std::strcspn(id.boot_id, "\n")] = '\0';
  }
  struct stat ns {};
  if (stat("/proc/self/ns/pid", &ns) == 0) id.pid_ns = static_cast<uint64_t>(ns.st_ino);
  id.pid = static_cast<int32_t>(getpid());
  // A process that cannot open a pidfd of itself (an old kernel, a seccomp filter) cannot
  // open one of a peer either; saying so keeps the two sides' answers equal.
  const int self = open_pidfd(getpid());
  id.can_watch = self >= 0 ? 1 : 0;
  if (self >= 0) close(self);
  return id;
}

bool same_watchable_host(const HostIdentity& a, const HostIdentity& b) {
  return a.can_watch == 1 && b.can_watch == 1 && a.boot_id[0] != '\0' && a.pid_ns != 0 &&
         std::strncmp(a.boot_id, b.boot_id, sizeof a.boot_id) == 0 && a.pid_ns == b.pid_ns;
}

PeerExitWatch::~PeerExitWatch() {
  for (const Watched& w : fds_) close(w.fd);
}

bool PeerExitWatch::watch(int peer, int32_t pid) {
  const int fd = open_pidfd(pid);
  if (fd < 0) return false;
  fds_.push_back(Watched{peer, fd});
  polls_.resize(fds_.size() + 1);
  return true;
}

int PeerExitWatch::wait(int wake_fd, int timeout_ms) {
  size_t n = 0;
  if (wake_fd >= 0) polls_[n++] = pollfd{wake_fd, POLLIN, 0};
  const size_t first = n;
  for (const Watched& w : fds_) polls_[n++] = pollfd{w.fd, POLLIN, 0};
  if (n == 0) return -1;
  if (poll(polls_.data(), n, timeout_ms) <= 0) return -1;
  for (size_t i = first; i < n; ++i) {
    if (polls_[i].revents == 0) continue;
    const size_t at = i - first;
    const int peer = fds_[at].peer;
    close(fds_[at].fd);
    fds_.erase(fds_.begin() + static_cast<long>(at));  // no allocation: a shrink
    return peer;
  }
  return -1;
}

}  // namespace zfc

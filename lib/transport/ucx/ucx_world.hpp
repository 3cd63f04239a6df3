// What every communicator split from one UCX transport's init shares: the UCP context, the
// worker and an endpoint to every rank of the first communicator, and how a dead peer is
// learnt of.
//
// A peer on another host (or one whose exit this process cannot watch) gets an endpoint with
// UCX's peer error handling, which restricts it to transports that can report a failed
// peer: TCP, InfiniBand. A peer on this host whose exit can be watched (same kernel, same
// pid namespace: peer_exit_watch.hpp) gets one without, so that UCX may use shared memory
// (sysv, posix, cma), about twice TCP loopback's speed for large messages; its exit is seen
// through its pidfd instead, by the same idle wait that sleeps on the worker.
#pragma once

#include <ucp/api/ucp.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "transport/peer_exit_watch.hpp"
#include "transport/transport.hpp"

namespace zfc {

class UcxWorld {
 public:
  ~UcxWorld();

  // Collective over `bootstrap`'s ranks: context, worker, addresses and identities
  // exchanged, an endpoint to every peer.
  Status init(Transport& bootstrap, int timeout_ms);

  int size() const { return static_cast<int>(eps_.size()); }
  int rank() const { return rank_; }
  ucp_worker_h worker() const { return worker_; }

  // Progresses the worker once; *idle counts the calls in a row that found nothing to do.
  void progress(unsigned* idle);

  ucp_ep_h ep(int world_rank) const { return eps_[static_cast<size_t>(world_rank)]; }
  int timeout_ms() const { return timeout_ms_; }
  // Why a failed rank is taken for dead.
  const std::string& failure(int world_rank) const {
    return failures_[static_cast<size_t>(world_rank)];
  }
  bool peer_failed(int world_rank) const { return failed_[static_cast<size_t>(world_rank)] != 0; }
  void abandon() { abandoned_ = true; }
  // Communicator ids of this process: the first communicator has 1, each split takes the
  // next ones agreed among its members.
  uint32_t next_comm_id() const { return next_comm_id_; }
  void use_comm_ids_below(uint32_t next) { next_comm_id_ = std::max(next_comm_id_, next); }

  static Status check(ucs_status_t s, const char* what);

 private:
  Status connect(size_t r, const void* address, bool watched);
  void sleep_until_event(int timeout_ms);
  void mark_failed(size_t r, const std::string& why);
  static void on_peer_error(void* arg, ucp_ep_h ep, ucs_status_t status);

  ucp_context_h context_ = nullptr;
  ucp_worker_h worker_ = nullptr;
  int efd_ = -1;  // the worker's event descriptor, or -1
  std::vector<ucp_ep_h> eps_;
  std::vector<char> watched_;   // per rank: its exit is watched, its endpoint has no error mode
  std::vector<int32_t> pids_;   // per rank: its process id (for messages)
  PeerExitWatch exits_;
  std::vector<void*> closing_;  // the destructor's close requests (reserved in init)
  std::vector<char> failed_;    // per rank: found dead (UCX's report or its exit)
  std::vector<std::string> failures_;  // per rank: why, once failed
  int rank_ = 0;
  int timeout_ms_ = 0;
  bool abandoned_ = false;
  uint32_t next_comm_id_ = 2;
};

}  // namespace zfc

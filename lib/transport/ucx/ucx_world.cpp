#include "transport/ucx/ucx_world.hpp"

#include <poll.h>
#include <sched.h>

#include <chrono>
#include <cstring>

namespace zfc {
namespace {

using Clock = std::chrono::steady_clock;

}  // namespace

UcxWorld::~UcxWorld() {
  // A normal close flushes what this rank sent, so that a peer still waiting for it gets
  // it; an abandoned communicator just drops its endpoints. A flush to a peer that does
  // not answer gives up after kFlushMs. Every close is started before any is waited for:
  // the flushes to all peers then take one round trip together, not one each in turn.
  constexpr int kFlushMs = 10000;
  const Clock::time_point deadline = Clock::now() + std::chrono::milliseconds(kFlushMs);
  for (size_t r = 0; r < eps_.size(); ++r) {
    if (eps_[r] == nullptr) continue;
    ucp_request_param_t p{};
    p.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
    // A forced close needs peer error handling at both ends (ucp.h): a watched peer's
    // endpoint is closed normally, which for shared memory waits for nothing of the peer's.
    p.flags = abandoned_ && watched_[r] == 0 ? UCP_EP_CLOSE_FLAG_FORCE : 0;
    ucs_status_ptr_t req = ucp_ep_close_nbx(eps_[r], &p);
    if (UCS_PTR_IS_PTR(req)) closing_.push_back(req);
  }
  for (void* req : closing_) {
    while (ucp_request_check_status(req) == UCS_INPROGRESS && Clock::now() < deadline) {
      ucp_worker_progress(worker_);
    }
    ucp_request_free(req);
  }
  if (worker_ != nullptr) ucp_worker_destroy(worker_);
  if (context_ != nullptr) ucp_cleanup(context_);
}

Status UcxWorld::check(ucs_status_t s, const char* what) {
  if (s == UCS_OK) return Status::Ok();
  return error(zfcTransportError, "%s failed: %s", what, ucs_status_string(s));
}

Status UcxWorld::init(Transport& bootstrap, int timeout_ms) {
  timeout_ms_ = timeout_ms;
  rank_ = bootstrap.rank();
  ucp_config_t* config = nullptr;
  ZFC_RETURN_IF_ERROR(check(ucp_config_read(nullptr, nullptr, &config), "ucp_config_read"));
  ucp_params_t params{};
  params.field_mask = UCP_PARAM_FIELD_FEATURES;
  params.features = UCP_FEATURE_TAG | UCP_FEATURE_WAKEUP;
  const ucs_status_t s = ucp_init(&params, config, &context_);
  ucp_config_release(config);
  ZFC_RETURN_IF_ERROR(check(s, "ucp_init"));
  ucp_worker_params_t wp{};
  wp.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
  // Serialized, not single: a communicator's calls may come from any thread, one at a time
  // (zipfcoll.torch's hook runs them on a worker thread while the trainer's own calls come
  // from its main thread). The library never makes two calls on one communicator at once,
  // so the worker needs no lock of its own.
  wp.thread_mode = UCS_THREAD_MODE_SERIALIZED;
  ZFC_RETURN_IF_ERROR(check(ucp_worker_create(context_, &wp, &worker_), "ucp_worker_create"));
  // Without an event descriptor (a transport that cannot wake a sleeper) idle waits yield.
  if (ucp_worker_get_efd(worker_, &efd_) != UCS_OK) efd_ = -1;
  ucp_address_t* address = nullptr;
  size_t length = 0;
  ZFC_RETURN_IF_ERROR(
      check(ucp_worker_get_address(worker_, &address, &length), "ucp_worker_get_address"));
  // Each rank's block: its identity on its host, then its worker's address.
  const HostIdentity me = this_host_identity();
  std::string mine(reinterpret_cast<const char*>(&me), sizeof me);
  mine.append(reinterpret_cast<const char*>(address), length);
  ucp_worker_release_address(worker_, address);
  const size_t n = static_cast<size_t>(bootstrap.size());
  std::vector<size_t> lengths(n), at(n);
  std::vector<char> all;
  ZFC_RETURN_IF_ERROR(bootstrap.allgather_blocks(
      mine.data(), mine.size(), lengths.data(), at.data(), [&all](size_t total) {
        all.resize(total);
        return all.data();
      }));
  eps_.assign(n, nullptr);
  watched_.assign(n, 0);
  pids_.assign(n, 0);
  closing_.reserve(n);  // so that the destructor's closes allocate nothing
  failed_.assign(n, 0);
  failures_.assign(n, std::string());
  for (size_t r = 0; r < n; ++r) {
    if (static_cast<int>(r) == rank_) continue;
    if (lengths[r] <= sizeof(HostIdentity)) {
      return error(zfcTransportError, "rank %d: rank %zu sent a UCX address of %zu bytes, too "
                   "short to hold its host identity", rank_, r, lengths[r]);
    }
    HostIdentity peer{};
    std::memcpy(&peer, all.data() + at[r], sizeof peer);
    pids_[r] = peer.pid;
    // Both sides decide alike (same_watchable_host is symmetric); a pidfd that still cannot
    // be opened means the peer is already gone.
    bool watched = same_watchable_host(me, peer);
    if (watched && !exits_.watch(static_cast<int>(r), peer.pid)) {
      return error(zfcRemoteError, "rank %d: rank %zu (process %d on this host) exited while "
                   "the UCX transport connected", rank_, r, peer.pid);
    }
    ZFC_RETURN_IF_ERROR(connect(r, all.data() + at[r] + sizeof peer, watched));
  }
  return Status::Ok();
}

Status UcxWorld::connect(size_t r, const void* address, bool watched) {
  ucp_ep_params_t ep{};
  ep.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS;
  ep.address = static_cast<const ucp_address_t*>(address);
  if (!watched) {
    ep.field_mask |= UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE | UCP_EP_PARAM_FIELD_ERR_HANDLER;
    ep.err_mode = UCP_ERR_HANDLING_MODE_PEER;
    ep.err_handler.cb = &UcxWorld::on_peer_error;
    ep.err_handler.arg = this;
  }
  const ucs_status_t made = ucp_ep_create(worker_, &ep, &eps_[r]);
  if (made != UCS_OK) {
    // Shared-memory transports cannot report a failed peer, so a peer whose exit this
    // process cannot watch needs one that can (TCP, InfiniBand).
    return error(zfcTransportError, "rank %d: ucp_ep_create to rank %zu failed: %s%s", rank_, r,
                 ucs_status_string(made),
                 watched ? "" : " (a peer on another host needs a network transport that "
                                "reports failures: check UCX_TLS)");
  }
  watched_[r] = watched ? 1 : 0;
  return Status::Ok();
}

// Spinning is fastest while a message is on its way. After kSpinIdle empty calls the core
// goes to the peers by a yield, and after kYieldIdle the thread sleeps on the worker's
// event descriptor (and the watched peers' pidfds) for at most kSleepMs, then looks at its
// deadline and its peers again: ranks often outnumber cores, and a rank that waits for the
// slowest must not take the slowest's core from it (a yield alone still spins whenever the
// core is free of others, while a trainer's backward, say, runs on other threads of the
// same process).
void UcxWorld::progress(unsigned* idle) {
  constexpr unsigned kSpinIdle = 64, kYieldIdle = 64 + 1024;
  constexpr int kSleepMs = 1;
  if (ucp_worker_progress(worker_) != 0) {
    *idle = 0;
    return;
  }
  if (++*idle <= kSpinIdle) return;
  if (*idle <= kYieldIdle || efd_ < 0) {
    sched_yield();
    // A worker that cannot sleep still looks at the watched peers now and then.
    if (efd_ < 0 && *idle % 1024 == 0) sleep_until_event(0);
    return;
  }
  // UCS_ERR_BUSY: events arrived since the last progress; progress again at once.
  const ucs_status_t armed = ucp_worker_arm(worker_);
  if (armed == UCS_OK) {
    sleep_until_event(kSleepMs);
  } else if (armed != UCS_ERR_BUSY) {
    efd_ = -1;  // the worker cannot be armed: yield from now on
  }
}

void UcxWorld::sleep_until_event(int timeout_ms) {
  if (exits_.empty()) {
    if (efd_ >= 0 && timeout_ms > 0) {
      pollfd fd{efd_, POLLIN, 0};
      poll(&fd, 1, timeout_ms);
    }
    return;
  }
  const int exited = exits_.wait(efd_, timeout_ms);
  if (exited >= 0) {
    mark_failed(static_cast<size_t>(exited),
                strfmt("rank %d (of the first communicator; process %d on this host) exited",
                       exited, pids_[static_cast<size_t>(exited)]));
  }
}

void UcxWorld::mark_failed(size_t r, const std::string& why) {
  if (failed_[r] == 0) failures_[r] = why;
  failed_[r] = 1;
}

void UcxWorld::on_peer_error(void* arg, ucp_ep_h ep, ucs_status_t status) {
  auto* self = static_cast<UcxWorld*>(arg);
  for (size_t r = 0; r < self->eps_.size(); ++r) {
    if (self->eps_[r] != ep) continue;
    self->mark_failed(r, strfmt("rank %zu (of the first communicator) failed: %s", r,
                                ucs_status_string(status)));
  }
}

}  // namespace zfc

#include "transport/ucx/ucx_transport.hpp"

#include <poll.h>
#include <sched.h>
#include <ucp/api/ucp.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>
#include <vector>

#include "transport/block_gather.hpp"
#include "transport/forwarded_exchange.hpp"

namespace zfc {
namespace {

using Clock = std::chrono::steady_clock;

// A message's tag: communicator (16 bits), sender's rank in it (20), operation number (12),
// step within the operation (16). Receives match all 64 bits.
constexpr uint32_t kMaxCommId = 0xffffu;

uint64_t make_tag(uint32_t comm, uint32_t src, uint32_t op, uint32_t step) {
  return (uint64_t{comm & 0xffffu} << 48) | (uint64_t{src & 0xfffffu} << 28) |
         (uint64_t{op & 0xfffu} << 16) | uint64_t{step & 0xffffu};
}

// What every communicator split from one init shares: the UCP context, the worker and an
// endpoint to every rank of the first communicator.
class UcxWorld {
 public:
  ~UcxWorld() {
    // A normal close flushes what this rank sent, so that a peer still waiting for it gets
    // it; an abandoned communicator just drops its endpoints. A flush to a peer that does
    // not answer gives up after kFlushMs. Every close is started before any is waited for:
    // the flushes to all peers then take one round trip together, not one each in turn.
    constexpr int kFlushMs = 10000;
    const Clock::time_point deadline = Clock::now() + std::chrono::milliseconds(kFlushMs);
    for (ucp_ep_h ep : eps_) {
      if (ep == nullptr) continue;
      ucp_request_param_t p{};
      p.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
      p.flags = abandoned_ ? UCP_EP_CLOSE_FLAG_FORCE : 0;
      ucs_status_ptr_t req = ucp_ep_close_nbx(ep, &p);
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

  Status init(Transport& bootstrap, int timeout_ms) {
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
    const std::string mine(reinterpret_cast<const char*>(address), length);
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
    closing_.reserve(n);  // so that the destructor's closes allocate nothing
    failed_.assign(n, 0);
    for (size_t r = 0; r < n; ++r) {
      if (static_cast<int>(r) == rank_) continue;
      ucp_ep_params_t ep{};
      ep.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE |
                      UCP_EP_PARAM_FIELD_ERR_HANDLER;
      ep.address = reinterpret_cast<const ucp_address_t*>(all.data() + at[r]);
      ep.err_mode = UCP_ERR_HANDLING_MODE_PEER;
      ep.err_handler.cb = &UcxWorld::on_peer_error;
      ep.err_handler.arg = this;
      const ucs_status_t made = ucp_ep_create(worker_, &ep, &eps_[r]);
      if (made != UCS_OK) {
        // Shared-memory transports cannot report a failed peer, so UCX needs one that can
        // (TCP, InfiniBand) to reach every rank.
        return error(zfcTransportError, "rank %d: ucp_ep_create to rank %zu failed: %s (peer "
                     "failure handling needs a network transport: check UCX_TLS)", rank_, r,
                     ucs_status_string(made));
      }
    }
    return Status::Ok();
  }

  int size() const { return static_cast<int>(eps_.size()); }
  int rank() const { return rank_; }
  ucp_worker_h worker() const { return worker_; }

  // Progresses the worker once; *idle counts the calls in a row that found nothing to do.
  // Spinning is fastest while a message is on its way. After kSpinIdle empty calls the core
  // goes to the peers by a yield, and after kYieldIdle the thread sleeps on the worker's
  // event descriptor for at most kSleepMs (then looks at its deadline and its peers again):
  // ranks often outnumber cores, and a rank that waits for the slowest must not take the
  // slowest's core from it (a yield alone still spins whenever the core is free of others,
  // while a trainer's backward, say, runs on other threads of the same process).
  void progress(unsigned* idle) {
    constexpr unsigned kSpinIdle = 64, kYieldIdle = 64 + 1024;
    constexpr int kSleepMs = 1;
    if (ucp_worker_progress(worker_) != 0) {
      *idle = 0;
      return;
    }
    if (++*idle <= kSpinIdle) return;
    if (*idle <= kYieldIdle || efd_ < 0) {
      sched_yield();
      return;
    }
    // UCS_ERR_BUSY: events arrived since the last progress; progress again at once.
    const ucs_status_t armed = ucp_worker_arm(worker_);
    if (armed == UCS_OK) {
      pollfd fd{efd_, POLLIN, 0};
      poll(&fd, 1, kSleepMs);
    } else if (armed != UCS_ERR_BUSY) {
      efd_ = -1;  // the worker cannot be armed: yield from now on
    }
  }
  ucp_ep_h ep(int world_rank) const { return eps_[static_cast<size_t>(world_rank)]; }
  int timeout_ms() const { return timeout_ms_; }
  const std::string& failure() const { return failure_; }
  bool peer_failed(int world_rank) const { return failed_[static_cast<size_t>(world_rank)] != 0; }
  void abandon() { abandoned_ = true; }
  // Communicator ids of this process: the first communicator has 1, each split takes the
  // next ones agreed among its members.
  uint32_t next_comm_id() const { return next_comm_id_; }
  void use_comm_ids_below(uint32_t next) { next_comm_id_ = std::max(next_comm_id_, next); }

  static Status check(ucs_status_t s, const char* what) {
    if (s == UCS_OK) return Status::Ok();
    return error(zfcTransportError, "%s failed: %s", what, ucs_status_string(s));
  }

 private:
  static void on_peer_error(void* arg, ucp_ep_h ep, ucs_status_t status) {
    auto* self = static_cast<UcxWorld*>(arg);
    for (size_t r = 0; r < self->eps_.size(); ++r) {
      if (self->eps_[r] != ep) continue;
      self->failed_[r] = 1;
      if (self->failure_.empty()) {
        self->failure_ = strfmt("rank %zu (of the first communicator) failed: %s", r,
                                ucs_status_string(status));
      }
    }
  }

  ucp_context_h context_ = nullptr;
  ucp_worker_h worker_ = nullptr;
  int efd_ = -1;  // the worker's event descriptor, or -1
  std::vector<ucp_ep_h> eps_;
  std::vector<void*> closing_;  // the destructor's close requests (reserved in init)
  std::vector<char> failed_;  // per rank: UCX reported its endpoint broken
  int rank_ = 0;
  int timeout_ms_ = 0;
  bool abandoned_ = false;
  uint32_t next_comm_id_ = 2;
  std::string failure_;
};

class UcxTransport final : public Transport {
 public:
  UcxTransport(std::shared_ptr<UcxWorld> world, uint32_t comm_id, std::vector<int> members,
               int rank)
      : Transport(rank, static_cast<int>(members.size())),
        world_(std::move(world)),
        comm_id_(comm_id),
        members_(std::move(members)) {}

  const char* name() const override { return "ucx"; }
  bool forwards() const override { return true; }

  Status split(int color, int key, std::unique_ptr<Transport>* out) override {
    struct Entry {
      int32_t color, key;
      uint32_t next_id;  // the lowest communicator id this rank has not used yet
    };
    const Entry mine{color, key, world_->next_comm_id()};
    std::vector<Entry> all(static_cast<size_t>(size()));
    ZFC_RETURN_IF_ERROR(do_allgather(&mine, sizeof mine, all.data()));
    // The children's ids are agreed and never used before by any member: the lowest id no
    // rank of this communicator has used, plus the color's place among the colors named.
    // Ids only grow on every process, so no two communicators that share a rank ever share
    // an id, and the tags of their messages never match each other's receives.
    uint32_t base = 0;
    std::vector<int32_t> colors;
    for (const Entry& e : all) {
      base = std::max(base, e.next_id);
      if (e.color >= 0) colors.push_back(e.color);
    }
    std::sort(colors.begin(), colors.end());
    colors.erase(std::unique(colors.begin(), colors.end()), colors.end());
    const uint32_t next = base + static_cast<uint32_t>(colors.size());
    if (next - 1 > kMaxCommId) {
      return error(zfcUnsupported, "rank %d: communicator ids exhausted: %u communicators were "
                   "split from this one's first communicator, at most %u are supported",
                   rank(), next - 1, kMaxCommId);
    }
    world_->use_comm_ids_below(next);
    out->reset();
    if (color < 0) return Status::Ok();
    std::vector<int> order;
    for (int r = 0; r < size(); ++r) {
      if (all[static_cast<size_t>(r)].color == color) order.push_back(r);
    }
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
      return all[static_cast<size_t>(a)].key < all[static_cast<size_t>(b)].key;
    });
    std::vector<int> members;
    int new_rank = 0;
    for (size_t i = 0; i < order.size(); ++i) {
      members.push_back(members_[static_cast<size_t>(order[i])]);
      if (order[i] == rank()) new_rank = static_cast<int>(i);
    }
    const uint32_t id = base + static_cast<uint32_t>(
        std::lower_bound(colors.begin(), colors.end(), color) - colors.begin());
    out->reset(new UcxTransport(world_, id, std::move(members), new_rank));
    return Status::Ok();
  }

  uint32_t comm_id() const { return comm_id_; }

  void abandon() override { world_->abandon(); }

 protected:
  Status do_allgather(const void* send, size_t bytes, void* recv) override {
    std::vector<size_t>& sizes = gather_sizes_;
    std::vector<size_t>& displs = gather_displs_;
    sizes.assign(static_cast<size_t>(size()), bytes);
    displs.resize(sizes.size());
    for (size_t r = 0; r < sizes.size(); ++r) displs[r] = r * bytes;
    return do_allgatherv(send, recv, sizes.data(), displs.data());
  }

  Status do_allgatherv(const void* send, void* recv, const size_t* recv_bytes,
                       const size_t* displs) override {
    const int n = size(), me = rank();
    char* out = static_cast<char*>(recv);
    const size_t mine = recv_bytes[me];
    if (send != out + displs[me] && mine > 0) std::memcpy(out + displs[me], send, mine);
    size_t total = 0;
    for (int r = 0; r < n; ++r) total += recv_bytes[r];
    const uint32_t op = ++ops_;
    // ceil(log2 G) steps (Bruck) while the total or the blocks are small, else a ring
    // (transport.hpp).
    if (log_depth_gather(n, static_cast<double>(total))) {
      return bruck_allgatherv(out, recv_bytes, displs, op);
    }
    return ring_allgatherv(out, recv_bytes, displs, op);
  }

  // A ring: at step s every rank passes on the block it received at step s - 1.
  Status ring_allgatherv(char* out, const size_t* recv_bytes, const size_t* displs,
                         uint32_t op) {
    const int n = size(), me = rank();
    const int right = (me + 1) % n, left = (me + n - 1) % n;
    for (int s = 0; s + 1 < n; ++s) {
      const int give = (me - s + n) % n, take = (me - s - 1 + 2 * n) % n;
      Pending p[2];
      ZFC_RETURN_IF_ERROR(post_recv(left, op, static_cast<uint32_t>(s),
                                    out + displs[take], recv_bytes[take], &p[0]));
      ZFC_RETURN_IF_ERROR(post_send(right, op, static_cast<uint32_t>(s), out + displs[give],
                                    recv_bytes[give], &p[1]));
      ZFC_RETURN_IF_ERROR(wait_all(p, 2));
    }
    return Status::Ok();
  }

  // Bruck: before the step of distance d, rank r holds the d blocks r, r+1, ... (mod G); it
  // sends the first min(d, G - d) of them, packed, to rank r - d and receives as many from
  // rank r + d. Every rank knows every block's size, so each message's length is known.
  Status bruck_allgatherv(char* out, const size_t* recv_bytes, const size_t* displs,
                          uint32_t op) {
    const int n = size(), me = rank();
    std::vector<char>& give = bruck_give_;
    std::vector<char>& take = bruck_take_;
    uint32_t step = 0;
    for (int d = 1; d < n; d *= 2, ++step) {
      const int m = std::min(d, n - d);
      const int to = (me - d + n) % n, from = (me + d) % n;
      give.clear();
      size_t want = 0;
      for (int i = 0; i < m; ++i) {
        const int b = (me + i) % n;
        give.insert(give.end(), out + displs[b], out + displs[b] + recv_bytes[b]);
        want += recv_bytes[(from + i) % n];
      }
      take.resize(want);
      Pending p[2];
      ZFC_RETURN_IF_ERROR(post_recv(from, op, step, take.data(), want, &p[0]));
      ZFC_RETURN_IF_ERROR(post_send(to, op, step, give.data(), give.size(), &p[1]));
      ZFC_RETURN_IF_ERROR(wait_all(p, 2));
      size_t at = 0;
      for (int i = 0; i < m; ++i) {
        const int b = (from + i) % n;
        if (recv_bytes[b] > 0) std::memcpy(out + displs[b], take.data() + at, recv_bytes[b]);
        at += recv_bytes[b];
      }
    }
    return Status::Ok();
  }

  // Pairwise: every rank posts its receives from and its sends to every other rank at once.
  Status do_alltoallv(const void* send, const size_t* send_bytes, const size_t* send_displs,
                      void* recv, const size_t* recv_bytes,
                      const size_t* recv_displs) override {
    const int n = size(), me = rank();
    const char* in = static_cast<const char*>(send);
    char* out = static_cast<char*>(recv);
    if (recv_bytes[me] > 0) {
      std::memcpy(out + recv_displs[me], in + send_displs[me], recv_bytes[me]);
    }
    const uint32_t op = ++ops_;
    std::vector<Pending>& p = pending_;
    p.assign(2 * static_cast<size_t>(n), Pending{});
    size_t posted = 0;
    Status s = Status::Ok();
    // Empty messages are not sent: the sizes are agreed, so a rank expecting nothing from
    // j is one j sends nothing to, and a sparse exchange talks to few of many peers.
    for (int j = 0; j < n && s.ok(); ++j) {
      if (j == me || recv_bytes[j] == 0) continue;
      s = post_recv(j, op, 0, out + recv_displs[j], recv_bytes[j], &p[posted++]);
    }
    for (int j = 0; j < n && s.ok(); ++j) {
      if (j == me || send_bytes[j] == 0) continue;
      s = post_send(j, op, 0, in + send_displs[j], send_bytes[j], &p[posted++]);
    }
    const Status w = wait_all(p.data(), posted);
    return s.ok() ? w : s;
  }

  // Bruck (transport/block_gather.hpp); each message's length is learned by probing its tag.
  Status do_allgather_blocks(const void* send, size_t bytes, size_t* recv_bytes, size_t* displs,
                             const PlaceFn& place, uint32_t* rounds) override {
    const uint32_t op = ++ops_;
    *rounds = 1;
    return bruck_gather_blocks(
        size(), rank(), send, bytes, recv_bytes, displs, place, blocks_,
        [&](int to, int from, uint32_t step, const std::vector<char>& give,
            std::vector<char>* take) { return swap(to, from, op, step, give, take); });
  }

  // Bruck's store and forward (transport/forwarded_exchange.hpp); each message's length is
  // learned by probing its tag.
  Status do_alltoallv_forwarded(const void* send, const size_t* send_bytes,
                                const size_t* send_displs, size_t* recv_bytes,
                                size_t* recv_displs, const PlaceFn& place,
                                std::vector<Hop>* hops) override {
    const uint32_t op = ++ops_;
    return forwarded_alltoallv_blocks(
        size(), rank(), send, send_bytes, send_displs, recv_bytes, recv_displs, place, forward_,
        hops, [&](int to, int from, uint32_t step, const std::vector<char>& give,
                  std::vector<char>* take) { return swap(to, from, op, step, give, take); });
  }

  // Every pair exchanges one message, empty or not; each length is learned by probing the
  // peer's tag before anything is received.
  Status do_alltoallv_blocks(const void* send, const size_t* send_bytes,
                             const size_t* send_displs, size_t* recv_bytes, size_t* recv_displs,
                             const PlaceFn& place, uint32_t* rounds) override {
    const int n = size(), me = rank();
    const uint32_t op = ++ops_;
    *rounds = 1;
    const char* in = static_cast<const char*>(send);
    std::vector<Pending>& p = pending_;
    p.assign(2 * static_cast<size_t>(n), Pending{});
    std::vector<ucp_tag_message_h>& msgs = block_messages_;
    msgs.assign(static_cast<size_t>(n), nullptr);
    size_t posted = 0;
    Status s = Status::Ok();
    for (int j = 0; j < n && s.ok(); ++j) {
      if (j != me) s = post_send(j, op, 0, in + send_displs[j], send_bytes[j], &p[posted++]);
    }
    size_t total = 0;
    for (int j = 0; j < n && s.ok(); ++j) {
      recv_displs[j] = total;
      recv_bytes[j] = send_bytes[j];
      if (j != me) s = probe(j, op, 0, &msgs[static_cast<size_t>(j)], &recv_bytes[j]);
      total += recv_bytes[j];
    }
    if (s.ok()) {
      char* out = place(total);
      if (send_bytes[me] > 0) {
        std::memcpy(out + recv_displs[me], in + send_displs[me], send_bytes[me]);
      }
      for (int j = 0; j < n && s.ok(); ++j) {
        if (j == me) continue;
        s = receive_probed(j, msgs[static_cast<size_t>(j)], out + recv_displs[j],
                           recv_bytes[j], &p[posted++]);
      }
    }
    const Status w = wait_all(p.data(), posted);
    return s.ok() ? w : s;
  }

  // Dissemination (Hensgen, Finkel and Manber 1988): at the step of distance d each rank
  // signals rank r + d and waits for rank r - d; after ceil(log2 G) steps every rank has
  // heard, through some chain, from every other.
  Status do_barrier() override {
    const int n = size(), me = rank();
    const uint32_t op = ++ops_;
    char out = 1, in = 0;
    uint32_t step = 0;
    for (int d = 1; d < n; d *= 2, ++step) {
      Pending p[2];
      ZFC_RETURN_IF_ERROR(post_recv((me - d + n) % n, op, step, &in, 1, &p[0]));
      ZFC_RETURN_IF_ERROR(post_send((me + d) % n, op, step, &out, 1, &p[1]));
      ZFC_RETURN_IF_ERROR(wait_all(p, 2));
    }
    return Status::Ok();
  }

 private:
  // Sends `give` to `to` and receives, into `take` (resized to fit), what `from` sent with
  // the same (op, step), of any length.
  Status swap(int to, int from, uint32_t op, uint32_t step, const std::vector<char>& give,
              std::vector<char>* take) {
    Pending p[2];
    ZFC_RETURN_IF_ERROR(post_send(to, op, step, give.data(), give.size(), &p[0]));
    Status s = probe_recv(from, op, step, take, &p[1]);
    const Status w = wait_all(p, s.ok() ? 2 : 1);
    return s.ok() ? w : s;
  }

  struct Pending {
    void* request = nullptr;  // NULL: done at once
    int peer = -1;
    bool send = false;
  };

  Status post_send(int peer, uint32_t op, uint32_t step, const void* data, size_t bytes,
                   Pending* p) {
    ucp_request_param_t param{};
    const uint64_t tag = make_tag(comm_id_, static_cast<uint32_t>(rank()), op, step);
    ucs_status_ptr_t req = ucp_tag_send_nbx(world_->ep(members_[static_cast<size_t>(peer)]),
                                            data, bytes, tag, &param);
    return track(req, peer, true, p);
  }

  Status post_recv(int peer, uint32_t op, uint32_t step, void* data, size_t bytes, Pending* p) {
    ucp_request_param_t param{};
    const uint64_t tag = make_tag(comm_id_, static_cast<uint32_t>(peer), op, step);
    ucs_status_ptr_t req =
        ucp_tag_recv_nbx(world_->worker(), data, bytes, tag, ~uint64_t{0}, &param);
    return track(req, peer, false, p);
  }

  // Finds the message `peer` sent with (op, step), removing it from UCX's unexpected queue,
  // and learns its length; progresses the worker until it arrives, the deadline passes or
  // the peer is found dead.
  Status probe(int peer, uint32_t op, uint32_t step, ucp_tag_message_h* msg, size_t* bytes) {
    const uint64_t tag = make_tag(comm_id_, static_cast<uint32_t>(peer), op, step);
    const int timeout = world_->timeout_ms();
    const Clock::time_point deadline = Clock::now() + std::chrono::milliseconds(timeout);
    const int peer_world = members_[static_cast<size_t>(peer)];
    unsigned idle = 0;
    for (;;) {
      ucp_tag_recv_info_t info{};
      *msg = ucp_tag_probe_nb(world_->worker(), tag, ~uint64_t{0}, 1, &info);
      if (*msg != nullptr) {
        *bytes = info.length;
        return Status::Ok();
      }
      world_->progress(&idle);
      if (timeout > 0 && Clock::now() > deadline) {
        return error(zfcTimeout, "rank %d: receiving from rank %d took longer than timeout_ms "
                     "%d", rank(), peer, timeout);
      }
      if (world_->peer_failed(peer_world)) {
        return peer_error(peer, false, UCS_ERR_CONNECTION_RESET);
      }
    }
  }

  Status receive_probed(int peer, ucp_tag_message_h msg, void* data, size_t bytes,
                        Pending* p) {
    ucp_request_param_t param{};
    ucs_status_ptr_t req = ucp_tag_msg_recv_nbx(world_->worker(), data, bytes, msg, &param);
    return track(req, peer, false, p);
  }

  // Probes the message `peer` sent with (op, step) and posts its receive into *take.
  Status probe_recv(int peer, uint32_t op, uint32_t step, std::vector<char>* take, Pending* p) {
    ucp_tag_message_h msg = nullptr;
    size_t bytes = 0;
    ZFC_RETURN_IF_ERROR(probe(peer, op, step, &msg, &bytes));
    take->resize(bytes);
    return receive_probed(peer, msg, take->data(), bytes, p);
  }

  Status track(ucs_status_ptr_t req, int peer, bool send, Pending* p) {
    if (UCS_PTR_IS_ERR(req)) return peer_error(peer, send, UCS_PTR_STATUS(req));
    *p = Pending{req, peer, send};
    return Status::Ok();
  }

  Status peer_error(int peer, bool send, ucs_status_t s) const {
    const char* doing = send ? "sending to" : "receiving from";
    if (world_->peer_failed(members_[static_cast<size_t>(peer)])) {
      return error(zfcRemoteError, "rank %d: %s rank %d failed: the peer is gone (%s)", rank(),
                   doing, peer, world_->failure().c_str());
    }
    return error(zfcRemoteError, "rank %d: %s rank %d failed: %s", rank(), doing, peer,
                 ucs_status_string(s));
  }

  // Progresses the worker until the request is done, the deadline passes (UCS_ERR_TIMED_OUT)
  // or UCX has found its peer dead (UCS_ERR_CONNECTION_RESET); the request may then still be
  // in progress.
  ucs_status_t progress_until_done(const Pending& p, bool bounded, Clock::time_point deadline) {
    void* request = p.request;
    const int peer_world = members_[static_cast<size_t>(p.peer)];
    unsigned idle = 0;
    ucs_status_t s;
    while ((s = ucp_request_check_status(request)) == UCS_INPROGRESS) {
      world_->progress(&idle);
      if (bounded && Clock::now() > deadline) return UCS_ERR_TIMED_OUT;
      // The peer is dead: its message will not come, and ours will not be taken.
      if (world_->peer_failed(peer_world)) return UCS_ERR_CONNECTION_RESET;
    }
    return s;
  }

  // Waits for every request; the first failure is reported, and every request is released.
  Status wait_all(Pending* p, size_t n) {
    const int timeout = world_->timeout_ms();
    const Clock::time_point deadline = Clock::now() + std::chrono::milliseconds(timeout);
    Status result = Status::Ok();
    for (size_t i = 0; i < n; ++i) {
      if (p[i].request == nullptr) continue;
      const ucs_status_t s = progress_until_done(p[i], timeout > 0, deadline);
      if (s == UCS_ERR_TIMED_OUT && result.ok()) {
        result = error(zfcTimeout, "rank %d: %s rank %d took longer than timeout_ms %d",
                       rank(), p[i].send ? "sending to" : "receiving from", p[i].peer, timeout);
      } else if (s != UCS_OK && result.ok()) {
        result = peer_error(p[i].peer, p[i].send, s);
      }
      // An unfinished receive is withdrawn; an unfinished send is left to finish or fail on
      // its own (freeing it hands it to UCX). The communicator is unusable after a failure.
      if (ucp_request_check_status(p[i].request) == UCS_INPROGRESS && !p[i].send) {
        ucp_request_cancel(world_->worker(), p[i].request);
      }
      ucp_request_free(p[i].request);
      p[i].request = nullptr;
    }
    return result;
  }

  std::shared_ptr<UcxWorld> world_;
  uint32_t comm_id_;
  std::vector<int> members_;  // world rank of each rank of this communicator
  uint32_t ops_ = 0;
  BlockGatherBuffers blocks_;
  ForwardBuffers forward_;
  // Scratch of the collectives, kept so that a steady step allocates nothing once grown.
  std::vector<char> bruck_give_, bruck_take_;  // bruck_allgatherv's packed blocks
  std::vector<size_t> gather_sizes_, gather_displs_;  // do_allgather's blocks
  std::vector<Pending> pending_;                      // the requests of one exchange
  std::vector<ucp_tag_message_h> block_messages_;     // do_alltoallv_blocks' probed messages
};

}  // namespace

Status ucx_transport_check() { return Status::Ok(); }

uint32_t ucx_comm_id(const Transport& t) {
  const auto* ucx = dynamic_cast<const UcxTransport*>(&t);
  return ucx != nullptr ? ucx->comm_id() : 0;
}

Status create_ucx_transport(Transport& bootstrap, int timeout_ms,
                            std::unique_ptr<Transport>* out) {
  auto world = std::make_shared<UcxWorld>();
  ZFC_RETURN_IF_ERROR(world->init(bootstrap, timeout_ms));
  std::vector<int> members(static_cast<size_t>(world->size()));
  for (size_t r = 0; r < members.size(); ++r) members[r] = static_cast<int>(r);
  out->reset(new UcxTransport(world, 1, std::move(members), bootstrap.rank()));
  return Status::Ok();
}

}  // namespace zfc

#include "transport/ucx/ucx_transport.hpp"

#include <ucp/api/ucp.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>
#include <vector>

#include "transport/block_gather.hpp"
#include "transport/forwarded_exchange.hpp"
#include "transport/ucx/ucx_world.hpp"

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

  // Each message's length is learned by probing its tag. Up to kDirectBlockGatherRanks ranks
  // every rank sends its block to each peer (exchange_blocks); past that, Bruck's steps
  // (transport/block_gather.hpp).
  Status do_allgather_blocks(const void* send, size_t bytes, size_t* recv_bytes, size_t* displs,
                             const PlaceFn& place, uint32_t* rounds) override {
    const uint32_t op = ++ops_;
    *rounds = 1;
    if (size() <= kDirectBlockGatherRanks) {
      // Sent from the transport's own copy, as Bruck's messages are: a send a failure leaves
      // to UCX may read it after the call returned.
      direct_own_.assign(static_cast<const char*>(send), static_cast<const char*>(send) + bytes);
      direct_bytes_.assign(static_cast<size_t>(size()), bytes);
      direct_at_.assign(static_cast<size_t>(size()), 0);
      return exchange_blocks(op, direct_own_.data(), direct_bytes_.data(), direct_at_.data(),
                             recv_bytes, displs, place);
    }
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
    *rounds = 1;
    return exchange_blocks(++ops_, send, send_bytes, send_displs, recv_bytes, recv_displs, place);
  }

  // The body of do_alltoallv_blocks, as operation `op`.
  Status exchange_blocks(uint32_t op, const void* send, const size_t* send_bytes,
                         const size_t* send_displs, size_t* recv_bytes, size_t* recv_displs,
                         const PlaceFn& place) {
    const int n = size(), me = rank();
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
                   doing, peer, world_->failure(members_[static_cast<size_t>(peer)]).c_str());
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
  std::vector<size_t> direct_bytes_, direct_at_;      // the direct block gather's one block
  std::vector<char> direct_own_;                      // and its copy, which is sent
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

#include "transport/mpi/mpi_transport.hpp"

#include <mpi.h>
#if defined(OPEN_MPI) && OPEN_MPI
#include <mpi-ext.h>  // MPIX_Query_cuda_support
#endif

#include <sched.h>

#include <chrono>
#include <climits>
#include <cstring>
#include <string>
#include <vector>

#include <utility>

#include "transport/block_gather.hpp"
#include "transport/forwarded_exchange.hpp"
#include "transport/mpi/mpi_bounded_calls.hpp"

namespace zfc {
namespace {

class MpiTransport final : public Transport {
 public:
  MpiTransport(MPI_Comm comm, int rank, int size, int timeout_ms)
      : Transport(rank, size), comm_(comm), waits_(rank, timeout_ms), timeout_ms_(timeout_ms) {}
  ~MpiTransport() override {
    // A send still in flight reads these buffers, and a collective its counts and requests:
    // they are left to MPI_Finalize too (moving a vector keeps its memory where MPI has it).
    if (waits_.unfinished()) {
      new GatherHeld(std::move(gather_));
      new ForwardBuffers(std::move(forward_));
      new std::vector<int>(std::move(counts_));
      new std::vector<MPI_Request>(std::move(block_sends_));
      new std::vector<MPI_Request>(std::move(block_recvs_));
      new std::vector<MPI_Message>(std::move(block_messages_));
    }
    // An operation still in flight keeps its communicator and types; MPI_Finalize frees
    // them. An abandoned communicator with nothing in flight is freed: Open MPI and MPICH
    // free a communicator without talking to its peers. After MPI_Finalize (a communicator
    // aborted late, e.g. by a garbage collector at exit) MPI has freed them already.
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!waits_.unfinished() && !finalized) {
      units_.release();
      MPI_Comm_free(&comm_);
    }
  }
  const char* name() const override { return "mpi"; }
  bool accepts_device_buffers() const override { return mpi_is_cuda_aware(); }
  bool has_unfinished_operation() const override { return waits_.unfinished(); }
  bool forwards() const override { return true; }

  Status split(int color, int key, std::unique_ptr<Transport>* out) override {
    MPI_Comm child = MPI_COMM_NULL;
    ZFC_MPI_CHECK(MPI_Comm_split(comm_, color < 0 ? MPI_UNDEFINED : color, key, &child),
                  "MPI_Comm_split");
    if (child == MPI_COMM_NULL) {
      out->reset();
      return Status::Ok();
    }
    return wrap(child, timeout_ms_, out);
  }

  void abandon() override {}

  static Status wrap(MPI_Comm comm, int timeout_ms, std::unique_ptr<Transport>* out) {
    int rank = 0, size = 0;
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    out->reset(new MpiTransport(comm, rank, size, timeout_ms));
    return Status::Ok();
  }

 protected:
  // With a timeout every collective is MPI's non-blocking form, waited on with a deadline;
  // without one, the blocking form (MPI's fastest path).
  Status do_allgather(const void* send, size_t bytes, void* recv) override {
    MPI_Datatype type;
    const size_t* lists[] = {&bytes};
    ZFC_RETURN_IF_ERROR(units_.convert(lists, 1, 1, &counts_, &type));
    const void* src = send;
    if (send == static_cast<const char*>(recv) + bytes * static_cast<size_t>(rank())) {
      src = MPI_IN_PLACE;
    }
    const int c = counts_[0];
    if (!waits_.bounded()) {
      ZFC_MPI_CHECK(MPI_Allgather(src, c, type, recv, c, type, comm_), "MPI_Allgather");
      return Status::Ok();
    }
    MPI_Request req;
    ZFC_MPI_CHECK(MPI_Iallgather(src, c, type, recv, c, type, comm_, &req), "MPI_Iallgather");
    return waits_.wait(&req, "MPI_Iallgather");
  }

  Status do_allgatherv(const void* send, void* recv, const size_t* recv_bytes,
                       const size_t* displs) override {
    const int n = size();
    MPI_Datatype type;
    const size_t* lists[] = {recv_bytes, displs};
    ZFC_RETURN_IF_ERROR(units_.convert(lists, 2, n, &counts_, &type));
    const void* src = send;
    if (send == static_cast<const char*>(recv) + displs[rank()]) src = MPI_IN_PLACE;
    const int* c = counts_.data();
    if (!waits_.bounded()) {
      ZFC_MPI_CHECK(MPI_Allgatherv(src, c[rank()], type, recv, c, c + n, type, comm_),
                    "MPI_Allgatherv");
      return Status::Ok();
    }
    MPI_Request req;
    ZFC_MPI_CHECK(MPI_Iallgatherv(src, c[rank()], type, recv, c, c + n, type, comm_, &req),
                  "MPI_Iallgatherv");
    return waits_.wait(&req, "MPI_Iallgatherv");
  }

  Status do_alltoallv(const void* send, const size_t* send_bytes, const size_t* send_displs,
                      void* recv, const size_t* recv_bytes,
                      const size_t* recv_displs) override {
    const int n = size();
    MPI_Datatype type;
    const size_t* lists[] = {send_bytes, send_displs, recv_bytes, recv_displs};
    ZFC_RETURN_IF_ERROR(units_.convert(lists, 4, n, &counts_, &type));
    const int* c = counts_.data();
    if (!waits_.bounded()) {
      ZFC_MPI_CHECK(MPI_Alltoallv(send, c, c + n, type, recv, c + 2 * n, c + 3 * n, type, comm_),
                    "MPI_Alltoallv");
      return Status::Ok();
    }
    MPI_Request req;
    ZFC_MPI_CHECK(MPI_Ialltoallv(send, c, c + n, type, recv, c + 2 * n, c + 3 * n, type, comm_,
                                 &req),
                  "MPI_Ialltoallv");
    return waits_.wait(&req, "MPI_Ialltoallv");
  }

  // Point-to-point messages of this communicator, whose lengths are learned by matching
  // probes (MPI_Mprobe), so nothing sizes them first.
  //
  // Up to kDirectBlockGatherRanks ranks (transport/block_gather.hpp), every rank sends its
  // block to each peer at once and receives each peer's where it belongs in rank order
  // (exchange_blocks, every peer sent the same block).
  //
  // Past that, Bruck's pattern and messages (transport/block_gather.hpp). Unlike the shared
  // version, no block is copied to be sent or kept: a message is sent from where its
  // sizes and blocks lie (an hindexed type over their addresses: this rank's block, the
  // others where they arrived), and each message stays where it arrived until the blocks are
  // put in rank order, their one copy.
  Status do_allgather_blocks(const void* send, size_t bytes, size_t* recv_bytes, size_t* displs,
                             const PlaceFn& place, uint32_t* rounds) override {
    const int n = size(), me = rank();
    *rounds = 1;
    ZFC_RETURN_IF_ERROR(fits_one_call(bytes));
    GatherHeld& h = gather_;
    // This rank's block is sent from a copy of the transport's own: a send left in flight
    // by a timeout may read it after the call returned.
    h.own.assign(static_cast<const char*>(send), static_cast<const char*>(send) + bytes);
    if (n <= kDirectBlockGatherRanks) {
      h.each.assign(static_cast<size_t>(n), bytes);
      h.at.assign(static_cast<size_t>(n), 0);
      return exchange_blocks(h.own.data(), h.each.data(), h.at.data(), recv_bytes, displs, place,
                             kBlockGatherTag);
    }
    h.blocks.assign(1, {h.own.data(), bytes});
    h.sizes.assign(1, bytes);
    uint32_t step = 0;
    for (int d = 1; d < n; d *= 2, ++step) {
      const size_t m = static_cast<size_t>(std::min(d, n - d));
      if (h.arrived.size() <= step) h.arrived.emplace_back();
      ZFC_RETURN_IF_ERROR(gather_step((me - d + n) % n, (me + d) % n,
                                      kBlockGatherTag + static_cast<int>(step), m,
                                      &h.arrived[step]));
    }
    // h.blocks holds the blocks of ranks me, me + 1, ...; put them in rank order.
    size_t total = 0;
    for (int r = 0; r < n; ++r) {
      recv_bytes[r] = h.blocks[static_cast<size_t>((r - me + n) % n)].second;
      displs[r] = total;
      total += recv_bytes[r];
    }
    char* out = place(total);
    for (int i = 0; i < n; ++i) {
      const int r = (me + i) % n;
      const auto& b = h.blocks[static_cast<size_t>(i)];
      if (b.second > 0) std::memcpy(out + displs[r], b.first, b.second);
    }
    return Status::Ok();
  }

  // Every pair exchanges one message (empty ones too, so each rank knows how many come);
  // the lengths are learned by probing each peer's message before any is received.
  Status do_alltoallv_blocks(const void* send, const size_t* send_bytes,
                             const size_t* send_displs, size_t* recv_bytes, size_t* recv_displs,
                             const PlaceFn& place, uint32_t* rounds) override {
    *rounds = 1;
    return exchange_blocks(send, send_bytes, send_displs, recv_bytes, recv_displs, place,
                           kBlockExchangeTag);
  }

  // Bruck's store and forward (transport/forwarded_exchange.hpp) over point-to-point
  // messages whose lengths are learned by matching probes.
  Status do_alltoallv_forwarded(const void* send, const size_t* send_bytes,
                                const size_t* send_displs, size_t* recv_bytes,
                                size_t* recv_displs, const PlaceFn& place,
                                std::vector<Hop>* hops) override {
    return forwarded_alltoallv_blocks(
        size(), rank(), send, send_bytes, send_displs, recv_bytes, recv_displs, place, forward_,
        hops, [&](int to, int from, uint32_t step, const std::vector<char>& give,
                  std::vector<char>* take) {
          const int tag = kForwardTag + static_cast<int>(step);
          return exchange(to, from, tag, give.data(), give.size(), take);
        });
  }

  Status do_barrier() override {
    if (!waits_.bounded()) {
      ZFC_MPI_CHECK(MPI_Barrier(comm_), "MPI_Barrier");
      return Status::Ok();
    }
    MPI_Request req;
    ZFC_MPI_CHECK(MPI_Ibarrier(comm_, &req), "MPI_Ibarrier");
    return waits_.wait(&req, "MPI_Ibarrier");
  }

 private:
  // Point-to-point tags of the *_blocks calls (collectives never match them).
  static constexpr int kBlockExchangeTag = 0x7a00;
  static constexpr int kBlockGatherTag = 0x7a01;  // + the step (at most 31)
  static constexpr int kForwardTag = 0x7a40;      // + the step (at most 31)

  // A point-to-point message is counted in int bytes.
  static Status fits_one_call(size_t bytes) {
    if (bytes <= static_cast<size_t>(INT_MAX)) return Status::Ok();
    return error(zfcUnsupported, "a transfer of %zu bytes is too large for one MPI call", bytes);
  }

  // The body of do_alltoallv_blocks, with its messages' tag.
  Status exchange_blocks(const void* send, const size_t* send_bytes, const size_t* send_displs,
                         size_t* recv_bytes, size_t* recv_displs, const PlaceFn& place,
                         int tag) {
    const int n = size(), me = rank();
    const char* in = static_cast<const char*>(send);
    // Every size is checked before anything is posted, so a refusal leaves nothing in flight.
    for (int j = 0; j < n; ++j) ZFC_RETURN_IF_ERROR(fits_one_call(send_bytes[j]));
    std::vector<MPI_Request>& sends = block_sends_;
    sends.clear();
    sends.reserve(static_cast<size_t>(n));  // emplace_back never moves a posted request
    std::vector<MPI_Message>& msgs = block_messages_;
    msgs.assign(static_cast<size_t>(n), MPI_MESSAGE_NULL);
    for (int j = 0; j < n; ++j) {
      if (j == me) continue;
      sends.emplace_back();
      ZFC_MPI_CHECK(MPI_Isend(in + send_displs[j], static_cast<int>(send_bytes[j]), MPI_BYTE, j,
                              tag, comm_, &sends.back()),
                    "MPI_Isend");
    }
    size_t total = 0;
    for (int j = 0; j < n; ++j) {
      recv_displs[j] = total;
      if (j == me) {
        recv_bytes[j] = send_bytes[j];
      } else {
        MPI_Status st;
        ZFC_RETURN_IF_ERROR(waits_.probe(j, tag, comm_, &msgs[static_cast<size_t>(j)],
                                         &st, "MPI_Mprobe"));
        int count = 0;
        ZFC_MPI_CHECK(MPI_Get_count(&st, MPI_BYTE, &count), "MPI_Get_count");
        recv_bytes[j] = static_cast<size_t>(count);
      }
      total += recv_bytes[j];
    }
    char* out = place(total);
    if (send_bytes[me] > 0) std::memcpy(out + recv_displs[me], in + send_displs[me], send_bytes[me]);
    // Every receive is posted before any is waited for, so the peers' transfers proceed
    // together rather than one after another (ranks that share a core would otherwise wait
    // in turn for each sender to be scheduled).
    std::vector<MPI_Request>& recvs = block_recvs_;
    recvs.clear();
    recvs.reserve(static_cast<size_t>(n));
    for (int j = 0; j < n; ++j) {
      if (j == me) continue;
      recvs.emplace_back();
      ZFC_MPI_CHECK(MPI_Imrecv(out + recv_displs[j], static_cast<int>(recv_bytes[j]), MPI_BYTE,
                               &msgs[static_cast<size_t>(j)], &recvs.back()),
                    "MPI_Imrecv");
    }
    for (MPI_Request& r : recvs) ZFC_RETURN_IF_ERROR(waits_.wait(&r, "MPI_Imrecv"));
    for (MPI_Request& r : sends) ZFC_RETURN_IF_ERROR(waits_.wait(&r, "MPI_Isend"));
    return Status::Ok();
  }

  // One step of do_allgather_blocks: the sizes and blocks of the first m held blocks to
  // rank `to`, sent from where they lie; rank `from`'s message into `in`, its m blocks
  // appended to the held ones where they landed.
  Status gather_step(int to, int from, int tag, size_t m, std::vector<char>* in) {
    GatherHeld& h = gather_;
    size_t body = 0;
    h.lengths.assign(1, static_cast<int>(m * sizeof(uint64_t)));
    h.places.resize(1);
    ZFC_MPI_CHECK(MPI_Get_address(h.sizes.data(), &h.places[0]), "MPI_Get_address");
    for (size_t i = 0; i < m; ++i) {
      body += h.blocks[i].second;
      h.lengths.push_back(static_cast<int>(h.blocks[i].second));
      h.places.emplace_back();
      ZFC_MPI_CHECK(MPI_Get_address(h.blocks[i].first, &h.places.back()), "MPI_Get_address");
    }
    ZFC_RETURN_IF_ERROR(fits_one_call(m * sizeof(uint64_t) + body));
    MPI_Datatype message;
    ZFC_MPI_CHECK(MPI_Type_create_hindexed(static_cast<int>(h.lengths.size()), h.lengths.data(),
                                           h.places.data(), MPI_BYTE, &message),
                  "MPI_Type_create_hindexed");
    ZFC_MPI_CHECK(MPI_Type_commit(&message), "MPI_Type_commit");
    const Status exchanged = exchange(to, from, tag, MPI_BOTTOM, 1, message, in);
    MPI_Type_free(&message);  // a send still in flight keeps it until it completes
    ZFC_RETURN_IF_ERROR(exchanged);
    // Only now may the held sizes grow: the send read them where they were.
    const size_t head = m * sizeof(uint64_t);
    size_t got = 0, framed = 0;
    if (in->size() >= head) {
      const char* at = in->data() + head;
      for (; framed < m; ++framed) {
        uint64_t len;
        std::memcpy(&len, in->data() + framed * sizeof(uint64_t), sizeof len);
        if (len > in->size() - head - got) break;
        h.blocks.push_back({at, static_cast<size_t>(len)});
        h.sizes.push_back(len);
        at += len;
        got += len;
      }
    }
    if (framed != m || in->size() != head + got) {
      return error(zfcTransportError, "rank %d: a block gather message from rank %d has %zu "
                   "bytes, which do not frame its %zu blocks", rank(), from, in->size(), m);
    }
    return Status::Ok();
  }

  // Sends `give` to `to` and receives the message `from` sent with `tag`, of any length.
  Status exchange(int to, int from, int tag, const char* give, size_t bytes,
                  std::vector<char>* take) {
    ZFC_RETURN_IF_ERROR(fits_one_call(bytes));
    return exchange(to, from, tag, give, static_cast<int>(bytes), MPI_BYTE, take);
  }

  // Sends `items` items of `type` at `buf` to rank `to` and receives into *take the message
  // rank `from` sends with the same tag, its length learned by a matching probe.
  Status exchange(int to, int from, int tag, const void* buf, int items, MPI_Datatype type,
                  std::vector<char>* take) {
    MPI_Request req;
    ZFC_MPI_CHECK(MPI_Isend(buf, items, type, to, tag, comm_, &req), "MPI_Isend");
    MPI_Message msg;
    MPI_Status st;
    ZFC_RETURN_IF_ERROR(waits_.probe(from, tag, comm_, &msg, &st, "MPI_Mprobe"));
    int count = 0;
    ZFC_MPI_CHECK(MPI_Get_count(&st, MPI_BYTE, &count), "MPI_Get_count");
    take->resize(static_cast<size_t>(count));
    ZFC_RETURN_IF_ERROR(receive_matched(take->data(), count, &msg));
    return waits_.wait(&req, "MPI_Isend");
  }

  // Receives a message a probe has matched. A matched message's data may still have to come
  // from its sender (a long one is sent only when the receiver asks), so a sender stalled or
  // gone after the match would block MPI_Mrecv for ever: with a timeout the receive is
  // MPI_Imrecv, waited on with the deadline (and left in flight if it passes).
  Status receive_matched(void* buf, int count, MPI_Message* msg) {
    if (!waits_.bounded()) {
      ZFC_MPI_CHECK(MPI_Mrecv(buf, count, MPI_BYTE, msg, MPI_STATUS_IGNORE), "MPI_Mrecv");
      return Status::Ok();
    }
    MPI_Request req;
    ZFC_MPI_CHECK(MPI_Imrecv(buf, count, MPI_BYTE, msg, &req), "MPI_Imrecv");
    return waits_.wait(&req, "MPI_Imrecv");
  }

  MPI_Comm comm_;
  // What do_allgather_blocks holds between its steps, kept between calls (a steady step
  // allocates nothing): each step's message where it arrived, and the blocks (where they
  // lie) with their sizes, in the order of ranks me, me + 1, ...; the pieces of a message
  // being sent.
  struct GatherHeld {
    std::vector<char> own;
    std::vector<std::vector<char>> arrived;
    std::vector<std::pair<const char*, size_t>> blocks;
    std::vector<uint64_t> sizes;
    std::vector<int> lengths;
    std::vector<MPI_Aint> places;
    std::vector<size_t> each, at;  // the direct gather's sizes and places of the block sent
  };
  GatherHeld gather_;
  ForwardBuffers forward_;
  UnitTypes units_;
  // The int counts and displacements of the current collective. A member, not a local: a
  // steady step allocates nothing once it has grown, and a non-blocking collective left in
  // flight by a timeout still reads them (MPI may until it completes).
  std::vector<int> counts_;
  // The requests and matched messages of do_alltoallv_blocks, for the same two reasons.
  std::vector<MPI_Request> block_sends_, block_recvs_;
  std::vector<MPI_Message> block_messages_;
  BoundedWait waits_;
  int timeout_ms_;
};

}  // namespace

Status mpi_transport_check() { return Status::Ok(); }

bool mpi_is_cuda_aware() {
  // Open MPI says at compile time whether it was built with CUDA support and at run time
  // whether that support is on; other MPIs are taken not to be CUDA-aware, and device
  // buffers then go through host memory.
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
  static const bool aware = MPIX_Query_cuda_support() == 1;
  return aware;
#else
  return false;
#endif
}

Status create_mpi_transport(const void* mpi_comm, int timeout_ms,
                            std::unique_ptr<Transport>* out) {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (!initialized || finalized) {
    return error(zfcInvalidUsage,
                 "MPI is not initialised (call MPI_Init before zfcCommInitMpi)");
  }
  MPI_Comm parent = *static_cast<const MPI_Comm*>(mpi_comm);
  if (parent == MPI_COMM_NULL) {
    return error(zfcInvalidArgument, "mpi_comm points to MPI_COMM_NULL");
  }
  MPI_Comm dup = MPI_COMM_NULL;
  if (timeout_ms <= 0) {
    ZFC_MPI_CHECK(MPI_Comm_dup(parent, &dup), "MPI_Comm_dup");
  } else {
    // The duplicate is the first collective: a rank that never arrives is a timeout too.
    // Errors of the caller's communicator come back as codes while this call runs.
    MPI_Errhandler caller_handler;
    MPI_Comm_get_errhandler(parent, &caller_handler);
    MPI_Comm_set_errhandler(parent, MPI_ERRORS_RETURN);
    MPI_Request req;
    int rank = 0;
    MPI_Comm_rank(parent, &rank);
    BoundedWait waits(rank, timeout_ms);
    Status s = Status::Ok();
    int rc = MPI_Comm_idup(parent, &dup, &req);
    if (rc != MPI_SUCCESS) s = mpi_error(rc, "MPI_Comm_idup");
    if (s.ok()) s = waits.wait(&req, "MPI_Comm_idup");
    MPI_Comm_set_errhandler(parent, caller_handler);
    MPI_Errhandler_free(&caller_handler);
    ZFC_RETURN_IF_ERROR(s);
  }
  return MpiTransport::wrap(dup, timeout_ms, out);
}

}  // namespace zfc

// The data-movement interface every algorithm is written against. A transport moves bytes
// between the ranks of one group; it knows nothing of indices, rows or compression.
//
// Bytes are counted here, where data is handed to the concrete transport, so the traffic a
// caller reads from zfcCommGetStats is what was really asked of the network: a block of n
// bytes that must reach m peers counts n*m bytes sent, and each block a peer contributes
// counts as received. Blocks a rank exchanges with itself are not counted.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "host_device/status.hpp"

namespace zfc {

struct TrafficCounters {
  uint64_t bytes_sent = 0;
  uint64_t bytes_received = 0;
  uint64_t internode_sent = 0;      // the part of the above exchanged with other nodes
  uint64_t internode_received = 0;
};

// What every rank of the communicator received during the current operation, and how many
// dependent rounds (transport collectives, one after another) it took. Every rank fills the
// whole table from the sizes it hands to the transport: an allgather(v)'s sizes are known
// to all; an alltoallv's receive totals are given by the algorithm, which knows them from
// what the ranks share (zfcOpStats_t's busiest rank and mean).
struct ReceiveLedger {
  std::vector<uint64_t> by_rank;  // indexed by the communicator's ranks
  uint32_t rounds = 0;
  void start(int ranks) {
    by_rank.assign(static_cast<size_t>(ranks), 0);
    rounds = 0;
  }
};

// Whether a transport can still be used. A failed operation may leave peers in the middle
// of it, so after one, every later operation is refused until the communicator is aborted.
struct TransportHealth {
  std::string failure;  // the first failure's message; empty while healthy
};

// Whether an allgather(v) of `total_bytes` over `ranks` runs in ceil(log2 ranks) steps
// (Bruck) rather than a ring of ranks - 1 steps. Both move (ranks - 1) / ranks of the total
// through each rank; Bruck also packs and unpacks what it forwards. So log depth while the
// total is small (up to 1 MiB) or its blocks are (16 KiB on average: at tens of GB/s a step
// of that size costs less than a latency, which a ring pays ranks - 1 times). The UCX
// transport follows this rule and the cost model prices gathers by it.
inline bool log_depth_gather(int ranks, double total_bytes) {
  return total_bytes <= double(1 << 20) || total_bytes <= double(ranks - 1) * (16 << 10);
}

// The dependent steps, each a latency, of that allgather.
inline double gather_steps(int ranks, double total_bytes) {
  if (ranks <= 1) return 0.0;
  return log_depth_gather(ranks, total_bytes) ? std::ceil(std::log2(double(ranks)))
                                              : double(ranks - 1);
}

// How an alltoallv reaches its peers: directly, one message per pair of ranks (G - 1
// latencies), or forwarded in ceil(log2 G) steps of one message each way, blocks relayed
// on the way (transport/forwarded_exchange.hpp). The cost model chooses (choose_route).
enum class Route { kDirect, kForwarded };

// Whether an exchange over `ranks` ranks can be forwarded at all: with two or fewer the
// forwarded exchange is the direct one, and runs as it.
inline bool forwarding_applies(int ranks) { return ranks > 2; }

// The steps of a forwarded exchange over `ranks`: ceil(log2 ranks).
inline int forwarded_steps(int ranks) {
  int steps = 0;
  for (long d = 1; d < ranks; d *= 2) ++steps;
  return steps;
}

// How many times a forwarded exchange over `ranks` moves a block, on average over the
// blocks a rank sends its G - 1 peers: the mean number of bits set in 1 .. G - 1.
inline double forwarded_relays(int ranks) {
  if (ranks <= 1) return 0.0;
  double bits = 0.0;
  for (int k = 0; (1L << k) < ranks; ++k) {
    // How many of 0 .. ranks - 1 have bit k set.
    const long period = 2L << k, whole = ranks / period, rest = ranks % period;
    bits += double(whole * (period / 2) + std::max(0L, rest - period / 2));
  }
  return bits / double(ranks - 1);
}

class Transport {
 public:
  virtual ~Transport() = default;
  Transport(const Transport&) = delete;
  Transport& operator=(const Transport&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  virtual const char* name() const = 0;

  // True when the calls take device buffers directly (NCCL, CUDA-aware MPI), so device
  // algorithms can hand it their buffers without copying them to the host first.
  virtual bool accepts_device_buffers() const { return false; }
  // True when allgather_blocks and alltoallv_blocks take device buffers too (their place()
  // giving device memory): NCCL, whose block calls are its collectives. MPI's and UCX's pack,
  // forward and copy blocks with the host's memcpy, so they take host buffers there even
  // when CUDA-aware.
  virtual bool blocks_accept_device_buffers() const { return false; }
  // True when calls on device buffers can be queued on the caller's stream, behind the work
  // queued there, and return without waiting (NCCL): set_queue_stream(stream) starts that,
  // set_queue_stream(nullptr) ends it. Calls on host buffers still wait for their results.
  virtual bool queues_on_caller_stream() const { return false; }
  virtual void set_queue_stream(const void* /*stream*/) {}
  // A failure of work queued earlier (a peer lost), found without waiting; Ok otherwise.
  virtual Status poll_async_error() { return Status::Ok(); }
  // Until `stream` (a cudaStream_t on this transport's device) has run what is queued on it,
  // this transport's transfers among them: its asynchronous error is polled meanwhile, and
  // that error or the communicator's timeout aborts it (its transfers would otherwise hold
  // the stream for ever) and is returned. Transports that queue on the caller's stream
  // implement it; the others answer zfcInternalError.
  virtual Status wait_for_queued(const void* stream);

  // Every rank contributes `bytes` bytes; recv receives size()*bytes, rank r's block at
  // offset r*bytes. send may equal recv + rank()*bytes (in place).
  Status allgather(const void* send, size_t bytes, void* recv);

  // Rank r contributes recv_bytes[r] bytes, placed at recv + displs[r]. `send` holds this
  // rank's recv_bytes[rank()] bytes and may equal recv + displs[rank()] (in place).
  Status allgatherv(const void* send, void* recv, const size_t* recv_bytes,
                    const size_t* displs);

  // This rank sends send_bytes[j] bytes from send + send_displs[j] to rank j, and receives
  // recv_bytes[j] bytes from rank j at recv + recv_displs[j]. send and recv must not overlap.
  // received[r] (size() entries, may be NULL) is what rank r receives from its peers in
  // this call, for the ledger; without it only this rank's share is entered there, and the
  // caller enters the others' with note_received() once it knows them.
  // Route::kForwarded runs the forwarded exchange where the transport has one (see
  // alltoallv_blocks) and checks that what arrives has the sizes given.
  Status alltoallv(const void* send, const size_t* send_bytes, const size_t* send_displs,
                   void* recv, const size_t* recv_bytes, const size_t* recv_displs,
                   const uint64_t* received = nullptr, Route route = Route::kDirect);

  // Where a call whose receive sizes only the senders know puts what arrives: given the
  // total, a buffer of at least that many bytes, valid until the caller's next use of it.
  // It refers to the caller's callable (which outlives the call it is passed to) instead of
  // holding a copy, so that no capture, however large, allocates in a step.
  class PlaceFn {
   public:
    template <class F, class = std::enable_if_t<!std::is_same_v<std::decay_t<F>, PlaceFn>>>
    PlaceFn(F&& f)  // NOLINT: converts from any callable, as std::function does
        : callable_(const_cast<void*>(static_cast<const void*>(&f))),
          call_([](void* c, size_t total) -> char* {
            return (*static_cast<std::remove_reference_t<F>*>(c))(total);
          }) {}
    char* operator()(size_t total) const { return call_(callable_, total); }

   private:
    void* callable_;
    char* (*call_)(void*, size_t);
  };

  // An allgather of blocks whose sizes only their senders know: rank r contributes `bytes`
  // bytes; every rank learns recv_bytes[r] and finds block r at place(total) + displs[r],
  // the blocks packed in rank order. Its message pattern does not depend on the sizes, so
  // ranks that disagree on them (a mismatched call) still finish it and can see why. MPI
  // and UCX run it in one round of ceil(log2 G) steps (Bruck, each message's length learned
  // by probing it); other transports gather the sizes first (two rounds).
  Status allgather_blocks(const void* send, size_t bytes, size_t* recv_bytes, size_t* displs,
                          const PlaceFn& place);

  // An alltoallv whose receive sizes only the senders know: this rank sends send_bytes[j]
  // bytes from send + send_displs[j] to rank j; what rank j sent it lands at place(total) +
  // recv_displs[j], recv_bytes[j] bytes, packed in rank order. Every pair of ranks
  // exchanges a message, empty or not. One round on MPI and UCX (probed lengths), two on
  // other transports (the sizes first). The ledger gets this rank's share only; the caller
  // enters the others' with note_received() once it knows them.
  //
  // Route::kForwarded, on a transport that forwards() (MPI, UCX): one round of ceil(log2 G)
  // steps in which each rank exchanges one message with one peer each way, relaying blocks
  // (transport/forwarded_exchange.hpp); elsewhere the direct exchange. The traffic counters
  // count every block each time it moves, relays included, since the network carries it
  // that often; the ledger counts each block once, at the rank it was sent to, as for the
  // direct exchange (the busiest rank's and the summed bytes of zfcOpStats_t).
  Status alltoallv_blocks(const void* send, const size_t* send_bytes, const size_t* send_displs,
                          size_t* recv_bytes, size_t* recv_displs, const PlaceFn& place,
                          Route route = Route::kDirect);

  // Every rank's block of `bytes` when the host does not read the sizes: `send` holds the
  // size this rank sends (a uint64_t, `bytes`) and then its block, 8-byte aligned; block r
  // lands at recv + r * bytes and the size rank r sent at sizes[r], all in host memory, or
  // all in device memory (`on_device`, where blocks_accept_device_buffers()). Its messages
  // are those of allgather_blocks with every rank sending `bytes`, so a rank calling
  // allgather_blocks meets it. On host memory it is allgather_blocks, and a block of another
  // size arrives cut or zero-filled, its size telling so. On device memory the sizes' round
  // and the blocks' round are queued without the host reading the sizes: a rank that sends
  // more than `bytes` there is a mismatch the transport itself cannot see.
  Status allgather_fixed_blocks(const void* send, size_t bytes, uint64_t* sizes, void* recv,
                                bool on_device);

  // Whether Route::kForwarded runs forwarded on this transport.
  virtual bool forwards() const { return false; }

  // One step of a forwarded exchange as this rank saw it: the payload bytes it sent rank
  // `to` and received from rank `from` (the framing not counted).
  struct Hop {
    int to;
    uint64_t sent;
    int from;
    uint64_t received;
  };

  // Enters `bytes` received by this transport's rank r in the ledger (see alltoallv).
  void note_received(int r, uint64_t bytes);

  // The operation ledger every transport of a communicator writes into.
  ReceiveLedger& ledger() { return *ledger_; }

  // From now on this transport counts its rounds in the ledger but not its bytes: a part of
  // a communicator (a node or rail transport) sees only its own group's sizes, so the
  // algorithm using it enters every rank's bytes in the communicator's ledger itself.
  void ledger_rounds_only() { ledger_bytes_ = false; }

  Status barrier();

  // Collective: ranks with equal color >= 0 form a new transport ordered by (key, rank);
  // color < 0 yields a null transport. Arguments are assumed agreed by the caller.
  virtual Status split(int color, int key, std::unique_ptr<Transport>* out) = 0;

  // Local: from now on release resources without talking to peers (used by abort).
  virtual void abandon() = 0;

  // Local: a failure outside the transport that leaves this rank's peers in the middle of an
  // operation (a device kernel failing between the rounds of an exchange): every later call
  // is refused, as after a failed transfer, until the communicator is aborted.
  void fail(const Status& s) { (void)note(s); }

  const TrafficCounters& traffic() const { return *counters_; }

  // Which node each rank of this transport is on (size() entries), so that bytes to and
  // from other nodes are also counted as internode. Empty: all on one node.
  void set_peer_nodes(std::vector<int> node_of_rank) { peer_node_ = std::move(node_of_rank); }

  // From now on this transport's bytes are counted in `parent`'s counters, and a failure on
  // either makes both unusable (the node and cross-node transports of the hierarchical
  // exchange are parts of their communicator).
  void report_into(Transport& parent) {
    counters_ = parent.counters_;
    health_ = parent.health_;
    ledger_ = parent.ledger_;
  }

  // The sequence number of the next agreed operation on this transport (1, 2, ...): every
  // rank counts the same operations, so the numbers name where ranks fell out of step.
  uint64_t next_sequence() { return ++sequence_; }

  // Local: true when an operation that failed may still be in flight in the layer below
  // (an MPI collective cannot be withdrawn), so its buffers must outlive the transport.
  virtual bool has_unfinished_operation() const { return false; }

 protected:
  Transport(int rank, int size) : rank_(rank), size_(size) {}

  virtual Status do_allgather(const void* send, size_t bytes, void* recv) = 0;
  virtual Status do_allgatherv(const void* send, void* recv, const size_t* recv_bytes,
                               const size_t* displs) = 0;
  virtual Status do_alltoallv(const void* send, const size_t* send_bytes,
                              const size_t* send_displs, void* recv, const size_t* recv_bytes,
                              const size_t* recv_displs) = 0;
  virtual Status do_barrier() = 0;
  // The *_blocks calls; *rounds gets the dependent rounds taken. The defaults exchange the
  // sizes first (two rounds) and run do_allgatherv / do_alltoallv.
  virtual Status do_allgather_blocks(const void* send, size_t bytes, size_t* recv_bytes,
                                     size_t* displs, const PlaceFn& place, uint32_t* rounds);
  virtual Status do_alltoallv_blocks(const void* send, const size_t* send_bytes,
                                     const size_t* send_displs, size_t* recv_bytes,
                                     size_t* recv_displs, const PlaceFn& place,
                                     uint32_t* rounds);
  // The forwarded exchange (forwards() true): *hops gets its steps. The default, for
  // transports that cannot learn a message's length on arrival, is never called.
  virtual Status do_alltoallv_forwarded(const void* send, const size_t* send_bytes,
                                        const size_t* send_displs, size_t* recv_bytes,
                                        size_t* recv_displs, const PlaceFn& place,
                                        std::vector<Hop>* hops);

 private:
  // An alltoallv's bytes to and from each peer, and this rank's received total in the ledger.
  void count_exchange(const size_t* send_bytes, const size_t* recv_bytes);
  // This rank's received total of an alltoallv (what its peers sent it) in the ledger.
  void note_own_received(const size_t* recv_bytes);
  // Whether this call runs forwarded: asked for, possible here, and more than two ranks.
  bool runs_forwarded(Route route) const {
    return route == Route::kForwarded && forwards() && forwarding_applies(size_);
  }
  bool remote(int r) const {
    return !peer_node_.empty() && peer_node_[static_cast<size_t>(r)] !=
                                      peer_node_[static_cast<size_t>(rank_)];
  }
  void count_sent(int to, uint64_t bytes);
  void count_received(int from, uint64_t bytes);
  Status check_usable() const;
  Status note(Status s);

  int rank_;
  int size_;
  TrafficCounters traffic_;
  TrafficCounters* counters_ = &traffic_;
  std::shared_ptr<TransportHealth> health_ = std::make_shared<TransportHealth>();
  std::shared_ptr<ReceiveLedger> ledger_ = std::make_shared<ReceiveLedger>();
  bool ledger_bytes_ = true;
  uint64_t sequence_ = 0;
  std::vector<int> peer_node_;
  // Reused by the forwarded calls, which run every step: their steps, and the sizes and
  // places of what arrived.
  std::vector<Hop> hops_;
  std::vector<size_t> arrived_;
  std::vector<char> unpacked_;
  std::vector<size_t> fixed_sizes_;  // allgather_fixed_blocks on host memory
  std::vector<char> fixed_blocks_;
};

}  // namespace zfc

// The alltoallv whose receive sizes only the senders know, in ceil(log2 G) steps: Bruck's
// store-and-forward pattern, written once for the transports that can learn a message's
// length on arrival (MPI probes, UCX tag probes).
//
// A rank keeps G slots; slot i first holds its block for rank (me + i) mod G. At the step of
// distance d = 2^k it sends every block in a slot whose bit k is set to rank me + d, and
// receives from rank me - d the blocks of the same slots, which take their place. A block in
// slot i thus moves popcount(i) times, always forward, by i in all, and after the last step
// slot i holds the block rank (me - i) mod G sent this rank. A rank exchanges one message per
// step with one peer each way, so a sparse exchange pays ceil(log2 G) latencies instead of
// G - 1, for relaying blocks: forwarded_relays(G) times the bytes, on average.
//
// The pattern depends only on G, so ranks that disagree on every size still exchange the
// same messages and finish. A message lists its non-empty blocks, (slot, bytes) as two
// uint64 each after their count, then holds them back to back: an empty block costs nothing.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include "transport/transport.hpp"

namespace zfc {

// Buffers a transport keeps between calls (so a steady workload allocates once). A block
// received at one step may be forwarded at a later one, so each step's message is kept until
// the exchange ends.
struct ForwardBuffers {
  std::vector<char> give;
  std::vector<std::vector<char>> takes;
  std::vector<const char*> at;  // where each slot's block is now
  std::vector<uint64_t> bytes;  // and its length
};

namespace forwarded_detail {

// Frames the blocks of the slots whose bit `bit` is set; returns their payload bytes.
inline uint64_t frame(int n, int bit, ForwardBuffers& b) {
  uint64_t count = 0, body = 0;
  for (int i = 0; i < n; ++i) {
    if ((i >> bit & 1) && b.bytes[static_cast<size_t>(i)] > 0) {
      ++count;
      body += b.bytes[static_cast<size_t>(i)];
    }
  }
  const size_t head = sizeof(uint64_t) * (1 + 2 * count);
  b.give.resize(head + body);
  char* list = b.give.data();
  std::memcpy(list, &count, sizeof count);
  list += sizeof count;
  char* out = b.give.data() + head;
  for (int i = 0; i < n; ++i) {
    const uint64_t len = b.bytes[static_cast<size_t>(i)];
    if (!(i >> bit & 1) || len == 0) continue;
    const uint64_t slot = static_cast<uint64_t>(i);
    std::memcpy(list, &slot, sizeof slot);
    std::memcpy(list + sizeof slot, &len, sizeof len);
    list += 2 * sizeof(uint64_t);
    std::memcpy(out, b.at[static_cast<size_t>(i)], len);
    out += len;
  }
  return body;
}

// Reads a received message into the slots whose bit `bit` is set (the others keep their
// blocks); *payload gets its payload bytes. A message that does not frame its blocks, or
// names a slot it may not fill, is refused.
inline Status unframe(int n, int bit, int me, int from, const std::vector<char>& take,
                      ForwardBuffers& b, uint64_t* payload) {
  for (int i = 0; i < n; ++i) {
    if (i >> bit & 1) b.bytes[static_cast<size_t>(i)] = 0;
  }
  uint64_t count = 0;
  if (take.size() >= sizeof count) std::memcpy(&count, take.data(), sizeof count);
  // How many (slot, bytes) entries fit after the count.
  const uint64_t room =
      take.size() >= sizeof count ? (take.size() - sizeof count) / (2 * sizeof(uint64_t)) : 0;
  bool framed = take.size() >= sizeof count && count <= room;
  const size_t head = framed ? sizeof(uint64_t) * (1 + 2 * count) : 0;
  uint64_t body = 0;
  for (uint64_t c = 0; framed && c < count; ++c) {
    uint64_t slot = 0, len = 0;
    const char* entry = take.data() + sizeof count + c * 2 * sizeof(uint64_t);
    std::memcpy(&slot, entry, sizeof slot);
    std::memcpy(&len, entry + sizeof slot, sizeof len);
    framed = slot < static_cast<uint64_t>(n) && (slot >> bit & 1) && len <= take.size() &&
             b.bytes[slot] == 0 && head + body + len <= take.size();
    if (!framed) break;
    b.at[slot] = take.data() + head + body;
    b.bytes[slot] = len;
    body += len;
  }
  if (!framed || head + body != take.size()) {
    return error(zfcTransportError, "rank %d: a forwarded exchange message from rank %d has "
                 "%zu bytes, which do not frame its blocks", me, from, take.size());
  }
  *payload = body;
  return Status::Ok();
}

}  // namespace forwarded_detail

// exchange(to, from, step, give, &take) sends `give` to rank `to` and receives, into `take`
// (resized to fit), the message rank `from` sends at the same step. hops gets, per step,
// the peers and the payload bytes sent and received (what the transport counts).
template <class Exchange>
Status forwarded_alltoallv_blocks(int n, int me, const void* send, const size_t* send_bytes,
                                  const size_t* send_displs, size_t* recv_bytes,
                                  size_t* recv_displs, const Transport::PlaceFn& place,
                                  ForwardBuffers& b, std::vector<Transport::Hop>* hops,
                                  Exchange&& exchange) {
  const char* in = static_cast<const char*>(send);
  const size_t slots = static_cast<size_t>(n);
  b.at.assign(slots, nullptr);
  b.bytes.assign(slots, 0);
  for (int i = 0; i < n; ++i) {
    const size_t to = static_cast<size_t>((me + i) % n);
    b.at[static_cast<size_t>(i)] = in + send_displs[to];
    b.bytes[static_cast<size_t>(i)] = send_bytes[to];
  }
  hops->clear();
  const int steps = forwarded_steps(n);
  if (b.takes.size() < static_cast<size_t>(steps)) b.takes.resize(static_cast<size_t>(steps));
  for (int k = 0; k < steps; ++k) {
    const int d = 1 << k, to = (me + d) % n, from = (me - d + n) % n;
    Transport::Hop hop{to, forwarded_detail::frame(n, k, b), from, 0};
    std::vector<char>& take = b.takes[static_cast<size_t>(k)];
    ZFC_RETURN_IF_ERROR(exchange(to, from, static_cast<uint32_t>(k), b.give, &take));
    ZFC_RETURN_IF_ERROR(forwarded_detail::unframe(n, k, me, from, take, b, &hop.received));
    hops->push_back(hop);
  }
  size_t total = 0;
  for (int r = 0; r < n; ++r) {
    recv_displs[r] = total;
    recv_bytes[r] = static_cast<size_t>(b.bytes[static_cast<size_t>((me - r + n) % n)]);
    total += recv_bytes[r];
  }
  char* out = place(total);
  for (int r = 0; r < n; ++r) {
    if (recv_bytes[r] > 0) {
      std::memcpy(out + recv_displs[r], b.at[static_cast<size_t>((me - r + n) % n)],
                  recv_bytes[r]);
    }
  }
  return Status::Ok();
}

}  // namespace zfc

// The allgather of blocks whose sizes only their senders know, for a transport that can
// learn a message's length on arrival (UCX tag probes). The MPI transport sends the same
// messages in the same pattern without copying blocks to send them (hindexed types), its
// own version of this loop.
//
// Bruck's pattern: before the step of distance d, rank r holds the blocks of ranks r, r+1,
// ... (mod G), d of them; it sends the first min(d, G - d) to rank r - d and receives as many
// from rank r + d. The pattern depends only on G, so ranks that disagree on every size still
// exchange the same messages and finish. A message is its blocks' sizes (uint64 each), then
// the blocks back to back.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "transport/transport.hpp"

namespace zfc {

// Up to this many ranks a transport gathers blocks directly instead: every rank sends its
// block to each peer at once and receives each peer's where it belongs in rank order, one
// message a pair and nothing copied after it arrives. Bruck's steps each wait for the one
// before (ranks that share a core wait for every partner to be scheduled in turn) and copy
// every block once more; on 8 ranks of 2 cores the direct gather took key_routed's fp32
// step from 10.5 to 6.1 ms. Past this, Bruck's log2(G) messages a rank beat G - 1. Every
// rank takes the same way: it depends on G alone.
constexpr int kDirectBlockGatherRanks = 16;

// Buffers a transport keeps between calls (so a steady workload allocates once).
struct BlockGatherBuffers {
  std::vector<char> held, give, take;
  std::vector<uint64_t> held_bytes;
};

// exchange(to, from, step, give, &take) sends `give` to rank `to` and receives, into `take`
// (resized to fit), the message rank `from` sends at the same step.
template <class Exchange>
Status bruck_gather_blocks(int n, int me, const void* send, size_t bytes, size_t* recv_bytes,
                           size_t* displs, const Transport::PlaceFn& place,
                           BlockGatherBuffers& b, Exchange&& exchange) {
  b.held.assign(static_cast<const char*>(send), static_cast<const char*>(send) + bytes);
  b.held_bytes.assign(1, bytes);
  uint32_t step = 0;
  for (int d = 1; d < n; d *= 2, ++step) {
    const size_t m = static_cast<size_t>(std::min(d, n - d));
    size_t body = 0;
    for (size_t i = 0; i < m; ++i) body += b.held_bytes[i];
    b.give.resize(m * sizeof(uint64_t) + body);
    std::memcpy(b.give.data(), b.held_bytes.data(), m * sizeof(uint64_t));
    if (body > 0) std::memcpy(b.give.data() + m * sizeof(uint64_t), b.held.data(), body);
    ZFC_RETURN_IF_ERROR(exchange((me - d + n) % n, (me + d) % n, step, b.give, &b.take));
    size_t got = 0;
    if (b.take.size() >= m * sizeof(uint64_t)) {
      for (size_t i = 0; i < m; ++i) {
        uint64_t len;
        std::memcpy(&len, b.take.data() + i * sizeof(uint64_t), sizeof len);
        b.held_bytes.push_back(len);
        got += len;
      }
    }
    if (b.take.size() != m * sizeof(uint64_t) + got) {
      return error(zfcTransportError, "rank %d: a block gather message from rank %d has %zu "
                   "bytes, which do not frame its %zu blocks", me, (me + d) % n,
                   b.take.size(), m);
    }
    b.held.insert(b.held.end(), b.take.begin() + static_cast<long>(m * sizeof(uint64_t)),
                  b.take.end());
  }
  // held has the blocks of ranks me, me + 1, ... back to back; put them in rank order.
  size_t total = 0;
  for (int r = 0; r < n; ++r) {
    recv_bytes[r] = static_cast<size_t>(b.held_bytes[static_cast<size_t>((r - me + n) % n)]);
    displs[r] = total;
    total += recv_bytes[r];
  }
  char* out = place(total);
  size_t at = 0;
  for (int i = 0; i < n; ++i) {
    const int r = (me + i) % n;
    if (recv_bytes[r] > 0) std::memcpy(out + displs[r], b.held.data() + at, recv_bytes[r]);
    at += recv_bytes[r];
  }
  return Status::Ok();
}

}  // namespace zfc

#include "transport/transport.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

namespace zfc {
namespace {

// Sizes that arrived as uint64, as byte counts packed in rank order; returns their total.
size_t pack_received(const uint64_t* sizes, size_t n, size_t* bytes, size_t* displs) {
  size_t total = 0;
  for (size_t r = 0; r < n; ++r) {
    bytes[r] = static_cast<size_t>(sizes[r]);
    displs[r] = total;
    total += bytes[r];
  }
  return total;
}

}  // namespace

void Transport::note_received(int r, uint64_t bytes) {
  if (!ledger_bytes_) return;
  const size_t at = static_cast<size_t>(r);
  if (ledger_->by_rank.size() <= at) ledger_->by_rank.resize(at + 1, 0);
  ledger_->by_rank[at] += bytes;
}

void Transport::count_sent(int to, uint64_t bytes) {
  counters_->bytes_sent += bytes;
  if (remote(to)) counters_->internode_sent += bytes;
}

void Transport::count_received(int from, uint64_t bytes) {
  counters_->bytes_received += bytes;
  if (remote(from)) counters_->internode_received += bytes;
}

Status Transport::check_usable() const {
  if (health_->failure.empty()) return Status::Ok();
  return error(zfcInvalidUsage, "rank %d: the communicator failed earlier and can only be "
               "aborted (zfcCommAbort): %s", rank_, health_->failure.c_str());
}

Status Transport::note(Status s) {
  if (!s.ok() && health_->failure.empty()) health_->failure = s.message();
  return s;
}

Status Transport::wait_for_queued(const void* /*stream*/) {
  return error(zfcInternalError, "rank %d: the %s transport queues nothing on the caller's stream",
               rank_, name());
}

Status Transport::allgather(const void* send, size_t bytes, void* recv) {
  ZFC_RETURN_IF_ERROR(check_usable());
  for (int r = 0; r < size_; ++r) {
    note_received(r, bytes * static_cast<uint64_t>(size_ - 1));
    if (r == rank_) continue;
    count_sent(r, bytes);
    count_received(r, bytes);
  }
  ++ledger_->rounds;
  return note(do_allgather(send, bytes, recv));
}

Status Transport::allgatherv(const void* send, void* recv, const size_t* recv_bytes,
                             const size_t* displs) {
  ZFC_RETURN_IF_ERROR(check_usable());
  uint64_t total = 0;
  for (int r = 0; r < size_; ++r) total += recv_bytes[r];
  for (int r = 0; r < size_; ++r) {
    note_received(r, total - recv_bytes[r]);
    if (r == rank_) continue;
    count_sent(r, recv_bytes[rank_]);
    count_received(r, recv_bytes[r]);
  }
  ++ledger_->rounds;
  return note(do_allgatherv(send, recv, recv_bytes, displs));
}

Status Transport::alltoallv(const void* send, const size_t* send_bytes,
                            const size_t* send_displs, void* recv, const size_t* recv_bytes,
                            const size_t* recv_displs, const uint64_t* received, Route route) {
  ZFC_RETURN_IF_ERROR(check_usable());
  // Every rank takes the same route whatever its displacements: the forwarded exchange
  // packs what arrives in rank order, straight into recv when recv is packed so, else into
  // scratch and then to each displacement.
  if (runs_forwarded(route)) {
    const size_t n = static_cast<size_t>(size_);
    size_t packed = 0;
    for (int j = 0; j < size_ && packed != SIZE_MAX; ++j) {
      packed = recv_displs[j] == packed ? packed + recv_bytes[j] : SIZE_MAX;
    }
    std::vector<size_t>& got = arrived_;
    got.resize(2 * n);
    std::vector<char>& scratch = unpacked_;
    char* landed = nullptr;
    ZFC_RETURN_IF_ERROR(alltoallv_blocks(send, send_bytes, send_displs, got.data(),
                                         got.data() + n, [&](size_t total) {
                                           if (total == packed) {
                                             landed = static_cast<char*>(recv);
                                           } else {
                                             scratch.resize(total);
                                             landed = scratch.data();
                                           }
                                           return landed;
                                         }, route));
    for (int j = 0; j < size_; ++j) {
      if (got[static_cast<size_t>(j)] != recv_bytes[j]) {
        return note(error(zfcTransportError, "rank %d: rank %d sent %zu bytes in an exchange "
                          "whose sizes say %zu", rank_, j, got[static_cast<size_t>(j)],
                          recv_bytes[j]));
      }
    }
    for (int j = 0; j < size_; ++j) {
      if (landed != recv && recv_bytes[j] > 0) {
        std::memcpy(static_cast<char*>(recv) + recv_displs[j], landed + got[n + j],
                    recv_bytes[j]);
      }
      if (received != nullptr && j != rank_) note_received(j, received[j]);
    }
    return Status::Ok();
  }
  count_exchange(send_bytes, recv_bytes);
  if (received != nullptr) {
    for (int r = 0; r < size_; ++r) {
      if (r != rank_) note_received(r, received[r]);
    }
  }
  ++ledger_->rounds;
  return note(do_alltoallv(send, send_bytes, send_displs, recv, recv_bytes, recv_displs));
}

Status Transport::allgather_blocks(const void* send, size_t bytes, size_t* recv_bytes,
                                   size_t* displs, const PlaceFn& place) {
  ZFC_RETURN_IF_ERROR(check_usable());
  uint32_t rounds = 0;
  const Status s = note(do_allgather_blocks(send, bytes, recv_bytes, displs, place, &rounds));
  ledger_->rounds += rounds;
  ZFC_RETURN_IF_ERROR(s);
  // The sizes are known only now; the framing a transport adds (lengths, or the sizes'
  // round) is not part of the operation's traffic.
  uint64_t total = 0;
  for (int r = 0; r < size_; ++r) total += recv_bytes[r];
  for (int r = 0; r < size_; ++r) {
    note_received(r, total - recv_bytes[r]);
    if (r == rank_) continue;
    count_sent(r, bytes);
    count_received(r, recv_bytes[r]);
  }
  return s;
}

Status Transport::allgather_fixed_blocks(const void* send, size_t bytes, uint64_t* sizes,
                                         void* recv, bool on_device) {
  ZFC_RETURN_IF_ERROR(check_usable());
  const size_t n = static_cast<size_t>(size_);
  const char* block = static_cast<const char*>(send) + sizeof(uint64_t);
  if (!on_device) {
    // Host memory, whatever the transport's block exchange (MPI's and UCX's probe lengths).
    fixed_sizes_.resize(2 * n);
    ZFC_RETURN_IF_ERROR(allgather_blocks(block, bytes, fixed_sizes_.data(),
                                         fixed_sizes_.data() + n, [&](size_t total) {
                                           fixed_blocks_.resize(std::max<size_t>(total, 1));
                                           return fixed_blocks_.data();
                                         }));
    char* out = static_cast<char*>(recv);
    for (size_t r = 0; r < n; ++r) {
      const size_t got = std::min(fixed_sizes_[r], bytes);
      std::memcpy(out + r * bytes, fixed_blocks_.data() + fixed_sizes_[n + r], got);
      std::memset(out + r * bytes + got, 0, bytes - got);
      sizes[r] = fixed_sizes_[r];
    }
    return Status::Ok();
  }
  if (!blocks_accept_device_buffers()) {
    return error(zfcInternalError, "allgather_fixed_blocks on device memory over %s", name());
  }
  // The two rounds of do_allgather_blocks, the sizes left where they arrive.
  std::vector<size_t> each(n, bytes), at(n);
  for (size_t r = 0; r < n; ++r) at[r] = r * bytes;
  Status s = note(do_allgather(send, sizeof(uint64_t), sizes));
  ledger_->rounds += 1;
  if (s.ok()) {
    s = note(do_allgatherv(block, recv, each.data(), at.data()));
    ledger_->rounds += 1;
  }
  ZFC_RETURN_IF_ERROR(s);
  for (int r = 0; r < size_; ++r) {
    note_received(r, bytes * (n - 1));
    if (r == rank_) continue;
    count_sent(r, bytes);
    count_received(r, bytes);
  }
  return s;
}

Status Transport::alltoallv_blocks(const void* send, const size_t* send_bytes,
                                   const size_t* send_displs, size_t* recv_bytes,
                                   size_t* recv_displs, const PlaceFn& place, Route route) {
  ZFC_RETURN_IF_ERROR(check_usable());
  if (runs_forwarded(route)) {
    const Status s = note(do_alltoallv_forwarded(send, send_bytes, send_displs, recv_bytes,
                                                 recv_displs, place, &hops_));
    ++ledger_->rounds;
    ZFC_RETURN_IF_ERROR(s);
    for (const Hop& h : hops_) {
      count_sent(h.to, h.sent);
      count_received(h.from, h.received);
    }
    note_own_received(recv_bytes);
    return s;
  }
  uint32_t rounds = 0;
  const Status s = note(
      do_alltoallv_blocks(send, send_bytes, send_displs, recv_bytes, recv_displs, place, &rounds));
  ledger_->rounds += rounds;
  ZFC_RETURN_IF_ERROR(s);
  count_exchange(send_bytes, recv_bytes);
  return s;
}

void Transport::count_exchange(const size_t* send_bytes, const size_t* recv_bytes) {
  for (int r = 0; r < size_; ++r) {
    if (r == rank_) continue;
    count_sent(r, send_bytes[r]);
    count_received(r, recv_bytes[r]);
  }
  note_own_received(recv_bytes);
}

void Transport::note_own_received(const size_t* recv_bytes) {
  uint64_t mine = 0;
  for (int r = 0; r < size_; ++r) {
    if (r != rank_) mine += recv_bytes[r];
  }
  note_received(rank_, mine);
}

Status Transport::do_allgather_blocks(const void* send, size_t bytes, size_t* recv_bytes,
                                      size_t* displs, const PlaceFn& place, uint32_t* rounds) {
  const size_t n = static_cast<size_t>(size_);
  std::vector<uint64_t> sizes(n);
  const uint64_t mine = bytes;
  *rounds = 1;
  ZFC_RETURN_IF_ERROR(do_allgather(&mine, sizeof mine, sizes.data()));
  char* out = place(pack_received(sizes.data(), n, recv_bytes, displs));
  *rounds = 2;
  return do_allgatherv(send, out, recv_bytes, displs);
}

Status Transport::do_alltoallv_blocks(const void* send, const size_t* send_bytes,
                                      const size_t* send_displs, size_t* recv_bytes,
                                      size_t* recv_displs, const PlaceFn& place,
                                      uint32_t* rounds) {
  const size_t n = static_cast<size_t>(size_);
  std::vector<uint64_t> give(n), take(n);
  std::vector<size_t> eight(n, sizeof(uint64_t)), at(n);
  for (size_t j = 0; j < n; ++j) {
    give[j] = send_bytes[j];
    at[j] = j * sizeof(uint64_t);
  }
  *rounds = 1;
  ZFC_RETURN_IF_ERROR(
      do_alltoallv(give.data(), eight.data(), at.data(), take.data(), eight.data(), at.data()));
  char* out = place(pack_received(take.data(), n, recv_bytes, recv_displs));
  *rounds = 2;
  return do_alltoallv(send, send_bytes, send_displs, out, recv_bytes, recv_displs);
}

Status Transport::do_alltoallv_forwarded(const void*, const size_t*, const size_t*, size_t*,
                                         size_t*, const PlaceFn&, std::vector<Hop>*) {
  return error(zfcInternalError, "rank %d: the %s transport has no forwarded exchange", rank_,
               name());
}

Status Transport::barrier() {
  ZFC_RETURN_IF_ERROR(check_usable());
  ++ledger_->rounds;
  return note(do_barrier());
}

}  // namespace zfc

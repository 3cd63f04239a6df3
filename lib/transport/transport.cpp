#include "transport/transport.hpp"

namespace zfc {

Status Transport::allgather(const void* send, size_t bytes, void* recv) {
  const uint64_t peers = static_cast<uint64_t>(size_ - 1);
  traffic_.bytes_sent += bytes * peers;
  traffic_.bytes_received += bytes * peers;
  return do_allgather(send, bytes, recv);
}

Status Transport::allgatherv(const void* send, void* recv, const size_t* recv_bytes,
                             const size_t* displs) {
  const uint64_t peers = static_cast<uint64_t>(size_ - 1);
  traffic_.bytes_sent += recv_bytes[rank_] * peers;
  for (int r = 0; r < size_; ++r) {
    if (r != rank_) traffic_.bytes_received += recv_bytes[r];
  }
  return do_allgatherv(send, recv, recv_bytes, displs);
}

Status Transport::alltoallv(const void* send, const size_t* send_bytes,
                            const size_t* send_displs, void* recv, const size_t* recv_bytes,
                            const size_t* recv_displs) {
  for (int r = 0; r < size_; ++r) {
    if (r == rank_) continue;
    traffic_.bytes_sent += send_bytes[r];
    traffic_.bytes_received += recv_bytes[r];
  }
  return do_alltoallv(send, send_bytes, send_displs, recv, recv_bytes, recv_displs);
}

Status Transport::barrier() { return do_barrier(); }

}  // namespace zfc

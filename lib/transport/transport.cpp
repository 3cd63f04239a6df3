#include "transport/transport.hpp"

namespace zfc {

void Transport::count_sent(int to, uint64_t bytes) {
  counters_->bytes_sent += bytes;
  if (remote(to)) counters_->internode_sent += bytes;
}

void Transport::count_received(int from, uint64_t bytes) {
  counters_->bytes_received += bytes;
  if (remote(from)) counters_->internode_received += bytes;
}

Status Transport::allgather(const void* send, size_t bytes, void* recv) {
  for (int r = 0; r < size_; ++r) {
    if (r == rank_) continue;
    count_sent(r, bytes);
    count_received(r, bytes);
  }
  return do_allgather(send, bytes, recv);
}

Status Transport::allgatherv(const void* send, void* recv, const size_t* recv_bytes,
                             const size_t* displs) {
  for (int r = 0; r < size_; ++r) {
    if (r == rank_) continue;
    count_sent(r, recv_bytes[rank_]);
    count_received(r, recv_bytes[r]);
  }
  return do_allgatherv(send, recv, recv_bytes, displs);
}

Status Transport::alltoallv(const void* send, const size_t* send_bytes,
                            const size_t* send_displs, void* recv, const size_t* recv_bytes,
                            const size_t* recv_displs) {
  for (int r = 0; r < size_; ++r) {
    if (r == rank_) continue;
    count_sent(r, send_bytes[r]);
    count_received(r, recv_bytes[r]);
  }
  return do_alltoallv(send, send_bytes, send_displs, recv, recv_bytes, recv_displs);
}

Status Transport::barrier() { return do_barrier(); }

}  // namespace zfc

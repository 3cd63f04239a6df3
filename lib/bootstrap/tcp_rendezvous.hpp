// Where ranks launched without MPI first meet: rank 0 listens on a TCP port, every other rank
// connects to it, and the star of connections carries small exchanges (the transport's
// addresses) until the transport itself is up. Every wait has a deadline, so a rank that
// never arrives, a port in use or an address that does not answer is an error, not a hang.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "host_device/status.hpp"

namespace zfc {

class Rendezvous {
 public:
  ~Rendezvous();
  Rendezvous(const Rendezvous&) = delete;
  Rendezvous& operator=(const Rendezvous&) = delete;

  // Rank 0 listens on `port` (all interfaces); the others connect to addr:port, retrying
  // until timeout_ms has passed.
  static Status create(const std::string& addr, int port, int rank, int size, int timeout_ms,
                       std::unique_ptr<Rendezvous>* out);

  // The same with rank 0's listening socket already open (see listen_on).
  static Status create_with_listener(int listen_fd, const std::string& addr, int port, int rank,
                                     int size, int timeout_ms, std::unique_ptr<Rendezvous>* out);

  // Collective over the ranks that met: every rank's block (any size), in rank order.
  Status allgather(const std::string& mine, std::vector<std::string>* all);

  int rank() const { return rank_; }
  int size() const { return size_; }

 private:
  Rendezvous(int rank, int size, int timeout_ms);
  Status accept_all(int listen_fd);
  Status connect_root(const std::string& addr, int port);

  int rank_;
  int size_;
  int timeout_ms_;
  std::vector<int> fds_;  // rank 0: one per rank (fds_[0] unused); others: fds_[0] to rank 0
};

// Opens a listening TCP socket on `port` (0: any free port) on all interfaces; the port it
// got into *bound_port. A port in use is zfcSystemError naming it.
Status listen_on(int port, int* fd, int* bound_port);

}  // namespace zfc

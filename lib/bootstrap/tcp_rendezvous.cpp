#include "bootstrap/tcp_rendezvous.hpp"

#include "bootstrap/socket_io.hpp"

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>

namespace zfc {
namespace {

using Clock = SocketClock;
constexpr uint32_t kHelloMagic = 0x7a665242u;  // "zfRB"

struct Hello {
  uint32_t magic;
  uint32_t rank;
  uint32_t size;
};

Status send_block(int fd, const std::string& s, Clock::time_point deadline, const char* what) {
  const uint64_t len = s.size();
  ZFC_RETURN_IF_ERROR(send_all(fd, &len, sizeof len, deadline, what));
  return send_all(fd, s.data(), s.size(), deadline, what);
}

Status recv_block(int fd, std::string* s, Clock::time_point deadline, const char* what) {
  uint64_t len = 0;
  ZFC_RETURN_IF_ERROR(recv_all(fd, &len, sizeof len, deadline, what));
  if (len > (uint64_t{1} << 30)) return error(zfcRemoteError, "%s: a block of %llu bytes",
                                             what, static_cast<unsigned long long>(len));
  s->resize(len);
  return recv_all(fd, &(*s)[0], len, deadline, what);
}


}  // namespace

Status listen_on(int port, int* fd, int* bound_port) {
  const int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (s < 0) return error(zfcSystemError, "socket: %s", std::strerror(errno));
  int one = 1;
  setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_ANY);
  a.sin_port = htons(static_cast<uint16_t>(port));
  if (bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || listen(s, 1024) != 0) {
    const int e = errno;
    close(s);
    return error(zfcSystemError, "cannot listen on TCP port %d: %s%s", port, std::strerror(e),
                 e == EADDRINUSE ? " (another program holds it: choose another MASTER_PORT)"
                                 : "");
  }
  socklen_t len = sizeof a;
  getsockname(s, reinterpret_cast<sockaddr*>(&a), &len);
  *fd = s;
  *bound_port = ntohs(a.sin_port);
  return Status::Ok();
}

Rendezvous::Rendezvous(int rank, int size, int timeout_ms)
    : rank_(rank), size_(size), timeout_ms_(timeout_ms), fds_(static_cast<size_t>(size), -1) {}

Rendezvous::~Rendezvous() {
  for (int fd : fds_) {
    if (fd >= 0) close(fd);
  }
}

Status Rendezvous::create(const std::string& addr, int port, int rank, int size,
                          int timeout_ms, std::unique_ptr<Rendezvous>* out) {
  int fd = -1;
  if (rank == 0 && size > 1) {
    int bound = 0;
    ZFC_RETURN_IF_ERROR(listen_on(port, &fd, &bound));
  }
  return create_with_listener(fd, addr, port, rank, size, timeout_ms, out);
}

Status Rendezvous::create_with_listener(int listen_fd, const std::string& addr, int port,
                                        int rank, int size, int timeout_ms,
                                        std::unique_ptr<Rendezvous>* out) {
  std::unique_ptr<Rendezvous> r(new Rendezvous(rank, size, timeout_ms));
  Status s = Status::Ok();
  if (rank == 0) {
    if (size > 1) s = r->accept_all(listen_fd);
  } else {
    s = r->connect_root(addr, port);
  }
  if (listen_fd >= 0) close(listen_fd);
  if (!s.ok()) return s;
  *out = std::move(r);
  return Status::Ok();
}

Status Rendezvous::accept_all(int listen_fd) {
  const Clock::time_point deadline = Clock::now() + std::chrono::milliseconds(timeout_ms_);
  int arrived = 1;
  while (arrived < size_) {
    Status w = wait_fd(listen_fd, POLLIN, deadline, "rank 0 waiting for the other ranks");
    if (!w.ok()) {
      std::string missing;
      for (int r = 1; r < size_ && missing.size() < 200; ++r) {
        if (fds_[static_cast<size_t>(r)] >= 0) continue;
        missing += (missing.empty() ? "" : ", ") + std::to_string(r);
      }
      return error(zfcTimeout, "rank 0: %d of %d ranks arrived within %d ms (missing: %s)",
                   arrived, size_, timeout_ms_, missing.c_str());
    }
    const int fd = accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    no_delay(fd);
    Hello h{};
    Status s = recv_all(fd, &h, sizeof h, deadline, "rank 0 reading a hello");
    const bool good = s.ok() && h.magic == kHelloMagic && h.size == static_cast<uint32_t>(size_) &&
                      h.rank > 0 && h.rank < h.size && fds_[h.rank] < 0;
    if (!good) {
      close(fd);
      if (!s.ok() || h.magic != kHelloMagic) continue;  // not one of ours
      return error(zfcInvalidUsage, "rank 0: a process says it is rank %u of %u, but this run "
                   "has %d ranks%s", h.rank, h.size, size_,
                   h.rank < h.size && h.rank < static_cast<uint32_t>(size_) && fds_[h.rank] >= 0
                       ? " and that rank has already arrived (two ranks with one RANK?)"
                       : "");
    }
    fds_[h.rank] = fd;
    ++arrived;
  }
  return Status::Ok();
}

Status Rendezvous::connect_root(const std::string& addr, int port) {
  const Clock::time_point deadline = Clock::now() + std::chrono::milliseconds(timeout_ms_);
  int fd = -1;
  Status c = connect_until(addr, port, deadline, "rank 0's (MASTER_ADDR, or the unique id's)",
                           &fd);
  if (c.code() == zfcTimeout) {
    return error(zfcTimeout, "rank %d: %s (waited %d ms)", rank_, c.message().c_str(),
                 timeout_ms_);
  }
  ZFC_RETURN_IF_ERROR(c);
  const Hello h{kHelloMagic, static_cast<uint32_t>(rank_), static_cast<uint32_t>(size_)};
  fds_[0] = fd;
  return send_all(fd, &h, sizeof h, deadline, "sending a hello to rank 0");
}

Status Rendezvous::allgather(const std::string& mine, std::vector<std::string>* all) {
  const Clock::time_point deadline = Clock::now() + std::chrono::milliseconds(timeout_ms_);
  std::vector<std::string> blocks(static_cast<size_t>(size_));
  blocks[static_cast<size_t>(rank_)] = mine;
  if (rank_ != 0) {
    ZFC_RETURN_IF_ERROR(send_block(fds_[0], mine, deadline, "sending to rank 0"));
    for (int r = 0; r < size_; ++r) {
      ZFC_RETURN_IF_ERROR(recv_block(fds_[0], &blocks[static_cast<size_t>(r)], deadline,
                                     "receiving from rank 0"));
    }
  } else {
    for (int r = 1; r < size_; ++r) {
      ZFC_RETURN_IF_ERROR(recv_block(fds_[static_cast<size_t>(r)], &blocks[static_cast<size_t>(r)],
                                     deadline, "rank 0 receiving"));
    }
    for (int r = 1; r < size_; ++r) {
      for (const std::string& b : blocks) {
        ZFC_RETURN_IF_ERROR(send_block(fds_[static_cast<size_t>(r)], b, deadline,
                                       "rank 0 sending"));
      }
    }
  }
  *all = std::move(blocks);
  return Status::Ok();
}

}  // namespace zfc

#include "bootstrap/socket_io.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

namespace zfc {

int remaining_ms(SocketClock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - SocketClock::now());
  return left.count() < 0 ? 0 : static_cast<int>(left.count());
}

Status wait_fd(int fd, short events, SocketClock::time_point deadline, const char* what) {
  for (;;) {
    pollfd p{fd, events, 0};
    const int left = remaining_ms(deadline);
    const int r = poll(&p, 1, left);
    if (r > 0) return Status::Ok();
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return error(zfcSystemError, "%s: poll failed: %s", what, std::strerror(errno));
    return error(zfcTimeout, "%s: no answer within the timeout", what);
  }
}

Status send_all(int fd, const void* data, size_t n, SocketClock::time_point deadline,
                const char* what) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    ZFC_RETURN_IF_ERROR(wait_fd(fd, POLLOUT, deadline, what));
    const ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
    if (w < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (w <= 0) {
      return error(zfcRemoteError, "%s: the peer hung up: %s", what, std::strerror(errno));
    }
    p += w;
    n -= static_cast<size_t>(w);
  }
  return Status::Ok();
}

Status recv_all(int fd, void* data, size_t n, SocketClock::time_point deadline,
                const char* what) {
  char* p = static_cast<char*>(data);
  while (n > 0) {
    ZFC_RETURN_IF_ERROR(wait_fd(fd, POLLIN, deadline, what));
    const ssize_t r = recv(fd, p, n, 0);
    if (r < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (r <= 0) {
      return error(zfcRemoteError, "%s: the peer hung up%s%s", what, r < 0 ? ": " : "",
                   r < 0 ? std::strerror(errno) : "");
    }
    p += r;
    n -= static_cast<size_t>(r);
  }
  return Status::Ok();
}

Status connect_until(const std::string& addr, int port, SocketClock::time_point deadline,
                     const char* whose, int* fd) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  const std::string port_text = std::to_string(port);
  const int g = getaddrinfo(addr.c_str(), port_text.c_str(), &hints, &res);
  if (g != 0) {
    return error(zfcInvalidUsage, "%s address '%s' does not resolve: %s", whose, addr.c_str(),
                 gai_strerror(g));
  }
  std::string last = "no attempt";
  for (;;) {
    const int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s >= 0 && connect(s, res->ai_addr, res->ai_addrlen) == 0) {
      freeaddrinfo(res);
      no_delay(s);
      *fd = s;
      return Status::Ok();
    }
    last = std::strerror(errno);
    if (s >= 0) close(s);
    if (remaining_ms(deadline) == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  freeaddrinfo(res);
  return error(zfcTimeout, "could not reach %s address %s:%d in time (%s)", whose,
               addr.c_str(), port, last.c_str());
}

void no_delay(int fd) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

std::string local_address(int fd) {
  sockaddr_in a{};
  socklen_t len = sizeof a;
  char text[INET_ADDRSTRLEN] = "";
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0 || a.sin_family != AF_INET ||
      inet_ntop(AF_INET, &a.sin_addr, text, sizeof text) == nullptr) {
    return "";
  }
  return text;
}

}  // namespace zfc

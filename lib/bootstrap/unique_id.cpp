#include "bootstrap/unique_id.hpp"

#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

#include "bootstrap/tcp_rendezvous.hpp"

namespace zfc {
namespace {

constexpr uint32_t kIdMagic = 0x7a664944u;  // "zfID"

struct IdLayout {
  uint32_t magic;
  uint32_t port;
  char addr[kUniqueIdBytes - 8];  // NUL-terminated
};
static_assert(sizeof(IdLayout) == kUniqueIdBytes, "a zfcUniqueId is 128 bytes");

std::mutex& listeners_mutex() {
  static std::mutex m;
  return m;
}

std::map<int, int>& listeners() {
  static std::map<int, int> by_port;
  return by_port;
}

}  // namespace

Status make_unique_id(char id[kUniqueIdBytes], const std::string& address) {
  IdLayout layout{};
  layout.magic = kIdMagic;
  const char* chosen = std::getenv("ZIPFCOLL_SOCKET_ADDR");
  const bool named = chosen != nullptr && *chosen != '\0';
  const char* addr = named ? chosen : address.c_str();
  if (*addr != '\0') {
    if (std::strlen(addr) >= sizeof layout.addr) {
      return error(zfcInvalidUsage, "%s '%s' is longer than %zu bytes",
                   named ? "ZIPFCOLL_SOCKET_ADDR" : "the address", addr,
                   sizeof layout.addr - 1);
    }
    std::strcpy(layout.addr, addr);
  } else if (gethostname(layout.addr, sizeof layout.addr - 1) != 0) {
    std::strcpy(layout.addr, "localhost");
  }
  int fd = -1, port = 0;
  ZFC_RETURN_IF_ERROR(listen_on(0, &fd, &port));
  layout.port = static_cast<uint32_t>(port);
  {
    std::lock_guard<std::mutex> lock(listeners_mutex());
    auto it = listeners().find(port);
    if (it != listeners().end()) close(it->second);  // an id made earlier and never used
    listeners()[port] = fd;
  }
  std::memcpy(id, &layout, sizeof layout);
  return Status::Ok();
}

Status parse_unique_id(const char id[kUniqueIdBytes], std::string* addr, int* port) {
  IdLayout layout;
  std::memcpy(&layout, id, sizeof layout);
  if (layout.magic != kIdMagic || layout.port == 0 || layout.port > 65535 ||
      layout.addr[0] == '\0' || std::memchr(layout.addr, '\0', sizeof layout.addr) == nullptr) {
    return error(zfcInvalidArgument, "the zfcUniqueId was not made by zfcGetUniqueId (or was "
                 "damaged on its way)");
  }
  *addr = layout.addr;
  *port = static_cast<int>(layout.port);
  return Status::Ok();
}

int take_listener(int port) {
  std::lock_guard<std::mutex> lock(listeners_mutex());
  auto it = listeners().find(port);
  if (it == listeners().end()) return -1;
  const int fd = it->second;
  listeners().erase(it);
  return fd;
}

}  // namespace zfc

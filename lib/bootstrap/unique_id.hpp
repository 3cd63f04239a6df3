// The bytes of a zfcUniqueId: where rank 0 listens (a host name or address and a TCP port).
// The process that made the id keeps the listening socket until its rank 0 takes it.
#pragma once

#include <cstddef>
#include <string>

#include "host_device/status.hpp"

namespace zfc {

constexpr size_t kUniqueIdBytes = 128;

// Opens a listening port (any free one), keeps it for take_listener, and writes the id: the
// port, and ZIPFCOLL_SOCKET_ADDR when set, else `address` when given (one the other ranks
// can reach), else this host's name.
Status make_unique_id(char id[kUniqueIdBytes], const std::string& address = std::string());

// Reads an id back; a malformed one is zfcInvalidArgument.
Status parse_unique_id(const char id[kUniqueIdBytes], std::string* addr, int* port);

// The listening socket make_unique_id opened on `port` in this process (handed over once),
// or -1.
int take_listener(int port);

}  // namespace zfc

// The bytes a forwarded exchange moves (Route::kForwarded, transport/forwarded_exchange.hpp),
// derived here from the pattern alone: the block from rank s to rank t sits in slot
// i = (t - s) mod G and, at the step of distance 2^k, moves forward by 2^k when bit k of i is
// set. Every move is counted where it leaves and where it arrives.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace zfc {
namespace test {

struct WireBytes {
  uint64_t sent = 0, received = 0;
};

// bytes[s][t]: what rank s sends rank t. Returns, per rank, what it sends and receives over
// the network, relays included.
inline std::vector<WireBytes> forwarded_traffic(const std::vector<std::vector<uint64_t>>& bytes) {
  const int n = static_cast<int>(bytes.size());
  std::vector<WireBytes> out(bytes.size());
  for (int s = 0; s < n; ++s) {
    for (int t = 0; t < n; ++t) {
      const uint64_t b = bytes[static_cast<size_t>(s)][static_cast<size_t>(t)];
      if (s == t || b == 0) continue;
      const int slot = (t - s + n) % n;
      int at = s;
      for (int k = 0; (1 << k) < n; ++k) {
        if ((slot >> k & 1) == 0) continue;
        const int next = (at + (1 << k)) % n;
        out[static_cast<size_t>(at)].sent += b;
        out[static_cast<size_t>(next)].received += b;
        at = next;
      }
    }
  }
  return out;
}

// The same blocks sent directly: each counted once at each end.
inline std::vector<WireBytes> direct_traffic(const std::vector<std::vector<uint64_t>>& bytes) {
  std::vector<WireBytes> out(bytes.size());
  for (size_t s = 0; s < bytes.size(); ++s) {
    for (size_t t = 0; t < bytes.size(); ++t) {
      if (s == t) continue;
      out[s].sent += bytes[s][t];
      out[t].received += bytes[s][t];
    }
  }
  return out;
}

// Whether the run routes its exchanges forwarded (ZIPFCOLL_ROUTE=forwarded, set by ctest for
// the *_forwarded_* runs); the transports forward only beyond two ranks.
inline bool routing_forwarded() {
  const char* v = std::getenv("ZIPFCOLL_ROUTE");
  return v != nullptr && std::strcmp(v, "forwarded") == 0;
}

// What each rank moves in an exchange of `bytes` as the run routes it.
inline std::vector<WireBytes> exchange_traffic(const std::vector<std::vector<uint64_t>>& bytes) {
  return routing_forwarded() ? forwarded_traffic(bytes) : direct_traffic(bytes);
}

}  // namespace test
}  // namespace zfc

// The chunks of a reduce-scatter + allgather and the transports' size lists for both steps,
// shared by the flat and the two-level allreduce.
#pragma once

#include <algorithm>
#include <cstddef>

namespace zfc {

// n elements in `parts` chunks, the first n % parts one longer: chunk j is
// [off(j), off(j) + len(j)). Every rank computes it from n alone.
struct Chunks {
  size_t n;
  int parts;
  size_t len(int j) const { return n / parts + (static_cast<size_t>(j) < n % parts ? 1 : 0); }
  size_t off(int j) const { return n / parts * j + std::min(static_cast<size_t>(j), n % parts); }
};

// Byte sizes and displacements, `parts` entries each, in 4 * parts entries of host memory
// (the transports read them there).
struct SizeLists {
  size_t *send_bytes, *send_displs, *recv_bytes, *recv_displs;
};

// The reduce-scatter in elements of w bytes: chunk j to rank j, and every rank's copy of
// rank me's chunk back to back.
inline SizeLists scatter_lists(size_t* sizes, const Chunks& c, int me, size_t w) {
  const int p = c.parts;
  SizeLists l{sizes, sizes + p, sizes + 2 * p, sizes + 3 * p};
  for (int j = 0; j < p; ++j) {
    l.send_bytes[j] = c.len(j) * w;
    l.send_displs[j] = c.off(j) * w;
    l.recv_bytes[j] = c.len(me) * w;
    l.recv_displs[j] = static_cast<size_t>(j) * c.len(me) * w;
  }
  return l;
}

// The gather that follows: every chunk at its offset, in the receive lists (the first
// 2 * parts entries of sizes, which a finished reduce-scatter's lists may occupy).
inline SizeLists gather_lists(size_t* sizes, const Chunks& c, size_t w) {
  SizeLists l{nullptr, nullptr, sizes, sizes + c.parts};
  for (int j = 0; j < c.parts; ++j) {
    l.recv_bytes[j] = c.len(j) * w;
    l.recv_displs[j] = c.off(j) * w;
  }
  return l;
}

}  // namespace zfc

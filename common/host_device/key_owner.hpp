// The owner of a key in the key-routed exchange: a fixed function of the key and the rank
// count, so that no rank needs anyone's keys to know where a row goes.
//
//   owner(k) = (k mod G + mix(floor(k / G)) mod G) mod G
//
// Each block of G consecutive keys goes to the G ranks once each, rotated by a hash of the
// block's number. Word ids ranked by frequency put keys of like weight side by side, so the
// heavy head of a Zipf vocabulary is spread evenly, one key per owner per block; the rotation
// keeps keys that share a stride (all even, say) from piling onto a few owners. mix is the
// finalizer of SplitMix64 (Steele, Lea and Flood, OOPSLA 2014). The same code runs on the
// host and on a CUDA device (common/host_device), so both route a key alike.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define ZFC_KEY_OWNER_FN __host__ __device__ inline
#else
#define ZFC_KEY_OWNER_FN inline
#endif

namespace zfc {

ZFC_KEY_OWNER_FN uint64_t mix64(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  x ^= x >> 31;
  return x;
}

ZFC_KEY_OWNER_FN int key_owner(uint64_t key, int ranks) {
  const uint64_t g = static_cast<uint64_t>(ranks);
  return static_cast<int>((key % g + mix64(key / g) % g) % g);
}

}  // namespace zfc

// A hash of a sparse reduce's result (int32 indices and fp32 rows), for the benchmarks'
// check that every rank, and every algorithm in fp32, returned the same bits.
#pragma once

#include <cstddef>
#include <cstdint>

#include "zipfcoll/zipfcoll.h"

inline uint64_t hash_sparse_result(const zfcSparseResult_t& r) {
  uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a over the bytes
  auto mix = [&](const void* p, size_t n) {
    const unsigned char* b = static_cast<const unsigned char*>(p);
    for (size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 0x100000001b3ull;
  };
  mix(r.indices, r.num_unique * sizeof(int32_t));
  mix(r.rows, r.num_unique * r.dim * sizeof(float));
  return h;
}

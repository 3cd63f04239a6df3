// The scatter's register kernel: the items, sum order and partial rows of
// stream_runs_schedule.hpp, with each lane loading kWords 4-byte words of a row (8 or 16
// bytes) straight into registers. Included by rows.cu only.
//
// Why not the ring (stream_runs.cuh) for every width: the ring's 40 KiB of shared memory per
// warp leaves five warps on an SM, each spending a handful of instructions on every 4 bytes
// of a row (an index read from shared memory, an address, a 4-byte cp.async, a read back, an
// add). On an H200 that ran at 0.35 of copy bandwidth at 10^6 rows of 512 fp32, with the
// rows spread evenly slower still (0.23; docs/benchmarks/raw_gpu/0.13.2-54dddc3/), so the
// instructions per row, not the memory, set the pace; this kernel ran the same rows at 0.69
// (docs/benchmarks/gpu.md). Here a lane moves 16 bytes per load, the rows' input numbers and
// targets come by shuffles from one coalesced read per 32 rows, and the warps in flight on an
// SM (24 at 16 bytes, 32 at 8; no shared memory) hide the loads' latency instead of a deep
// ring.
#pragma once

#include <cstdint>

#include "stream_runs_schedule.hpp"

namespace zfc {
namespace cuda {
namespace {

constexpr unsigned kWideThreads = 256;  // 8 warps per block
constexpr unsigned kFullMask = 0xffffffffu;

// kWords aligned 4-byte words of one row slice, loaded at once (one 8- or 16-byte access).
template <uint32_t kWords>
struct RowWords {
  uint32_t w[kWords];
  __device__ void load(const char* p) {
    if constexpr (kWords == 4) {
      const uint4 v = __ldg(reinterpret_cast<const uint4*>(p));
      w[0] = v.x, w[1] = v.y, w[2] = v.z, w[3] = v.w;
    } else if constexpr (kWords == 2) {
      const uint2 v = __ldg(reinterpret_cast<const uint2*>(p));
      w[0] = v.x, w[1] = v.y;
    } else {
      w[0] = __ldg(reinterpret_cast<const uint32_t*>(p));
    }
  }
  // Into the running sums, word by word, each column in row order (the host's).
  template <int kKind>
  __device__ void add_to(float* acc) const {
    constexpr uint32_t kPer = stream::LaneColumns<kKind>::kCount;
#pragma unroll
    for (uint32_t i = 0; i < kWords; ++i) stream::LaneColumns<kKind>::add(acc + i * kPer, w[i]);
  }
};

// One warp sums its item's rows [it.begin, it.end) in sorted order. Every 32 rows, each lane
// reads one row's input number and target (coalesced); kDepth rows' loads are then issued
// before any is added, the numbers and targets broadcast by shuffles. A batch whose targets
// all continue the open run (a hot id's) skips the per-row target test. Shuffles are made by
// the whole warp: the item, and so every branch around them, is the same for all its lanes.
// Counts are below 2^31 (positions are int32), so j0 + 32 never wraps.
template <int kKind, uint32_t kWords, uint32_t kDepth>
__device__ void stream_wide_item(uint32_t lane, const stream::StreamItem& it) {
  static_assert(32 % kDepth == 0, "a group of rows would cross a batch of 32");
  stream::RunSum<kKind, kWords> sum;
  for (uint32_t j0 = it.begin; j0 < it.end; j0 += 32) {
    const uint32_t rows = min(32u, it.end - j0);
    const bool have = lane < rows;
    const uint32_t my_order = have ? it.order[j0 + lane] : 0u;
    const uint32_t my_target = have ? it.target[j0 + lane] : stream::kNoTarget;
    const bool continues = __all_sync(kFullMask, !have || my_target == sum.target);
    for (uint32_t u0 = 0; u0 < rows; u0 += kDepth) {
      RowWords<kWords> v[kDepth];
#pragma unroll
      for (uint32_t i = 0; i < kDepth; ++i) {
        const uint32_t o = __shfl_sync(kFullMask, my_order, u0 + i);
        if (u0 + i < rows && it.mine) {
          v[i].load(it.lane_bytes + static_cast<size_t>(o) * it.row_bytes);
        }
      }
      if (continues) {
        if (it.mine) {
#pragma unroll
          for (uint32_t i = 0; i < kDepth; ++i) {
            if (u0 + i < rows) v[i].template add_to<kKind>(sum.acc);
          }
        }
        continue;
      }
#pragma unroll
      for (uint32_t i = 0; i < kDepth; ++i) {
        const uint32_t t = __shfl_sync(kFullMask, my_target, u0 + i);
        if (u0 + i >= rows) continue;
        if (t != sum.target) sum.start(it, t);
        if (it.mine) v[i].template add_to<kKind>(sum.acc);
      }
    }
  }
  sum.flush(it);
}

// Items (chunk k, slice s) = warp, + warps in the grid, ...; slices of 32 * kWords * 4 bytes.
template <int kKind, uint32_t kWords, uint32_t kDepth, int kMinBlocks>
__global__ void __launch_bounds__(kWideThreads, kMinBlocks)
    stream_wide_kernel(const void* rows, size_t row_bytes, const uint32_t* target,
                       const uint32_t* order, uint32_t n, const uint32_t* chunk_starts,
                       uint32_t chunks, uint32_t slices, size_t dim, float* dense,
                       float* partials, bool accumulate) {
  const uint32_t lane = threadIdx.x % 32;
  const uint64_t warps = static_cast<uint64_t>(gridDim.x) * (blockDim.x / 32);
  const uint64_t items = static_cast<uint64_t>(chunks) * slices;
  for (uint64_t item = static_cast<uint64_t>(blockIdx.x) * (blockDim.x / 32) + threadIdx.x / 32;
       item < items; item += warps) {
    const uint32_t k = static_cast<uint32_t>(item / slices);
    const uint32_t s = static_cast<uint32_t>(item % slices);
    const stream::StreamItem it = stream::make_item<kKind, kWords * 4>(
        rows, row_bytes, target, order, n, chunk_starts, k, s, lane, dim, dense, partials,
        accumulate);
    if (it.begin < it.end) stream_wide_item<kKind, kWords, kDepth>(lane, it);
  }
}

}  // namespace
}  // namespace cuda
}  // namespace zfc

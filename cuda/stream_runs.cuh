// The scatter's streaming kernel on the device: the schedule of stream_runs_schedule.hpp with
// cp.async copies into shared memory and __syncwarp; and the kernels around every streaming
// scatter, the chunk starts before it and the fold after. Included by rows.cu only.
//
// The ring takes rows of 4-byte slices that the register kernel (stream_wide_rows.cuh) cannot
// load 8 or 16 bytes at a time, and sizes with too few work items for that kernel. On an H200
// it matched the host's bits and compute-sanitizer's racecheck found no hazard in its ring
// (docs/benchmarks/gpu.md); tests/unit/test_stream_schedule.cpp runs its schedule on the host.
// The chunk starts by a warp's search and the fold staged in shared memory are newer: they
// have not run on a GPU.
#pragma once

#include <cuda_pipeline.h>

#include <cstdint>

#include "stream_runs_schedule.hpp"

namespace zfc {
namespace cuda {
namespace {

// One lane of a warp: asynchronous 4-byte copies from global into shared memory.
struct DeviceLane {
  uint32_t id;
  __device__ void copy4(void* shared_dst, const void* global_src) {
    __pipeline_memcpy_async(shared_dst, global_src, 4);
  }
  __device__ void commit() { __pipeline_commit(); }
  template <uint32_t kPending>
  __device__ void wait_prior() {
    __pipeline_wait_prior(kPending);
  }
  __device__ void sync() { __syncwarp(); }
};

// One lane's part in a warp's votes (stream::SerialWarp on the host).
struct DeviceWarp {
  uint32_t lane;
  template <class F>
  __device__ uint32_t ballot(F f) const {
    return __ballot_sync(0xffffffffu, f(lane));
  }
};

// start[k] for k = 0..chunks and folds[k] for k < chunks (stream::chunk_start_and_folds), one
// warp per chunk: whole warps take the same k, so every ballot has all 32 lanes. With
// has_input (a scatter into zeroed rows), each warp marks the targets whose runs start in its
// chunk's nominal rows too (stream::mark_run_starts).
__global__ void chunk_starts_kernel(const uint32_t* target, uint32_t n, uint32_t chunks,
                                    uint32_t* start, uint32_t* folds, uint32_t* has_input) {
  const DeviceWarp warp{threadIdx.x % 32};
  const uint32_t warps_per_block = blockDim.x / 32;
  const uint64_t stride = static_cast<uint64_t>(gridDim.x) * warps_per_block;
  for (uint64_t k = static_cast<uint64_t>(blockIdx.x) * warps_per_block + threadIdx.x / 32;
       k <= chunks; k += stride) {
    const uint32_t k32 = static_cast<uint32_t>(k);
    if (has_input != nullptr) stream::mark_run_starts(target, n, k32, warp.lane, has_input);
    const stream::ChunkStart c = stream::chunk_start_and_folds(warp, target, n, k32);
    if (warp.lane != 0) continue;
    start[k32] = c.start;
    if (k32 < chunks) folds[k32] = c.folds;
  }
}

// Items (chunk k, slice s) = blockIdx.x, + gridDim.x, ...; one warp per block.
template <int kKind>
__global__ void __launch_bounds__(32)
    stream_runs_kernel(const void* rows, size_t row_bytes, const uint32_t* target,
                       const uint32_t* order, uint32_t n, const uint32_t* chunk_starts,
                       uint32_t chunks, uint32_t slices, size_t dim, float* dense,
                       float* partials, bool accumulate) {
  __shared__ stream::StreamRing ring;
  DeviceLane lane{threadIdx.x};
  const uint64_t items = static_cast<uint64_t>(chunks) * slices;
  for (uint64_t item = blockIdx.x; item < items; item += gridDim.x) {
    const uint32_t k = static_cast<uint32_t>(item / slices);
    const uint32_t s = static_cast<uint32_t>(item % slices);
    const stream::StreamItem it =
        stream::make_item<kKind>(rows, row_bytes, target, order, n, chunk_starts, k, s, lane.id,
                                 dim, dense, partials, accumulate);
    if (it.begin < it.end) stream::stream_item<kKind>(lane, ring, it);
  }
}

// The fold (stream::fold_partials, the host's reference) with its loads side by side: a Zipf
// head id's chain is a hundred partial rows or more at 10^6 rows, and one thread per column
// walking it took 15.0 us on an H200 at 10^6 x 512 (3.8 at the least, where no run had
// later blocks; docs/benchmarks/gpu.md). Here a block takes kFoldCols columns of a chain:
// its kFoldGroups warps load kFoldRows partial rows at a time into shared memory, coalesced,
// every thread's loads issued before its stores, and the first warp adds them on in block
// order, one lane per column, as the host does.
constexpr uint32_t kFoldCols = 32;
constexpr uint32_t kFoldGroups = 8;  // warps of a block
constexpr uint32_t kFoldRows = 64;
// Chunks whose counts a block reads at once: most chunks start no chain (folds[k] == 0),
// and a block that looked at one chunk at a time would wait for each count in turn.
constexpr uint32_t kFoldChunks = 32;
static_assert(kFoldRows % kFoldGroups == 0, "every warp loads as many rows");
static_assert(kFoldChunks <= kFoldCols * kFoldGroups, "a thread per count");

// Columns [col0, col0 + kFoldCols) of the chain of `count` partial rows from chunk k's,
// added onto the target row in block order. Called by the whole block alike.
__device__ void fold_chain(float (&tile)[kFoldRows][kFoldCols], const uint32_t* target,
                           const uint32_t* chunk_starts, const float* partials, size_t dim,
                           uint32_t k, uint32_t count, size_t col0, float* dense) {
  const uint32_t lane = threadIdx.x % kFoldCols, group = threadIdx.x / kFoldCols;
  const size_t col = col0 + lane;
  const bool mine = col < dim;
  const bool adds = group == 0 && mine;
  float* out = dense + static_cast<size_t>(target[chunk_starts[k]]) * dim + col;
  float acc = adds ? *out : 0.0f;
  for (uint32_t j0 = 0; j0 < count; j0 += kFoldRows) {
    const uint32_t rows = min(kFoldRows, count - j0);
    __syncthreads();  // the first warp is done with the tile
    constexpr uint32_t kPerThread = kFoldRows / kFoldGroups;
    float v[kPerThread];
#pragma unroll
    for (uint32_t i = 0; i < kPerThread; ++i) {
      const uint32_t r = group + i * kFoldGroups;
      v[i] = mine && r < rows ? partials[static_cast<size_t>(k + j0 + r) * dim + col] : 0.0f;
    }
#pragma unroll
    for (uint32_t i = 0; i < kPerThread; ++i) {
      const uint32_t r = group + i * kFoldGroups;
      if (r < rows) tile[r][lane] = v[i];
    }
    __syncthreads();
    if (adds) {
      for (uint32_t r = 0; r < rows; ++r) acc += tile[r][lane];
    }
  }
  if (adds) *out = acc;
}

// Block (x, y) takes the chains that start in chunks [s * kFoldChunks, (s + 1) *
// kFoldChunks) for s = x, x + gridDim.x, ..., each for column tiles y, y + gridDim.y, ...
// Every branch and loop bound comes from shared memory or the grid, the same for the whole
// block, so every thread reaches every barrier.
__global__ void __launch_bounds__(kFoldCols * kFoldGroups)
    fold_partials_kernel(const uint32_t* target, const uint32_t* chunk_starts,
                         const uint32_t* folds, uint32_t chunks, const float* partials,
                         size_t dim, float* dense) {
  __shared__ float tile[kFoldRows][kFoldCols];
  __shared__ uint32_t chain[kFoldChunks];
  const uint32_t spans = (chunks + kFoldChunks - 1) / kFoldChunks;
  const uint64_t tiles = (dim + kFoldCols - 1) / kFoldCols;
  for (uint32_t span = blockIdx.x; span < spans; span += gridDim.x) {
    // The span's counts, read once for all its tiles.
    __syncthreads();  // every thread is done with the last span's counts
    if (threadIdx.x < kFoldChunks) {
      const uint64_t k = static_cast<uint64_t>(span) * kFoldChunks + threadIdx.x;
      chain[threadIdx.x] = k < chunks ? folds[k] : 0u;
    }
    __syncthreads();
    // fold_chain's first barrier keeps the tile from the last chain's readers.
    for (uint64_t y = blockIdx.y; y < tiles; y += gridDim.y) {
      for (uint32_t c = 0; c < kFoldChunks; ++c) {
        const uint32_t count = chain[c];
        if (count == 0) continue;
        fold_chain(tile, target, chunk_starts, partials, dim, span * kFoldChunks + c, count,
                   static_cast<size_t>(y) * kFoldCols, dense);
      }
    }
  }
}

}  // namespace
}  // namespace cuda
}  // namespace zfc

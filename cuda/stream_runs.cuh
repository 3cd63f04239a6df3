// The scatter's streaming kernel on the device: the schedule of stream_runs_schedule.hpp with
// cp.async copies into shared memory and __syncwarp. Included by rows.cu only.
//
// It takes rows of 4-byte slices that the register kernel (stream_wide_rows.cuh) cannot load
// 8 or 16 bytes at a time, and sizes with too few work items for that kernel. On an H200 it
// matched the host's bits and compute-sanitizer's racecheck found no hazard in its ring
// (docs/benchmarks/gpu.md); tests/unit/test_stream_schedule.cpp runs its schedule on the host.
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

// start[k] for k = 0..chunks and folds[k] for k < chunks (stream::chunk_start_and_folds).
__global__ void chunk_starts_kernel(const uint32_t* target, uint32_t n, uint32_t chunks,
                                    uint32_t* start, uint32_t* folds) {
  for (uint32_t k = blockIdx.x * blockDim.x + threadIdx.x; k <= chunks;
       k += gridDim.x * blockDim.x) {
    const stream::ChunkStart c = stream::chunk_start_and_folds(target, n, k);
    start[k] = c.start;
    if (k < chunks) folds[k] = c.folds;
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

// After every item: (chunk k, column) = i / dim, i % dim for i over chunks * dim, where a
// run's first partial row adds its chain onto the target row (stream::fold_partials).
__global__ void fold_partials_kernel(const uint32_t* target, const uint32_t* chunk_starts,
                                     const uint32_t* folds, uint32_t chunks,
                                     const float* partials, size_t dim, float* dense) {
  const uint64_t total = static_cast<uint64_t>(chunks) * dim;
  for (uint64_t i = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
    stream::fold_partials(target, chunk_starts, folds, partials, dim,
                          static_cast<uint32_t>(i / dim), i % dim, dense);
  }
}

}  // namespace
}  // namespace cuda
}  // namespace zfc

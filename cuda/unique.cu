// Local unique with inverse, sorted unique, locate and index checks on the device: a CUB
// radix sort over the key bits the vocabulary needs, then a scan of the run heads and a
// scatter.
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <algorithm>

#include "cuda_check.hpp"
#include "device_kernels.hpp"
#include "grid_kernels.cuh"

namespace zfc {
namespace cuda {
namespace {

// 1 where sorted position i starts a run of equal keys, else 0. The scan reads it through an
// iterator, so no array of flags is written and read back (4n bytes each way, and a kernel).
template <class K>
struct HeadFlag {
  const K* sorted;
  __device__ uint32_t operator()(uint32_t i) const {
    return i == 0 || sorted[i] != sorted[i - 1] ? 1u : 0u;
  }
};

template <class K>
auto head_flags(const K* sorted) {
  return thrust::make_transform_iterator(thrust::counting_iterator<uint32_t>(0),
                                         HeadFlag<K>{sorted});
}

// run[i] is the 1-based run number of sorted position i (an inclusive scan of the heads).
template <class K>
__global__ void scatter_runs_kernel(const K* sorted, const uint32_t* order, const uint32_t* run,
                                    uint32_t n, K* uniq, int32_t* inverse,
                                    uint32_t* num_unique) {
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    const uint32_t r = run[i] - 1;
    inverse[order[i]] = static_cast<int32_t>(r);
    if (HeadFlag<K>{sorted}(i) != 0) uniq[r] = sorted[i];
    if (i == n - 1) *num_unique = run[i];
  }
}

template <class K>
__global__ void lower_bound_kernel(const K* sub, uint32_t n_sub, const K* full,
                                   const uint32_t* n_full, int32_t* pos) {
  const uint32_t total = *n_full;
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n_sub;
       i += gridDim.x * blockDim.x) {
    const K key = sub[i];
    uint32_t lo = 0, hi = total;
    while (lo < hi) {
      const uint32_t mid = lo + (hi - lo) / 2;
      if (full[mid] < key) lo = mid + 1;
      else hi = mid;
    }
    pos[i] = static_cast<int32_t>(lo);
  }
}

__global__ void compose_kernel(const int32_t* index, uint32_t n, const int32_t* table,
                               int32_t* out) {
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    out[i] = table[index[i]];
  }
}

__global__ void first_bad_position_kernel(const int32_t* pos, uint32_t n, uint32_t bound,
                                          uint32_t* first_bad) {
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    if (pos[i] < 0 || static_cast<uint32_t>(pos[i]) >= bound) atomicMin(first_bad, i);
  }
}

template <class I>
__global__ void first_bad_index_kernel(const I* idx, uint32_t n, int64_t vocab,
                                       uint32_t* first_bad) {
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    const int64_t v = static_cast<int64_t>(idx[i]);
    if (v < 0 || v >= vocab) atomicMin(first_bad, i);
  }
}

}  // namespace

template <class K>
Status unique_with_inverse(void* d_temp, size_t* temp_bytes, const K* d_keys, uint32_t n,
                           int key_bits, K* d_uniq, int32_t* d_inverse,
                           uint32_t* d_num_unique, uint32_t* d_order, void* stream) {
  ScratchLayout l(d_temp);
  K* sorted = l.take<K>(n);
  uint32_t* order_in = l.take<uint32_t>(n);
  // The sort's order in the caller's memory when it is kept, else in the scratch.
  uint32_t* order = d_order != nullptr ? d_order : l.take<uint32_t>(n);
  uint32_t* run = l.take<uint32_t>(n);
  size_t sort_bytes = 0, scan_bytes = 0;
  ZFC_RETURN_IF_ERROR(cuda_check(
      cub::DeviceRadixSort::SortPairs(nullptr, sort_bytes, d_keys, sorted, order_in, order, n,
                                      0, key_bits, as_stream(stream)),
      "cub::DeviceRadixSort::SortPairs (size)"));
  ZFC_RETURN_IF_ERROR(cuda_check(cub::DeviceScan::InclusiveSum(nullptr, scan_bytes,
                                                               head_flags(sorted), run, n,
                                                               as_stream(stream)),
                                 "cub::DeviceScan::InclusiveSum (size)"));
  size_t cub_bytes = std::max(sort_bytes, scan_bytes);
  if (d_temp == nullptr) {
    *temp_bytes = l.bytes() + cub_bytes;
    return Status::Ok();
  }
  cudaStream_t s = as_stream(stream);
  if (n == 0) {
    set_value_kernel<<<1, 1, 0, s>>>(d_num_unique, 0);
    return launch_check("set_value_kernel");
  }
  iota_kernel<<<grid_for(n), kBlock, 0, s>>>(order_in, n);
  ZFC_RETURN_IF_ERROR(launch_check("iota_kernel"));
  ZFC_RETURN_IF_ERROR(cuda_check(
      cub::DeviceRadixSort::SortPairs(l.rest(), cub_bytes, d_keys, sorted, order_in, order, n,
                                      0, key_bits, s),
      "cub::DeviceRadixSort::SortPairs"));
  ZFC_RETURN_IF_ERROR(cuda_check(cub::DeviceScan::InclusiveSum(l.rest(), cub_bytes,
                                                               head_flags(sorted), run, n, s),
                                 "cub::DeviceScan::InclusiveSum"));
  scatter_runs_kernel<<<grid_for(n), kBlock, 0, s>>>(sorted, order, run, n, d_uniq, d_inverse,
                                                     d_num_unique);
  return launch_check("scatter_runs_kernel");
}

template <class K>
Status sorted_unique(void* d_temp, size_t* temp_bytes, const K* d_keys, uint32_t n,
                     int key_bits, K* d_uniq, uint32_t* d_num_unique, void* stream) {
  ScratchLayout l(d_temp);
  K* sorted = l.take<K>(n);
  size_t sort_bytes = 0, select_bytes = 0;
  ZFC_RETURN_IF_ERROR(cuda_check(cub::DeviceRadixSort::SortKeys(nullptr, sort_bytes, d_keys,
                                                                sorted, n, 0, key_bits,
                                                                as_stream(stream)),
                                 "cub::DeviceRadixSort::SortKeys (size)"));
  ZFC_RETURN_IF_ERROR(cuda_check(cub::DeviceSelect::Unique(nullptr, select_bytes, sorted, d_uniq,
                                                           d_num_unique, n, as_stream(stream)),
                                 "cub::DeviceSelect::Unique (size)"));
  size_t cub_bytes = std::max(sort_bytes, select_bytes);
  if (d_temp == nullptr) {
    *temp_bytes = l.bytes() + cub_bytes;
    return Status::Ok();
  }
  cudaStream_t s = as_stream(stream);
  if (n == 0) {
    set_value_kernel<<<1, 1, 0, s>>>(d_num_unique, 0);
    return launch_check("set_value_kernel");
  }
  ZFC_RETURN_IF_ERROR(cuda_check(cub::DeviceRadixSort::SortKeys(l.rest(), cub_bytes, d_keys,
                                                                sorted, n, 0, key_bits, s),
                                 "cub::DeviceRadixSort::SortKeys"));
  return cuda_check(cub::DeviceSelect::Unique(l.rest(), cub_bytes, sorted, d_uniq, d_num_unique,
                                              n, s),
                    "cub::DeviceSelect::Unique");
}

template <class K>
Status locate_sorted(const K* d_sub, uint32_t n_sub, const K* d_full, const uint32_t* d_n_full,
                     int32_t* d_pos, void* stream) {
  if (n_sub == 0) return Status::Ok();
  lower_bound_kernel<<<grid_for(n_sub), kBlock, 0, as_stream(stream)>>>(d_sub, n_sub, d_full,
                                                                        d_n_full, d_pos);
  return launch_check("lower_bound_kernel");
}

Status compose_positions(const int32_t* d_index, uint32_t n, const int32_t* d_table,
                         int32_t* d_out, void* stream) {
  if (n == 0) return Status::Ok();
  compose_kernel<<<grid_for(n), kBlock, 0, as_stream(stream)>>>(d_index, n, d_table, d_out);
  return launch_check("compose_kernel");
}

Status find_bad_position(const int32_t* d_pos, uint32_t n, uint32_t bound,
                         uint32_t* d_first_bad, void* stream) {
  cudaStream_t s = as_stream(stream);
  set_value_kernel<<<1, 1, 0, s>>>(d_first_bad, n);
  ZFC_RETURN_IF_ERROR(launch_check("set_value_kernel"));
  if (n == 0) return Status::Ok();
  first_bad_position_kernel<<<grid_for(n), kBlock, 0, s>>>(d_pos, n, bound, d_first_bad);
  return launch_check("first_bad_position_kernel");
}

Status find_bad_index(const void* d_indices, zfcDataType_t type, uint32_t n, int64_t vocab,
                      uint32_t* d_first_bad, void* stream) {
  cudaStream_t s = as_stream(stream);
  set_value_kernel<<<1, 1, 0, s>>>(d_first_bad, n);
  ZFC_RETURN_IF_ERROR(launch_check("set_value_kernel"));
  if (n == 0) return Status::Ok();
  if (type == zfcInt32) {
    first_bad_index_kernel<<<grid_for(n), kBlock, 0, s>>>(
        static_cast<const int32_t*>(d_indices), n, vocab, d_first_bad);
  } else {
    first_bad_index_kernel<<<grid_for(n), kBlock, 0, s>>>(
        static_cast<const int64_t*>(d_indices), n, vocab, d_first_bad);
  }
  return launch_check("first_bad_index_kernel");
}

#define ZFC_INSTANTIATE_DEVICE_UNIQUE(K)                                                      \
  template Status unique_with_inverse<K>(void*, size_t*, const K*, uint32_t, int, K*, int32_t*, \
                                         uint32_t*, uint32_t*, void*);                        \
  template Status sorted_unique<K>(void*, size_t*, const K*, uint32_t, int, K*, uint32_t*,      \
                                   void*);                                                    \
  template Status locate_sorted<K>(const K*, uint32_t, const K*, const uint32_t*, int32_t*,     \
                                   void*);
ZFC_INSTANTIATE_DEVICE_UNIQUE(uint32_t)
ZFC_INSTANTIATE_DEVICE_UNIQUE(uint64_t)
#undef ZFC_INSTANTIATE_DEVICE_UNIQUE

}  // namespace cuda
}  // namespace zfc

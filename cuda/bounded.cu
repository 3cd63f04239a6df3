// The kernels of the bounded sparse step (lib/algo/bounded_reduce.cpp): every size they need
// is a word in device memory, read by the kernels themselves, so the host never waits to
// learn one. Launch shapes come from the host's bounds (the capacity, this rank's count).
#include "cuda_check.hpp"
#include "device_kernels.hpp"

namespace zfc {
namespace cuda {
namespace {

template <class K>
__global__ void fill_after_kernel(K* keys, uint32_t room, const uint64_t* count, K value) {
  const uint64_t from = *count;
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < room; i += gridDim.x * blockDim.x) {
    if (i >= from) keys[i] = value;
  }
}

__global__ void compose_clamped_kernel(const int32_t* index, uint32_t n, const int32_t* table,
                                       uint32_t n_table, int32_t limit, int32_t* out) {
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    const uint32_t at = static_cast<uint32_t>(index[i]);
    const int32_t p = at < n_table ? table[at] : limit;
    out[i] = p < limit ? p : limit;
  }
}

// One thread: the verdict is a few words, read by every later kernel of the step.
template <class K>
__global__ void verdict_kernel(const char* gathered, uint64_t block_bytes, int ranks,
                               const OpHeader* headers, const uint64_t* sizes, const K* global,
                               const uint64_t* count, K sentinel, uint64_t capacity,
                               BoundedVerdict* out) {
  *out = bounded_verdict_of(gathered, block_bytes, ranks, headers, sizes, global, *count,
                            sentinel, capacity);
}

// The indices (U_g keys, then -1) and the status; nothing but the status on a failure.
template <class K, class I>
__global__ void finish_indices_kernel(const BoundedVerdict* verdict, const K* global,
                                      uint32_t capacity, I* out, const int* nonfinite,
                                      zfcBoundedStatus_t* status) {
  const BoundedVerdict v = *verdict;
  const uint32_t first = blockIdx.x * blockDim.x + threadIdx.x;
  if (first == 0) {
    zfcBoundedStatus_t s{v.num_unique, static_cast<int32_t>(v.result), 0};
    if (v.result == zfcSuccess) s.overflowed = *nonfinite != 0 ? 1 : 0;
    *status = s;
  }
  if (v.result != zfcSuccess) return;
  const uint64_t ug = static_cast<uint64_t>(v.num_unique);
  for (uint32_t i = first; i < capacity; i += gridDim.x * blockDim.x) {
    out[i] = i < ug ? static_cast<I>(global[i]) : I(-1);
  }
}

__global__ void finish_rows_kernel(const BoundedVerdict* verdict, const float* dense, size_t n,
                                   float* out) {
  if (verdict->result != zfcSuccess) return;
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    out[i] = dense[i];
  }
}

}  // namespace

template <class K>
Status fill_keys_after(K* d_keys, uint32_t room, const uint64_t* d_count, K value,
                       void* stream) {
  if (room == 0) return Status::Ok();
  fill_after_kernel<<<grid_for(room), kBlock, 0, as_stream(stream)>>>(d_keys, room, d_count,
                                                                       value);
  return launch_check("fill_after_kernel");
}

Status compose_clamped(const int32_t* d_index, uint32_t n, const int32_t* d_table,
                       uint32_t n_table, int32_t limit, int32_t* d_out, void* stream) {
  if (n == 0) return Status::Ok();
  compose_clamped_kernel<<<grid_for(n), kBlock, 0, as_stream(stream)>>>(d_index, n, d_table,
                                                                         n_table, limit, d_out);
  return launch_check("compose_clamped_kernel");
}

template <class K>
Status bounded_verdict(const char* d_gathered, size_t block_bytes, int ranks,
                       const OpHeader* d_headers, const uint64_t* d_sizes, const K* d_global,
                       const uint64_t* d_count, K sentinel, size_t capacity,
                       BoundedVerdict* d_out, void* stream) {
  verdict_kernel<<<1, 1, 0, as_stream(stream)>>>(d_gathered, block_bytes, ranks, d_headers,
                                                 d_sizes, d_global, d_count, sentinel, capacity,
                                                 d_out);
  return launch_check("verdict_kernel");
}

template <class K>
Status bounded_finish(const BoundedVerdict* d_verdict, const K* d_global, const float* d_dense,
                      size_t dim, void* d_indices, zfcDataType_t index_type, float* d_rows,
                      uint32_t capacity, const int* d_nonfinite, zfcBoundedStatus_t* d_status,
                      void* stream) {
  cudaStream_t s = as_stream(stream);
  const unsigned grid = capacity > 0 ? grid_for(capacity) : 1;
  if (index_type == zfcInt32) {
    finish_indices_kernel<<<grid, kBlock, 0, s>>>(d_verdict, d_global, capacity,
                                                  static_cast<int32_t*>(d_indices),
                                                  d_nonfinite, d_status);
  } else {
    finish_indices_kernel<<<grid, kBlock, 0, s>>>(d_verdict, d_global, capacity,
                                                  static_cast<int64_t*>(d_indices),
                                                  d_nonfinite, d_status);
  }
  ZFC_RETURN_IF_ERROR(launch_check("finish_indices_kernel"));
  const size_t n = static_cast<size_t>(capacity) * dim;
  if (n == 0) return Status::Ok();
  finish_rows_kernel<<<grid_for(n), kBlock, 0, s>>>(d_verdict, d_dense, n, d_rows);
  return launch_check("finish_rows_kernel");
}

#define ZFC_INSTANTIATE_BOUNDED(K)                                                            \
  template Status fill_keys_after<K>(K*, uint32_t, const uint64_t*, K, void*);                \
  template Status bounded_verdict<K>(const char*, size_t, int, const OpHeader*,              \
                                     const uint64_t*, const K*, const uint64_t*, K, size_t,   \
                                     BoundedVerdict*, void*);                                 \
  template Status bounded_finish<K>(const BoundedVerdict*, const K*, const float*, size_t,   \
                                    void*, zfcDataType_t, float*, uint32_t, const int*,       \
                                    zfcBoundedStatus_t*, void*);
ZFC_INSTANTIATE_BOUNDED(uint32_t)
ZFC_INSTANTIATE_BOUNDED(uint64_t)
#undef ZFC_INSTANTIATE_BOUNDED

}  // namespace cuda
}  // namespace zfc

// Device kernels of the key-routed step's own phases: reading the caller's indices as keys
// and writing keys back as indices, the owner map with its counts, packing the (key, row)
// pairs by owner, and decoding received rows into their result rows. The owner function and
// the 16-bit conversions are the host's own code (common/host_device), so a device step
// sends the bytes a host step sends.
#include <cub/device/device_radix_sort.cuh>

#include <algorithm>

#include "cuda_check.hpp"
#include "device_kernels.hpp"
#include "grid_kernels.cuh"
#include "host_device/half_bits.hpp"
#include "host_device/key_owner.hpp"

namespace zfc {
namespace cuda {
namespace {

template <class I, class K>
__global__ void convert_kernel(const I* in, uint32_t n, K* out) {
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    out[i] = static_cast<K>(in[i]);
  }
}

// The caller's indices as keys, 0 for one outside [0, vocab) (see load_keys).
template <class I, class K>
__global__ void load_keys_kernel(const I* in, uint32_t n, int64_t vocab, K* out) {
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    const int64_t v = static_cast<int64_t>(in[i]);
    out[i] = v >= 0 && v < vocab ? static_cast<K>(v) : K{0};
  }
}

// The first *count of the `room` keys: their number is a word the unique wrote, which the
// host has not read (it fetches these counts with it).
template <class K>
__global__ void owner_kernel(const K* keys, uint32_t room, const uint64_t* count, int ranks,
                             int32_t* owner_of, unsigned long long* counts) {
  const uint32_t n = static_cast<uint32_t>(min(static_cast<uint64_t>(room), *count));
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    const int j = key_owner(static_cast<uint64_t>(keys[i]), ranks);
    owner_of[i] = j;
    atomicAdd(&counts[j], 1ull);  // integer counts: the order of additions does not matter
  }
}

__device__ inline size_t pad8_device(size_t bytes) { return (bytes + 7) / 8 * 8; }

// first[j] = counts[0] + ... + counts[j - 1]; each block's lead is its count, and the
// padding after its keys and after its rows is zeroed (pack_kernel writes every other byte),
// so every byte sent is defined. One thread: a few thousand owners at most, against the n
// pairs every other kernel walks.
__global__ void leads_kernel(const uint64_t* counts, const uint64_t* displs, int ranks,
                             size_t lead, size_t key_bytes, size_t row_bytes, uint64_t* first,
                             char* packed) {
  uint64_t at = 0;
  for (int j = 0; j < ranks; ++j) {
    const uint64_t c = counts[j];
    first[j] = at;
    at += c;
    char* base = packed + displs[j];
    *reinterpret_cast<uint64_t*>(base) = c;
    const size_t rows_at = lead + pad8_device(c * key_bytes);
    for (size_t b = lead + c * key_bytes; b < rows_at; ++b) base[b] = 0;
    const size_t rows_end = rows_at + c * row_bytes;
    for (size_t b = rows_end; b < rows_at + pad8_device(c * row_bytes); ++b) base[b] = 0;
  }
}

// As the host's encode: an fp32 wire is a plain copy (no scale), a 16-bit one the scaled
// value rounded.
__device__ inline void store_wire(float v, zfcDataType_t wire, float scale, char* dst,
                                  size_t c) {
  if (wire == zfcFloat32) {
    reinterpret_cast<float*>(dst)[c] = v;
  } else {
    const float scaled = __fmul_rn(v, scale);
    reinterpret_cast<uint16_t*>(dst)[c] =
        wire == zfcFloat16 ? kernels::f32_to_f16(scaled) : kernels::f32_to_bf16(scaled);
  }
}

// Block p of the grid-stride loop handles the p-th pair in owner order (a stable sort by
// owner keeps key order within an owner): its key, and its row encoded column by column.
template <class K>
__global__ void pack_kernel(const K* keys, const int32_t* sorted_owner, const uint32_t* order,
                            uint32_t n, const float* rows, size_t dim, zfcDataType_t wire,
                            float scale, size_t lead, size_t key_bytes, size_t row_bytes,
                            const uint64_t* counts, const uint64_t* displs,
                            const uint64_t* first, char* packed) {
  for (uint32_t p = blockIdx.x; p < n; p += gridDim.x) {
    const int j = sorted_owner[p];
    const uint32_t i = order[p];
    const size_t c = p - first[j];
    char* base = packed + displs[j];
    if (threadIdx.x == 0) reinterpret_cast<K*>(base + lead)[c] = keys[i];
    char* row = base + lead + pad8_device(counts[j] * key_bytes) + c * row_bytes;
    const float* src = rows + static_cast<size_t>(i) * dim;
    for (size_t col = threadIdx.x; col < dim; col += blockDim.x) {
      store_wire(src[col], wire, scale, row, col);
    }
  }
}

// As the host's decode: an fp32 wire is copied, a 16-bit one divided by scale, and *bad is
// ORed when the value that comes out is inf or NaN. Checking the output rather than the wire
// bits also catches a finite wire value that a scale below 1 divides past fp32's range.
__device__ inline float load_wire(const char* src, zfcDataType_t wire, float scale, size_t c,
                                  bool* bad) {
  float v;
  if (wire == zfcFloat32) {
    v = reinterpret_cast<const float*>(src)[c];
  } else {
    const uint16_t h = reinterpret_cast<const uint16_t*>(src)[c];
    v = (wire == zfcFloat16 ? kernels::f16_to_f32(h) : kernels::bf16_to_f32(h)) / scale;
  }
  *bad |= (kernels::f32_bits(v) & 0x7f800000u) == 0x7f800000u;
  return v;
}

// Row k of the wire rows into row dest[k] of out; a value that is inf or NaN ORs 1 into
// *nonfinite.
__global__ void decode_rows_kernel(const char* rows, const int32_t* dest, uint32_t n, size_t dim,
                                   zfcDataType_t wire, float scale, float* out, int* nonfinite) {
  const size_t row_bytes = dim * (wire == zfcFloat32 ? 4 : 2);
  bool bad = false;
  for (uint32_t k = blockIdx.x; k < n; k += gridDim.x) {
    float* o = out + static_cast<size_t>(dest[k]) * dim;
    const char* src = rows + static_cast<size_t>(k) * row_bytes;
    for (size_t c = threadIdx.x; c < dim; c += blockDim.x) {
      o[c] = load_wire(src, wire, scale, c, &bad);
    }
  }
  if (__syncthreads_or(bad) && threadIdx.x == 0) atomicOr(nonfinite, 1);
}

__global__ void widen_kernel(const uint32_t* in, uint64_t* out) { *out = *in; }

unsigned pair_blocks(uint32_t n) { return std::max(1u, std::min(n, 65535u * 4)); }

unsigned pair_threads(size_t dim) {
  return dim >= 256 ? 256u : std::max(32u, static_cast<unsigned>((dim + 31) / 32 * 32));
}

int bits_for_ranks(int ranks) {
  int bits = 1;
  while (bits < 31 && ((ranks - 1) >> bits) != 0) ++bits;
  return bits;
}

}  // namespace

template <class K>
Status load_keys(const void* d_indices, zfcDataType_t type, uint32_t n, int64_t vocab,
                 K* d_keys, void* stream) {
  if (n == 0) return Status::Ok();
  cudaStream_t s = as_stream(stream);
  if (type == zfcInt32) {
    load_keys_kernel<<<grid_for(n), kBlock, 0, s>>>(static_cast<const int32_t*>(d_indices), n,
                                                    vocab, d_keys);
  } else {
    load_keys_kernel<<<grid_for(n), kBlock, 0, s>>>(static_cast<const int64_t*>(d_indices), n,
                                                    vocab, d_keys);
  }
  return launch_check("load_keys_kernel");
}

template <class K>
Status store_keys(const K* d_keys, uint32_t n, zfcDataType_t type, void* d_out, void* stream) {
  if (n == 0) return Status::Ok();
  cudaStream_t s = as_stream(stream);
  if (type == zfcInt32) {
    convert_kernel<<<grid_for(n), kBlock, 0, s>>>(d_keys, n, static_cast<int32_t*>(d_out));
  } else {
    convert_kernel<<<grid_for(n), kBlock, 0, s>>>(d_keys, n, static_cast<int64_t*>(d_out));
  }
  return launch_check("convert_kernel (keys to indices)");
}

template <class K>
Status owner_counts(const K* d_keys, uint32_t room, const uint64_t* d_count, int ranks,
                    int32_t* d_owner_of, uint64_t* d_counts, void* stream) {
  cudaStream_t s = as_stream(stream);
  ZFC_RETURN_IF_ERROR(cuda_check(
      cudaMemsetAsync(d_counts, 0, static_cast<size_t>(ranks) * sizeof(uint64_t), s),
      "cudaMemsetAsync"));
  if (room == 0) return Status::Ok();
  owner_kernel<<<grid_for(room), kBlock, 0, s>>>(
      d_keys, room, d_count, ranks, d_owner_of, reinterpret_cast<unsigned long long*>(d_counts));
  return launch_check("owner_kernel");
}

template <class K>
Status pack_pairs(void* d_temp, size_t* temp_bytes, const K* d_keys, const int32_t* d_owner_of,
                  uint32_t n, int ranks, const float* d_rows, size_t dim, zfcDataType_t wire,
                  float scale, const PairFrame& frame, const uint64_t* d_counts,
                  const uint64_t* d_displs, char* d_packed, void* stream) {
  // The leads kernel writes an 8-byte count and the padding; a longer lead would leave bytes
  // of every block unwritten.
  if (frame.lead != sizeof(uint64_t)) {
    return error(zfcInternalError, "pack_pairs: a lead of %zu bytes (the count takes %zu)",
                 frame.lead, sizeof(uint64_t));
  }
  cudaStream_t s = as_stream(stream);
  ScratchLayout l(d_temp);
  int32_t* sorted_owner = l.take<int32_t>(n);
  uint32_t* order_in = l.take<uint32_t>(n);
  uint32_t* order = l.take<uint32_t>(n);
  uint64_t* first = l.take<uint64_t>(static_cast<size_t>(ranks));
  const int bits = bits_for_ranks(ranks);
  size_t sort_bytes = 0;
  ZFC_RETURN_IF_ERROR(cuda_check(
      cub::DeviceRadixSort::SortPairs(nullptr, sort_bytes, d_owner_of, sorted_owner, order_in,
                                      order, n, 0, bits, s),
      "cub::DeviceRadixSort::SortPairs (size)"));
  if (d_temp == nullptr) {
    *temp_bytes = l.bytes() + sort_bytes;
    return Status::Ok();
  }
  // The leads and the padding; the keys and rows below fill the rest of every block, so no
  // fill of the whole buffer comes first.
  leads_kernel<<<1, 1, 0, s>>>(d_counts, d_displs, ranks, frame.lead, frame.key_bytes,
                               frame.row_bytes, first, d_packed);
  ZFC_RETURN_IF_ERROR(launch_check("leads_kernel"));
  if (n == 0) return Status::Ok();
  iota_kernel<<<grid_for(n), kBlock, 0, s>>>(order_in, n);
  ZFC_RETURN_IF_ERROR(launch_check("iota_kernel"));
  // Stable: the keys of one owner keep their (sorted) order, as on the host.
  ZFC_RETURN_IF_ERROR(cuda_check(
      cub::DeviceRadixSort::SortPairs(l.rest(), sort_bytes, d_owner_of, sorted_owner, order_in,
                                      order, n, 0, bits, s),
      "cub::DeviceRadixSort::SortPairs"));
  pack_kernel<<<pair_blocks(n), pair_threads(dim), 0, s>>>(
      d_keys, sorted_owner, order, n, d_rows, dim, wire, scale, frame.lead, frame.key_bytes,
      frame.row_bytes, d_counts, d_displs, first, d_packed);
  return launch_check("pack_kernel");
}

Status decode_rows_to(const void* d_rows, const int32_t* d_dest, uint32_t n, size_t dim,
                      zfcDataType_t wire, float scale, float* d_out, int* d_nonfinite,
                      void* stream) {
  if (n == 0 || dim == 0) return Status::Ok();
  decode_rows_kernel<<<pair_blocks(n), pair_threads(dim), 0, as_stream(stream)>>>(
      static_cast<const char*>(d_rows), d_dest, n, dim, wire, scale, d_out, d_nonfinite);
  return launch_check("decode_rows_kernel");
}

Status widen_count(const uint32_t* d_in, uint64_t* d_out, void* stream) {
  widen_kernel<<<1, 1, 0, as_stream(stream)>>>(d_in, d_out);
  return launch_check("widen_kernel");
}

#define ZFC_INSTANTIATE_DEVICE_PAIRS(K)                                                       \
  template Status load_keys<K>(const void*, zfcDataType_t, uint32_t, int64_t, K*, void*);     \
  template Status store_keys<K>(const K*, uint32_t, zfcDataType_t, void*, void*);             \
  template Status owner_counts<K>(const K*, uint32_t, const uint64_t*, int, int32_t*,         \
                                  uint64_t*, void*);                                          \
  template Status pack_pairs<K>(void*, size_t*, const K*, const int32_t*, uint32_t, int,      \
                                const float*, size_t, zfcDataType_t, float, const PairFrame&, \
                                const uint64_t*, const uint64_t*, char*, void*);
ZFC_INSTANTIATE_DEVICE_PAIRS(uint32_t)
ZFC_INSTANTIATE_DEVICE_PAIRS(uint64_t)
#undef ZFC_INSTANTIATE_DEVICE_PAIRS

}  // namespace cuda
}  // namespace zfc

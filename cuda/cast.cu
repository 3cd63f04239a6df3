// Wire-format kernels on the device: encode with scale, decode with the non-finite flag,
// the rank-ordered fp32 sum of wire blocks, and the finite check. The conversions are the
// host's own code (host_device/half_bits.hpp), so both give the same bits.
#include "cuda_check.hpp"
#include "device_kernels.hpp"
#include "host_device/half_bits.hpp"
#include "strided_rounds.hpp"

namespace zfc {
namespace cuda {
namespace {

__device__ inline bool nonfinite_bits(uint32_t f32) { return (f32 & 0x7f800000u) == 0x7f800000u; }

__device__ inline uint16_t to_wire(float v, bool half) {
  return half ? kernels::f32_to_f16(v) : kernels::f32_to_bf16(v);
}

__device__ inline float from_wire(uint16_t h, bool half) {
  return half ? kernels::f16_to_f32(h) : kernels::bf16_to_f32(h);
}

// A decoded value and whether it is inf or NaN: the flag looks at what the decode wrote, not at
// the wire, since a scale below 1 takes a finite wire value past fp32's range.
__device__ inline float decoded(uint16_t h, bool half, float scale, bool* bad) {
  const float v = from_wire(h, half) / scale;
  *bad |= nonfinite_bits(kernels::f32_bits(v));
  return v;
}

template <bool kHalf>
__global__ void encode_kernel(const float* src, size_t n, float scale, uint16_t* dst) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    dst[i] = to_wire(src[i] * scale, kHalf);
  }
}

// Vectors a thread of the four-wide kernels loads before it converts any: 64 bytes of loads
// in flight per thread for the encode, 32 for the decode, where one vector per thread left
// few bytes in flight to cover the memory's latency (the 0.9.0 casts, one element per
// thread, reached 0.4 of copy bandwidth).
constexpr int kCastLoadsInFlight = 4;

// The four-wide kernels' loop: this thread's vectors, kCastLoadsInFlight at a time.
template <class Load, class Store>
__device__ inline void cast_strided(size_t n, Load load, Store store) {
  const size_t first = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  strided_in_rounds<kCastLoadsInFlight>(first, stride, n, load, store);
}

// Blocks for n4 vectors: enough threads for n4 / kCastLoadsInFlight.
unsigned cast_grid(size_t n4) {
  return grid_for((n4 + kCastLoadsInFlight - 1) / kCastLoadsInFlight);
}

// Four elements per vector, where src is 16-byte and dst 8-byte aligned: one load and one
// store instruction per four elements instead of four 4-byte loads and four 2-byte stores.
template <bool kHalf>
__global__ void encode4_kernel(const float4* src, size_t n4, float scale, uint2* dst) {
  cast_strided(
      n4, [&](size_t i) { return src[i]; },
      [&](size_t i, const float4& v) {
        const uint32_t lo =
            to_wire(v.x * scale, kHalf) | (uint32_t{to_wire(v.y * scale, kHalf)} << 16);
        const uint32_t hi =
            to_wire(v.z * scale, kHalf) | (uint32_t{to_wire(v.w * scale, kHalf)} << 16);
        dst[i] = make_uint2(lo, hi);
      });
}

// The decode's four-wide twin, for an 8-byte aligned src and a 16-byte aligned dst.
template <bool kHalf>
__global__ void decode4_kernel(const uint2* src, size_t n4, float scale, float4* dst,
                               int* nonfinite) {
  bool bad = false;
  cast_strided(
      n4, [&](size_t i) { return src[i]; },
      [&](size_t i, const uint2& w) {
        const uint16_t h[4] = {
            static_cast<uint16_t>(w.x & 0xffffu), static_cast<uint16_t>(w.x >> 16),
            static_cast<uint16_t>(w.y & 0xffffu), static_cast<uint16_t>(w.y >> 16)};
        dst[i] = make_float4(decoded(h[0], kHalf, scale, &bad), decoded(h[1], kHalf, scale, &bad),
                             decoded(h[2], kHalf, scale, &bad), decoded(h[3], kHalf, scale, &bad));
      });
  if (__syncthreads_or(bad) && threadIdx.x == 0) atomicOr(nonfinite, 1);
}

template <bool kHalf>
__global__ void decode_kernel(const uint16_t* src, size_t n, float scale, float* dst,
                              int* nonfinite) {
  bool bad = false;
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    dst[i] = decoded(src[i], kHalf, scale, &bad);
  }
  if (__syncthreads_or(bad) && threadIdx.x == 0) atomicOr(nonfinite, 1);
}

__global__ void flag_nonfinite_kernel(const float* v, size_t n, int* nonfinite) {
  bool bad = false;
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    bad |= nonfinite_bits(kernels::f32_bits(v[i]));
  }
  if (__syncthreads_or(bad) && threadIdx.x == 0) atomicOr(nonfinite, 1);
}

// acc[i] = ((+0 + b_0[i]) + b_1[i]) + ...: every element summed by one thread in block order.
__global__ void sum_blocks_kernel(const void* blocks, int nblocks, size_t n, zfcDataType_t wire,
                                  float* acc) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    float sum = 0.0f;
    for (int b = 0; b < nblocks; ++b) {
      const size_t at = static_cast<size_t>(b) * n + i;
      if (wire == zfcFloat32) {
        sum += static_cast<const float*>(blocks)[at];
      } else {
        const uint16_t h = static_cast<const uint16_t*>(blocks)[at];
        sum += wire == zfcFloat16 ? kernels::f16_to_f32(h) : kernels::bf16_to_f32(h);
      }
    }
    acc[i] = sum;
  }
}

// acc[i] += fp32(src[i]): one more block joining a running sum, as the host's add_to.
__global__ void add_to_kernel(const void* src, zfcDataType_t wire, size_t n, float* acc) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    float v;
    if (wire == zfcFloat32) {
      v = static_cast<const float*>(src)[i];
    } else {
      const uint16_t h = static_cast<const uint16_t*>(src)[i];
      v = wire == zfcFloat16 ? kernels::f16_to_f32(h) : kernels::bf16_to_f32(h);
    }
    acc[i] = acc[i] + v;
  }
}

__global__ void divide_kernel(float* v, size_t n, float divisor) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    v[i] = v[i] / divisor;
  }
}

}  // namespace

Status encode(const float* d_src, size_t n, zfcDataType_t wire, float scale, void* d_dst,
              void* stream) {
  if (n == 0) return Status::Ok();
  cudaStream_t s = as_stream(stream);
  if (wire == zfcFloat32) {
    if (d_dst == d_src) return Status::Ok();
    return cuda_check(cudaMemcpyAsync(d_dst, d_src, n * sizeof(float), cudaMemcpyDeviceToDevice, s),
                      "cudaMemcpyAsync (device to device)");
  }
  uint16_t* out = static_cast<uint16_t*>(d_dst);
  const bool half = wire == zfcFloat16;
  // The aligned body four at a time, then the scalar kernel for the rest (or for all of it).
  size_t done = 0;
  if (reinterpret_cast<uintptr_t>(d_src) % 16 == 0 && reinterpret_cast<uintptr_t>(out) % 8 == 0 &&
      n >= 4) {
    const size_t n4 = n / 4;
    const float4* src4 = reinterpret_cast<const float4*>(d_src);
    uint2* dst4 = reinterpret_cast<uint2*>(out);
    if (half) {
      encode4_kernel<true><<<cast_grid(n4), kBlock, 0, s>>>(src4, n4, scale, dst4);
    } else {
      encode4_kernel<false><<<cast_grid(n4), kBlock, 0, s>>>(src4, n4, scale, dst4);
    }
    ZFC_RETURN_IF_ERROR(launch_check("encode4_kernel"));
    done = n4 * 4;
  }
  if (done == n) return Status::Ok();
  if (half) {
    encode_kernel<true><<<grid_for(n - done), kBlock, 0, s>>>(d_src + done, n - done, scale,
                                                              out + done);
  } else {
    encode_kernel<false><<<grid_for(n - done), kBlock, 0, s>>>(d_src + done, n - done, scale,
                                                               out + done);
  }
  return launch_check("encode_kernel");
}

Status decode(const void* d_src, size_t n, zfcDataType_t wire, float scale, float* d_dst,
              int* d_nonfinite, void* stream) {
  if (n == 0) return Status::Ok();
  cudaStream_t s = as_stream(stream);
  if (wire == zfcFloat32) {
    if (d_dst != d_src) {
      ZFC_RETURN_IF_ERROR(cuda_check(
          cudaMemcpyAsync(d_dst, d_src, n * sizeof(float), cudaMemcpyDeviceToDevice, s),
          "cudaMemcpyAsync (device to device)"));
    }
    return flag_nonfinite(d_dst, n, d_nonfinite, stream);
  }
  const uint16_t* in = static_cast<const uint16_t*>(d_src);
  const bool half = wire == zfcFloat16;
  size_t done = 0;
  if (reinterpret_cast<uintptr_t>(in) % 8 == 0 && reinterpret_cast<uintptr_t>(d_dst) % 16 == 0 &&
      n >= 4) {
    const size_t n4 = n / 4;
    const uint2* src4 = reinterpret_cast<const uint2*>(in);
    float4* dst4 = reinterpret_cast<float4*>(d_dst);
    if (half) {
      decode4_kernel<true><<<cast_grid(n4), kBlock, 0, s>>>(src4, n4, scale, dst4, d_nonfinite);
    } else {
      decode4_kernel<false><<<cast_grid(n4), kBlock, 0, s>>>(src4, n4, scale, dst4,
                                                             d_nonfinite);
    }
    ZFC_RETURN_IF_ERROR(launch_check("decode4_kernel"));
    done = n4 * 4;
  }
  if (done < n) {
    if (half) {
      decode_kernel<true><<<grid_for(n - done), kBlock, 0, s>>>(in + done, n - done, scale,
                                                                d_dst + done, d_nonfinite);
    } else {
      decode_kernel<false><<<grid_for(n - done), kBlock, 0, s>>>(in + done, n - done, scale,
                                                                 d_dst + done, d_nonfinite);
    }
    ZFC_RETURN_IF_ERROR(launch_check("decode_kernel"));
  }
  return Status::Ok();
}

Status sum_blocks(const void* d_blocks, int nblocks, size_t n, zfcDataType_t wire,
                  float* d_acc, void* stream) {
  if (n == 0) return Status::Ok();
  sum_blocks_kernel<<<grid_for(n), kBlock, 0, as_stream(stream)>>>(d_blocks, nblocks, n, wire,
                                                                   d_acc);
  return launch_check("sum_blocks_kernel");
}

Status add_to(const void* d_src, zfcDataType_t wire, size_t n, float* d_acc, void* stream) {
  if (n == 0) return Status::Ok();
  add_to_kernel<<<grid_for(n), kBlock, 0, as_stream(stream)>>>(d_src, wire, n, d_acc);
  return launch_check("add_to_kernel");
}

Status flag_nonfinite(const float* d_v, size_t n, int* d_nonfinite, void* stream) {
  if (n == 0) return Status::Ok();
  flag_nonfinite_kernel<<<grid_for(n), kBlock, 0, as_stream(stream)>>>(d_v, n, d_nonfinite);
  return launch_check("flag_nonfinite_kernel");
}

Status divide(float* d_v, size_t n, float divisor, void* stream) {
  if (n == 0) return Status::Ok();
  divide_kernel<<<grid_for(n), kBlock, 0, as_stream(stream)>>>(d_v, n, divisor);
  return launch_check("divide_kernel");
}

}  // namespace cuda
}  // namespace zfc

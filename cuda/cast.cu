// Wire-format kernels on the device: encode with scale, decode with the non-finite flag,
// the rank-ordered fp32 sum of wire blocks, and the finite check. The conversions are the
// host's own code (host_device/half_bits.hpp), so both give the same bits.
#include "cuda_check.hpp"
#include "device_kernels.hpp"
#include "host_device/half_bits.hpp"

namespace zfc {
namespace cuda {
namespace {

__device__ inline bool nonfinite_bits(uint32_t f32) { return (f32 & 0x7f800000u) == 0x7f800000u; }

template <bool kHalf>
__global__ void encode_kernel(const float* src, size_t n, float scale, uint16_t* dst) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    const float v = src[i] * scale;
    dst[i] = kHalf ? kernels::f32_to_f16(v) : kernels::f32_to_bf16(v);
  }
}

template <bool kHalf>
__global__ void decode_kernel(const uint16_t* src, size_t n, float scale, float* dst,
                              int* nonfinite) {
  bool bad = false;
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    const uint16_t h = src[i];
    bad |= kHalf ? (h & 0x7c00u) == 0x7c00u : (h & 0x7f80u) == 0x7f80u;
    dst[i] = (kHalf ? kernels::f16_to_f32(h) : kernels::bf16_to_f32(h)) / scale;
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
  if (wire == zfcFloat16) {
    encode_kernel<true><<<grid_for(n), kBlock, 0, s>>>(d_src, n, scale, out);
  } else {
    encode_kernel<false><<<grid_for(n), kBlock, 0, s>>>(d_src, n, scale, out);
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
  if (wire == zfcFloat16) {
    decode_kernel<true><<<grid_for(n), kBlock, 0, s>>>(in, n, scale, d_dst, d_nonfinite);
  } else {
    decode_kernel<false><<<grid_for(n), kBlock, 0, s>>>(in, n, scale, d_dst, d_nonfinite);
  }
  return launch_check("decode_kernel");
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

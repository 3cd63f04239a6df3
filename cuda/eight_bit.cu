// Rows of the eight-bit wire formats and stochastically rounded 16-bit rows on the device: the
// host's scalar conversions and random bits (host_device/eight_bit.hpp) and the host's rule for
// a row's scale (lib/kernels/wire_eight_bit.cpp), one thread block per row, so that both give
// the same bits. Compiled for the library's architectures; never run on a GPU yet.
#include "cuda_check.hpp"
#include "device_kernels.hpp"
#include "host_device/eight_bit.hpp"

namespace zfc {
namespace cuda {
namespace {

constexpr int kRowThreads = 128;

__device__ inline bool per_row(RowCode c) { return c >= RowCode::kFp8E4M3; }

// By value: the host's constants, built where the device can read them.
__device__ inline kernels::Fp8Spec fp8_spec(RowCode c) {
  return c == RowCode::kFp8E4M3 ? kernels::Fp8Spec{3, 7, 0x7eu, 8}
                                : kernels::Fp8Spec{2, 15, 0x7bu, 15};
}

__device__ inline uint64_t row_id(const RowRounding& r, uint32_t row) {
  if (r.d_ids == nullptr) return r.base + row;
  return r.id_bytes == 4 ? static_cast<const uint32_t*>(r.d_ids)[row]
                         : static_cast<const uint64_t*>(r.d_ids)[row];
}

// The row's largest magnitude's bits, over the block (every thread gets it).
__device__ uint32_t block_largest_bits(const float* v, size_t dim) {
  __shared__ uint32_t lanes[kRowThreads / 32];
  uint32_t most = 0;
  for (size_t k = threadIdx.x; k < dim; k += blockDim.x) {
    most = max(most, kernels::f32_bits(v[k]) & 0x7fffffffu);
  }
  for (int off = 16; off > 0; off /= 2) most = max(most, __shfl_xor_sync(0xffffffffu, most, off));
  if (threadIdx.x % 32 == 0) lanes[threadIdx.x / 32] = most;
  __syncthreads();
  most = 0;
  for (int w = 0; w < kRowThreads / 32; ++w) most = max(most, lanes[w]);
  __syncthreads();
  return most;
}

__global__ void encode_rows_kernel(const float* src, uint32_t rows, size_t dim, RowCode code,
                                   float value_scale, RowRounding r, char* dst) {
  const size_t row_bytes = per_row(code) ? dim + sizeof(float) : 2 * dim;
  const kernels::RoundingKey key{r.seed, r.step, r.rank_hop};
  for (uint32_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const float* v = src + static_cast<size_t>(row) * dim;
    char* out = dst + static_cast<size_t>(row) * row_bytes;
    float scale = value_scale, factor = value_scale;
    bool zeros = false;
    if (per_row(code)) {
      const kernels::Fp8Spec spec = fp8_spec(code);
      zeros = !kernels::eight_bit_row_scale(code == RowCode::kInt8 ? nullptr : &spec,
                                            block_largest_bits(v, dim), &scale, &factor);
    }
    const uint64_t id = r.stochastic ? row_id(r, row) : 0;
    // Eight columns per thread: one Philox block's 16-bit draws.
    for (size_t g = threadIdx.x; g * 8 < dim; g += blockDim.x) {
      kernels::Philox4 bits{};
      if (r.stochastic) bits = kernels::rounding_block(key, id, static_cast<uint32_t>(g));
      for (size_t k = g * 8; k < dim && k < g * 8 + 8; ++k) {
        const uint32_t b = r.stochastic ? kernels::rounding_bits(bits, static_cast<uint32_t>(k % 8)) : 0;
        const float y = v[k] * factor;
        switch (code) {
          case RowCode::kFp16:
            reinterpret_cast<uint16_t*>(out)[k] =
                r.stochastic ? kernels::f32_to_f16_stochastic(y, b) : kernels::f32_to_f16(y);
            break;
          case RowCode::kBf16:
            reinterpret_cast<uint16_t*>(out)[k] =
                r.stochastic ? kernels::f32_to_bf16_stochastic(y, b) : kernels::f32_to_bf16(y);
            break;
          case RowCode::kInt8:
            out[k] = zeros ? 0 : static_cast<char>(kernels::f32_to_int8(y, r.stochastic, b));
            break;
          default:
            out[k] = zeros ? 0 : static_cast<char>(kernels::f32_to_fp8(y, fp8_spec(code), r.stochastic, b));
        }
      }
    }
    if (per_row(code) && threadIdx.x == 0) memcpy(out + dim, &scale, sizeof scale);
  }
}

__global__ void decode_rows_kernel(const char* src, uint32_t rows, size_t dim, RowCode code,
                                   const int32_t* dest, bool add, float* out, int* nonfinite) {
  bool bad = false;
  for (uint32_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const unsigned char* in = reinterpret_cast<const unsigned char*>(src) + row * (dim + 4);
    float s;
    memcpy(&s, in + dim, sizeof s);
    float* o = out + static_cast<size_t>(dest != nullptr ? dest[row] : row) * dim;
    for (size_t k = threadIdx.x; k < dim; k += blockDim.x) {
      const float c = code == RowCode::kInt8 ? static_cast<float>(static_cast<int8_t>(in[k]))
                                             : kernels::fp8_to_f32(in[k], fp8_spec(code));
      const float v = c * s;
      bad |= (kernels::f32_bits(v) & 0x7f800000u) == 0x7f800000u;
      o[k] = add ? o[k] + v : v;
    }
  }
  if (bad) atomicOr(nonfinite, 1);
}

unsigned row_grid(uint32_t rows) { return rows < 65535u ? (rows == 0 ? 1u : rows) : 65535u; }

}  // namespace

Status encode_rows(const float* d_src, uint32_t rows, size_t dim, RowCode code, float scale,
                   const RowRounding& r, void* d_dst, void* stream) {
  if (rows == 0 || dim == 0) return Status::Ok();
  encode_rows_kernel<<<row_grid(rows), kRowThreads, 0, as_stream(stream)>>>(
      d_src, rows, dim, code, scale, r, static_cast<char*>(d_dst));
  return launch_check("encode_rows");
}

Status decode_eight_bit_rows(const void* d_src, uint32_t rows, size_t dim, RowCode code,
                             const int32_t* d_dest, bool add, float* d_out, int* d_nonfinite,
                             void* stream) {
  if (rows == 0 || dim == 0) return Status::Ok();
  decode_rows_kernel<<<row_grid(rows), kRowThreads, 0, as_stream(stream)>>>(
      static_cast<const char*>(d_src), rows, dim, code, d_dest, add, d_out, d_nonfinite);
  return launch_check("decode_eight_bit_rows");
}

}  // namespace cuda
}  // namespace zfc

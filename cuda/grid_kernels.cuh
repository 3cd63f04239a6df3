// Small kernels several files of cuda/ launch (each .cu file gets its own copy).
#pragma once

#include <cstdint>

namespace zfc {
namespace cuda {
namespace {

// out[i] = i: the input numbers that a radix sort carries along as values.
__global__ void iota_kernel(uint32_t* out, uint32_t n) {
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    out[i] = i;
  }
}

__global__ void set_value_kernel(uint32_t* out, uint32_t value) { *out = value; }

}  // namespace
}  // namespace cuda
}  // namespace zfc

// Device buffers for the CUDA tests: host vectors copied in and out, and the skip with the
// reason when this machine has no GPU.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "device_runtime.hpp"
#include "zipfcoll/zipfcoll.h"

namespace zfc {
namespace test {

#define ZFC_REQUIRE_GPU()                                                                   \
  do {                                                                                      \
    if (::zfc::cuda::device_count() == 0) {                                                 \
      GTEST_SKIP() << "no GPU: " << ::zfc::cuda::no_device_reason()                         \
                   << " (these tests run on a machine with one)";                           \
    }                                                                                       \
  } while (0)

// A communicator of this process alone over `transport`, opened with the library's own
// bootstrap (no MPI).
inline zfcResult_t open_one_rank(zfcTransport_t transport, zfcComm_t* comm) {
  zfcUniqueId id;
  const zfcResult_t r = zfcGetUniqueId(&id);
  if (r != zfcSuccess) return r;
  zfcConfig_t cfg = ZFC_CONFIG_INITIALIZER;
  cfg.transport = transport;
  return zfcCommInitRank(comm, 1, id, 0, &cfg);
}

// A device copy of n elements of T.
template <class T>
class DeviceVector {
 public:
  explicit DeviceVector(size_t n) : n_(n) { EXPECT_TRUE(buf_.reserve(bytes() + 1).ok()); }
  explicit DeviceVector(const std::vector<T>& host) : DeviceVector(host.size()) {
    EXPECT_TRUE(cuda::copy_to_device(buf_.data(), host.data(), bytes(), nullptr).ok());
  }
  T* get() const { return static_cast<T*>(buf_.data()); }
  std::vector<T> to_host(size_t count) const {
    std::vector<T> out(count);
    EXPECT_TRUE(cuda::copy_to_host(out.data(), buf_.data(), count * sizeof(T), nullptr).ok());
    return out;
  }
  std::vector<T> to_host() const { return to_host(n_); }
  T value() const { return to_host(1)[0]; }

 private:
  size_t bytes() const { return n_ * sizeof(T); }
  size_t n_;
  cuda::DeviceBuffer buf_;
};

// Whether two vectors hold the same bits (a float comparison would let -0 equal +0).
template <class T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

// Runs a CUB-style call twice: once for the scratch size, once with that much scratch.
template <class Call>
Status with_scratch(Call call) {
  size_t bytes = 0;
  Status s = call(nullptr, &bytes);
  if (!s.ok()) return s;
  cuda::DeviceBuffer scratch;
  s = scratch.reserve(bytes + 1);
  if (!s.ok()) return s;
  return call(scratch.data(), &bytes);
}

}  // namespace test
}  // namespace zfc

// Device buffers for zfc_perf -g 1: the zfc calls' inputs and outputs in this rank's GPU's
// memory (its rank on its host mod the device count), copied there and back outside the
// timed region. A build without CUDA has the same interface and refuses, saying why.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "zipfcoll/zipfcoll.h"

// Makes device local_rank mod the device count current; false, with *why, when there is none
// (or no CUDA build).
bool select_rank_device(int local_rank, std::string* why);

// A device buffer that grows to the largest size asked of it.
class DeviceCopy {
 public:
  DeviceCopy() = default;
  ~DeviceCopy();
  DeviceCopy(const DeviceCopy&) = delete;
  DeviceCopy& operator=(const DeviceCopy&) = delete;

  // Copies `bytes` from host memory into the buffer (grown to fit); returns the device
  // pointer.
  void* upload(const void* host, size_t bytes);
  // Room for `bytes` on the device; returns the device pointer.
  void* reserve(size_t bytes);
  // Copies `bytes` of the device memory at `device` to host memory.
  static void download(const void* device, void* host, size_t bytes);

 private:
  void* data_ = nullptr;
  size_t bytes_ = 0;
};

// A stream of this rank's GPU for calls that queue their work and return before it ran (the
// bounded reduce): a timed call ends with sync(). Without CUDA, none (get() is nullptr).
class DeviceStream {
 public:
  DeviceStream();
  ~DeviceStream();
  DeviceStream(const DeviceStream&) = delete;
  DeviceStream& operator=(const DeviceStream&) = delete;
  void* get() const { return stream_; }
  void sync();

 private:
  void* stream_ = nullptr;
};

// A sparse result whose arrays are on the device, copied to host memory.
struct HostSparseResult {
  HostSparseResult() = default;
  HostSparseResult(HostSparseResult&&) = default;  // the vectors' storage moves with them
  HostSparseResult(const HostSparseResult&) = delete;  // result would point into the original
  std::vector<char> indices;
  std::vector<float> rows;
  zfcSparseResult_t result = ZFC_SPARSE_RESULT_INITIALIZER;
};
HostSparseResult copy_to_host(const zfcSparseResult_t& on_device, size_t index_bytes);

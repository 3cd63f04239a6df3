// The device-resident sparse step against the same call on host buffers, for the NCCL tests
// on one rank (tests/cuda) and on several (tests/mpi/test_nccl.cpp): for unique_allreduce,
// auto (which is then unique_allreduce) and key_routed, every wire and both index types, with
// the overflow flag read by the call and left on the device (overflow_on_device), the same
// bits and indices, and the statistics' path of each phase and the step's waits for the
// caller's stream.
#pragma once

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "device_test_util.hpp"
#include "zipfcoll/zipfcoll.h"

namespace zfc {
namespace test {

// `host` runs the call on host buffers (it may be `device` itself: host buffers take the
// host path whatever the transport); `device` on device buffers. Collective over both.
inline void expect_resident_step_matches_host(zfcComm_t host, zfcComm_t device,
                                              const std::vector<int64_t>& idx,
                                              const std::vector<float>& rows, size_t dim,
                                              int64_t vocab) {
  const size_t count = idx.size();
  const std::vector<int32_t> idx32(idx.begin(), idx.end());
  DeviceVector<int64_t> d_idx(idx);
  DeviceVector<int32_t> d_idx32(idx32);
  DeviceVector<float> d_rows(rows);
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  for (zfcAlgorithm_t algo : {zfcAlgoUniqueAllReduce, zfcAlgoAuto, zfcAlgoKeyRouted}) {
    for (int compression : {int{zfcCompressNone}, int{zfcCompressFp16}, int{zfcCompressBf16}}) {
      for (zfcDataType_t type : {zfcInt32, zfcInt64}) {
        for (int on_device : {0, 1}) {
          SCOPED_TRACE(testing::Message() << zfcGetAlgorithmName(algo) << ", compression "
                                          << compression << ", index type " << type
                                          << ", overflow_on_device " << on_device);
          const zfcAlgorithm_t ran = algo == zfcAlgoAuto ? zfcAlgoUniqueAllReduce : algo;
          zfcSparsePlanConfig_t cfg = ZFC_SPARSE_PLAN_CONFIG_INITIALIZER;
          cfg.dim = dim;
          cfg.vocab_size = vocab;
          cfg.index_type = type;
          cfg.algorithm = algo;
          cfg.compression = compression;
          cfg.compress_scale = compression == zfcCompressFp16 ? 128.0f : 1.0f;
          zfcSparsePlanConfig_t host_cfg = cfg;
          host_cfg.algorithm = ran;
          cfg.overflow_on_device = on_device;
          zfcSparsePlan_t host_plan = nullptr, dev_plan = nullptr;
          ASSERT_EQ(zfcSparsePlanCreate(host, &host_cfg, &host_plan), zfcSuccess);
          ASSERT_EQ(zfcSparsePlanCreate(device, &cfg, &dev_plan), zfcSuccess);
          const bool narrow = type == zfcInt32;
          const void* h_in = narrow ? static_cast<const void*>(idx32.data()) : idx.data();
          const void* d_in = narrow ? static_cast<const void*>(d_idx32.get()) : d_idx.get();
          zfcSparseResult_t h = ZFC_SPARSE_RESULT_INITIALIZER, d = ZFC_SPARSE_RESULT_INITIALIZER;
          ASSERT_EQ(zfcSparseReduce(host_plan, h_in, count, rows.data(), &h, nullptr), zfcSuccess);
          zfcStats_t hs = ZFC_STATS_INITIALIZER;
          ASSERT_EQ(zfcCommGetStats(host, &hs), zfcSuccess);
          EXPECT_EQ(hs.last.path[zfcPhaseLocal], zfcPathHost);
          EXPECT_EQ(hs.last.host_syncs, 0u);
          // Twice: the first call grows the plan's device and pinned memory, which may wait.
          for (int call = 0; call < 2; ++call) {
            ASSERT_EQ(zfcSparseReduce(dev_plan, d_in, count, d_rows.get(), &d, stream),
                      zfcSuccess)
                << zfcGetLastError(device);
          }
          zfcStats_t st = ZFC_STATS_INITIALIZER;
          ASSERT_EQ(zfcCommGetStats(device, &st), zfcSuccess);
          ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
          EXPECT_EQ(d.algorithm, ran);
          if (on_device == 1) {
            // The flag stays on the device; the stream has set it by now.
            EXPECT_EQ(d.overflowed, -1);
            ASSERT_NE(d.overflow_flag, nullptr);
            int flag = -1;
            ASSERT_TRUE(cuda::copy_to_host(&flag, d.overflow_flag, sizeof flag, nullptr).ok());
            EXPECT_EQ(flag, h.overflowed);
          } else {
            EXPECT_EQ(d.overflowed, h.overflowed);
            EXPECT_EQ(d.overflow_flag, nullptr);
          }
          ASSERT_EQ(d.num_unique, h.num_unique);
          EXPECT_TRUE(cuda::is_device_pointer(d.rows));
          EXPECT_TRUE(cuda::is_device_pointer(d.indices));
          std::vector<float> d_out(d.num_unique * dim);
          ASSERT_TRUE(
              cuda::copy_to_host(d_out.data(), d.rows, d_out.size() * sizeof(float), nullptr).ok());
          EXPECT_TRUE(same_bits(d_out, std::vector<float>(h.rows, h.rows + h.num_unique * dim)));
          std::vector<char> d_keys(d.num_unique * (narrow ? 4 : 8));
          ASSERT_TRUE(cuda::copy_to_host(d_keys.data(), d.indices, d_keys.size(), nullptr).ok());
          EXPECT_EQ(std::memcmp(d_keys.data(), h.indices, d_keys.size()), 0);
          EXPECT_EQ(st.last.path[zfcPhaseLocal], zfcPathDevice);
          EXPECT_EQ(st.last.path[zfcPhaseRowExchange], zfcPathDevice);
          EXPECT_EQ(st.last.path[zfcPhaseHeader], zfcPathHost);
          // The waits of this version's device steps (docs/design.md, "Device buffers"): the
          // uniqueness technique reads the index check, U_i and the distinct keys once, its
          // transfers queued behind its kernels, and the overflow flag at the end, unless it
          // stays on the device. The key-routed step reads the index check, U_i and the pair
          // counts at once, then waits for the pairs sent, the counts received, the owner's
          // U, the sums sent and the owners' reports, and last reads the global set's size,
          // with the flag unless it stays on the device: seven waits either way.
          const uint32_t waits =
              ran == zfcAlgoKeyRouted ? 7u : 1u + (on_device ? 0u : 1u);
          EXPECT_EQ(st.last.host_syncs, waits);
          EXPECT_EQ(zfcSparsePlanDestroy(host_plan), zfcSuccess);
          EXPECT_EQ(zfcSparsePlanDestroy(dev_plan), zfcSuccess);
        }
      }
    }
  }
  EXPECT_EQ(cudaStreamDestroy(stream), cudaSuccess);
}

}  // namespace test
}  // namespace zfc

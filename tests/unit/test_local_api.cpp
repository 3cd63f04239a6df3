// The public functions that need no communicator: scatter-to-dense, apply-rows, names,
// versions and the guards on config structs; and the cost model behind zfcAlgoAuto.
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "algo/sparse_reduce.hpp"
#include "core/config.hpp"
#include "exec/memory_space.hpp"
#include "transport/mpi/mpi_transport.hpp"
#include "common/reference.hpp"
#include "zipfcoll/zipfcoll.h"

namespace zfc {
namespace {

TEST(ScatterToDense, SumsDuplicatesInOrderIntoZeroedRows) {
  const size_t dim = 3;
  const std::vector<float> rows = {1, 2, 3, 10, 20, 30, 100, 200, 300, 0.5f, 0.5f, 0.5f};
  const std::vector<int32_t> pos = {2, 0, 2, 0};
  std::vector<float> dense(4 * dim, 99.0f);
  ASSERT_EQ(zfcScatterToDense(rows.data(), zfcFloat32, pos.data(), 4, dim, dense.data(), 4,
                              nullptr),
            zfcSuccess);
  const std::vector<float> want = {10.5f, 20.5f, 30.5f, 0, 0, 0, 101, 202, 303, 0, 0, 0};
  EXPECT_EQ(dense, want);
}

TEST(ScatterToDense, HalfAndBFloat16RowsAreSummedInFp32) {
  // 2049 is not an fp16 value, but 2048 + 1 summed in fp32 is.
  const uint16_t h[2] = {0x6800, 0x3c00};  // 2048 and 1 in fp16
  const int32_t pos[2] = {0, 0};
  float dense[1];
  ASSERT_EQ(zfcScatterToDense(h, zfcFloat16, pos, 2, 1, dense, 1, nullptr), zfcSuccess);
  EXPECT_EQ(dense[0], 2049.0f);
  const uint16_t b[2] = {0x3f80, 0x4000};  // 1 and 2 in bf16
  ASSERT_EQ(zfcScatterToDense(b, zfcBFloat16, pos, 2, 1, dense, 1, nullptr), zfcSuccess);
  EXPECT_EQ(dense[0], 3.0f);
}

TEST(ScatterToDense, BadPositionWritesNothing) {
  const std::vector<float> rows(6, 1.0f);
  const std::vector<int32_t> pos = {0, 2};
  std::vector<float> dense(4, 7.0f);
  EXPECT_EQ(zfcScatterToDense(rows.data(), zfcFloat32, pos.data(), 2, 2, dense.data(), 2,
                              nullptr),
            zfcInvalidArgument);
  EXPECT_NE(std::string(zfcGetLastError(nullptr)).find("positions[1] = 2 is outside [0, 2)"),
            std::string::npos)
      << zfcGetLastError(nullptr);
  EXPECT_EQ(dense, std::vector<float>(4, 7.0f));
  EXPECT_EQ(zfcScatterToDense(rows.data(), zfcInt32, pos.data(), 2, 2, dense.data(), 3,
                              nullptr),
            zfcInvalidArgument);
  EXPECT_EQ(zfcScatterToDense(nullptr, zfcFloat32, pos.data(), 2, 2, dense.data(), 3, nullptr),
            zfcInvalidArgument);
  EXPECT_EQ(zfcScatterToDense(nullptr, zfcFloat32, nullptr, 0, 2, nullptr, 0, nullptr),
            zfcSuccess);
}

TEST(ApplyRows, UpdatesEachListedRowOnce) {
  const size_t dim = 2;
  std::vector<float> table = {1, 1, 2, 2, 3, 3, 4, 4};
  const int64_t idx[2] = {3, 1};
  const float rows[4] = {10, 20, 30, 40};
  ASSERT_EQ(zfcApplyRows(table.data(), 4, dim, idx, zfcInt64, rows, 2, -0.5f, nullptr),
            zfcSuccess);
  EXPECT_EQ(table, (std::vector<float>{1, 1, -13, -18, 3, 3, -1, -6}));
  const int32_t bad[2] = {0, 4};
  EXPECT_EQ(zfcApplyRows(table.data(), 4, dim, bad, zfcInt32, rows, 2, 1.0f, nullptr),
            zfcInvalidArgument);
  EXPECT_NE(std::string(zfcGetLastError(nullptr)).find("indices[1] = 4"), std::string::npos);
  EXPECT_EQ(table, (std::vector<float>{1, 1, -13, -18, 3, 3, -1, -6}));
  // A stream belongs with device buffers: with host buffers it is refused, and a build
  // without CUDA refuses any stream.
  int stream;
  EXPECT_EQ(zfcApplyRows(table.data(), 4, dim, idx, zfcInt64, rows, 2, 1.0f, &stream),
            device_support_built() ? zfcInvalidArgument : zfcUnsupported);
  EXPECT_NE(std::string(zfcGetLastError(nullptr)).find("stream"), std::string::npos);
  const float dense_rows[2] = {1, 2};
  const int32_t pos[1] = {0};
  float dense[2];
  EXPECT_EQ(zfcScatterToDense(dense_rows, zfcFloat32, pos, 1, 2, dense, 1, &stream),
            device_support_built() ? zfcInvalidArgument : zfcUnsupported);
  EXPECT_EQ(table, (std::vector<float>{1, 1, -13, -18, 3, 3, -1, -6}));
}

TEST(Info, VersionNamesAndErrors) {
  int v = 0;
  ASSERT_EQ(zfcGetVersion(&v), zfcSuccess);
  EXPECT_EQ(v, ZFC_VERSION_CODE);
  EXPECT_EQ(zfcGetVersion(nullptr), zfcInvalidArgument);
  for (int r = 0; r < zfcNumResults; ++r) {
    EXPECT_STRNE(zfcGetErrorString(static_cast<zfcResult_t>(r)), "unknown result code");
  }
  EXPECT_STREQ(zfcGetErrorString(static_cast<zfcResult_t>(99)), "unknown result code");
  EXPECT_STREQ(zfcGetAlgorithmName(zfcAlgoUniqueAllReduce), "unique_allreduce");
  EXPECT_STREQ(zfcGetAlgorithmName(42), "unknown");
  EXPECT_STREQ(zfcGetPhaseName(zfcPhaseRowExchange), "row_exchange");
  EXPECT_EQ(zfcCommRank(nullptr, &v), zfcInvalidArgument);
  EXPECT_EQ(zfcCommDestroy(nullptr), zfcSuccess);
  EXPECT_EQ(zfcSparsePlanDestroy(nullptr), zfcSuccess);
}

TEST(Info, InitWithoutMpiIsRefusedCleanly) {
  // This process never initialises MPI: a build with MPI says so, one without says it has
  // no MPI transport. Either way the output is untouched.
  int fake_mpi_comm = 0;
  zfcComm_t comm = reinterpret_cast<zfcComm_t>(0x3);
  const zfcResult_t r = zfcCommInitMpi(&comm, &fake_mpi_comm, nullptr);
  EXPECT_EQ(r, mpi_transport_available() ? zfcInvalidUsage : zfcUnsupported);
  EXPECT_NE(std::string(zfcGetLastError(nullptr)).find("MPI"), std::string::npos);
  EXPECT_EQ(comm, reinterpret_cast<zfcComm_t>(0x3));
  EXPECT_EQ(zfcCommInitMpi(nullptr, &fake_mpi_comm, nullptr), zfcInvalidArgument);
}

TEST(Config, GuardsRefuseUninitialisedOrUnknownStructs) {
  Config parsed;
  EXPECT_TRUE(parse_config(nullptr, &parsed).ok());
  EXPECT_EQ(parsed.algorithm, zfcAlgoAuto);
  zfcConfig_t cfg = ZFC_CONFIG_INITIALIZER;
  EXPECT_TRUE(parse_config(&cfg, &parsed).ok());
  cfg.size = 8;
  EXPECT_EQ(parse_config(&cfg, &parsed).code(), zfcInvalidUsage);
  cfg = ZFC_CONFIG_INITIALIZER;
  cfg.magic = 0;
  EXPECT_EQ(parse_config(&cfg, &parsed).code(), zfcInvalidUsage);
  cfg = ZFC_CONFIG_INITIALIZER;
  cfg.version = ZFC_VERSION_CODE + 1;
  EXPECT_EQ(parse_config(&cfg, &parsed).code(), zfcInvalidUsage);
  cfg = ZFC_CONFIG_INITIALIZER;
  cfg.compression = zfcCompressFp16;
  cfg.compress_scale = 0.0f;
  const Status bad_scale = parse_config(&cfg, &parsed);
  EXPECT_EQ(bad_scale.code(), zfcInvalidArgument);
  EXPECT_NE(bad_scale.message().find("scale 0"), std::string::npos) << bad_scale.message();
  cfg = ZFC_CONFIG_INITIALIZER;
  cfg.algorithm = 17;
  EXPECT_EQ(parse_config(&cfg, &parsed).code(), zfcInvalidArgument);
  cfg = ZFC_CONFIG_INITIALIZER;
  cfg.device = 0;  // a device is chosen for NCCL only
  EXPECT_EQ(parse_config(&cfg, &parsed).code(), zfcInvalidArgument);
  cfg.transport = zfcTransportNccl;
  EXPECT_TRUE(parse_config(&cfg, &parsed).ok());
  EXPECT_EQ(parsed.device, 0);
  cfg.device = -2;
  EXPECT_EQ(parse_config(&cfg, &parsed).code(), zfcInvalidArgument);
  cfg = ZFC_CONFIG_INITIALIZER;
  cfg.timeout_ms = -1;
  EXPECT_EQ(parse_config(&cfg, &parsed).code(), zfcInvalidArgument);
  // A bound on waits is a valid request; the MPI transport, which cannot honour it, refuses
  // it when a communicator is made from MPI (tests/mpi).
  cfg.timeout_ms = 100;
  ASSERT_TRUE(parse_config(&cfg, &parsed).ok());
  EXPECT_EQ(parsed.timeout_ms, 100);
}

TEST(Config, PlanConfigDefaultsComeFromTheCommunicator) {
  Config comm;
  comm.algorithm = zfcAlgoAllGather;
  comm.compression = Compression{zfcCompressBf16, 2.0f};
  zfcSparsePlanConfig_t cfg = ZFC_SPARSE_PLAN_CONFIG_INITIALIZER;
  PlanSpec spec;
  EXPECT_EQ(parse_plan_config(&cfg, comm, &spec).code(), zfcInvalidArgument);  // dim 0
  cfg.dim = 8;
  cfg.vocab_size = 10;
  ASSERT_TRUE(parse_plan_config(&cfg, comm, &spec).ok());
  EXPECT_EQ(spec.algorithm, zfcAlgoAllGather);
  EXPECT_EQ(spec.compression.kind, zfcCompressBf16);
  cfg.compression = zfcCompressNone;
  cfg.algorithm = zfcAlgoDenseVocab;
  ASSERT_TRUE(parse_plan_config(&cfg, comm, &spec).ok());
  EXPECT_EQ(spec.algorithm, zfcAlgoDenseVocab);
  EXPECT_EQ(spec.compression.kind, zfcCompressNone);
  cfg.index_type = zfcInt32;
  cfg.vocab_size = int64_t{1} << 32;
  EXPECT_EQ(parse_plan_config(&cfg, comm, &spec).code(), zfcInvalidArgument);
  cfg.vocab_size = 10;
  cfg.row_type = zfcInt64;
  EXPECT_EQ(parse_plan_config(&cfg, comm, &spec).code(), zfcInvalidArgument);
  cfg.row_type = zfcFloat32;
  cfg.magic = 1;
  EXPECT_EQ(parse_plan_config(&cfg, comm, &spec).code(), zfcInvalidUsage);
  EXPECT_EQ(parse_plan_config(nullptr, comm, &spec).code(), zfcInvalidArgument);
}

}  // namespace
}  // namespace zfc

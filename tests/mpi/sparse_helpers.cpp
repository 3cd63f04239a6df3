#include "sparse_helpers.hpp"

#include <cstring>

namespace zfc {
namespace test {

std::vector<uint16_t> to_half_rows(const std::vector<float>& rows, zfcDataType_t type) {
  std::vector<uint16_t> out(rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    if (type == zfcFloat16) {
      out[i] = reference_fp16_bits(rows[i]);
    } else {
      const float r = round_bf16(rows[i]);
      uint32_t u;
      std::memcpy(&u, &r, 4);
      out[i] = static_cast<uint16_t>(u >> 16);
    }
  }
  return out;
}

std::vector<float> rounded_rows(const std::vector<float>& rows, zfcDataType_t type) {
  std::vector<float> out(rows);
  if (type == zfcFloat16) {
    for (float& v : out) v = round_fp16(v);
  } else if (type == zfcBFloat16) {
    for (float& v : out) v = round_bf16(v);
  }
  return out;
}

PlanRun run_plan(zfcComm_t comm, const RankInput& mine, size_t dim, int64_t vocab,
                 const PlanOptions& o) {
  PlanRun run;
  zfcSparsePlanConfig_t cfg = ZFC_SPARSE_PLAN_CONFIG_INITIALIZER;
  cfg.dim = dim;
  cfg.vocab_size = vocab;
  cfg.row_type = o.row_type;
  cfg.index_type = o.index_type;
  cfg.algorithm = o.algorithm;
  cfg.compression = o.compression;
  cfg.compress_scale = o.scale;
  zfcSparsePlan_t plan = nullptr;
  run.result = zfcSparsePlanCreate(comm, &cfg, &plan);
  if (run.result != zfcSuccess) return run;

  std::vector<int32_t> idx32(mine.indices.begin(), mine.indices.end());
  const void* indices = o.index_type == zfcInt32 ? static_cast<const void*>(idx32.data())
                                                 : mine.indices.data();
  std::vector<uint16_t> half;
  const void* rows = mine.rows.data();
  if (o.row_type != zfcFloat32) {
    half = to_half_rows(mine.rows, o.row_type);
    rows = half.data();
  }
  zfcSparseResult_t out = ZFC_SPARSE_RESULT_INITIALIZER;
  run.result = zfcSparseReduce(plan, indices, mine.indices.size(), rows, &out, nullptr);
  if (run.result == zfcSuccess) {
    for (size_t p = 0; p < out.num_unique; ++p) {
      run.indices.push_back(o.index_type == zfcInt32
                                ? static_cast<const int32_t*>(out.indices)[p]
                                : static_cast<const int64_t*>(out.indices)[p]);
    }
    run.rows.assign(out.rows, out.rows + out.num_unique * dim);
    run.algorithm = out.algorithm;
    run.overflowed = out.overflowed;
    zfcStats_t stats = ZFC_STATS_INITIALIZER;
    zfcCommGetStats(comm, &stats);
    run.stats = stats.last;
  }
  zfcSparsePlanDestroy(plan);
  return run;
}

std::vector<char> typed_indices(const std::vector<int64_t>& ids, zfcDataType_t type) {
  std::vector<char> out(ids.size() * (type == zfcInt32 ? 4 : 8));
  for (size_t i = 0; i < ids.size(); ++i) {
    if (type == zfcInt32) {
      const int32_t v = static_cast<int32_t>(ids[i]);
      std::memcpy(out.data() + 4 * i, &v, 4);
    } else {
      std::memcpy(out.data() + 8 * i, &ids[i], 8);
    }
  }
  return out;
}

zfcSparsePlan_t make_test_plan(zfcComm_t comm, size_t dim, int64_t vocab,
                               zfcAlgorithm_t algorithm, zfcDataType_t index_type,
                               int compression, float scale, size_t stream_chunk_bytes) {
  zfcSparsePlanConfig_t cfg = ZFC_SPARSE_PLAN_CONFIG_INITIALIZER;
  cfg.dim = dim;
  cfg.vocab_size = vocab;
  cfg.index_type = index_type;
  cfg.algorithm = algorithm;
  cfg.compression = compression;
  cfg.compress_scale = scale;
  cfg.stream_chunk_bytes = stream_chunk_bytes;
  zfcSparsePlan_t plan = nullptr;
  EXPECT_EQ(zfcSparsePlanCreate(comm, &cfg, &plan), zfcSuccess) << zfcGetLastError(comm);
  return plan;
}

}  // namespace test
}  // namespace zfc

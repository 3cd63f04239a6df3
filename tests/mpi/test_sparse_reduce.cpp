// The fused sparse reduce across ranks: every algorithm against the single-process
// reference, the same bits from every algorithm and on every rank, compression, real text,
// and the exact traffic and workspace each algorithm is documented to use.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <limits>
#include <map>

#include "algo/agreement.hpp"
#include "algo/sparse_reduce.hpp"
#include "common/test_env.hpp"
#include "sparse_helpers.hpp"
#include "workload/corpus.hpp"

namespace zfc {
namespace test {
namespace {

const zfcAlgorithm_t kAlgorithms[] = {zfcAlgoAllGather,        zfcAlgoUniqueAllReduce,
                                      zfcAlgoDenseVocab,       zfcAlgoUniqueAllGather,
                                      zfcAlgoOwnerPartitioned, zfcAlgoKeyRouted,
                                      zfcAlgoAuto};

// Rank r brings 150 + 61 r tokens, except that rank 1 brings none.
size_t uneven_count(int r) { return r == 1 ? 0 : 150 + 61 * static_cast<size_t>(r); }

uint64_t hash_run(const PlanRun& run) {
  uint64_t h = fnv1a(run.indices.data(), run.indices.size() * sizeof(int64_t));
  return fnv1a(run.rows.data(), run.rows.size() * sizeof(float), h);
}

void expect_matches_reference(const PlanRun& run, const SparseReference& ref) {
  ASSERT_EQ(run.result, zfcSuccess);
  ASSERT_EQ(run.indices, ref.unique);
  ASSERT_EQ(run.rows.size(), ref.rows.size());
  for (size_t i = 0; i < ref.rows.size(); ++i) {
    // Bitwise, so that +0/-0 and every last bit count.
    uint32_t a, b;
    std::memcpy(&a, &run.rows[i], 4);
    std::memcpy(&b, &ref.rows[i], 4);
    ASSERT_EQ(a, b) << "element " << i << ": " << run.rows[i] << " vs " << ref.rows[i];
  }
  EXPECT_EQ(run.overflowed, 0);
}

class SparseAlgorithmTest
    : public WorldTest,
      public ::testing::WithParamInterface<std::tuple<zfcAlgorithm_t, zfcDataType_t>> {};

TEST_P(SparseAlgorithmTest, MatchesReferenceBitForBit) {
  const auto [algorithm, index_type] = GetParam();
  const Workload w = zipf_workload(size_, 24, 3000, 1.1, 5, uneven_count);
  const SparseReference ref = reference_sparse(w.ranks, w.dim);
  PlanOptions o;
  o.algorithm = algorithm;
  o.index_type = index_type;
  const PlanRun run = run_plan(comm_, w.ranks[static_cast<size_t>(rank_)], w.dim, w.vocab, o);
  ASSERT_EQ(run.result, zfcSuccess) << zfcGetLastError(comm_);
  expect_matches_reference(run, ref);
  if (algorithm != zfcAlgoAuto) EXPECT_EQ(run.algorithm, algorithm);
  EXPECT_NE(run.algorithm, zfcAlgoAuto);
  EXPECT_TRUE(same_on_all_ranks(hash_run(run)));
  EXPECT_EQ(run.stats.tokens, w.ranks[static_cast<size_t>(rank_)].indices.size());
  EXPECT_EQ(run.stats.local_unique, w.local_unique(rank_));
  EXPECT_EQ(run.stats.global_unique, ref.unique.size());
}

INSTANTIATE_TEST_SUITE_P(
    AlgorithmsAndIndexTypes, SparseAlgorithmTest,
    ::testing::Combine(::testing::ValuesIn(kAlgorithms),
                       ::testing::Values(zfcInt32, zfcInt64)),
    [](const auto& info) {
      return std::string(zfcGetAlgorithmName(std::get<0>(info.param))) +
             (std::get<1>(info.param) == zfcInt32 ? "_int32" : "_int64");
    });

TEST_F(WorldTest, EveryAlgorithmGivesTheSameBits) {
  const Workload w = zipf_workload(size_, 16, 100000, 1.05, 9,
                                   [](int r) { return 640 + 13 * static_cast<size_t>(r); });
  uint64_t first = 0;
  for (zfcAlgorithm_t a : kAlgorithms) {
    PlanOptions o;
    o.algorithm = a;
    const PlanRun run = run_plan(comm_, w.ranks[static_cast<size_t>(rank_)], w.dim, w.vocab, o);
    ASSERT_EQ(run.result, zfcSuccess) << zfcGetAlgorithmName(a) << ": " << zfcGetLastError(comm_);
    const uint64_t h = hash_run(run);
    if (a == kAlgorithms[0]) first = h;
    EXPECT_EQ(h, first) << zfcGetAlgorithmName(a);
  }
}

// A rank with more rows of one id than a sum block (1024) sums them in blocks
// (host_device/sum_order.hpp), whichever algorithm runs; the reference sums them plainly in
// that order.
TEST_F(WorldTest, HotIdsPastASumBlockMatchTheReference) {
  const Workload w = zipf_workload(size_, 8, 300, 1.1, 71,
                                   [](int r) { return 6000 + 7 * static_cast<size_t>(r); });
  std::map<int64_t, size_t> mine;
  for (int64_t id : w.ranks[static_cast<size_t>(rank_)].indices) ++mine[id];
  size_t most = 0;
  for (const auto& [id, n] : mine) most = std::max(most, n);
  ASSERT_GT(most, 1024u) << "the workload has no id past one sum block";
  const SparseReference ref = reference_sparse(w.ranks, w.dim);
  for (zfcAlgorithm_t a : kAlgorithms) {
    PlanOptions o;
    o.algorithm = a;
    const PlanRun run = run_plan(comm_, w.ranks[static_cast<size_t>(rank_)], w.dim, w.vocab, o);
    ASSERT_EQ(run.result, zfcSuccess) << zfcGetAlgorithmName(a) << ": " << zfcGetLastError(comm_);
    SCOPED_TRACE(zfcGetAlgorithmName(a));
    expect_matches_reference(run, ref);
  }
}

// Owners add the same wire values in the same order as the allreduce's reduce-scatter, and
// send the same rounded sums back, so even compressed results agree bit for bit.
TEST_F(WorldTest, OwnerExchangesEqualTheAllreduceOnEveryWire) {
  const Workload w = zipf_workload(size_, 16, 20000, 1.1, 57,
                                   [](int r) { return 500 + 7 * static_cast<size_t>(r); });
  for (zfcCompressionKind_t kind : {zfcCompressNone, zfcCompressFp16, zfcCompressBf16}) {
    uint64_t hashes[3];
    int i = 0;
    for (zfcAlgorithm_t a : {zfcAlgoUniqueAllReduce, zfcAlgoOwnerPartitioned, zfcAlgoKeyRouted}) {
      PlanOptions o;
      o.algorithm = a;
      o.compression = kind;
      o.scale = kind == zfcCompressFp16 ? 128.0f : 1.0f;
      const PlanRun run =
          run_plan(comm_, w.ranks[static_cast<size_t>(rank_)], w.dim, w.vocab, o);
      ASSERT_EQ(run.result, zfcSuccess) << zfcGetLastError(comm_);
      hashes[i++] = hash_run(run);
    }
    EXPECT_EQ(hashes[0], hashes[1]) << "owner_partitioned, compression " << kind;
    EXPECT_EQ(hashes[0], hashes[2]) << "key_routed, compression " << kind;
  }
}

// A machine model given in the config, so that what zfcAlgoAuto picks depends on the
// inputs alone, never on a timing taken when the communicator was made.
zfcComm_t open_pinned_comm() {
  zfcConfig_t cfg = ZFC_CONFIG_INITIALIZER;
  cfg.intra_node = {5.0, 10.0};
  cfg.inter_node = {5.0, 10.0};
  cfg.local_gbs = 10.0;
  zfcComm_t comm = nullptr;
  EXPECT_EQ(open_world_comm(&comm, &cfg), zfcSuccess) << zfcGetLastError(nullptr);
  return comm;
}

// The model's predicted seconds of `algorithm` for the step `run` made, on `comm`'s model.
double predicted_seconds(zfcComm_t comm, const PlanRun& run, const Workload& w,
                         zfcAlgorithm_t algorithm) {
  zfcMachineModel_t model = ZFC_MACHINE_MODEL_INITIALIZER;
  EXPECT_EQ(zfcCommGetMachineModel(comm, &model), zfcSuccess);
  zfcStepShape_t shape = ZFC_STEP_SHAPE_INITIALIZER;
  shape.ranks = world_size();
  for (int r = 0; r < world_size(); ++r) {
    const double k = static_cast<double>(w.ranks[static_cast<size_t>(r)].indices.size());
    const double u = static_cast<double>(w.local_unique(r));
    shape.tokens += k;
    shape.max_tokens = std::max(shape.max_tokens, k);
    shape.local_unique += u;
    shape.max_local_unique = std::max(shape.max_local_unique, u);
  }
  shape.global_unique = static_cast<double>(run.indices.size());
  shape.vocab_size = w.vocab;
  shape.dim = w.dim;
  zfcPrediction_t p = ZFC_PREDICTION_INITIALIZER;
  EXPECT_EQ(zfcPredictSparseReduce(&model, &shape, algorithm, &p), zfcSuccess)
      << zfcGetLastError(nullptr);
  return p.seconds;
}

// With a given model, auto picks the clear winner every time: dense_vocab for a character
// model, and for words of a large vocabulary an exchange of distinct rows that the model
// predicts no slower than any other.
TEST(PinnedModel, AutoPicksTheClearWinner) {
  const int size = world_size(), rank = world_rank();
  zfcComm_t comm = open_pinned_comm();
  ASSERT_NE(comm, nullptr);
  PlanOptions o;
  o.algorithm = zfcAlgoAuto;
  // A character model: 98 symbols, every rank sees nearly all of them many times over.
  const Workload chars = zipf_workload(size, 64, 98, 0.3, 61, [](int) { return size_t{8000}; });
  PlanRun run = run_plan(comm, chars.ranks[static_cast<size_t>(rank)], 64, 98, o);
  ASSERT_EQ(run.result, zfcSuccess) << zfcGetLastError(comm);
  if (size > 1) EXPECT_EQ(run.algorithm, zfcAlgoDenseVocab);
  // Words of a large vocabulary, a few hundred per rank.
  const Workload words = zipf_workload(size, 64, 1000000, 1.1, 63,
                                       [](int) { return size_t{640}; });
  run = run_plan(comm, words.ranks[static_cast<size_t>(rank)], 64, 1000000, o);
  ASSERT_EQ(run.result, zfcSuccess) << zfcGetLastError(comm);
  EXPECT_TRUE(same_on_all_ranks(static_cast<uint64_t>(run.algorithm)));
  if (size > 1) {
    EXPECT_NE(run.algorithm, zfcAlgoDenseVocab);
    EXPECT_NE(run.algorithm, zfcAlgoAllGather);
    const double picked =
        predicted_seconds(comm, run, words, static_cast<zfcAlgorithm_t>(run.algorithm));
    for (zfcAlgorithm_t a : {zfcAlgoUniqueAllReduce, zfcAlgoUniqueAllGather,
                             zfcAlgoOwnerPartitioned}) {
      EXPECT_LE(picked, predicted_seconds(comm, run, words, a)) << zfcGetAlgorithmName(a);
    }
  }
  // The same step again: the same choice.
  const PlanRun again = run_plan(comm, words.ranks[static_cast<size_t>(rank)], 64, 1000000, o);
  EXPECT_EQ(again.algorithm, run.algorithm);
  EXPECT_EQ(zfcCommDestroy(comm), zfcSuccess);
}

// dense_vocab marks which indices are present in the same compressed allreduce as the
// rows: no scale may round a mark to zero and drop an index (a tiny fp16 scale once did) or
// to infinity.
TEST_F(WorldTest, DenseVocabKeepsEveryIndexAtAnyScale) {
  const Workload w = zipf_workload(size_, 4, 500, 1.1, 71,
                                   [](int r) { return 40 + 3 * static_cast<size_t>(r); });
  const SparseReference ref = reference_sparse(w.ranks, w.dim);
  const struct { zfcCompressionKind_t kind; float scale; } cases[] = {
      {zfcCompressFp16, 1e-10f}, {zfcCompressFp16, 1e-30f}, {zfcCompressBf16, 1e-30f},
      {zfcCompressFp16, 1e30f}, {zfcCompressBf16, 3e38f}, {zfcCompressFp16, 1e-45f}};
  for (const auto& c : cases) {
    PlanOptions o;
    o.algorithm = zfcAlgoDenseVocab;
    o.compression = c.kind;
    o.scale = c.scale;
    const PlanRun run = run_plan(comm_, w.ranks[static_cast<size_t>(rank_)], w.dim, w.vocab, o);
    ASSERT_EQ(run.result, zfcSuccess) << zfcGetLastError(comm_);
    EXPECT_EQ(run.indices, ref.unique) << "compression " << c.kind << " scale " << c.scale;
  }
}

TEST_F(WorldTest, AllRanksEmpty) {
  for (zfcAlgorithm_t a : kAlgorithms) {
    PlanOptions o;
    o.algorithm = a;
    const PlanRun run = run_plan(comm_, RankInput{}, 8, 1000, o);
    ASSERT_EQ(run.result, zfcSuccess) << zfcGetAlgorithmName(a) << ": " << zfcGetLastError(comm_);
    EXPECT_TRUE(run.indices.empty());
    EXPECT_TRUE(run.rows.empty());
  }
}

struct CompressionCase {
  zfcAlgorithm_t algorithm;
  zfcCompressionKind_t kind;
  float scale;
  zfcDataType_t row_type;
};

class SparseCompressionTest : public WorldTest,
                              public ::testing::WithParamInterface<CompressionCase> {};

TEST_P(SparseCompressionTest, CloseToReferenceAndIdenticalOnAllRanks) {
  const CompressionCase c = GetParam();
  Workload w = zipf_workload(size_, 32, 5000, 1.1, 13, uneven_count);
  for (RankInput& r : w.ranks) r.rows = rounded_rows(r.rows, c.row_type);
  const SparseReference ref = reference_sparse(w.ranks, w.dim);
  PlanOptions o;
  o.algorithm = c.algorithm;
  o.compression = c.kind;
  o.scale = c.scale;
  o.row_type = c.row_type;
  const PlanRun run = run_plan(comm_, w.ranks[static_cast<size_t>(rank_)], w.dim, w.vocab, o);
  ASSERT_EQ(run.result, zfcSuccess) << zfcGetLastError(comm_);
  ASSERT_EQ(run.indices, ref.unique);
  EXPECT_EQ(run.overflowed, 0);
  if (c.kind == zfcCompressNone) {
    expect_matches_reference(run, ref);
  } else {
    // Each of up to ~2 roundings per rank is within half a unit in the last place of the
    // wire format (a whole unit when stochastic), relative to magnitudes of at most a few
    // times the row count; int8's unit is relative to its row's largest magnitude.
    const int format = c.kind & ~ZFC_COMPRESS_STOCHASTIC;
    const double ulp = (format == zfcCompressFp16      ? 1.0 / 1024
                        : format == zfcCompressBf16    ? 1.0 / 128
                        : format == zfcCompressFp8E4M3 ? 1.0 / 8
                        : format == zfcCompressFp8E5M2 ? 1.0 / 4
                                                       : 1.0 / 127) *
                       ((c.kind & ZFC_COMPRESS_STOCHASTIC) != 0 ? 2.0 : 1.0);
    for (size_t i = 0; i < ref.rows.size(); ++i) {
      double magnitude = std::fabs(ref.rows[i]);
      if (format == zfcCompressInt8) {
        const size_t first = i / w.dim * w.dim;
        for (size_t k = first; k < first + w.dim; ++k) {
          magnitude = std::max(magnitude, static_cast<double>(std::fabs(ref.rows[k])));
        }
      }
      const double bound = ulp * (2.0 + magnitude) * (size_ + 2);
      ASSERT_NEAR(run.rows[i], ref.rows[i], bound) << "element " << i;
    }
  }
  EXPECT_TRUE(same_on_all_ranks(hash_run(run)));
}

INSTANTIATE_TEST_SUITE_P(
    Wires, SparseCompressionTest,
    ::testing::Values(
        CompressionCase{zfcAlgoUniqueAllReduce, zfcCompressFp16, 256.0f, zfcFloat32},
        CompressionCase{zfcAlgoUniqueAllReduce, zfcCompressBf16, 1.0f, zfcFloat32},
        CompressionCase{zfcAlgoAllGather, zfcCompressFp16, 64.0f, zfcFloat32},
        CompressionCase{zfcAlgoUniqueAllGather, zfcCompressFp16, 64.0f, zfcFloat32},
        CompressionCase{zfcAlgoOwnerPartitioned, zfcCompressFp16, 64.0f, zfcFloat32},
        CompressionCase{zfcAlgoOwnerPartitioned, zfcCompressBf16, 1.0f, zfcBFloat16},
        CompressionCase{zfcAlgoKeyRouted, zfcCompressFp16, 64.0f, zfcFloat32},
        CompressionCase{zfcAlgoKeyRouted, zfcCompressBf16, 1.0f, zfcBFloat16},
        CompressionCase{zfcAlgoDenseVocab, zfcCompressBf16, 1.0f, zfcFloat32},
        CompressionCase{zfcAlgoUniqueAllReduce, zfcCompressNone, 1.0f, zfcFloat16},
        CompressionCase{zfcAlgoAllGather, zfcCompressNone, 1.0f, zfcBFloat16},
        CompressionCase{zfcAlgoUniqueAllGather, zfcCompressNone, 1.0f, zfcFloat16},
        CompressionCase{zfcAlgoUniqueAllReduce, zfcCompressFp16, 8.0f, zfcBFloat16}));

// The eight-bit formats and stochastic rounding on every algorithm: within the formats'
// bounds of the reference, the same bits on every rank.
std::vector<CompressionCase> eight_bit_cases() {
  std::vector<CompressionCase> cases;
  for (zfcAlgorithm_t a : kAlgorithms) {
    for (zfcCompressionKind_t kind :
         {zfcCompressFp8E4M3, zfcCompressFp8E5M2, zfcCompressInt8, zfcCompressFp8E4M3Stochastic,
          zfcCompressInt8Stochastic, zfcCompressBf16Stochastic}) {
      cases.push_back({a, kind, 1.0f, a == zfcAlgoKeyRouted ? zfcBFloat16 : zfcFloat32});
    }
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(EightBit, SparseCompressionTest, ::testing::ValuesIn(eight_bit_cases()));

TEST_F(WorldTest, SparseOverflowIsAgreed) {
  Workload w = zipf_workload(size_, 4, 200, 1.0, 3, [](int) { return size_t{50}; });
  w.ranks[0].rows[0] = 1e6f;  // rank 0's first row leaves fp16's range at scale 1
  PlanOptions o;
  o.compression = zfcCompressFp16;
  const PlanRun run = run_plan(comm_, w.ranks[static_cast<size_t>(rank_)], w.dim, w.vocab, o);
  ASSERT_EQ(run.result, zfcSuccess) << zfcGetLastError(comm_);
  EXPECT_EQ(run.overflowed, 1);
  EXPECT_EQ(run.stats.overflows, 1u);
  EXPECT_TRUE(same_on_all_ranks(hash_run(run)));
}

// A value that is not finite in rank 0's rows travels as its row's NaN scale in every
// eight-bit format: an overflow that every rank reports, on every algorithm; a value far past
// fp16's range is none (the row's scale takes it).
TEST_F(WorldTest, EightBitOverflowIsAgreedOnEveryAlgorithm) {
  for (zfcCompressionKind_t kind : {zfcCompressFp8E4M3, zfcCompressInt8Stochastic}) {
    for (zfcAlgorithm_t a : kAlgorithms) {
      for (float big : {std::numeric_limits<float>::infinity(), 1e30f}) {
        Workload w = zipf_workload(size_, 4, 200, 1.0, 3, [](int) { return size_t{50}; });
        w.ranks[0].rows[0] = big;
        PlanOptions o;
        o.algorithm = a;
        o.compression = kind;
        const PlanRun run =
            run_plan(comm_, w.ranks[static_cast<size_t>(rank_)], w.dim, w.vocab, o);
        ASSERT_EQ(run.result, zfcSuccess) << zfcGetLastError(comm_);
        EXPECT_EQ(run.overflowed, std::isinf(big) ? 1 : 0)
            << zfcGetAlgorithmName(a) << " kind " << kind << " value " << big;
        EXPECT_TRUE(same_on_all_ranks(hash_run(run)));
      }
    }
  }
}

// A row within bf16's range at a scale of 1/8 that decodes past fp32's (FLT_MAX / 8 rounds up
// to 2^125 on the wire, 2^128 once divided): an overflow, agreed on every rank, whichever
// algorithm decodes it.
TEST_F(WorldTest, SparseOverflowByTheDecodeIsAgreed) {
  Workload w = zipf_workload(size_, 4, 200, 1.0, 3, [](int) { return size_t{50}; });
  w.ranks[0].rows[0] = std::numeric_limits<float>::max();
  for (zfcAlgorithm_t algo : {zfcAlgoAllGather, zfcAlgoUniqueAllReduce, zfcAlgoDenseVocab,
                              zfcAlgoUniqueAllGather, zfcAlgoOwnerPartitioned,
                              zfcAlgoKeyRouted}) {
    PlanOptions o;
    o.algorithm = algo;
    o.compression = zfcCompressBf16;
    o.scale = 0.125f;
    const PlanRun run = run_plan(comm_, w.ranks[static_cast<size_t>(rank_)], w.dim, w.vocab, o);
    ASSERT_EQ(run.result, zfcSuccess) << zfcGetLastError(comm_);
    EXPECT_EQ(run.overflowed, 1) << "algorithm " << algo;
    EXPECT_TRUE(same_on_all_ranks(hash_run(run)));
  }
}

TEST_F(WorldTest, PlanReuseAcrossSteps) {
  zfcSparsePlanConfig_t cfg = ZFC_SPARSE_PLAN_CONFIG_INITIALIZER;
  cfg.dim = 12;
  cfg.vocab_size = 4000;
  cfg.algorithm = zfcAlgoUniqueAllReduce;
  zfcSparsePlan_t plan = nullptr;
  ASSERT_EQ(zfcSparsePlanCreate(comm_, &cfg, &plan), zfcSuccess);
  for (int step = 0; step < 4; ++step) {
    // Sizes grow and shrink, so the workspace both grows and is reused.
    const size_t base = step % 2 == 0 ? 900 : 40;
    const Workload w = zipf_workload(size_, cfg.dim, cfg.vocab_size, 1.0, 100 + step,
                                     [&](int r) { return base + 3 * static_cast<size_t>(r); });
    const SparseReference ref = reference_sparse(w.ranks, w.dim);
    const RankInput& mine = w.ranks[static_cast<size_t>(rank_)];
    std::vector<int32_t> idx(mine.indices.begin(), mine.indices.end());
    zfcSparseResult_t out = ZFC_SPARSE_RESULT_INITIALIZER;
    ASSERT_EQ(zfcSparseReduce(plan, idx.data(), idx.size(), mine.rows.data(), &out, nullptr),
              zfcSuccess);
    ASSERT_EQ(out.num_unique, ref.unique.size());
    EXPECT_EQ(std::memcmp(out.rows, ref.rows.data(), ref.rows.size() * 4), 0) << "step " << step;
  }
  EXPECT_EQ(zfcSparsePlanDestroy(plan), zfcSuccess);
}

// ---- traffic and memory -------------------------------------------------------------------

struct Traffic {
  uint64_t sent = 0;
  uint64_t received = 0;
};

// Bytes of the deterministic allreduce of n elements of w bytes on this rank.
Traffic allreduce_traffic(uint64_t n, uint64_t w, int rank, int size) {
  const uint64_t g = static_cast<uint64_t>(size);
  if (g == 1) return {};
  const uint64_t mine = n / g + (static_cast<uint64_t>(rank) < n % g ? 1 : 0);
  return {((n - mine) + mine * (g - 1)) * w, (mine * (g - 1) + (n - mine)) * w};
}

// Bytes of a gather in which rank r contributes items[r] * bytes_per_item.
Traffic gather_traffic(const std::vector<uint64_t>& items, uint64_t bytes_per_item, int rank) {
  Traffic t;
  for (size_t r = 0; r < items.size(); ++r) {
    if (static_cast<int>(r) == rank) {
      t.sent += items[r] * bytes_per_item * (items.size() - 1);
    } else {
      t.received += items[r] * bytes_per_item;
    }
  }
  return t;
}

Traffic operator+(Traffic a, Traffic b) { return {a.sent + b.sent, a.received + b.received}; }

TEST_F(WorldTest, BytesMatchEachAlgorithmsFormula) {
  const size_t dim = 64;
  const Workload w = zipf_workload(size_, dim, 100000, 1.1, 21,
                                   [](int r) { return 640 - 40 * static_cast<size_t>(r % 3); });
  const SparseReference ref = reference_sparse(w.ranks, dim);
  const uint64_t ug = ref.unique.size();
  std::vector<uint64_t> tokens, uniques, ones(static_cast<size_t>(size_), 1);
  for (int r = 0; r < size_; ++r) {
    tokens.push_back(w.ranks[static_cast<size_t>(r)].indices.size());
    uniques.push_back(w.local_unique(r));
  }
  const Traffic header = gather_traffic(ones, sizeof(OpHeader), rank_);
  const uint64_t kb = 4;  // a vocabulary of 100k sends 32-bit indices
  struct Expectation {
    zfcAlgorithm_t algorithm;
    zfcCompressionKind_t kind;
    Traffic traffic;
    uint32_t rounds;  // the indices ride with the header (docs/algorithms.md)
  };
  const Expectation cases[] = {
      {zfcAlgoAllGather, zfcCompressNone,
       header + gather_traffic(tokens, kb, rank_) + gather_traffic(tokens, dim * 4, rank_), 3},
      {zfcAlgoAllGather, zfcCompressFp16,
       header + gather_traffic(tokens, kb, rank_) + gather_traffic(tokens, dim * 2, rank_), 3},
      {zfcAlgoUniqueAllReduce, zfcCompressNone,
       header + gather_traffic(uniques, kb, rank_) + allreduce_traffic(ug * dim, 4, rank_, size_),
       3},
      {zfcAlgoUniqueAllReduce, zfcCompressFp16,
       header + gather_traffic(uniques, kb, rank_) + allreduce_traffic(ug * dim, 2, rank_, size_),
       3},
      {zfcAlgoUniqueAllGather, zfcCompressNone,
       header + gather_traffic(uniques, kb, rank_) + gather_traffic(uniques, dim * 4, rank_), 2},
      // No index exchange: a presence column rides along with the V rows.
      {zfcAlgoDenseVocab, zfcCompressBf16,
       header + allreduce_traffic(100000 * (dim + 1), 2, rank_, size_), 3},
      // Eight bits: a byte per value and an fp32 scale per row, on every algorithm; the
      // allreduce's chunks are whole rows (dense_vocab's V rows of D; its V presence marks
      // in fp32, in an allreduce of their own).
      {zfcAlgoAllGather, zfcCompressInt8,
       header + gather_traffic(tokens, kb, rank_) + gather_traffic(tokens, dim + 4, rank_), 3},
      {zfcAlgoUniqueAllReduce, zfcCompressFp8E4M3,
       header + gather_traffic(uniques, kb, rank_) + allreduce_traffic(ug, dim + 4, rank_, size_),
       3},
      {zfcAlgoUniqueAllGather, zfcCompressFp8E5M2Stochastic,
       header + gather_traffic(uniques, kb, rank_) + gather_traffic(uniques, dim + 4, rank_), 2},
      {zfcAlgoDenseVocab, zfcCompressInt8Stochastic,
       header + allreduce_traffic(100000, dim + 4, rank_, size_) +
           allreduce_traffic(100000, 4, rank_, size_),
       5},
  };
  for (const Expectation& e : cases) {
    PlanOptions o;
    o.algorithm = e.algorithm;
    o.compression = e.kind;
    const PlanRun run = run_plan(comm_, w.ranks[static_cast<size_t>(rank_)], dim, w.vocab, o);
    ASSERT_EQ(run.result, zfcSuccess) << zfcGetLastError(comm_);
    EXPECT_EQ(run.stats.bytes_sent, e.traffic.sent)
        << zfcGetAlgorithmName(e.algorithm) << " compression " << e.kind;
    EXPECT_EQ(run.stats.bytes_received, e.traffic.received)
        << zfcGetAlgorithmName(e.algorithm) << " compression " << e.kind;
    // (One rank skips the allreduce's transfers, so only the header round is certain.)
    if (size_ > 1) EXPECT_EQ(run.stats.rounds, e.rounds) << zfcGetAlgorithmName(e.algorithm);
  }
}

// zfcSparseReduceBounded: the header; one block per rank of a 24-byte lead and `capacity`
// indices (padded to 8 bytes); the allreduce of capacity x D. The same whether the call
// agrees on the host (the first with a capacity) or in its kernels (the next).
TEST_F(WorldTest, BoundedBytesMatchTheirFormula) {
  const size_t dim = 64;
  const Workload w = zipf_workload(size_, dim, 100000, 1.1, 22,
                                   [](int r) { return 300 + 20 * static_cast<size_t>(r % 3); });
  const SparseReference ref = reference_sparse(w.ranks, dim);
  const uint64_t capacity = ref.unique.size() + 7, kb = 4;
  const std::vector<uint64_t> ones(static_cast<size_t>(size_), 1);
  const Traffic want = gather_traffic(ones, sizeof(OpHeader), rank_) +
                       gather_traffic(ones, 24 + (capacity * kb + 7) / 8 * 8, rank_) +
                       allreduce_traffic(capacity * dim, 2, rank_, size_);
  zfcSparsePlanConfig_t cfg = ZFC_SPARSE_PLAN_CONFIG_INITIALIZER;
  cfg.dim = dim;
  cfg.vocab_size = w.vocab;
  cfg.index_type = zfcInt64;
  cfg.compression = zfcCompressBf16;
  zfcSparsePlan_t plan = nullptr;
  ASSERT_EQ(zfcSparsePlanCreate(comm_, &cfg, &plan), zfcSuccess);
  const RankInput& mine = w.ranks[static_cast<size_t>(rank_)];
  std::vector<int64_t> ids(capacity);
  std::vector<float> rows(capacity * dim);
  for (int call = 0; call < 2; ++call) {
    zfcBoundedStatus_t status{};
    ASSERT_EQ(zfcSparseReduceBounded(plan, mine.indices.data(), mine.indices.size(),
                                     mine.rows.data(), capacity, ids.data(), rows.data(),
                                     &status, nullptr),
              zfcSuccess) << zfcGetLastError(comm_);
    ASSERT_EQ(status.result, zfcSuccess);
    ASSERT_EQ(status.num_unique, static_cast<int64_t>(ref.unique.size()));
    zfcStats_t st = ZFC_STATS_INITIALIZER;
    ASSERT_EQ(zfcCommGetStats(comm_, &st), zfcSuccess);
    EXPECT_EQ(st.last.bytes_sent, want.sent) << "call " << call;
    EXPECT_EQ(st.last.bytes_received, want.received) << "call " << call;
    // Header, indices, reduce-scatter, allgather (MPI's and UCX's header is one round).
    if (size_ > 1) EXPECT_EQ(st.last.rounds, 4) << "call " << call;
  }
  EXPECT_EQ(zfcSparsePlanDestroy(plan), zfcSuccess);
}

// Two steps of `algorithm` on a plan of `type` indices: each reads back from its kernels'
// memory `reads` times (the host kernels count their reads, so this is the orchestration a
// device runs, where each read is a wait for the stream), and gives the reference's indices
// and bits. The plan is left for the caller to use further, and destroy.
zfcSparsePlan_t expect_reads_back(zfcComm_t comm, const Workload& w, const RankInput& mine,
                                  const SparseReference& ref, zfcDataType_t type,
                                  zfcAlgorithm_t algorithm, uint32_t reads) {
  zfcSparsePlanConfig_t cfg = ZFC_SPARSE_PLAN_CONFIG_INITIALIZER;
  cfg.dim = w.dim;
  cfg.vocab_size = w.vocab;
  cfg.index_type = type;
  cfg.algorithm = algorithm;
  zfcSparsePlan_t plan = nullptr;
  EXPECT_EQ(zfcSparsePlanCreate(comm, &cfg, &plan), zfcSuccess);
  if (plan == nullptr) return nullptr;
  const std::vector<char> ids = typed_indices(mine.indices, type);
  for (int call = 0; call < 2; ++call) {
    zfcSparseResult_t out = ZFC_SPARSE_RESULT_INITIALIZER;
    EXPECT_EQ(zfcSparseReduce(plan, ids.data(), mine.indices.size(), mine.rows.data(), &out,
                              nullptr),
              zfcSuccess) << zfcGetLastError(comm);
    EXPECT_EQ(out.algorithm, algorithm);
    EXPECT_EQ(plan->last_reads, reads) << "call " << call;
    EXPECT_EQ(out.overflowed, 0);
    EXPECT_EQ(out.overflow_flag, nullptr);  // host results say it in `overflowed`
    EXPECT_EQ(out.num_unique, ref.unique.size());
    if (out.num_unique != ref.unique.size()) break;
    for (size_t p = 0; p < out.num_unique; ++p) {
      const int64_t id = type == zfcInt32 ? static_cast<const int32_t*>(out.indices)[p]
                                          : static_cast<const int64_t*>(out.indices)[p];
      EXPECT_EQ(id, ref.unique[p]) << "place " << p;
    }
    EXPECT_EQ(std::memcmp(out.rows, ref.rows.data(), ref.rows.size() * sizeof(float)), 0);
  }
  return plan;
}

// The uniqueness technique reads one thing back per step: the bad-index word, U_i and the
// distinct keys, in one read (on a device, its one wait for the stream).
TEST_F(WorldTest, TheUniquenessStepReadsBackOnce) {
  const Workload w = zipf_workload(size_, 8, 5000, 1.1, 23,
                                   [](int r) { return 200 + 31 * static_cast<size_t>(r); });
  const SparseReference ref = reference_sparse(w.ranks, w.dim);
  const RankInput& mine = w.ranks[static_cast<size_t>(rank_)];
  for (zfcDataType_t type : {zfcInt32, zfcInt64}) {
    zfcSparsePlan_t plan =
        expect_reads_back(comm_, w, mine, ref, type, zfcAlgoUniqueAllReduce, 1);
    ASSERT_NE(plan, nullptr);
    // A caller built against 0.11's zfcSparseResult_t: accepted, and its end left alone.
    const std::vector<char> ids = typed_indices(mine.indices, type);
    zfcSparseResult_t old = ZFC_SPARSE_RESULT_INITIALIZER;
    old.size = offsetof(zfcSparseResult_t, overflow_flag);
    const int marker = 7;
    old.overflow_flag = &marker;
    ASSERT_EQ(zfcSparseReduce(plan, ids.data(), mine.indices.size(), mine.rows.data(), &old,
                              nullptr),
              zfcSuccess) << zfcGetLastError(comm_);
    EXPECT_EQ(old.num_unique, ref.unique.size());
    EXPECT_EQ(old.overflowed, 0);
    EXPECT_EQ(old.overflow_flag, &marker);
    EXPECT_EQ(zfcSparsePlanDestroy(plan), zfcSuccess);
  }
}

// The key-routed step reads back five times per step: the bad-index word, U_i and the pair
// counts per owner in one read, then the pair counts that arrived, the owner's distinct
// count, the owners' reports and the global set's size (on a device the step's last read,
// with the overflow flag; the device adds the waits before its two transfers: seven).
TEST_F(WorldTest, TheKeyRoutedStepReadsBackFiveTimes) {
  const Workload w = zipf_workload(size_, 8, 5000, 1.1, 29,
                                   [](int r) { return 150 + 47 * static_cast<size_t>(r); });
  const SparseReference ref = reference_sparse(w.ranks, w.dim);
  const RankInput& mine = w.ranks[static_cast<size_t>(rank_)];
  for (zfcDataType_t type : {zfcInt32, zfcInt64}) {
    zfcSparsePlan_t plan = expect_reads_back(comm_, w, mine, ref, type, zfcAlgoKeyRouted, 5);
    ASSERT_NE(plan, nullptr);
    EXPECT_EQ(zfcSparsePlanDestroy(plan), zfcSuccess);
  }
}

TEST_F(WorldTest, PeakWorkspaceFollowsTheComplexity) {
  const size_t dim = 128;
  const Workload w = zipf_workload(size_, dim, 100000, 1.1, 31, [](int) { return size_t{640}; });
  const SparseReference ref = reference_sparse(w.ranks, dim);
  const uint64_t gk = w.total_tokens();
  const uint64_t ug = ref.unique.size();
  PlanOptions o;
  o.algorithm = zfcAlgoUniqueAllReduce;
  const PlanRun unique = run_plan(comm_, w.ranks[static_cast<size_t>(rank_)], dim, w.vocab, o);
  o.algorithm = zfcAlgoAllGather;
  const PlanRun gather = run_plan(comm_, w.ranks[static_cast<size_t>(rank_)], dim, w.vocab, o);
  ASSERT_EQ(unique.result, zfcSuccess);
  ASSERT_EQ(gather.result, zfcSuccess);
  // Theta(G K + U_g D): a constant of 3 plus 64 KiB of bitmaps and per-rank headers.
  EXPECT_LE(unique.stats.peak_workspace_bytes, 3 * (4 * gk + 4 * ug * dim) + 65536)
      << "G*K " << gk << " U_g " << ug;
  // The baseline holds every rank's rows: at least G*K*D floats.
  EXPECT_GE(gather.stats.peak_workspace_bytes, 4 * gk * dim);
}

// ---- real text ----------------------------------------------------------------------------

TEST_F(WorldTest, GutenbergWindows) {
  ZFC_REQUIRE_CORPUS(dir, "gutenberg");
  const workload::Corpus corpus = workload::Corpus::load(dir, 100000);
  const size_t dim = 32;
  Workload w;
  w.dim = dim;
  w.vocab = corpus.vocab_size();
  for (int r = 0; r < size_; ++r) {
    RankInput in;
    const std::vector<int32_t> ids = corpus.windows(32, 20, workload::mix_seed(77, 0, r));
    in.indices.assign(ids.begin(), ids.end());
    in.rows = random_rows(in.indices.size(), dim, 77, r);
    w.ranks.push_back(std::move(in));
  }
  const SparseReference ref = reference_sparse(w.ranks, dim);
  const double ratio = static_cast<double>(ref.unique.size()) / w.total_tokens();
  if (rank_ == 0) std::printf("gutenberg: G=%d G*K=%zu U_g=%zu U_g/(G*K)=%.3f\n", size_,
                              w.total_tokens(), ref.unique.size(), ratio);
  // Zipf's law: even 640 words of one rank repeat a good deal.
  EXPECT_LT(ratio, 0.8);
  for (zfcAlgorithm_t a : {zfcAlgoAllGather, zfcAlgoUniqueAllReduce, zfcAlgoAuto}) {
    PlanOptions o;
    o.algorithm = a;
    const PlanRun run = run_plan(comm_, w.ranks[static_cast<size_t>(rank_)], dim, w.vocab, o);
    ASSERT_EQ(run.result, zfcSuccess) << zfcGetLastError(comm_);
    expect_matches_reference(run, ref);
    EXPECT_TRUE(same_on_all_ranks(hash_run(run)));
  }
}

}  // namespace
}  // namespace test
}  // namespace zfc

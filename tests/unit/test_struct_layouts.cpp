// The versioned structs of the C API: configs and stats of every layout released since
// 0.1.0 are accepted (fields the layout lacks take their defaults, nothing past the caller's
// struct is written), and the structs that carry their size refuse any other.
#include <cstddef>
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/config.hpp"
#include "core/stats.hpp"
#include "algo/sparse_reduce.hpp"
#include "zipfcoll/zipfcoll.h"

namespace zfc {
namespace {

// zfcConfig_t as released in 0.1.0 and in 0.2.0, written out field by field.
struct Config010 {
  size_t size;
  unsigned int magic, version;
  int transport, device, timeout_ms, algorithm, compression;
  float compress_scale;
  int bounds_check;
  const char* name;
};
struct Config020 {
  Config010 v010;
  int ranks_per_node;
  zfcLinkModel_t intra_node, inter_node;
};
static_assert(sizeof(Config010) == offsetof(zfcConfig_t, ranks_per_node), "0.1.0 layout");
static_assert(sizeof(Config020) == offsetof(zfcConfig_t, local_gbs), "0.2.0 layout");
struct Config030 {
  Config020 v020;
  double local_gbs;
};
static_assert(sizeof(Config030) == offsetof(zfcConfig_t, rounding_seed), "0.3.0 layout");

Config010 old_config(size_t size) {
  return {size, ZFC_CONFIG_MAGIC, 100, zfcTransportAuto, -1, 2500, zfcAlgoOwnerPartitioned,
          zfcCompressBf16, 1.0f, 1, "old"};
}

TEST(StructLayouts, AConfigOfThe010LayoutTakesDefaultsForLaterFields) {
  // Bytes past the old struct would be read as ranks_per_node and links if the library
  // looked there: poison them.
  std::vector<unsigned char> memory(sizeof(zfcConfig_t), 0xff);
  const Config010 old = old_config(sizeof(Config010));
  std::memcpy(memory.data(), &old, sizeof old);
  Config parsed;
  const Status s = parse_config(reinterpret_cast<const zfcConfig_t*>(memory.data()), &parsed);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(parsed.timeout_ms, 2500);
  EXPECT_EQ(parsed.algorithm, zfcAlgoOwnerPartitioned);
  EXPECT_EQ(parsed.compression.kind, zfcCompressBf16);
  EXPECT_EQ(parsed.name, "old");
  EXPECT_EQ(parsed.ranks_per_node, 0);
  EXPECT_EQ(parsed.model.given_mask(), 0);
}

// ZFC_CONFIG_INITIALIZER and a NULL config bound every wait by ZFC_DEFAULT_TIMEOUT_MS; 0 set
// explicitly, or left by an older header whose initializer set it, still means no bound.
TEST(StructLayouts, TheDefaultTimeoutIsFiniteAndAnOldZeroIsKept) {
  Config parsed;
  ASSERT_TRUE(parse_config(nullptr, &parsed).ok());
  EXPECT_EQ(parsed.timeout_ms, 600000);
  zfcConfig_t cfg = ZFC_CONFIG_INITIALIZER;
  ASSERT_TRUE(parse_config(&cfg, &parsed).ok());
  EXPECT_EQ(parsed.timeout_ms, ZFC_DEFAULT_TIMEOUT_MS);
  cfg.timeout_ms = 0;
  ASSERT_TRUE(parse_config(&cfg, &parsed).ok());
  EXPECT_EQ(parsed.timeout_ms, 0);
  Config010 old = old_config(sizeof(Config010));
  old.timeout_ms = 0;
  ASSERT_TRUE(parse_config(reinterpret_cast<const zfcConfig_t*>(&old), &parsed).ok());
  EXPECT_EQ(parsed.timeout_ms, 0);
}

TEST(StructLayouts, AConfigOfThe020LayoutKeepsItsLinks) {
  std::vector<unsigned char> memory(sizeof(zfcConfig_t), 0xff);
  Config020 old{old_config(sizeof(Config020)), 4, {3.0, 12.5}, {9.0, 1.5}};
  old.v010.version = 200;
  std::memcpy(memory.data(), &old, sizeof old);
  Config parsed;
  const Status s = parse_config(reinterpret_cast<const zfcConfig_t*>(memory.data()), &parsed);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(parsed.ranks_per_node, 4);
  EXPECT_EQ(parsed.model.intra_latency_us, 3.0);
  EXPECT_EQ(parsed.model.intra_gbs, 12.5);
  EXPECT_EQ(parsed.model.inter_gbs, 1.5);
  EXPECT_FALSE(parsed.model.local_given());  // past the 0.2.0 layout: the default
}

TEST(StructLayouts, AConfigOfAnUnknownSizeIsRefusedNamingTheKnownOnes) {
  zfcConfig_t cfg = ZFC_CONFIG_INITIALIZER;
  cfg.size = sizeof(Config010) + 4;
  Config parsed;
  const Status s = parse_config(&cfg, &parsed);
  EXPECT_EQ(s.code(), zfcInvalidUsage);
  EXPECT_NE(s.message().find(std::to_string(sizeof(Config010)) + ", " +
                             std::to_string(sizeof(Config020)) + ", " +
                             std::to_string(sizeof(Config030)) + ", " +
                             std::to_string(sizeof(zfcConfig_t))),
            std::string::npos)
      << s.message();
}

TEST(StructLayouts, LocalGbsIsCheckedAndKept) {
  zfcConfig_t cfg = ZFC_CONFIG_INITIALIZER;
  Config parsed;
  cfg.local_gbs = -1.0;
  EXPECT_EQ(parse_config(&cfg, &parsed).code(), zfcInvalidArgument);
  cfg.local_gbs = 7.25;
  ASSERT_TRUE(parse_config(&cfg, &parsed).ok());
  EXPECT_EQ(parsed.model.local_gbs, 7.25);
  EXPECT_EQ(parsed.model.given_mask(), 4);
}

// zfcOpStats_t and zfcStats_t as released in 0.1.0 (no internode fields).
struct OpStats010 {
  uint64_t calls, tokens, local_unique, global_unique, bytes_sent, bytes_received,
      peak_workspace_bytes, overflows;
  int32_t algorithm, reserved;
  double seconds[zfcNumPhases];
};
struct Stats010 {
  size_t size;
  OpStats010 last, total;
};

// The same as released in 0.2.0 and 0.3.0: internode fields, no busiest rank.
struct OpStats020 {
  uint64_t calls, tokens, local_unique, global_unique, bytes_sent, bytes_received,
      peak_workspace_bytes, overflows, internode_bytes_sent, internode_bytes_received;
  int32_t algorithm, rounds;
  double seconds[zfcNumPhases];
};
struct Stats020 {
  size_t size;
  OpStats020 last, total;
};

// The same as released in 0.4.0 to 0.8.0: the busiest rank's and the summed bytes, no paths.
struct OpStats040 {
  OpStats020 base;
  uint64_t bytes_received_max, bytes_received_sum;
};
struct Stats040 {
  size_t size;
  OpStats040 last, total;
};

zfcOpStats_t sample_op() {
  zfcOpStats_t op = empty_op_stats();
  op.calls = 1;
  op.tokens = 640;
  op.local_unique = 300;
  op.global_unique = 900;
  op.bytes_sent = 1000;
  op.bytes_received = 2000;
  op.peak_workspace_bytes = 4096;
  op.internode_bytes_sent = 77;
  op.algorithm = zfcAlgoOwnerPartitioned;
  op.rounds = 4;
  op.seconds[zfcPhaseTotal] = 0.25;
  op.bytes_received_max = 2500;
  op.bytes_received_sum = 8000;
  for (int p = 0; p < zfcNumPhases; ++p) op.path[p] = zfcPathStaged;
  op.path[zfcPhaseHeader] = zfcPathHost;
  op.host_syncs = 3;
  return op;
}

// Two sample calls copied into a caller's struct of an older layout, Old: what it got, after
// checking that no byte past it was written.
template <class Old>
Old stats_of_old_layout() {
  StatsBook book;
  book.record(sample_op());
  book.record(sample_op());
  std::vector<unsigned char> memory(sizeof(zfcStats_t), 0xab);
  const size_t old_size = sizeof(Old);
  std::memcpy(memory.data(), &old_size, sizeof old_size);
  EXPECT_TRUE(copy_stats_out(book, reinterpret_cast<zfcStats_t*>(memory.data())).ok());
  for (size_t i = sizeof(Old); i < memory.size(); ++i) {
    EXPECT_EQ(memory[i], 0xab) << "byte " << i << " past the caller's struct was written";
  }
  Old got;
  std::memcpy(&got, memory.data(), sizeof got);
  return got;
}

TEST(StructLayouts, StatsOfThe010LayoutAreFilledWithoutWritingPastThem) {
  const Stats010 got = stats_of_old_layout<Stats010>();
  EXPECT_EQ(got.size, sizeof(Stats010));
  EXPECT_EQ(got.last.tokens, 640u);
  EXPECT_EQ(got.last.bytes_received, 2000u);
  EXPECT_EQ(got.last.peak_workspace_bytes, 4096u);
  EXPECT_EQ(got.last.algorithm, zfcAlgoOwnerPartitioned);
  EXPECT_EQ(got.total.calls, 2u);
  EXPECT_EQ(got.total.bytes_sent, 2000u);
  EXPECT_EQ(got.total.seconds[zfcPhaseTotal], 0.5);
}

TEST(StructLayouts, StatsOfThe020LayoutAreFilledWithoutWritingPastThem) {
  const Stats020 got = stats_of_old_layout<Stats020>();
  EXPECT_EQ(got.size, sizeof(Stats020));
  EXPECT_EQ(got.last.internode_bytes_sent, 77u);
  EXPECT_EQ(got.last.rounds, 4);
  EXPECT_EQ(got.total.rounds, 8);
  EXPECT_EQ(got.total.calls, 2u);
  EXPECT_EQ(got.total.seconds[zfcPhaseTotal], 0.5);
}

TEST(StructLayouts, StatsOfThe040LayoutAreFilledWithoutWritingPastThem) {
  const Stats040 got = stats_of_old_layout<Stats040>();
  EXPECT_EQ(got.size, sizeof(Stats040));
  EXPECT_EQ(got.last.bytes_received_max, 2500u);
  EXPECT_EQ(got.total.bytes_received_sum, 16000u);
  EXPECT_EQ(got.total.base.calls, 2u);
}

TEST(StructLayouts, StatsOfTheCurrentLayoutAndUnknownSizes) {
  StatsBook book;
  book.record(sample_op());
  zfcOpStats_t host = sample_op();
  for (int p = 0; p < zfcNumPhases; ++p) host.path[p] = zfcPathHost;
  host.host_syncs = 0;
  book.record(host);
  zfcOpStats_t other = empty_op_stats();  // a call with no paths (a unique merge, say)
  other.calls = 1;
  book.record(other);
  zfcStats_t stats = ZFC_STATS_INITIALIZER;
  ASSERT_TRUE(copy_stats_out(book, &stats).ok());
  EXPECT_EQ(stats.last.path[zfcPhaseTotal], zfcPathNone);
  EXPECT_EQ(stats.total.path[zfcPhaseRowExchange], zfcPathHost);  // the last call that had one
  EXPECT_EQ(stats.total.host_syncs, 3u);
  book.reset();
  book.record(sample_op());
  ASSERT_TRUE(copy_stats_out(book, &stats).ok());
  EXPECT_EQ(stats.last.internode_bytes_sent, 77u);
  EXPECT_EQ(stats.last.bytes_received_max, 2500u);
  EXPECT_EQ(stats.total.bytes_received_sum, 8000u);
  EXPECT_EQ(stats.last.path[zfcPhaseLocal], zfcPathStaged);
  EXPECT_EQ(stats.last.path[zfcPhaseHeader], zfcPathHost);
  EXPECT_EQ(stats.last.host_syncs, 3u);
  zfcStats_t bad = ZFC_STATS_INITIALIZER;
  bad.size = 8;
  EXPECT_EQ(copy_stats_out(book, &bad).code(), zfcInvalidUsage);
  EXPECT_EQ(bad.last.calls, 0u);  // nothing written
}

// A machine of `latency_us` per step, 10 GB/s links and 5 GB/s memory, and a step of 4 ranks.
zfcMachineModel_t small_machine(double latency_us) {
  zfcMachineModel_t model = ZFC_MACHINE_MODEL_INITIALIZER;
  model.intra_node = {latency_us, 10.0};
  model.inter_node = {latency_us, 10.0};
  model.local_gbs = 5.0;
  return model;
}

zfcStepShape_t small_step() {
  zfcStepShape_t shape = ZFC_STEP_SHAPE_INITIALIZER;
  shape.ranks = 4;
  shape.tokens = 4 * 640;
  shape.max_tokens = 640;
  shape.local_unique = 4 * 300;
  shape.max_local_unique = 300;
  shape.global_unique = 900;
  shape.vocab_size = 100000;
  shape.dim = 64;
  return shape;
}

TEST(StructLayouts, TheCostModelStructsRefuseAMissingSize) {
  zfcMachineModel_t model = small_machine(2.0);
  zfcStepShape_t shape = small_step();
  zfcPrediction_t p = ZFC_PREDICTION_INITIALIZER;
  ASSERT_EQ(zfcPredictSparseReduce(&model, &shape, zfcAlgoUniqueAllReduce, &p), zfcSuccess)
      << zfcGetLastError(nullptr);
  EXPECT_GT(p.seconds, 0.0);
  EXPECT_EQ(p.size, sizeof p);
  zfcPrediction_t untouched = p;
  untouched.size = 0;
  shape.size = 0;
  EXPECT_EQ(zfcPredictSparseReduce(&model, &shape, zfcAlgoUniqueAllReduce, &untouched),
            zfcInvalidUsage);
  EXPECT_NE(std::string(zfcGetLastError(nullptr)).find("ZFC_STEP_SHAPE_INITIALIZER"),
            std::string::npos);
  shape.size = sizeof shape;
  model.size = 1;
  EXPECT_EQ(zfcPredictSparseReduce(&model, &shape, zfcAlgoUniqueAllReduce, &p),
            zfcInvalidUsage);
  model.size = sizeof model;
  EXPECT_EQ(zfcPredictSparseReduce(&model, &shape, zfcAlgoUniqueAllReduce, &untouched),
            zfcInvalidUsage);
  EXPECT_EQ(zfcCommGetMachineModel(nullptr, &model), zfcInvalidArgument);
}

// A model of the 0.4.0 layout (no ranks_per_core) predicts as one rank per core; a crowded
// host makes each copied byte dearer but no latency.
TEST(StructLayouts, AMachineModelOfThe040LayoutIsOneRankPerCore) {
  zfcMachineModel_t model = small_machine(0.0);
  const zfcStepShape_t shape = small_step();
  zfcPrediction_t now = ZFC_PREDICTION_INITIALIZER, old = now, crowded = now;
  ASSERT_EQ(zfcPredictSparseReduce(&model, &shape, zfcAlgoOwnerPartitioned, &now), zfcSuccess);
  std::vector<unsigned char> memory(sizeof model, 0xff);  // poison past the old layout
  zfcMachineModel_t* v040 = reinterpret_cast<zfcMachineModel_t*>(memory.data());
  std::memcpy(v040, &model, offsetof(zfcMachineModel_t, ranks_per_core));
  v040->size = offsetof(zfcMachineModel_t, ranks_per_core);
  ASSERT_EQ(zfcPredictSparseReduce(v040, &shape, zfcAlgoOwnerPartitioned, &old), zfcSuccess)
      << zfcGetLastError(nullptr);
  EXPECT_EQ(old.seconds, now.seconds);
  model.ranks_per_core = 2.5;
  ASSERT_EQ(zfcPredictSparseReduce(&model, &shape, zfcAlgoOwnerPartitioned, &crowded),
            zfcSuccess);
  EXPECT_DOUBLE_EQ(crowded.seconds, 2.5 * now.seconds);  // no latency in this model
  EXPECT_EQ(crowded.bytes, now.bytes);
  model.ranks_per_core = 0.5;
  EXPECT_EQ(zfcPredictSparseReduce(&model, &shape, zfcAlgoOwnerPartitioned, &crowded),
            zfcInvalidArgument);
  EXPECT_NE(std::string(zfcGetLastError(nullptr)).find("ranks_per_core 0.5"),
            std::string::npos);
}

// A step shape of the layout before 0.6.0 (no stream_chunk_bytes) prices zfcSparseReduce. Fused
// with the update, the key-routed exchange streams: its workspace drops by the U_g x D result
// and stays within one round's pairs when the chunk is small; another algorithm only adds the
// apply pass to its time.
TEST(StructLayouts, AStepShapeOfTheEarlierLayoutPricesTheUnfusedStep) {
  const zfcMachineModel_t model = small_machine(2.0);
  zfcStepShape_t shape = small_step();
  zfcPrediction_t now = ZFC_PREDICTION_INITIALIZER, old = now, fused = now, tiny = now;
  ASSERT_EQ(zfcPredictSparseReduce(&model, &shape, zfcAlgoKeyRouted, &now), zfcSuccess);
  std::vector<unsigned char> memory(sizeof shape, 0xff);  // poison past the old layout
  zfcStepShape_t* earlier = reinterpret_cast<zfcStepShape_t*>(memory.data());
  std::memcpy(earlier, &shape, offsetof(zfcStepShape_t, stream_chunk_bytes));
  earlier->size = offsetof(zfcStepShape_t, stream_chunk_bytes);
  ASSERT_EQ(zfcPredictSparseReduce(&model, earlier, zfcAlgoKeyRouted, &old), zfcSuccess)
      << zfcGetLastError(nullptr);
  EXPECT_EQ(old.seconds, now.seconds);
  EXPECT_EQ(old.workspace_bytes, now.workspace_bytes);
  shape.stream_chunk_bytes = 1 << 20;
  ASSERT_EQ(zfcPredictSparseReduce(&model, &shape, zfcAlgoKeyRouted, &fused), zfcSuccess);
  const double result = shape.global_unique * shape.dim * 4.0;
  EXPECT_LE(fused.workspace_bytes + result, now.workspace_bytes);
  shape.stream_chunk_bytes = 1;  // one pair per owner and round
  ASSERT_EQ(zfcPredictSparseReduce(&model, &shape, zfcAlgoKeyRouted, &tiny), zfcSuccess);
  EXPECT_LT(tiny.workspace_bytes, fused.workspace_bytes);
  EXPECT_GT(tiny.seconds, fused.seconds);  // more rounds, each a latency
  zfcPrediction_t plain = ZFC_PREDICTION_INITIALIZER, applied = plain;
  shape.stream_chunk_bytes = 0;
  ASSERT_EQ(zfcPredictSparseReduce(&model, &shape, zfcAlgoOwnerPartitioned, &plain), zfcSuccess);
  shape.stream_chunk_bytes = 1 << 20;
  ASSERT_EQ(zfcPredictSparseReduce(&model, &shape, zfcAlgoOwnerPartitioned, &applied),
            zfcSuccess);
  EXPECT_EQ(applied.workspace_bytes, plain.workspace_bytes);
  EXPECT_EQ(applied.bytes, plain.bytes);
  EXPECT_GT(applied.seconds, plain.seconds);
}

// A sharded step moves O(U_i D) rows per rank, while every replicated exchange's bytes grow
// with U_g: at 4096 ranks, even with the relays of its forwarded exchanges, a sharded step
// moves a fifth of owner_partitioned's bytes or less (test_cost_model.cpp checks the direct
// route's bytes flat in the rank count).
TEST(StructLayouts, AShardedStepIsPricedFlatInTheRankCount) {
  const zfcMachineModel_t model = small_machine(2.0);
  zfcStepShape_t shape = small_step();
  zfcPrediction_t p8 = ZFC_PREDICTION_INITIALIZER, p4096 = p8, owner = p8;
  shape.ranks = 8;
  shape.tokens = 8 * 640;
  shape.local_unique = 8 * 300;
  shape.global_unique = 1500;
  ASSERT_EQ(zfcPredictShardedStep(&model, &shape, &p8), zfcSuccess) << zfcGetLastError(nullptr);
  shape.ranks = 4096;
  shape.tokens = 4096.0 * 640;
  shape.local_unique = 4096.0 * 300;
  shape.global_unique = 50000;
  ASSERT_EQ(zfcPredictShardedStep(&model, &shape, &p4096), zfcSuccess);
  ASSERT_EQ(zfcPredictSparseReduce(&model, &shape, zfcAlgoOwnerPartitioned, &owner),
            zfcSuccess);
  EXPECT_GT(p8.bytes, 0.0);
  EXPECT_LT(5 * p4096.bytes, owner.bytes);
  shape.size = 0;
  EXPECT_EQ(zfcPredictShardedStep(&model, &shape, &p8), zfcInvalidUsage);
  EXPECT_EQ(zfcPredictShardedStep(nullptr, &shape, &p8), zfcInvalidArgument);
}

// A plan config of the 0.1.0 layout (no stream_chunk_bytes) makes a plan.
TEST(StructLayouts, APlanConfigOfThe010LayoutIsAccepted) {
  zfcSparsePlanConfig_t full = ZFC_SPARSE_PLAN_CONFIG_INITIALIZER;
  full.dim = 4;
  full.vocab_size = 100;
  zfc::PlanSpec spec;
  std::vector<unsigned char> memory(sizeof full, 0xff);  // poison past the old layout
  zfcSparsePlanConfig_t* v010 = reinterpret_cast<zfcSparsePlanConfig_t*>(memory.data());
  std::memcpy(v010, &full, offsetof(zfcSparsePlanConfig_t, stream_chunk_bytes));
  v010->size = offsetof(zfcSparsePlanConfig_t, stream_chunk_bytes);
  ASSERT_TRUE(zfc::parse_plan_config(v010, zfc::Config{}, &spec).ok());
  EXPECT_EQ(spec.stream_chunk_bytes, zfc::kDefaultStreamChunkBytes);
  full.stream_chunk_bytes = 4096;
  ASSERT_TRUE(zfc::parse_plan_config(&full, zfc::Config{}, &spec).ok());
  EXPECT_EQ(spec.stream_chunk_bytes, 4096u);
  full.size = sizeof full - 1;
  const zfc::Status bad = zfc::parse_plan_config(&full, zfc::Config{}, &spec);
  EXPECT_EQ(bad.code(), zfcInvalidUsage);
}

// A plan config of the 0.6 layout (no overflow_on_device) reads the flag back; the field
// takes 0 or 1 and nothing else.
TEST(StructLayouts, APlanConfigOfThe06LayoutReadsTheFlagBack) {
  zfcSparsePlanConfig_t full = ZFC_SPARSE_PLAN_CONFIG_INITIALIZER;
  full.dim = 4;
  full.vocab_size = 100;
  EXPECT_EQ(full.overflow_on_device, 0);
  zfc::PlanSpec spec;
  std::vector<unsigned char> memory(sizeof full, 0xff);  // poison past the old layout
  zfcSparsePlanConfig_t* v06 = reinterpret_cast<zfcSparsePlanConfig_t*>(memory.data());
  std::memcpy(v06, &full, offsetof(zfcSparsePlanConfig_t, overflow_on_device));
  v06->size = offsetof(zfcSparsePlanConfig_t, overflow_on_device);
  ASSERT_TRUE(zfc::parse_plan_config(v06, zfc::Config{}, &spec).ok());
  EXPECT_FALSE(spec.overflow_on_device);
  full.overflow_on_device = 1;
  ASSERT_TRUE(zfc::parse_plan_config(&full, zfc::Config{}, &spec).ok());
  EXPECT_TRUE(spec.overflow_on_device);
  full.overflow_on_device = 2;
  const zfc::Status bad = zfc::parse_plan_config(&full, zfc::Config{}, &spec);
  EXPECT_EQ(bad.code(), zfcInvalidArgument);
  EXPECT_NE(bad.message().find("overflow_on_device 2"), std::string::npos);
}

TEST(StructLayouts, StepSeedOfNoGroupIsAnError) {
  uint64_t seed = 17;
  EXPECT_EQ(zfcSeedGroupStepSeed(nullptr, 3, &seed), zfcInvalidArgument);
  EXPECT_EQ(seed, 17u);
  EXPECT_NE(std::string(zfcGetLastError(nullptr)).find("group"), std::string::npos);
}

}  // namespace
}  // namespace zfc

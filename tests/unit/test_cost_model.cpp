// The cost model: its byte counts are the documented formulas, and its choices follow the
// machine it is given.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include <set>
#include <string>

#include "algo/algorithms.hpp"
#include "algo/cost_model.hpp"

namespace zfc {
namespace {

CostInputs inputs(int ranks, uint64_t k, uint64_t mean_ui, uint64_t ug, int64_t vocab) {
  CostInputs in;
  in.ranks = ranks;
  in.tokens = k * ranks;
  in.max_tokens = k;
  in.local_unique = mean_ui * ranks;
  in.max_local_unique = mean_ui;
  in.global_unique = ug;
  in.vocab = vocab;
  in.dim = 512;
  return in;
}

// The paper's word model on 8 ranks, with gutenberg's sizes: K = 640, U_i = 340, U_g = 1620.
CostInputs word_model() { return inputs(8, 640, 340, 1620, 100000); }

MachineModel machine(double intra_gbs, double inter_gbs, double latency_us = 5.0) {
  MachineModel m;
  m.intra = {latency_us * 1e-6, intra_gbs * 1e9};
  m.inter = {latency_us * 1e-6, inter_gbs * 1e9};
  m.local_bytes_per_s = 20e9;
  return m;
}

// The algorithm table has one row for every algorithm number and none else; its names are
// the API's (zfcGetAlgorithmName reads them) and distinct; every row can run and be priced;
// auto weighs the ones that merge first once U_g is known, the others before.
TEST(AlgorithmTable, OneRowPerAlgorithm) {
  std::set<int> ids;
  std::set<std::string> names;
  for (const AlgorithmInfo& a : algorithm_table()) {
    EXPECT_TRUE(ids.insert(a.id).second) << a.name;
    EXPECT_TRUE(names.insert(a.name).second) << a.name;
    EXPECT_EQ(std::string(zfcGetAlgorithmName(a.id)), a.name);
    EXPECT_EQ(find_algorithm(a.id), &a);
    EXPECT_NE(a.run32, nullptr);
    EXPECT_NE(a.run64, nullptr);
    EXPECT_NE(a.price, nullptr);
    EXPECT_EQ(a.auto_stage == AutoStage::kAfterIndexExchange, a.merges_first) << a.name;
  }
  for (int id = zfcAlgoAllGather; id < zfcNumAlgorithms; ++id) EXPECT_EQ(ids.count(id), 1u) << id;
  EXPECT_EQ(ids.size(), static_cast<size_t>(zfcNumAlgorithms - 1));
  EXPECT_EQ(find_algorithm(zfcAlgoAuto), nullptr);
  EXPECT_EQ(find_algorithm(zfcAlgoDefault), nullptr);
  EXPECT_EQ(find_algorithm(zfcNumAlgorithms), nullptr);
  EXPECT_STREQ(zfcGetAlgorithmName(zfcNumAlgorithms), "unknown");
}

TEST(CostModel, BytesAreTheDocumentedFormulas) {
  const CostInputs in = word_model();
  const MachineModel m = machine(10, 10);
  const double f = 2.0 * 7 / 8, d = 512;
  // The 96-byte headers, the distinct keys riding with them for the unique exchanges.
  const double header = 2 * 96 * 7, index = f * 8 * 340 * 4;
  EXPECT_DOUBLE_EQ(predict(zfcAlgoAllGather, in, m).bytes, header + f * 5120 * (4 + d * 4));
  EXPECT_DOUBLE_EQ(predict(zfcAlgoUniqueAllReduce, in, m).bytes,
                   header + index + 2 * f * 1620 * d * 4);
  EXPECT_DOUBLE_EQ(predict(zfcAlgoUniqueAllGather, in, m).bytes,
                   header + index + f * 8 * 340 * d * 4);
  EXPECT_DOUBLE_EQ(predict(zfcAlgoDenseVocab, in, m).bytes,
                   header + 2 * f * 100000 * (d + 1) * 4);
  // Each rank sends its U_i rows to owners and receives sum U_i / G; then the gather.
  EXPECT_DOUBLE_EQ(predict(zfcAlgoOwnerPartitioned, in, m).bytes,
                   header + index + f * (340 + 340) / 2 * d * 4 + f * 1620 * d * 4);
}

TEST(CostModel, OwnerPartitionedMovesAtMostTwoThirdsOfTheAllreduce) {
  const CostInputs in = word_model();
  const MachineModel m = machine(10, 10);
  const double ratio = predict(zfcAlgoOwnerPartitioned, in, m).bytes /
                       predict(zfcAlgoUniqueAllReduce, in, m).bytes;
  EXPECT_LT(ratio, 0.65);
  EXPECT_GT(ratio, 0.5);
}

TEST(CostModel, HierarchicalCrossesBetweenNodesLess) {
  CostInputs in = inputs(64, 640, 340, 6550, 100000);
  in.nodes = 8;
  const MachineModel m = machine(450, 50);
  const Prediction flat = predict(zfcAlgoOwnerPartitioned, in, m);
  const Prediction two = predict(zfcAlgoHierarchical, in, m);
  EXPECT_LT(two.internode_bytes, 0.5 * flat.internode_bytes);
  EXPECT_EQ(choose_after_index_exchange(in, m, true), zfcAlgoHierarchical);
  EXPECT_NE(choose_after_index_exchange(in, m, false), zfcAlgoHierarchical);
  // Its rings are shorter too: 2 (L - 1) + 2 (N - 1) latencies against 2 (G - 1).
  const MachineModel far = machine(1e6, 1e6, 100.0);
  EXPECT_LT(predict(zfcAlgoHierarchical, in, far).seconds,
            predict(zfcAlgoOwnerPartitioned, in, far).seconds);
}

TEST(CostModel, NodeUniqueFollowsHeapsCurve) {
  const CostInputs in = inputs(64, 640, 340, 6550, 100000);
  EXPECT_DOUBLE_EQ(node_unique(in, 1), 340);
  EXPECT_NEAR(node_unique(in, 64), 6550, 1e-6);
  EXPECT_GT(node_unique(in, 8), 340);
  EXPECT_LT(node_unique(in, 8), 8 * 340);
}

TEST(CostModel, Choices) {
  const MachineModel m = machine(10, 10);
  CostInputs word = word_model();
  EXPECT_EQ(choose_before_index_exchange(word, m), zfcAlgoAuto);
  const zfcAlgorithm_t after = choose_after_index_exchange(word, m, false);
  EXPECT_TRUE(after == zfcAlgoOwnerPartitioned || after == zfcAlgoUniqueAllReduce ||
              after == zfcAlgoUniqueAllGather);

  // A character model: every rank sees nearly every one of 98 characters. With 512-wide
  // rows the keys riding with the headers cost less than dense_vocab's presence column and
  // its pass over the rows; with 64-wide rows, more (dense_vocab needs no keys at all).
  // Routed directly (as where forwarding is not to be had: NCCL) or forwarded alike: at 8
  // ranks key_routed's summed pairs come back straight from every owner, 7 latencies, so
  // forwarding its routing (3 latencies instead of 7) no longer makes it win.
  MachineModel direct = m;
  direct.route = RoutePolicy::kDirect;
  CostInputs chars = inputs(8, 19200, 98, 98, 98);
  EXPECT_EQ(choose_before_index_exchange(chars, direct), zfcAlgoAuto);
  chars.dim = 64;
  EXPECT_EQ(choose_before_index_exchange(chars, direct), zfcAlgoDenseVocab);
  EXPECT_EQ(choose_before_index_exchange(chars, m), zfcAlgoDenseVocab);

  // Every token distinct and nothing shared: the unique exchanges only add an index step.
  CostInputs distinct = inputs(8, 64, 64, 512, 1 << 30);
  distinct.dim = 8;
  EXPECT_NE(choose_before_index_exchange(distinct, m), zfcAlgoDenseVocab);

  CostInputs one = word_model();  // one rank moves no bytes
  one.ranks = 1;
  one.tokens = 640;
  one.local_unique = one.max_local_unique = one.global_unique = 340;
  EXPECT_EQ(choose_before_index_exchange(one, m), zfcAlgoAuto);
}

// With only bandwidth priced (1 GB/s, no latency, local passes free), a step's time is the
// bytes its busiest rank sends in each collective: for owner_partitioned the balanced owner
// that receives most (the mean plus G - 1 rows), for key_routed the owner its key function
// loads most (the mean plus sqrt(2 ln G) standard deviations), as docs/algorithms.md says.
TEST(CostModel, TheBusiestRankSetsTheTime) {
  const CostInputs in = word_model();
  MachineModel m;
  m.intra = {0.0, 1e9};
  m.inter = m.intra;
  const double d = 512, f = 7.0 / 8, row = d * 4;
  const auto gather = [](double total, double largest) {
    return std::max(total - largest, 7 * largest);
  };
  const double share = 1620 * row * f;
  const double owner = gather(96 * 8 + 8 * 340 * 4, 96 + 340 * 4) + (340 + 7) * row * f + share;
  EXPECT_NEAR(predict(zfcAlgoOwnerPartitioned, in, m).seconds, owner * 1e-9, 1e-15);

  const double sd = std::sqrt(2720.0 * 2720 / 1620 * (1.0 / 8) * f);
  const double busiest = 340 + std::sqrt(2 * std::log(8.0)) * sd;
  const double routed = gather(96 * 8, 96) + busiest * (4 + row) * f + 8 * 7 +
                        gather(1620 * (4 + row) + 16 * 8, 1620 / 8.0 * (4 + row) + 16);
  EXPECT_NEAR(predict(zfcAlgoKeyRouted, in, m).seconds, routed * 1e-9, 1e-15);

  // Ranks sharing cores pay for every byte they copy, not for latencies.
  m.ranks_per_core = 4;
  EXPECT_NEAR(predict(zfcAlgoKeyRouted, in, m).seconds, 4 * routed * 1e-9, 1e-15);
  m.intra = m.inter = {5e-6, 0.0};
  const double waits = predict(zfcAlgoKeyRouted, in, m).seconds;
  m.ranks_per_core = 1;
  EXPECT_EQ(predict(zfcAlgoKeyRouted, in, m).seconds, waits);
}

TEST(CostModel, LatencyAndBandwidthBothCount) {
  const CostInputs in = word_model();
  const double slow = predict(zfcAlgoUniqueAllReduce, in, machine(1, 1)).seconds;
  const double fast = predict(zfcAlgoUniqueAllReduce, in, machine(100, 100)).seconds;
  const double far = predict(zfcAlgoUniqueAllReduce, in, machine(100, 100, 500)).seconds;
  EXPECT_GT(slow, 3 * fast);
  EXPECT_GT(far, fast + 7 * 3 * 400e-6);  // 3 collectives of 7 steps at least
}

}  // namespace
}  // namespace zfc

namespace zfc {
namespace {

// The route of a routed exchange: forwarded where latencies outweigh the relayed bytes, as
// the runtime decides (choose_route); ZIPFCOLL_ROUTE's policy overrides the model.
TEST(CostModel, ForwardedWhereLatenciesOutweighTheRelays) {
  const MachineModel m = machine(50, 50, 5.0);
  EXPECT_EQ(choose_route(m, 2, 1, 1e3), Route::kDirect);   // one message either way
  EXPECT_EQ(choose_route(m, 3, 1, 1e3), Route::kDirect);   // two steps, no fewer latencies
  EXPECT_EQ(choose_route(m, 4096, 1, 4e5), Route::kForwarded);
  EXPECT_EQ(choose_route(m, 8, 1, 1e9), Route::kDirect);   // bandwidth-bound: relays cost
  MachineModel fixed = m;
  fixed.route = RoutePolicy::kDirect;
  EXPECT_EQ(choose_route(fixed, 4096, 1, 4e5), Route::kDirect);
  fixed.route = RoutePolicy::kForwarded;
  EXPECT_EQ(choose_route(fixed, 8, 1, 1e9), Route::kForwarded);
  EXPECT_EQ(choose_route(fixed, 2, 1, 1e3), Route::kDirect);
  EXPECT_DOUBLE_EQ(forwarded_relays(8), 12.0 / 7.0);
  EXPECT_DOUBLE_EQ(forwarded_relays(3), 1.0);
  EXPECT_EQ(forwarded_steps(4096), 12);
  EXPECT_EQ(forwarded_steps(5), 3);
}

// A sharded step routed directly moves O(U_i D) rows per rank: with U_i fixed, its bytes
// less the per-peer framing (two 96-byte headers, 8-byte heads in two alltoallvs, a 16-byte
// report: 448 bytes sent and received per peer) barely move from 8 to 4096 ranks. Routed as
// the model chooses, 4096 ranks forward, relaying each row about 6 times, for a step that is
// faster still.
TEST(CostModel, AShardedStepRoutedDirectlyIsFlatInTheRankCount) {
  MachineModel direct = machine(450, 50, 2.0);
  direct.route = RoutePolicy::kDirect;
  CostInputs in = inputs(8, 640, 300, 1500, 100000);
  in.dim = 512;
  in.row_bytes = 2;
  const Prediction p8 = predict_sharded(in, direct);
  CostInputs big = inputs(4096, 640, 300, 50000, 100000);
  big.dim = 512;
  big.row_bytes = 2;
  const Prediction p4096 = predict_sharded(big, direct);
  const auto rows = [](const Prediction& p, double g) { return p.bytes - 448.0 * (g - 1); };
  EXPECT_GT(rows(p8, 8), 0.0);
  EXPECT_LT(rows(p4096, 4096), 1.25 * rows(p8, 8));
  const MachineModel chosen = machine(450, 50, 2.0);
  const Prediction routed = predict_sharded(big, chosen);
  EXPECT_LT(routed.seconds, p4096.seconds);
  EXPECT_GT(routed.bytes, 4.0 * rows(p4096, 4096));
}

}  // namespace
}  // namespace zfc

namespace zfc {
namespace {

// zfc_model's default machine (bench/model/zfc_model.cpp), pinned: NVLink 4 inside nodes of
// 8 ranks, one 400 Gb/s NIC per rank between them, HBM3 for the local passes.
MachineModel zfc_model_machine() {
  MachineModel m;
  m.intra = {2e-6, 450e9};
  m.inter = {5e-6, 50e9};
  m.local_bytes_per_s = 3000e9;
  return m;
}

// The word model's step at G ranks on nodes of 8 (gutenberg's sizes as zfc_model projects
// them: K = 640, U_i = 380, U_g on the Heaps curve), on a wire of w bytes per element.
CostInputs word_step(int g, uint64_t ug, size_t w) {
  CostInputs in = inputs(g, 640, 380, ug, 100000);
  in.nodes = g / 8;
  in.row_bytes = w;
  return in;
}

// key_routed's summed pairs come back in Transport::allgather_blocks, which MPI and UCX run,
// past kDirectBlockGatherRanks ranks, in ceil(log2 G) steps whatever its size. With only
// latencies priced, its step at 1024 ranks is then the header round, the forwarded pairs and
// that gather: 3 x 10 latencies. (Priced as a ring of G - 1 steps, as before, it was 1043.)
// Where blocks are gathered as an allgatherv after a round of the sizes (NCCL), the 27.9 MB
// of pairs run as a ring.
TEST(CostModel, KeyRoutedGathersItsPairsInLogDepth) {
  MachineModel m;
  m.intra = m.inter = {5e-6, 0.0};
  const CostInputs in = word_step(1024, 27156, 2);
  EXPECT_NEAR(predict(zfcAlgoKeyRouted, in, m).seconds, 30 * 5e-6, 1e-12);
  m.probed_block_gathers = false;
  EXPECT_NEAR(predict(zfcAlgoKeyRouted, in, m).seconds, (4 * 10 + 1023) * 5e-6, 1e-12);
}

// The reviewer's case: zfc_model priced key_routed fp16 at 5.86 ms at 1024 ranks and 1.37 ms
// at 4096. With K, D and the machine fixed, U_g grows with G, so neither the exchange's time
// nor its bytes may fall; and the forwarded route's bytes are the direct route's plus the
// relays: every block of the pairs' alltoallv (rows and 8-byte counts) moves
// forwarded_relays(G) times.
TEST(CostModel, KeyRoutedAtThousandsOfRanksNeitherSpeedsUpNorDropsTheRelays) {
  const MachineModel chosen = zfc_model_machine();
  MachineModel direct = chosen, forwarded = chosen;
  direct.route = RoutePolicy::kDirect;
  forwarded.route = RoutePolicy::kForwarded;
  const int ranks[] = {1024, 2048, 4096};
  const uint64_t ug[] = {27156, 36214, 48369};
  for (size_t w : {size_t{4}, size_t{2}}) {
    Prediction last;
    for (int i = 0; i < 3; ++i) {
      const int g = ranks[i];
      const CostInputs in = word_step(g, ug[i], w);
      const Prediction p = predict(zfcAlgoKeyRouted, in, chosen);
      EXPECT_EQ(choose_route(chosen, g, g / 8, 380.0 * (4 + 512 * w)), Route::kForwarded);
      EXPECT_GE(p.seconds, last.seconds) << "G " << g << " wire " << w;
      EXPECT_GE(p.bytes, last.bytes) << "G " << g << " wire " << w;
      last = p;
      const Prediction far = predict(zfcAlgoKeyRouted, in, forwarded);
      const Prediction near = predict(zfcAlgoKeyRouted, in, direct);
      EXPECT_DOUBLE_EQ(far.bytes, p.bytes);
      const double pair = 4 + 512.0 * w, f = (g - 1.0) / g;
      const double avg = 2 * 380 * pair * f + 2 * 8.0 * (g - 1);
      EXPECT_NEAR(far.bytes - near.bytes, (forwarded_relays(g) - 1) * avg, 1e-6 * far.bytes);
      EXPECT_LT(far.seconds, near.seconds);  // G - 1 latencies against ceil(log2 G)
    }
  }
}

}  // namespace
}  // namespace zfc

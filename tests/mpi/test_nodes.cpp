// Communicators whose ranks are grouped into nodes (the config's ranks_per_node, which lets
// one host stand in for a cluster): every algorithm, the hierarchical one included, gives
// the same bits as the node-grouped reference; the hierarchical exchange moves exactly the
// bytes its description says, and fewer of them between nodes; uneven nodes are refused.
#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <set>

#include "algo/agreement.hpp"
#include "sparse_helpers.hpp"

namespace zfc {
namespace test {
namespace {

const zfcAlgorithm_t kAlgorithms[] = {zfcAlgoAllGather,        zfcAlgoUniqueAllReduce,
                                      zfcAlgoDenseVocab,       zfcAlgoUniqueAllGather,
                                      zfcAlgoOwnerPartitioned, zfcAlgoHierarchical,
                                      zfcAlgoKeyRouted,        zfcAlgoAuto};

// A communicator over the world with nodes of GetParam() ranks.
class NodesTest : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    rank_ = world_rank();
    size_ = world_size();
    per_node_ = GetParam();
    zfcConfig_t cfg = ZFC_CONFIG_INITIALIZER;
    cfg.ranks_per_node = per_node_;
    ASSERT_EQ(open_world_comm(&comm_, &cfg), zfcSuccess) << zfcGetLastError(nullptr);
  }
  void TearDown() override {
    if (comm_ != nullptr) EXPECT_EQ(zfcCommDestroy(comm_), zfcSuccess);
  }
  // Several nodes, each of per_node_ ranks.
  bool hierarchical() const {
    return per_node_ > 1 && size_ > per_node_ && size_ % per_node_ == 0;
  }
  zfcComm_t comm_ = nullptr;
  int rank_ = 0, size_ = 1, per_node_ = 1;
};

uint64_t hash_run(const PlanRun& run) {
  uint64_t h = fnv1a(run.indices.data(), run.indices.size() * sizeof(int64_t));
  return fnv1a(run.rows.data(), run.rows.size() * sizeof(float), h);
}

TEST_P(NodesTest, EveryAlgorithmMatchesTheNodeOrderedReference) {
  const Workload w = zipf_workload(size_, 24, 4000, 1.05, 41, [](int r) {
    return r == 2 ? size_t{0} : 300 + 37 * static_cast<size_t>(r);
  });
  const SparseReference ref = reference_sparse_nodes(w.ranks, w.dim, per_node_);
  for (zfcAlgorithm_t a : kAlgorithms) {
    PlanOptions o;
    o.algorithm = a;
    const PlanRun run = run_plan(comm_, w.ranks[static_cast<size_t>(rank_)], w.dim, w.vocab, o);
    if (a == zfcAlgoHierarchical && !hierarchical()) {
      // Refused alike on every rank, naming what is missing.
      EXPECT_EQ(run.result, zfcUnsupported);
      EXPECT_NE(std::strstr(zfcGetLastError(comm_), "ranks_per_node"), nullptr)
          << zfcGetLastError(comm_);
      continue;
    }
    ASSERT_EQ(run.result, zfcSuccess) << zfcGetAlgorithmName(a) << ": " << zfcGetLastError(comm_);
    ASSERT_EQ(run.indices, ref.unique) << zfcGetAlgorithmName(a);
    ASSERT_EQ(std::memcmp(run.rows.data(), ref.rows.data(), ref.rows.size() * 4), 0)
        << zfcGetAlgorithmName(a) << " differs from the node-ordered sum";
    EXPECT_TRUE(same_on_all_ranks(hash_run(run))) << zfcGetAlgorithmName(a);
  }
}

TEST_P(NodesTest, CompressedHierarchicalIsIdenticalOnEveryRank) {
  Workload w = zipf_workload(size_, 16, 3000, 1.1, 43, [](int r) {
    return 200 + 11 * static_cast<size_t>(r);
  });
  const SparseReference ref = reference_sparse_nodes(w.ranks, w.dim, per_node_);
  for (zfcCompressionKind_t kind : {zfcCompressFp16, zfcCompressBf16}) {
    PlanOptions o;
    o.algorithm = zfcAlgoHierarchical;
    o.compression = kind;
    o.scale = kind == zfcCompressFp16 ? 64.0f : 1.0f;
    const PlanRun run = run_plan(comm_, w.ranks[static_cast<size_t>(rank_)], w.dim, w.vocab, o);
    if (!hierarchical()) {
      // Without several equal nodes it is refused on every rank, compressed or not.
      EXPECT_EQ(run.result, zfcUnsupported) << zfcGetLastError(comm_);
      EXPECT_TRUE(same_on_all_ranks(static_cast<uint64_t>(run.result)));
      continue;
    }
    ASSERT_EQ(run.result, zfcSuccess) << zfcGetLastError(comm_);
    ASSERT_EQ(run.indices, ref.unique);
    // Partial sums are rounded to the wire once per rank and once per node, and the result
    // once more.
    const double ulp = kind == zfcCompressFp16 ? 1.0 / 1024 : 1.0 / 128;
    for (size_t i = 0; i < ref.rows.size(); ++i) {
      const double bound = ulp * (2.0 + std::fabs(ref.rows[i])) * (size_ + 3);
      ASSERT_NEAR(run.rows[i], ref.rows[i], bound) << "element " << i;
    }
    EXPECT_TRUE(same_on_all_ranks(hash_run(run)));
  }
}

TEST_P(NodesTest, AllReduceSumsInsideNodesFirst) {
  const size_t n = 1000;
  std::vector<std::vector<float>> all;
  for (int r = 0; r < size_; ++r) all.push_back(random_rows(n, 1, 47, r));
  // Reference: node sums from +0, then over nodes from +0.
  std::vector<float> want(n, 0.0f);
  for (int first = 0; first < size_; first += per_node_) {
    std::vector<float> node(n, 0.0f);
    for (int r = first; r < std::min(size_, first + per_node_); ++r) {
      for (size_t i = 0; i < n; ++i) node[i] += all[static_cast<size_t>(r)][i];
    }
    for (size_t i = 0; i < n; ++i) want[i] += node[i];
  }
  std::vector<float> got(n);
  ASSERT_EQ(zfcAllReduce(comm_, all[static_cast<size_t>(rank_)].data(), got.data(), n,
                         zfcFloat32, nullptr, nullptr, nullptr),
            zfcSuccess) << zfcGetLastError(comm_);
  EXPECT_EQ(std::memcmp(got.data(), want.data(), n * 4), 0);
}

// ---- traffic --------------------------------------------------------------------------

// The owners of docs/algorithms.md's balanced, holder-aware map, written again from its
// description: rows heaviest first (more holders first, then lower position), each on its
// least loaded holder (lower rank on ties) unless the least loaded rank of all is more than
// one row lighter; a row costs its owner (holders - 2) if it holds it, else (holders - 1).
std::vector<int> documented_owners(const std::vector<std::vector<size_t>>& positions,
                                   size_t ug) {
  const int size = static_cast<int>(positions.size());
  std::vector<std::vector<int>> holders(ug);
  for (int r = 0; r < size; ++r) {
    for (size_t p : positions[static_cast<size_t>(r)]) holders[p].push_back(r);
  }
  std::vector<size_t> order(ug);
  for (size_t p = 0; p < ug; ++p) order[p] = p;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return holders[a].size() > holders[b].size();
  });
  std::vector<int64_t> load(static_cast<size_t>(size), 0);
  std::vector<int> owner(ug);
  for (size_t p : order) {
    const int64_t h = static_cast<int64_t>(holders[p].size());
    int best = holders[p][0];
    for (int r : holders[p]) {
      if (load[static_cast<size_t>(r)] < load[static_cast<size_t>(best)]) best = r;
    }
    const int least = static_cast<int>(std::min_element(load.begin(), load.end()) - load.begin());
    int64_t cost = h - 2;
    if (h > 1 && load[static_cast<size_t>(best)] > load[static_cast<size_t>(least)] + 1) {
      best = least;
      cost = h - 1;
    }
    owner[p] = best;
    load[static_cast<size_t>(best)] += cost;
  }
  return owner;
}

// The key-routed exchange's owner of a key, as docs/algorithms.md gives it.
int documented_key_owner(uint64_t key, int ranks) {
  uint64_t x = key / static_cast<uint64_t>(ranks);
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  x ^= x >> 31;
  const uint64_t g = static_cast<uint64_t>(ranks);
  return static_cast<int>((key % g + x % g) % g);
}

// What one rank of a sparse reduce should hand to the transport, counted from every rank's
// distinct indices, as the exchanges and their owner maps are documented.
class ExpectedTraffic {
 public:
  ExpectedTraffic(const Workload& w, int per_node, int me, size_t row_bytes)
      : size_(static_cast<int>(w.ranks.size())), per_node_(per_node), me_(me),
        row_bytes_(row_bytes) {
    std::set<int64_t> all;
    for (const RankInput& in : w.ranks) all.insert(in.indices.begin(), in.indices.end());
    const std::vector<int64_t> global(all.begin(), all.end());
    ug_ = global.size();
    for (const RankInput& in : w.ranks) {
      std::set<int64_t> mine(in.indices.begin(), in.indices.end());
      keys_.emplace_back(mine.begin(), mine.end());
      std::vector<size_t> pos;
      for (int64_t v : mine) {
        pos.push_back(static_cast<size_t>(
            std::lower_bound(global.begin(), global.end(), v) - global.begin()));
      }
      positions_.push_back(pos);
    }
    // The header, then each rank's distinct indices as 32-bit keys, to every other rank.
    for (int r = 0; r < size_; ++r) {
      if (r == me_) continue;
      move(r, sizeof(OpHeader), sizeof(OpHeader));
      move(r, positions_[me_].size() * 4, positions_[r].size() * 4);
    }
  }

  void owner_partitioned() {
    const std::vector<int> owner = documented_owners(positions_, ug_);
    std::vector<size_t> owned(static_cast<size_t>(size_), 0);
    for (int o : owner) ++owned[static_cast<size_t>(o)];
    for (int j = 0; j < size_; ++j) {
      if (j == me_) continue;
      size_t out = 0, in = 0;  // my rows that j owns, j's rows that I own
      for (size_t p : positions_[me_]) out += owner[p] == j ? 1 : 0;
      for (size_t p : positions_[j]) in += owner[p] == me_ ? 1 : 0;
      move(j, out * row_bytes_, in * row_bytes_);
      move(j, owned[me_] * row_bytes_, owned[j] * row_bytes_);
    }
  }

  // Counts, then (key, row) pairs, then each owner's report and its summed pairs; no index
  // allgather (undone here: the constructor counted one).
  void key_routed() {
    sent_ = received_ = inter_sent_ = inter_received_ = 0;
    const auto pad8 = [](size_t b) { return (b + 7) / 8 * 8; };
    const auto block = [&](size_t n) { return pad8(n * 4) + pad8(n * row_bytes_); };
    std::vector<std::vector<size_t>> to(static_cast<size_t>(size_),
                                        std::vector<size_t>(static_cast<size_t>(size_), 0));
    std::vector<size_t> distinct(static_cast<size_t>(size_), 0);
    for (int r = 0; r < size_; ++r) {
      for (int64_t k : keys_[r]) ++to[r][documented_key_owner(static_cast<uint64_t>(k), size_)];
    }
    std::set<int64_t> all;
    for (const auto& k : keys_) all.insert(k.begin(), k.end());
    for (int64_t k : all) ++distinct[documented_key_owner(static_cast<uint64_t>(k), size_)];
    for (int j = 0; j < size_; ++j) {
      if (j == me_) continue;
      move(j, sizeof(OpHeader), sizeof(OpHeader));
      move(j, 8, 8);
      move(j, block(to[me_][j]), block(to[j][me_]));
      move(j, 16, 16);
      move(j, block(distinct[me_]), block(distinct[j]));
    }
  }

  // The map of docs/algorithms.md: positions heaviest first; the local index j with the
  // smallest largest (load + cost) over the nodes holding the row, then the node k with the
  // smallest load + cost among the members j.
  void hierarchical() {
    const int L = per_node_, N = size_ / per_node_;
    std::vector<std::vector<int>> holders(ug_);
    for (int r = 0; r < size_; ++r) {
      for (size_t p : positions_[static_cast<size_t>(r)]) holders[p].push_back(r);
    }
    std::vector<size_t> order(ug_);
    for (size_t p = 0; p < ug_; ++p) order[p] = p;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return holders[a].size() > holders[b].size();
    });
    std::vector<int64_t> load(static_cast<size_t>(size_), 0);
    std::vector<int> local(ug_), node(ug_);
    for (size_t p : order) {
      std::vector<int64_t> h(static_cast<size_t>(N), 0), holds(static_cast<size_t>(size_), 0);
      for (int r : holders[p]) ++h[static_cast<size_t>(r / L)], holds[static_cast<size_t>(r)] = 1;
      int64_t held_by = 0;
      for (int64_t c : h) held_by += c > 0 ? 1 : 0;
      const auto cost1 = [&](int n, int j) { return h[n] - holds[n * L + j]; };
      int best_j = 0;
      int64_t best = 0;
      for (int j = 0; j < L; ++j) {
        int64_t score = INT64_MIN;
        for (int n = 0; n < N; ++n) {
          if (h[n] > 0) score = std::max(score, load[n * L + j] + cost1(n, j));
        }
        if (j == 0 || score < best) best_j = j, best = score;
      }
      for (int n = 0; n < N; ++n) {
        if (h[n] > 0) load[n * L + best_j] += cost1(n, best_j);
      }
      const auto cost2 = [&](int k) { return held_by - (h[k] > 0 ? 1 : 0) - 1; };
      int best_k = 0;
      for (int k = 0; k < N; ++k) {
        const int64_t score = load[k * L + best_j] + cost2(k);
        if (k == 0 || score < best) best_k = k, best = score;
      }
      load[best_k * L + best_j] += cost2(best_k);
      local[p] = best_j;
      node[p] = best_k;
    }
    const int m = me_ / L, i = me_ % L;
    const auto count = [&](const std::set<size_t>& ps, int j, int k) {
      size_t c = 0;
      for (size_t p : ps) c += local[p] == j && (k < 0 || node[p] == k) ? 1 : 0;
      return c;
    };
    std::set<size_t> all;
    for (size_t p = 0; p < ug_; ++p) all.insert(p);
    for (int j = 0; j < L; ++j) {  // step 1, and the node's gather
      const int peer = m * L + j;
      if (peer == me_) continue;
      const std::set<size_t> mine(positions_[me_].begin(), positions_[me_].end());
      const std::set<size_t> theirs(positions_[peer].begin(), positions_[peer].end());
      move(peer, count(mine, j, -1) * row_bytes_, count(theirs, i, -1) * row_bytes_);
      move(peer, count(all, i, -1) * row_bytes_, count(all, j, -1) * row_bytes_);
    }
    const std::set<size_t> here = node_union(m);
    for (int k = 0; k < N; ++k) {  // step 2, and the rail's gather
      if (k == m) continue;
      move(k * L + i, count(here, i, k) * row_bytes_, count(node_union(k), i, m) * row_bytes_);
      move(k * L + i, count(all, i, m) * row_bytes_, count(all, i, k) * row_bytes_);
    }
  }

  void expect(const zfcOpStats_t& s, const char* what) const {
    EXPECT_EQ(s.bytes_sent, sent_) << what;
    EXPECT_EQ(s.bytes_received, received_) << what;
    EXPECT_EQ(s.internode_bytes_sent, inter_sent_) << what;
    EXPECT_EQ(s.internode_bytes_received, inter_received_) << what;
  }

 private:
  std::set<size_t> node_union(int node) const {
    std::set<size_t> u;
    for (int r = node * per_node_; r < (node + 1) * per_node_; ++r) {
      u.insert(positions_[r].begin(), positions_[r].end());
    }
    return u;
  }
  void move(int peer, uint64_t out, uint64_t in) {
    sent_ += out;
    received_ += in;
    if (peer / per_node_ != me_ / per_node_) {
      inter_sent_ += out;
      inter_received_ += in;
    }
  }

  int size_, per_node_, me_;
  size_t row_bytes_;
  size_t ug_ = 0;
  std::vector<std::vector<size_t>> positions_;
  std::vector<std::vector<int64_t>> keys_;
  uint64_t sent_ = 0, received_ = 0, inter_sent_ = 0, inter_received_ = 0;
};

// The busiest rank and the sum over ranks that every rank reports are those of the bytes
// each rank counted itself; the rounds are the same everywhere.
void expect_ledger(const zfcOpStats_t& s, const char* what) {
  uint64_t mine = s.bytes_received, most = 0, sum = 0;
  MPI_Allreduce(&mine, &most, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(&mine, &sum, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
  EXPECT_EQ(s.bytes_received_max, most) << what;
  EXPECT_EQ(s.bytes_received_sum, sum) << what;
  EXPECT_TRUE(same_on_all_ranks(static_cast<uint64_t>(s.rounds))) << what;
}

TEST_P(NodesTest, BytesAndInternodeBytesMatchTheDescription) {
  const size_t dim = 32;
  const Workload w = zipf_workload(size_, dim, 50000, 1.1, 53, [](int r) {
    return 640 - 30 * static_cast<size_t>(r % 3);
  });
  // The eight-bit formats: a byte per value and the row's fp32 scale, whatever the rounding.
  for (zfcCompressionKind_t kind : {zfcCompressNone, zfcCompressFp16, zfcCompressInt8,
                                    zfcCompressFp8E4M3Stochastic}) {
    const size_t row_bytes = kind == zfcCompressNone   ? dim * 4
                             : kind == zfcCompressFp16 ? dim * 2
                                                       : dim + 4;
    // Runs `algorithm` and checks its traffic against `expected`'s description of it.
    auto run_and_expect = [&](zfcAlgorithm_t algorithm, void (ExpectedTraffic::*describe)()) {
      PlanOptions o;
      o.compression = kind;
      o.algorithm = algorithm;
      ExpectedTraffic expected(w, per_node_, rank_, row_bytes);
      (expected.*describe)();
      const PlanRun run = run_plan(comm_, w.ranks[static_cast<size_t>(rank_)], dim, w.vocab, o);
      EXPECT_EQ(run.result, zfcSuccess) << zfcGetLastError(comm_);
      expected.expect(run.stats, zfcGetAlgorithmName(algorithm));
      expect_ledger(run.stats, zfcGetAlgorithmName(algorithm));
      return run;
    };
    const PlanRun flat =
        run_and_expect(zfcAlgoOwnerPartitioned, &ExpectedTraffic::owner_partitioned);
    EXPECT_EQ(flat.stats.rounds, 3);  // header and keys, rows to owners, rows back
    const PlanRun routed = run_and_expect(zfcAlgoKeyRouted, &ExpectedTraffic::key_routed);
    EXPECT_EQ(routed.stats.rounds, 3);  // header, pairs to owners, reports and pairs back
    if (!hierarchical()) continue;
    const PlanRun two = run_and_expect(zfcAlgoHierarchical, &ExpectedTraffic::hierarchical);
    EXPECT_EQ(two.stats.rounds, 5);  // header and keys, node and rail exchanges, rail, node
    // Summed over ranks, fewer bytes cross between nodes.
    uint64_t mine[2] = {flat.stats.internode_bytes_sent, two.stats.internode_bytes_sent};
    uint64_t total[2];
    MPI_Allreduce(mine, total, 2, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    EXPECT_LT(total[1], total[0]);
  }
}

// On equal nodes the dense allreduce runs in two levels: the bytes of its description
// (docs/algorithms.md), fewer of them between nodes, five rounds with the header; results
// identical on every rank and to the node-ordered reference's bits on every wire.
TEST_P(NodesTest, AllReduceInTwoLevelsMovesTheDescribedBytes) {
  const size_t n = 1003;  // a multiple of no rank count
  std::vector<std::vector<float>> all;
  for (int r = 0; r < size_; ++r) all.push_back(random_rows(n, 1, 59, r));
  const std::vector<float>& send = all[static_cast<size_t>(rank_)];
  const auto len = [](size_t total, int parts, int j) {
    return total / parts + (static_cast<size_t>(j) < total % parts ? 1 : 0);
  };
  for (zfcCompressionKind_t kind : {zfcCompressNone, zfcCompressFp16}) {
    const zfcCompression_t how{kind, 1.0f};
    std::vector<float> got(n);
    ASSERT_EQ(zfcAllReduce(comm_, send.data(), got.data(), n, zfcFloat32, &how, nullptr,
                           nullptr),
              zfcSuccess) << zfcGetLastError(comm_);
    zfcStats_t stats = ZFC_STATS_INITIALIZER;
    ASSERT_EQ(zfcCommGetStats(comm_, &stats), zfcSuccess);
    expect_ledger(stats.last, "allreduce");
    const std::vector<float> want = reference_allreduce_nodes(all, kind, 1.0f, per_node_);
    EXPECT_EQ(std::memcmp(got.data(), want.data(), n * sizeof(float)), 0);
    if (!hierarchical()) continue;
    const uint64_t w = kind == zfcCompressNone ? 4 : 2, head = sizeof(OpHeader);
    const int L = per_node_, N = size_ / per_node_, i = rank_ % L, m = rank_ / L;
    const uint64_t len1 = len(n, L, i), len2 = len(len1, N, m);
    uint64_t node_out = 0, rail_out = 0;
    for (int j = 0; j < L; ++j) node_out += j == i ? 0 : len(n, L, j);
    for (int k = 0; k < N; ++k) rail_out += k == m ? 0 : len(len1, N, k);
    // Node reduce-scatter, rail reduce-scatter (in fp32), rail gather, node gather.
    const uint64_t rail_sent = rail_out * 4 + (N - 1) * len2 * w;
    const uint64_t rail_received = (N - 1) * len2 * 4 + (len1 - len2) * w;
    EXPECT_EQ(stats.last.bytes_sent,
              head * (size_ - 1) + (node_out + (L - 1) * len1) * w + rail_sent);
    EXPECT_EQ(stats.last.bytes_received,
              head * (size_ - 1) + ((L - 1) * len1 + n - len1) * w + rail_received);
    EXPECT_EQ(stats.last.internode_bytes_sent, head * (size_ - L) + rail_sent);
    EXPECT_EQ(stats.last.internode_bytes_received, head * (size_ - L) + rail_received);
    EXPECT_EQ(stats.last.rounds, 5);  // header, node and rail reduce-scatters and gathers
  }
}

INSTANTIATE_TEST_SUITE_P(RanksPerNode, NodesTest, ::testing::Values(2, 3, 4),
                         [](const auto& info) { return std::to_string(info.param); });

}  // namespace
}  // namespace test
}  // namespace zfc

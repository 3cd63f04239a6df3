// The device backend of the sparse step (exec/step_kernels.hpp) against the host backend:
// one driver runs the local phases of a key-routed step -- read the indices, local unique,
// owner map, summed rows, packed pairs, an owner's merge, decoding into result rows, the
// indices written back -- on each backend, and every output must have the same bits; the
// same for the bounded step's kernels. Skips, saying why, on a machine without a GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <vector>

#include "algo/agreement.hpp"
#include "exec/step_kernels.hpp"
#include "device_test_util.hpp"
#include "kernels/cast.hpp"
#include "workload/random.hpp"

namespace zfc {
namespace {

struct StepInput {
  std::vector<int64_t> indices;  // stored as `index_type`
  zfcDataType_t index_type = zfcInt64;
  std::vector<float> rows;       // count x dim
  size_t dim = 0;
  int64_t vocab = 0;
  int ranks = 1;
  zfcDataType_t wire = zfcFloat32;
  float scale = 1.0f;
};

// What the driver read back from a backend.
struct StepOutput {
  uint64_t first_bad = 0, local_unique = 0, merged = 0;
  std::vector<unsigned char> uniq, inverse, owner_of, partial, packed, decoded, stored;
  std::vector<uint64_t> counts;
  bool finite = true;
};

// Uploads n elements of T into k's memory (slot), returning the pointer there.
template <class K, class T>
T* put(StepKernels<K>& k, Slot slot, const T* host, size_t n) {
  T* at = nullptr;
  EXPECT_TRUE(scratch_for(k, slot, n + 1, &at).ok());
  EXPECT_TRUE(k.upload(at, host, n * sizeof(T)).ok());
  return at;
}

template <class K, class T>
std::vector<unsigned char> get(StepKernels<K>& k, const T* at, size_t n) {
  std::vector<unsigned char> out(n * sizeof(T));
  EXPECT_TRUE(k.fetch(out.data(), at, out.size()).ok());
  return out;
}

template <class K>
StepOutput run_step(StepKernels<K>& k, const StepInput& in) {
  StepOutput out;
  const size_t n = in.indices.size(), dim = in.dim, G = static_cast<size_t>(in.ranks);
  std::vector<int32_t> idx32(in.indices.begin(), in.indices.end());
  const void* d_idx = in.index_type == zfcInt32
                          ? static_cast<const void*>(put(k, Slot::kResultIndices, idx32.data(), n))
                          : put(k, Slot::kResultIndices, in.indices.data(), n);
  const float* d_rows = put(k, Slot::kGatheredRows, in.rows.data(), in.rows.size());
  K *keys = nullptr, *uniq = nullptr, *merged = nullptr;
  int32_t *inverse = nullptr, *owner_of = nullptr, *pos = nullptr;
  uint64_t* words = nullptr;
  float *partial = nullptr, *decoded = nullptr;
  EXPECT_TRUE(scratch_for(k, Slot::kKeys, n + 1, &keys).ok());
  EXPECT_TRUE(scratch_for(k, Slot::kLocalUnique, n + 1, &uniq).ok());
  EXPECT_TRUE(scratch_for(k, Slot::kInverse, n + 1, &inverse).ok());
  EXPECT_TRUE(scratch_for(k, Slot::kStepWords, G + 2, &words).ok());
  EXPECT_TRUE(k.load_keys(d_idx, in.index_type, n, in.vocab, true, keys, &words[0]).ok());
  KeyGrouping grouping;
  EXPECT_TRUE(k.unique_with_inverse(keys, n, static_cast<uint64_t>(in.vocab), uniq, inverse,
                                    &words[1], &grouping)
                  .ok());
  // The device keeps its sort's order for the scatter below; the host keeps none.
  EXPECT_EQ(grouping.order != nullptr, k.on_device());
  uint64_t two[2] = {0, 0};
  EXPECT_TRUE(k.fetch(two, words, sizeof two).ok());
  out.first_bad = two[0];
  // After a bad index the keys differ (the host zeroes them), and nothing past is used.
  if (out.first_bad < n) return out;
  out.local_unique = two[1];
  const size_t u = static_cast<size_t>(out.local_unique);
  out.uniq = get(k, uniq, u);
  out.inverse = get(k, inverse, n);

  // The owner map and the summed rows, then the pairs packed by owner. As in a step, the
  // owner map takes U_i from the unique's word, over room for every token.
  EXPECT_TRUE(scratch_for(k, Slot::kLocate, n + 1, &owner_of).ok());
  EXPECT_TRUE(scratch_for(k, Slot::kPartial, u * dim + 1, &partial).ok());
  EXPECT_TRUE(k.owner_counts(uniq, n, &words[1], in.ranks, owner_of, words + 2).ok());
  out.counts.resize(G);
  EXPECT_TRUE(k.fetch(out.counts.data(), words + 2, G * sizeof(uint64_t)).ok());
  out.owner_of = get(k, owner_of, u);
  EXPECT_TRUE(
      k.scatter_to_dense(d_rows, zfcFloat32, inverse, n, dim, partial, u, grouping).ok());
  // Then the same tokens again, on the wire, added into the rows as they are now (as an
  // owner adds each sender's wire rows).
  char* wire_rows = nullptr;
  const size_t wire_bytes = kernels::float_type_bytes(in.wire);
  EXPECT_TRUE(scratch_for(k, Slot::kWireRecv, n * dim * wire_bytes + 1, &wire_rows).ok());
  EXPECT_TRUE(k.wire().encode(d_rows, n * dim, in.wire, in.scale, wire_rows).ok());
  EXPECT_TRUE(k.scatter_add_rows(wire_rows, in.wire, inverse, n, dim, partial, u, false).ok());
  out.partial = get(k, partial, u * dim);
  const PairBlock block{sizeof(uint64_t), sizeof(K), dim * wire_bytes};
  std::vector<size_t> displs(G);
  size_t total = 0;
  for (size_t j = 0; j < G; ++j) {
    displs[j] = total;
    total += block.bytes(out.counts[j]);
  }
  char* packed = nullptr;
  EXPECT_TRUE(scratch_for(k, Slot::kWireSend, total + 1, &packed).ok());
  // Not zeros to begin with: padding the packing does not write shows up as 0x5a.
  const std::vector<char> junk(total + 1, 0x5a);
  EXPECT_TRUE(k.upload(packed, junk.data(), junk.size()).ok());
  const PairPacking packing{block, out.counts.data(), displs.data(), in.ranks};
  EXPECT_TRUE(
      k.pack_pairs(uniq, owner_of, u, partial, dim, in.wire, in.scale, packing, packed).ok());
  out.packed = get(k, packed, total);

  // An owner's merge of keys that repeat across senders (the distinct keys, then every
  // token's), and each block's rows decoded into the merged order.
  K* both = nullptr;
  EXPECT_TRUE(scratch_for(k, Slot::kGatheredKeys, u + n + 1, &both).ok());
  EXPECT_TRUE(k.copy(both, uniq, u * sizeof(K)).ok());
  EXPECT_TRUE(k.copy(both + u, keys, n * sizeof(K)).ok());
  EXPECT_TRUE(scratch_for(k, Slot::kGlobalUnique, u + n + 1, &merged).ok());
  EXPECT_TRUE(scratch_for(k, Slot::kPositions, u + 1, &pos).ok());
  EXPECT_TRUE(scratch_for(k, Slot::kDense, u * dim + 1, &decoded).ok());
  EXPECT_TRUE(
      k.sorted_unique(both, u + n, static_cast<uint64_t>(in.vocab), merged, words).ok());
  EXPECT_TRUE(k.fetch(&out.merged, words, sizeof(uint64_t)).ok());
  for (size_t j = 0; j < G; ++j) {
    const char* base = packed + displs[j];
    const size_t c = out.counts[j];
    EXPECT_TRUE(k.locate_sorted(reinterpret_cast<const K*>(base + block.lead), c, merged, u, pos)
                    .ok());
    EXPECT_TRUE(
        k.decode_rows_to(base + block.rows_at(c), pos, c, dim, in.wire, in.scale, decoded).ok());
  }
  out.decoded = get(k, decoded, u * dim);
  EXPECT_TRUE(k.wire().all_finite(&out.finite).ok());
  void* stored = nullptr;
  EXPECT_TRUE(k.wire().scratch(Slot::kResultRows, u * 8 + 8, &stored).ok());
  EXPECT_TRUE(k.store_keys(merged, u, in.index_type, stored).ok());
  out.stored = get(k, static_cast<const char*>(stored),
                   u * (in.index_type == zfcInt32 ? 4 : 8));
  return out;
}

StepInput make_input(size_t n, size_t dim, int64_t vocab, int ranks, zfcDataType_t wire,
                     uint64_t seed) {
  StepInput in;
  workload::SplitMix64 rng(seed);
  in.indices.resize(n);
  for (int64_t& v : in.indices) {
    const double x = rng.uniform();
    v = static_cast<int64_t>(static_cast<double>(vocab - 1) * x * x * x);
  }
  in.rows.resize(n * dim);
  for (float& r : in.rows) r = static_cast<float>(rng.uniform() * 2.0 - 1.0);
  in.dim = dim;
  in.vocab = vocab;
  in.ranks = ranks;
  in.wire = wire;
  in.scale = 3.0f;  // rounds the scaled values, divides for real; an fp32 wire ignores it
  return in;
}

// Float bytes with every NaN made one NaN: the host keeps a NaN's payload through a sum, a
// GPU's arithmetic gives its own canonical NaN, and the library promises the bits of numbers
// and the overflow flag, not NaN payloads.
std::vector<unsigned char> nan_as_one(std::vector<unsigned char> bytes) {
  for (size_t at = 0; at + 4 <= bytes.size(); at += 4) {
    float v;
    std::memcpy(&v, &bytes[at], 4);
    if (std::isnan(v)) {
      const float one = std::numeric_limits<float>::quiet_NaN();
      std::memcpy(&bytes[at], &one, 4);
    }
  }
  return bytes;
}

// The host backend and the device backend (on the default stream), side by side.
template <class K>
struct BothBackends {
  Workspace ws;
  HostStepKernels<K> host{ws};
  DeviceScratch scratch;
  std::unique_ptr<StepKernels<K>> device;
  BothBackends() { EXPECT_TRUE(make_device_step_kernels<K>(scratch, nullptr, &device).ok()); }
};

template <class K>
void expect_same_step(const StepInput& in, bool with_nan = false) {
  BothBackends<K> b;
  ASSERT_NE(b.device, nullptr);
  HostStepKernels<K>& host = b.host;
  const std::unique_ptr<StepKernels<K>>& device = b.device;
  const StepOutput h = run_step(host, in), d = run_step(*device, in);
  EXPECT_EQ(d.first_bad, h.first_bad);
  EXPECT_EQ(d.local_unique, h.local_unique);
  EXPECT_EQ(d.uniq, h.uniq);
  EXPECT_EQ(d.inverse, h.inverse);
  EXPECT_EQ(d.counts, h.counts);
  EXPECT_EQ(d.owner_of, h.owner_of);
  EXPECT_EQ(nan_as_one(d.partial), nan_as_one(h.partial)) << "summed rows";
  // A NaN's payload travels on the wire: packed bytes are compared without one.
  if (!with_nan) EXPECT_EQ(d.packed, h.packed) << "packed pairs, padding included";
  EXPECT_EQ(d.packed.size(), h.packed.size());
  EXPECT_EQ(d.merged, h.merged);
  EXPECT_EQ(nan_as_one(d.decoded), nan_as_one(h.decoded)) << "decoded rows";
  EXPECT_EQ(d.finite, h.finite);
  EXPECT_EQ(d.stored, h.stored);
  EXPECT_GT(device->syncs(), 0u);
  EXPECT_EQ(host.syncs(), 0u);
}

TEST(DeviceStepKernels, EveryLocalPhaseHasTheHostBits) {
  ZFC_REQUIRE_GPU();
  for (zfcDataType_t wire : {zfcFloat32, zfcFloat16, zfcBFloat16}) {
    for (int ranks : {1, 3, 8}) {
      SCOPED_TRACE(testing::Message() << "wire " << wire << ", " << ranks << " ranks");
      expect_same_step<uint32_t>(make_input(3000, 24, 5000, ranks, wire, 7));
      StepInput wide = make_input(2000, 5, int64_t{1} << 40, ranks, wire, 9);
      expect_same_step<uint64_t>(wide);
      StepInput narrow = make_input(1500, 3, 70000, ranks, wire, 11);
      narrow.index_type = zfcInt32;
      expect_same_step<uint32_t>(narrow);
    }
  }
}

TEST(DeviceStepKernels, WideRowsAndManyKeysHaveTheHostBits) {
  ZFC_REQUIRE_GPU();
  // Rows wider than a block's threads, and more distinct keys than the grid's blocks.
  expect_same_step<uint32_t>(make_input(2000, 300, 3000, 3, zfcBFloat16, 21));
  expect_same_step<uint64_t>(make_input(600000, 2, int64_t{1} << 40, 5, zfcFloat16, 23));
}

TEST(DeviceStepKernels, ABadIndexAndNonFiniteRowsAreFoundAlike) {
  ZFC_REQUIRE_GPU();
  StepInput bad = make_input(1000, 8, 4000, 4, zfcFloat16, 13);
  bad.indices[700] = -1;
  bad.indices[900] = 4000;
  expect_same_step<uint32_t>(bad);
  StepInput late = make_input(1000, 8, 4000, 4, zfcFloat16, 14);
  late.indices[999] = 4000;
  expect_same_step<uint32_t>(late);
  StepInput inf = make_input(1000, 8, 4000, 4, zfcBFloat16, 17);
  inf.rows[5 * 8 + 3] = std::numeric_limits<float>::infinity();
  expect_same_step<uint32_t>(inf);
  StepInput nan = make_input(1000, 8, 4000, 2, zfcFloat32, 19);
  nan.rows[2] = std::nanf("");
  expect_same_step<uint32_t>(nan, true);
}

// ---- the bounded step's kernels ------------------------------------------------------------

// What the bounded step's own kernels leave, read back from one backend.
struct BoundedKernelsOutput {
  std::vector<unsigned char> filled, composed, verdict, ids32, ids64, rows, status, kept;
};

// What run_bounded_kernels gets wrong on purpose.
enum class BoundedCase { kAgree, kBadIndex, kDisagree, kCut, kNoHeader };

// The bounded kernels on crafted inputs: three ranks' blocks (padded with the sentinel;
// rank 1's with a bad index, or with more distinct keys than its block holds), their
// headers (rank 2's capacity differing, or rank 1's block not a header's size), the
// verdict, and the finish with it, into prefilled buffers.
template <class K>
BoundedKernelsOutput run_bounded_kernels(StepKernels<K>& k, BoundedCase c) {
  const bool bad = c == BoundedCase::kBadIndex, disagree = c == BoundedCase::kDisagree;
  BoundedKernelsOutput out;
  const K sentinel = 100;
  const size_t room = 6, dim = 3, G = 3;
  // fill_keys_after: from the count word (4) to the room.
  const std::vector<K> keys = {3, 5, 8, 13, 77, 77, 77, 77, 77, 77};
  const uint64_t four = 4;
  K* d_keys = put(k, Slot::kKeys, keys.data(), keys.size());
  uint64_t* d_four = put(k, Slot::kStepWords, &four, 1);
  EXPECT_TRUE(k.fill_keys_after(d_keys, room, d_four, sentinel).ok());
  out.filled = get(k, d_keys, keys.size());
  // compose_clamped: an index past the table and a value past the limit take the limit.
  const std::vector<int32_t> index = {0, 1, 2, 5, 3, 1}, table = {7, 2, 9};
  int32_t* d_index = put(k, Slot::kInverse, index.data(), index.size());
  int32_t* d_table = put(k, Slot::kLocate, table.data(), table.size());
  int32_t* d_out = nullptr;
  EXPECT_TRUE(scratch_for(k, Slot::kPositions, index.size(), &d_out).ok());
  EXPECT_TRUE(k.compose_clamped(d_index, index.size(), d_table, table.size(), 8, d_out).ok());
  out.composed = get(k, d_out, index.size());
  // Three blocks: a lead and `room` keys each (K of 4 bytes: 24 bytes of keys).
  const size_t block = sizeof(BoundedLead) + (room * sizeof(K) + 7) / 8 * 8;
  std::vector<unsigned char> gathered(G * block, 0);
  const std::vector<std::vector<K>> mine = {{3, 5, 8}, {5, 13, 40, 41, 42, 43}, {8}};
  for (size_t r = 0; r < G; ++r) {
    BoundedLead lead{10, 10, mine[r].size()};
    if (bad && r == 1) lead.first_bad = 4;
    if (c == BoundedCase::kCut && r == 1) lead.distinct = 9;  // 6 of its 9 keys sent
    std::memcpy(&gathered[r * block], &lead, sizeof lead);
    for (size_t i = 0; i < room; ++i) {
      const K key = i < mine[r].size() ? mine[r][i] : sentinel;
      std::memcpy(&gathered[r * block + sizeof lead + i * sizeof(K)], &key, sizeof key);
    }
  }
  const std::vector<K> global = {3, 5, 8, 13, 40, 41, 42, 43, sentinel};
  const uint64_t merged = global.size();
  std::vector<OpHeader> headers(G);
  for (size_t r = 0; r < G; ++r) {
    std::memset(&headers[r], 0, sizeof(OpHeader));
    headers[r].magic = kHeaderMagic;
    headers[r].op = static_cast<uint32_t>(OpKind::kSparseBounded);
    headers[r].capacity = disagree && r == 2 ? 9 : 8;
    headers[r].count = 10;
    headers[r].sequence = 4;
  }
  std::vector<uint64_t> sizes(G, sizeof(OpHeader));
  if (c == BoundedCase::kNoHeader) sizes[1] += 8;
  const char* d_gathered = reinterpret_cast<const char*>(
      put(k, Slot::kGatheredRows, gathered.data(), gathered.size()));
  K* d_global = put(k, Slot::kGlobalUnique, global.data(), global.size());
  uint64_t* d_merged = put(k, Slot::kCounts, &merged, 1);
  OpHeader* d_headers = put(k, Slot::kHeaders, headers.data(), headers.size());
  uint64_t* d_sizes = put(k, Slot::kFirstSizes, sizes.data(), sizes.size());
  BoundedVerdict* d_verdict = nullptr;
  EXPECT_TRUE(scratch_for(k, Slot::kOwnerReports, 1, &d_verdict).ok());
  EXPECT_TRUE(k.bounded_verdict(d_gathered, block, static_cast<int>(G), d_headers, d_sizes,
                                d_global, d_merged, sentinel, 8, d_verdict)
                  .ok());
  out.verdict = get(k, d_verdict, 1);
  // The finish, int32 and int64 indices, into buffers of 0x5a.
  const size_t cap = 8;
  std::vector<float> dense((cap + 1) * dim);
  for (size_t i = 0; i < dense.size(); ++i) dense[i] = 0.25f * static_cast<float>(i) - 3.0f;
  const float* d_dense = put(k, Slot::kDense, dense.data(), dense.size());
  const std::vector<unsigned char> fill(cap * 8 + cap * dim * 4 + 16, 0x5a);
  for (zfcDataType_t type : {zfcInt32, zfcInt64}) {
    unsigned char* ids = put(k, Slot::kResultIndices, fill.data(), cap * 8);
    unsigned char* rows = put(k, Slot::kResultRows, fill.data(), cap * dim * 4);
    unsigned char* status = put(k, Slot::kPartial, fill.data(), sizeof(zfcBoundedStatus_t));
    const BoundedOutput where{ids, type, reinterpret_cast<float*>(rows), cap,
                              reinterpret_cast<zfcBoundedStatus_t*>(status)};
    EXPECT_TRUE(k.bounded_finish(d_verdict, d_global, d_dense, dim, where).ok());
    (type == zfcInt32 ? out.ids32 : out.ids64) = get(k, ids, cap * 8);
    out.rows = get(k, rows, cap * dim * 4);
    out.status = get(k, status, sizeof(zfcBoundedStatus_t));
  }
  // A few bytes uploaded (as a kernel's argument on the device) land whole.
  const unsigned char few[13] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13};
  out.kept = get(k, put(k, Slot::kOwnerKeys, few, sizeof few), sizeof few);
  return out;
}

TEST(DeviceStepKernels, TheBoundedKernelsHaveTheHostBits) {
  ZFC_REQUIRE_GPU();
  struct Want {
    BoundedCase c;
    int64_t result, num_unique;
  };
  // 8 distinct keys in a capacity of 8; rank 1's 9 alone exceed it (a lower bound).
  for (const Want want : {Want{BoundedCase::kAgree, zfcSuccess, 8},
                          Want{BoundedCase::kBadIndex, zfcInvalidArgument, 0},
                          Want{BoundedCase::kDisagree, zfcMismatch, 0},
                          Want{BoundedCase::kCut, zfcInvalidArgument, 9},
                          Want{BoundedCase::kNoHeader, zfcMismatch, 0}}) {
    SCOPED_TRACE(testing::Message() << "case " << static_cast<int>(want.c));
    BothBackends<uint32_t> b;
    ASSERT_NE(b.device, nullptr);
    const BoundedKernelsOutput h = run_bounded_kernels(b.host, want.c);
    const BoundedKernelsOutput d = run_bounded_kernels(*b.device, want.c);
    EXPECT_EQ(d.filled, h.filled);
    EXPECT_EQ(d.composed, h.composed);
    EXPECT_EQ(d.verdict, h.verdict);
    EXPECT_EQ(d.ids32, h.ids32);
    EXPECT_EQ(d.ids64, h.ids64);
    EXPECT_EQ(d.rows, h.rows);
    EXPECT_EQ(d.status, h.status);
    EXPECT_EQ(d.kept, h.kept);
    BoundedVerdict v;
    std::memcpy(&v, h.verdict.data(), sizeof v);
    EXPECT_EQ(v.result, want.result);
    EXPECT_EQ(v.num_unique, want.num_unique);
    if (want.result != zfcMismatch) EXPECT_EQ(v.vr, want.c == BoundedCase::kCut ? 1 : 0);
  }
}

}  // namespace
}  // namespace zfc

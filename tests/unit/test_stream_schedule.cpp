// The device scatter's streaming schedule (cuda/stream_runs_schedule.hpp), run on the host:
// 32 threads are the lanes of one warp, sharing one ring, and meet at every sync. Their
// copies land either at issue or only when the lane waits for them -- the two ends of what
// cp.async may do -- so a slot read before its copy was waited for, or overwritten while
// another lane may still read it, gives wrong bits in one of the two. The sums must be the
// host's scatter_add_rows, bit for bit.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <limits>
#include <memory>
#include <mutex>
#include <numeric>
#include <thread>
#include <vector>

#include "host_device/half_bits.hpp"
#include "host_device/sum_order.hpp"
#include "kernels/rows.hpp"
#include "kernels/unique.hpp"
#include "stream_runs_schedule.hpp"
#include "workload/random.hpp"

namespace zfc {
namespace {

using cuda::stream::StreamRing;

// The lanes' __syncwarp: every lane waits until all 32 arrived.
class WarpBarrier {
 public:
  void arrive_and_wait() {
    std::unique_lock<std::mutex> lock(mu_);
    const uint64_t generation = generation_;
    if (++arrived_ == 32) {
      arrived_ = 0;
      ++generation_;
      cv_.notify_all();
      return;
    }
    cv_.wait(lock, [&] { return generation_ != generation; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int arrived_ = 0;
  uint64_t generation_ = 0;
};

enum class Landing { kAtIssue, kAtWait };

// A lane whose 4-byte copies land at issue, or in groups when a wait covers them.
struct HostLane {
  uint32_t id;
  Landing landing;
  WarpBarrier* barrier;
  struct Copy {
    void* dst;
    const void* src;
  };
  std::vector<Copy> open;
  std::deque<std::vector<Copy>> groups;

  void copy4(void* dst, const void* src) {
    if (landing == Landing::kAtIssue) {
      std::memcpy(dst, src, 4);
    } else {
      open.push_back({dst, src});
    }
  }
  void commit() {
    groups.push_back(std::move(open));
    open.clear();
  }
  template <uint32_t kPending>
  void wait_prior() {
    while (groups.size() > kPending) {
      for (const Copy& c : groups.front()) std::memcpy(c.dst, c.src, 4);
      groups.pop_front();
    }
  }
  void sync() { barrier->arrive_and_wait(); }
};

// The input numbers stably sorted by v[i]: the device scatter's radix sort of (position,
// input number) when v is the positions, the order the device's unique keeps when v is the
// keys.
template <class T>
std::vector<uint32_t> stable_order(const std::vector<T>& v) {
  std::vector<uint32_t> order(v.size());
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t a, uint32_t b) { return v[a] < v[b]; });
  return order;
}

// What the device's scatter does once its rows are grouped by `order` (its own sort of the
// positions, or the unique's order), with the host's lanes: the targets gathered in that
// order, the chunks' starts at cuts, every (chunk, slice) item in turn on one warp that
// reuses its ring, then the fold of the runs' later blocks.
template <int kKind>
void stream_on_host(const void* rows, zfcDataType_t type, const std::vector<int32_t>& pos,
                    const std::vector<uint32_t>& order, size_t dim, float* dense,
                    bool accumulate, Landing landing) {
  namespace st = cuda::stream;
  const uint32_t n = static_cast<uint32_t>(pos.size());
  std::vector<uint32_t> target(n);
  for (uint32_t i = 0; i < n; ++i) target[i] = static_cast<uint32_t>(pos[order[i]]);
  const uint32_t chunks = st::stream_chunks(n);
  std::vector<uint32_t> starts(chunks + 1), folds(chunks);
  for (uint32_t k = 0; k <= chunks; ++k) {
    const st::ChunkStart c = st::chunk_start_and_folds(st::SerialWarp{}, target.data(), n, k);
    starts[k] = c.start;
    if (k < chunks) folds[k] = c.folds;
  }
  // NaN in every partial row: a fold that reads a partial no item wrote poisons the sum.
  std::vector<float> partials(static_cast<size_t>(chunks) * dim,
                              std::numeric_limits<float>::quiet_NaN());
  const size_t row_bytes = dim * (type == zfcFloat32 ? 4 : 2);
  const uint32_t slices =
      static_cast<uint32_t>((row_bytes + st::kSliceBytes - 1) / st::kSliceBytes);

  auto ring = std::make_unique<StreamRing>();
  // A NaN in every row word: a value read before its copy landed poisons the sum. Indices
  // read too early are input row 0 and target row 0: wrong sums, not a crash.
  std::fill_n(&ring->rows[0][0][0], sizeof ring->rows / 4, 0x7fbadbadu);
  std::fill_n(&ring->order[0][0], sizeof ring->order / 4, 0u);
  std::fill_n(&ring->target[0][0], sizeof ring->target / 4, 0u);
  WarpBarrier barrier;
  std::vector<std::thread> lanes;
  for (uint32_t id = 0; id < 32; ++id) {
    lanes.emplace_back([&, id] {
      HostLane lane{id, landing, &barrier, {}, {}};
      for (uint32_t k = 0; k < chunks; ++k) {
        for (uint32_t s = 0; s < slices; ++s) {
          const st::StreamItem it =
              st::make_item<kKind>(rows, row_bytes, target.data(), order.data(), n,
                                   starts.data(), k, s, id, dim, dense, partials.data(),
                                   accumulate);
          if (it.begin < it.end) st::stream_item<kKind>(lane, *ring, it);
        }
      }
    });
  }
  for (std::thread& t : lanes) t.join();
  for (uint32_t k = 0; k < chunks; ++k) {
    for (size_t col = 0; col < dim; ++col) {
      st::fold_partials(target.data(), starts.data(), folds.data(), partials.data(), dim, k, col,
                        dense);
    }
  }
}

void stream_any(const void* rows, zfcDataType_t type, const std::vector<int32_t>& pos,
                const std::vector<uint32_t>& order, size_t dim, float* dense, bool accumulate,
                Landing landing) {
  if (type == zfcFloat32) {
    stream_on_host<0>(rows, type, pos, order, dim, dense, accumulate, landing);
  } else if (type == zfcFloat16) {
    stream_on_host<1>(rows, type, pos, order, dim, dense, accumulate, landing);
  } else {
    stream_on_host<2>(rows, type, pos, order, dim, dense, accumulate, landing);
  }
}

// Positions with runs longer than the ring and than a sum block: target 7 (three rows in
// five: several blocks, its run starting inside a chunk) and target 250 (one row in five:
// two blocks from n = 5124), Zipf-distributed others, and a run ending exactly at a batch
// boundary when n is a multiple of 32.
std::vector<int32_t> long_run_positions(size_t n, uint32_t m, uint64_t seed) {
  workload::SplitMix64 rng(seed);
  std::vector<int32_t> pos(n);
  for (size_t i = 0; i < n; ++i) {
    pos[i] = (i % 5 < 3) ? 7 : i % 5 == 3 ? 250 : static_cast<int32_t>(rng.next() % m);
  }
  return pos;
}

// What the device's scatter into zeroed rows does besides the sums: a flag for every row a
// position names, set by the chunk-start warps from the grouped targets (stream::
// mark_run_starts, each chunk's 32 lanes in turn), then zeros in the others by the device's
// items (stream::zero_item), each item's 32 lanes in turn, each voting with the warp's 32
// lanes evaluated in turn.
void zero_rows_without_input(const std::vector<int32_t>& pos, size_t dim,
                             std::vector<float>* dense) {
  namespace st = cuda::stream;
  const uint32_t m = static_cast<uint32_t>(dense->size() / dim);
  const uint32_t n = static_cast<uint32_t>(pos.size());
  std::vector<uint32_t> target(pos.begin(), pos.end());
  std::sort(target.begin(), target.end());
  std::vector<uint32_t> has_input(m, 0);
  for (uint32_t k = 0; k <= st::stream_chunks(n); ++k) {
    for (uint32_t lane = 0; lane < 32; ++lane) {
      st::mark_run_starts(target.data(), n, k, lane, has_input.data());
    }
  }
  for (uint64_t item = 0; item < st::zero_items(m, dim); ++item) {
    for (uint32_t lane = 0; lane < 32; ++lane) {
      st::zero_item(st::SerialWarp{}, has_input.data(), m, dim, dense->data(), item, lane);
    }
  }
}

// The marks the chunk-start warps leave: exactly the targets present, over sorted targets
// with runs shorter than a warp, across chunk ends and many chunks long.
TEST(StreamSchedule, MarksAreExactlyTheTargetsPresent) {
  namespace st = cuda::stream;
  workload::SplitMix64 rng(17);
  for (uint32_t n : {1u, 31u, 1024u, 1025u, 5000u, 70000u}) {
    const uint32_t m = 3000;
    std::vector<uint32_t> target(n);
    for (uint32_t& t : target) {
      t = rng.next() % 4 == 0 ? 7u : static_cast<uint32_t>(rng.next() % (n < 100 ? 40 : m));
    }
    std::sort(target.begin(), target.end());
    std::vector<uint32_t> want(m, 0), got(m, 0);
    for (uint32_t t : target) want[t] = 1;
    for (uint32_t k = 0; k <= st::stream_chunks(n); ++k) {
      for (uint32_t lane = 0; lane < 32; ++lane) {
        st::mark_run_starts(target.data(), n, k, lane, got.data());
      }
    }
    ASSERT_EQ(got, want) << "n " << n;
  }
}

TEST(StreamSchedule, SumsHaveTheHostBitsWhereverCopiesLand) {
  workload::SplitMix64 rng(21);
  struct Case {
    zfcDataType_t type;
    size_t dim;
  };
  // Widths that fill whole 128-byte slices and ones that leave lanes of the last idle.
  const Case cases[] = {{zfcFloat32, 1},  {zfcFloat32, 33},   {zfcFloat32, 130},
                        {zfcFloat16, 2},  {zfcFloat16, 66},   {zfcBFloat16, 34},
                        {zfcBFloat16, 130}};
  for (size_t n : {1, 31, 64, 5000, 7000}) {
    const uint32_t m = 300;
    const std::vector<int32_t> pos = long_run_positions(n, m, 5 + n);
    for (const Case& c : cases) {
      std::vector<float> values(n * c.dim);
      for (float& f : values) f = static_cast<float>((rng.uniform() * 2 - 1) * 1e3);
      std::vector<uint16_t> half(values.size());
      for (size_t i = 0; i < values.size(); ++i) {
        half[i] = c.type == zfcFloat16 ? kernels::f32_to_f16(values[i])
                                       : kernels::f32_to_bf16(values[i]);
      }
      const void* rows = c.type == zfcFloat32 ? static_cast<const void*>(values.data())
                                              : static_cast<const void*>(half.data());
      std::vector<float> start(m * c.dim);
      for (float& f : start) f = static_cast<float>(rng.uniform() * 10 - 5);
      for (bool accumulate : {false, true}) {
        std::vector<float> want(m * c.dim, 0.0f);
        if (accumulate) want = start;
        kernels::scatter_add_rows(rows, c.type, pos.data(), n, c.dim, want.data());
        for (Landing landing : {Landing::kAtIssue, Landing::kAtWait}) {
          // Into zeroed rows the device zeroes only rows without input and leaves the others
          // to the sums: NaN there shows a column the sums read or never write.
          std::vector<float> got(m * c.dim, std::numeric_limits<float>::quiet_NaN());
          if (accumulate) got = start;
          stream_any(rows, c.type, pos, stable_order(pos), c.dim, got.data(), accumulate,
                     landing);
          if (!accumulate) zero_rows_without_input(pos, c.dim, &got);
          for (size_t i = 0; i < got.size(); ++i) {
            ASSERT_EQ(kernels::f32_bits(got[i]), kernels::f32_bits(want[i]))
                << "type " << c.type << " dim " << c.dim << " n " << n << " accumulate "
                << accumulate << " landing " << static_cast<int>(landing) << " at " << i;
          }
        }
      }
    }
  }
}

// A step's scatter takes the order its local unique sorted the tokens in (keys, stably)
// instead of sorting the positions: for every shape of positions a step hands it -- the
// local positions, their places in a global set, and those clamped to a capacity, whose
// spare row holds every key past it -- the sums are the host's bits, the spare row's aside.
TEST(StreamSchedule, TheUniquesOrderGroupsTheScatterAsItsOwnSortWould) {
  workload::SplitMix64 rng(23);
  const size_t n = 6000, dim = 34;
  // Key 3 takes half the tokens (three sum blocks), the others spread over 400 keys.
  std::vector<uint32_t> keys(n);
  for (size_t i = 0; i < n; ++i) {
    keys[i] = i % 2 == 0 ? 3u : static_cast<uint32_t>(rng.next() % 400);
  }
  std::vector<uint32_t> uniq(n);
  std::vector<int32_t> inverse(n);
  std::vector<char> scratch(kernels::unique_scratch_bytes<uint32_t>(n, 400, true));
  const size_t u = kernels::unique_with_inverse(keys.data(), n, 400, uniq.data(), inverse.data(),
                                                scratch.data());
  const std::vector<uint32_t> by_key = stable_order(keys);
  std::vector<float> values(n * dim);
  for (float& f : values) f = static_cast<float>((rng.uniform() * 2 - 1) * 1e3);
  std::vector<uint16_t> half(values.size());
  for (size_t i = 0; i < values.size(); ++i) half[i] = kernels::f32_to_bf16(values[i]);

  const int32_t cap = static_cast<int32_t>(u / 2);  // the clamp's spare row
  for (int shape = 0; shape < 3; ++shape) {
    std::vector<int32_t> pos(n);
    for (size_t i = 0; i < n; ++i) {
      pos[i] = shape == 0   ? inverse[i]
               : shape == 1 ? 3 * inverse[i] + 1
                            : std::min(inverse[i], cap);
    }
    const size_t m = shape == 0 ? u : shape == 1 ? 3 * u + 2 : static_cast<size_t>(cap) + 1;
    for (zfcDataType_t type : {zfcFloat32, zfcBFloat16}) {
      const void* rows = type == zfcFloat32 ? static_cast<const void*>(values.data())
                                            : static_cast<const void*>(half.data());
      std::vector<float> want(m * dim, 0.0f);
      kernels::scatter_add_rows(rows, type, pos.data(), n, dim, want.data());
      std::vector<float> got(m * dim, std::numeric_limits<float>::quiet_NaN());
      stream_any(rows, type, pos, by_key, dim, got.data(), false, Landing::kAtWait);
      zero_rows_without_input(pos, dim, &got);
      // The spare row's rows come key by key, not in input order: only its sum differs.
      const size_t checked = shape == 2 ? static_cast<size_t>(cap) * dim : got.size();
      for (size_t i = 0; i < checked; ++i) {
        ASSERT_EQ(kernels::f32_bits(got[i]), kernels::f32_bits(want[i]))
            << "shape " << shape << " type " << type << " at " << i;
      }
    }
  }
}

// The zeroing's items: every column of a row without input, at widths of one tile, exactly
// one, one and a bit and several, and nothing of a row with input; rows in one group of 32
// and in several, the last group partly past m.
TEST(StreamSchedule, ZerosCoverRowsWithoutInputAndNothingElse) {
  namespace st = cuda::stream;
  std::vector<uint32_t> few = {1, 0, 0, 1, 0}, many(70);
  for (size_t i = 0; i < many.size(); ++i) many[i] = (i % 3 == 0 || i == 69) ? 1 : 0;
  many[31] = many[32] = 0;  // either side of a group boundary
  for (const std::vector<uint32_t>& has_input : {few, many}) {
    const uint32_t m = static_cast<uint32_t>(has_input.size());
    for (size_t dim : {1, 33, 1024, 1025, 2500}) {
      EXPECT_EQ(st::zero_items(m, dim), (m + 31) / 32 * ((dim + 1023) / 1024));
      std::vector<float> dense(m * dim, std::numeric_limits<float>::quiet_NaN());
      for (uint64_t item = 0; item < st::zero_items(m, dim); ++item) {
        for (uint32_t lane = 0; lane < 32; ++lane) {
          st::zero_item(st::SerialWarp{}, has_input.data(), m, dim, dense.data(), item, lane);
        }
      }
      for (size_t i = 0; i < dense.size(); ++i) {
        if (has_input[i / dim] != 0) {
          ASSERT_TRUE(std::isnan(dense[i])) << "m " << m << " dim " << dim << " at " << i;
        } else {
          ASSERT_EQ(kernels::f32_bits(dense[i]), 0u) << "m " << m << " dim " << dim << " at " << i;
        }
      }
    }
  }
}

// A warp that counts its votes.
struct CountingWarp {
  int* rounds;
  template <class F>
  uint32_t ballot(F f) const {
    ++*rounds;
    return cuda::stream::SerialWarp{}.ballot(f);
  }
};

// The warp's 32-ary search against the known answer: empty ranges, ranges shorter than a
// warp, lengths about powers of 32, the answer at either end and inside, and a range reaching
// 2^32 - 1 (probes past the end must not wrap). `before` is a threshold on the index itself,
// so no memory is needed; a counter checks the rounds: at most ceil(log32(length)) + 1.
TEST(StreamSchedule, WarpSearchFindsThePartitionPoint) {
  namespace st = cuda::stream;
  workload::SplitMix64 rng(5);
  std::vector<std::pair<uint32_t, uint32_t>> ranges = {
      {0, 0}, {7, 7}, {0, 1}, {3, 4}, {0, 31}, {0, 32}, {0, 33}, {5, 1029},
      {0, 1024}, {0, 1025}, {100, 32768 + 100}, {0, 1000000}, {0, 0xffffffffu},
      {0xfffffff0u, 0xffffffffu}, {1u << 31, 0xffffffffu}};
  for (int i = 0; i < 40; ++i) {
    const uint32_t lo = static_cast<uint32_t>(rng.next() % 5000000);
    ranges.push_back({lo, lo + static_cast<uint32_t>(rng.next() % 3000000)});
  }
  for (const auto& range : ranges) {
    // Named copies: a lambda may not capture structured bindings before C++20.
    const uint32_t lo = range.first, hi = range.second;
    const uint64_t len = hi - lo;
    int max_rounds = 1;
    for (uint64_t cover = 1; cover < len; cover *= 32) ++max_rounds;
    const uint64_t one = len > 0 ? 1 : 0;
    std::vector<uint64_t> cuts = {lo, hi, lo + len / 2, lo + one, hi - one};
    for (int i = 0; i < 8; ++i) cuts.push_back(lo + (len == 0 ? 0 : rng.next() % (len + 1)));
    for (uint64_t cut : cuts) {
      // before(i) holds below cut: the partition point is cut.
      int rounds = 0;
      const uint32_t got = st::warp_partition_point(
          CountingWarp{&rounds}, lo, hi, [&](uint32_t i) {
            EXPECT_GE(i, lo);
            EXPECT_LT(i, hi);
            return i < cut;
          });
      ASSERT_EQ(got, cut) << "range [" << lo << ", " << hi << ")";
      EXPECT_LE(rounds, max_rounds) << "range [" << lo << ", " << hi << ") cut " << cut;
    }
  }
}

// The chunk starts the warps find, against cuts worked out from their definition with
// std::lower_bound and std::upper_bound: random sorted targets with runs from one row to
// forty sum blocks, some starting at a nominal chunk start and some ending at the last row.
TEST(StreamSchedule, WarpChunkStartsMatchTheirDefinition) {
  namespace st = cuda::stream;
  workload::SplitMix64 rng(11);
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<uint32_t> target;
    uint32_t t = static_cast<uint32_t>(rng.next() % 3);
    while (target.size() < 60000) {
      const uint64_t pick = rng.next() % 10;
      size_t len = pick < 6 ? 1 + rng.next() % 4
                   : pick < 9 ? 1 + rng.next() % 3000
                              : 1 + rng.next() % (40 * kSumBlockRows);
      if (rng.next() % 8 == 0) len = st::kStreamChunk - target.size() % st::kStreamChunk;
      target.insert(target.end(), len, t);
      t += 1 + static_cast<uint32_t>(rng.next() % 3);
    }
    const uint32_t n = static_cast<uint32_t>(target.size());
    const uint32_t chunks = st::stream_chunks(n);
    for (uint32_t k = 0; k <= chunks; ++k) {
      const uint64_t nominal = uint64_t{k} * st::kStreamChunk;
      const uint32_t at = nominal < n ? static_cast<uint32_t>(nominal) : n;
      st::ChunkStart want{at, 0};
      if (at != 0 && at != n && target[at - 1] == target[at]) {
        const uint32_t run = static_cast<uint32_t>(
            std::lower_bound(target.begin(), target.end(), target[at]) - target.begin());
        const uint32_t end = static_cast<uint32_t>(
            std::upper_bound(target.begin(), target.end(), target[at]) - target.begin());
        const uint32_t block = (at - run + kSumBlockRows - 1) / kSumBlockRows;
        const uint64_t next = run + uint64_t{block} * kSumBlockRows;
        want.start = next >= end ? end : static_cast<uint32_t>(next);
        if (next < end && block == 1) {
          want.folds = (end - run + kSumBlockRows - 1) / kSumBlockRows - 1;
        }
      }
      const st::ChunkStart got = st::chunk_start_and_folds(st::SerialWarp{}, target.data(), n, k);
      ASSERT_EQ(got.start, want.start) << "trial " << trial << " chunk " << k;
      ASSERT_EQ(got.folds, want.folds) << "trial " << trial << " chunk " << k;
    }
  }
}

TEST(StreamSchedule, ChunksStartAtRunStartsAndBlockStarts) {
  namespace st = cuda::stream;
  static_assert(st::kStreamChunk == 1024 && kSumBlockRows == 1024, "the cases below assume it");
  // Sorted targets: a run of 3000 from 0 (blocks at 0, 1024, 2048), runs of one, a run of 100
  // that starts exactly at a nominal start, then a run of 2600 starting inside a chunk, at
  // 4196 (blocks at 4196, 5220, 6244).
  std::vector<uint32_t> target;
  target.insert(target.end(), 3000, 4u);
  for (uint32_t t = 5; t < 5 + 1096; ++t) target.push_back(t);  // up to 4096
  target.insert(target.end(), 100, 9999u);
  target.insert(target.end(), 2600, 10000u);
  const uint32_t n = static_cast<uint32_t>(target.size());
  const uint32_t chunks = st::stream_chunks(n);
  ASSERT_EQ(chunks, 7u);
  std::vector<uint32_t> starts;
  for (uint32_t k = 0; k <= chunks; ++k) starts.push_back(st::chunk_start(target.data(), n, k));
  // 5120 lies in the run of 10000, whose next block starts at 5220; 6144 the same, at 6244.
  EXPECT_EQ(starts, (std::vector<uint32_t>{0, 1024, 2048, 3072, 4096, 5220, 6244, n}));
  std::vector<bool> continues;
  std::vector<uint32_t> folds;
  for (uint32_t k = 0; k < chunks; ++k) {
    continues.push_back(st::chunk_continues(target.data(), n, starts.data(), k));
    folds.push_back(st::chunk_start_and_folds(st::SerialWarp{}, target.data(), n, k).folds);
  }
  EXPECT_EQ(continues, (std::vector<bool>{false, true, true, false, false, true, true}));
  // The fold of each run with later blocks sits with the chunk of its second block: the run
  // of 4 (blocks 2 and 3 in chunks 1 and 2), the run of 10000 (chunks 5 and 6).
  EXPECT_EQ(folds, (std::vector<uint32_t>{0, 2, 0, 0, 0, 2, 0}));
}

// The register kernel's lanes (stream_wide_rows.cuh) take 8 or 16 bytes of a row: over every
// slice, the lanes whose bytes lie in the row (it.mine) hold each column exactly once, and a
// lane's RunSum starts from and writes back exactly its own columns of the target row (and
// of the chunk's partial row for a later block). Rows whose bytes are a multiple of the
// lane's, as lane_words in rows.cu requires.
template <int kKind, uint32_t kLaneBytes>
void check_wide_lanes(size_t dim) {
  namespace st = cuda::stream;
  constexpr uint32_t kWords = kLaneBytes / 4;
  const size_t row_bytes = dim * (kKind == 0 ? 4 : 2);
  ASSERT_EQ(row_bytes % kLaneBytes, 0u) << dim;
  const size_t slice_bytes = 32 * kLaneBytes;
  const uint32_t slices = static_cast<uint32_t>((row_bytes + slice_bytes - 1) / slice_bytes);
  // Chunk 1 holds two sorted rows of target 1, continuing its run from chunk 0.
  const std::vector<uint32_t> target = {1, 1, 1}, order = {0, 1, 2};
  const std::vector<uint32_t> starts = {0, 1, 3};
  const uint32_t m = 3;
  // Room for the column of every lane, those past the row included (make_item points each
  // lane's out and partial at its column, used only where it.mine).
  const size_t room = slices * slice_bytes / (kKind == 0 ? 4 : 2);
  std::vector<float> dense(m * dim + room), partials(dim + room, -1.0f);
  for (size_t i = 0; i < dense.size(); ++i) dense[i] = static_cast<float>(i);
  std::vector<int> covered(dim, 0);
  const std::vector<char> rows(3 * row_bytes + slice_bytes);  // room past the last row's slice
  for (uint32_t s = 0; s < slices; ++s) {
    for (uint32_t lane = 0; lane < 32; ++lane) {
      const st::StreamItem it = st::make_item<kKind, kLaneBytes>(
          rows.data(), row_bytes, target.data(), order.data(), 3, starts.data(), 1, s, lane,
          dim, dense.data(), partials.data(), /*accumulate=*/true);
      const size_t col = static_cast<size_t>(it.out - dense.data());
      EXPECT_EQ(static_cast<size_t>(it.lane_bytes - rows.data()),
                s * slice_bytes + lane * kLaneBytes);
      EXPECT_EQ(it.mine, col < dim) << "slice " << s << " lane " << lane;
      if (!it.mine) continue;
      EXPECT_TRUE(it.continues);
      st::RunSum<kKind, kWords> sum;
      ASSERT_EQ(sum.kCols, kWords * (kKind == 0 ? 1 : 2));
      // A later block of target 1 (from +0, bound for the partial row), then target 2 (from
      // its row's own values, as accumulating), each flushed with its columns marked.
      sum.start(it, 1);
      for (uint32_t c = 0; c < sum.kCols; ++c) {
        ASSERT_LT(col + c, dim);
        EXPECT_EQ(sum.acc[c], 0.0f);
        sum.acc[c] = 1000.0f + static_cast<float>(col + c);
        ++covered[col + c];
      }
      sum.start(it, 2);
      for (uint32_t c = 0; c < sum.kCols; ++c) {
        EXPECT_EQ(sum.acc[c], dense[2 * dim + col + c]);
        sum.acc[c] = -static_cast<float>(col + c);
      }
      sum.flush(it);
    }
  }
  for (size_t c = 0; c < dim; ++c) {
    ASSERT_EQ(covered[c], 1) << "column " << c << " dim " << dim;
    EXPECT_EQ(partials[c], -1.0f);  // chunk 0's partial row untouched
    EXPECT_EQ(partials[dim + c], 1000.0f + static_cast<float>(c));
    EXPECT_EQ(dense[2 * dim + c], -static_cast<float>(c));
    EXPECT_EQ(dense[1 * dim + c], static_cast<float>(dim + c));  // target 1's row untouched
  }
}

TEST(StreamSchedule, WideLanesHoldEachColumnOnce) {
  // Whole slices, and last slices with idle lanes.
  for (size_t dim : {2, 34, 128, 130, 264}) check_wide_lanes<0, 8>(dim);
  for (size_t dim : {4, 132, 256, 264}) check_wide_lanes<0, 16>(dim);
  for (size_t dim : {4, 132, 264}) check_wide_lanes<1, 8>(dim);
  for (size_t dim : {8, 264, 512, 520}) check_wide_lanes<2, 16>(dim);
}

// Each target's rows in input order, the first block onto the start value, every later block
// from +0, then the later blocks' sums in order: written out plainly, against the kernel.
TEST(ScatterOrder, LongRunsAreSummedInBlocksShortOnesInInputOrder) {
  workload::SplitMix64 rng(8);
  const size_t dim = 3;
  for (size_t n : {1000, 1025, 2100, 5000}) {
    const std::vector<int32_t> pos = long_run_positions(n, 40, 3 + n);
    std::vector<float> rows(n * dim);
    for (float& f : rows) f = static_cast<float>((rng.uniform() * 2 - 1) * 1e4);
    std::vector<float> start(300 * dim);
    for (float& f : start) f = static_cast<float>(rng.uniform());
    std::vector<float> want = start, plain = start;
    for (int32_t t = 0; t < 300; ++t) {
      for (size_t d = 0; d < dim; ++d) {
        float first = start[t * dim + d], block = 0.0f;
        size_t seen = 0;
        for (size_t i = 0; i < n; ++i) {
          if (pos[i] != t) continue;
          const float v = rows[i * dim + d];
          plain[t * dim + d] += v;
          if (seen < kSumBlockRows) {
            first += v;
          } else {
            if (seen % kSumBlockRows == 0 && seen > kSumBlockRows) first += block;
            if (seen % kSumBlockRows == 0) block = 0.0f;
            block += v;
          }
          ++seen;
        }
        want[t * dim + d] = seen > kSumBlockRows ? first + block : first;
      }
    }
    std::vector<float> got = start;
    kernels::scatter_add_rows(rows.data(), zfcFloat32, pos.data(), n, dim, got.data());
    size_t differ_from_plain = 0;
    for (size_t i = 0; i < got.size(); ++i) {
      ASSERT_EQ(kernels::f32_bits(got[i]), kernels::f32_bits(want[i])) << "n " << n << " at " << i;
      differ_from_plain += kernels::f32_bits(got[i]) != kernels::f32_bits(plain[i]);
    }
    // Target 7 has 3n/5 rows: a second block from n = 1707 on, and none before.
    if (n < 1707) {
      EXPECT_EQ(differ_from_plain, 0u) << n;
    } else {
      EXPECT_GT(differ_from_plain, 0u) << "the cases do not tell the orders apart at n " << n;
    }
  }
}

}  // namespace
}  // namespace zfc

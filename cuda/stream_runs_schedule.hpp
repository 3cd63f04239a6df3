// The schedule of the scatter's streaming kernel (stream_runs.cuh), written once over a
// `Lane`: one lane of a warp, which copies 4 bytes asynchronously (copy4), closes a group of
// copies (commit), waits for all but its newest N groups (wait_prior<N>) and meets the
// warp's other lanes (sync). On the device a Lane is cp.async and __syncwarp; a host test runs the
// same code with 32 threads whose copies land at issue or only at the wait, the two ends of
// what the hardware may do, so the ring's schedule is checked where no GPU is.
//
// Every target row is summed in the order of host_device/sum_order.hpp: input order, in
// blocks of kSumBlockRows, later blocks summed on their own and then added in block order.
// A Zipf head id's run -- about an eighth of 10^6 tokens -- is thus a hundred blocks or more,
// each a work item of its own, instead of one serial chain per column (the 0.9.0 kernel ran
// that chain at a few SMs' latency-bound pace: 0.12 of copy bandwidth on an H200). Each warp
// owns a slice of every row of a chunk: in the ring, 128 bytes (32 fp32 or 64 16-bit
// columns) with kBatchesInFlight * 32 rows of copies in flight; in the register kernel
// (stream_wide_rows.cuh), 256 or 512 bytes.
//
// Work items: the sorted rows are cut into chunks of kStreamChunk, each moved forward to the
// next cut -- a run start, or a block start inside a run -- so no block is split. A chunk
// holds at most one block of any run (kStreamChunk == kSumBlockRows), and only its first may
// be a later block: that block's sum goes to the chunk's own partial row, and a run's partial
// rows are added onto its target in block order once every item is done (fold_partials; the
// device stages them in shared memory, stream_runs.cuh). An item is (chunk, slice), slices
// fastest, so the slices of one chunk land on different SMs.
//
// A scatter into zeroed rows zeroes the rows without input apart (zero_item, at the end).
#pragma once

#include <cstddef>
#include <cstdint>

#include "host_device/half_bits.hpp"
#include "host_device/sum_order.hpp"

namespace zfc {
namespace cuda {
namespace stream {

constexpr uint32_t kStreamChunk = 1024;   // sorted rows per item, before moving to a cut
constexpr uint32_t kBatchRows = 32;       // one per lane: a lane copies one row's index
constexpr uint32_t kBatchesInFlight = 8;  // 256 rows' copies in flight per warp
// Index batches are copied two ring lengths ahead of their use (see stream_item), so their
// ring needs more than 2 * kBatchesInFlight slots; a power of two keeps `%` cheap.
constexpr uint32_t kIndexSlots = 32;
constexpr uint32_t kSliceBytes = 128;     // 4 bytes per lane
constexpr uint32_t kNoTarget = 0xffffffffu;

static_assert(kIndexSlots > 2 * kBatchesInFlight, "index slots are reused too early");
// A longer chunk could hold two blocks of one run, or a later block not at its start; a
// shorter one could be empty in the middle of a run and still count as continuing it.
static_assert(kStreamChunk == kSumBlockRows, "chunks must be exactly one sum block long");

// 40 KiB: under the 48 KiB of static shared memory a block may have.
struct StreamRing {
  uint32_t rows[kBatchesInFlight][kBatchRows][32];  // [batch][row][lane]: 4 bytes per lane
  uint32_t order[kIndexSlots][kBatchRows];          // input number of each sorted row
  uint32_t target[kIndexSlots][kBatchRows];         // its target row
};

ZFC_HOST_DEVICE inline uint32_t stream_chunks(uint32_t n) {
  return (n + kStreamChunk - 1) / kStreamChunk;
}

// Where chunk k starts, and how many later blocks of its run it folds.
struct ChunkStart {
  uint32_t start;
  // For the chunk that starts a run's second block (the run's first chunk that continues
  // it), the number of the run's later blocks: chunks k .. k + folds - 1 hold them, one
  // each, since every later block's start is a cut and nominal starts are kStreamChunk
  // apart. Else 0. So the fold knows its chain's length, instead of testing chunk after
  // chunk -- two dependent loads each, along a Zipf head id's hundred chunks or more.
  uint32_t folds;
};

// ---- the warp's vote and search ---------------------------------------------------------
// A `Warp` votes: ballot(f) is the mask of the lanes l for which f(l) holds. On the device
// (stream_runs.cuh) each lane evaluates f for itself and __ballot_sync gathers the answers;
// SerialWarp evaluates the 32 lanes one after another on one thread, for the host tests. Every
// lane of a warp must make the same ballots.
struct SerialWarp {
  template <class F>
  ZFC_HOST_DEVICE uint32_t ballot(F f) const {
    uint32_t mask = 0;
    for (uint32_t l = 0; l < 32; ++l) {
      if (f(l)) mask |= 1u << l;
    }
    return mask;
  }
};

ZFC_HOST_DEVICE inline uint32_t set_bits(uint32_t mask) {
#if defined(__CUDA_ARCH__)
  return static_cast<uint32_t>(__popc(mask));
#else
  return static_cast<uint32_t>(__builtin_popcount(mask));
#endif
}

ZFC_HOST_DEVICE inline uint32_t lowest_bit(uint32_t mask) {  // mask != 0
#if defined(__CUDA_ARCH__)
  return static_cast<uint32_t>(__ffs(static_cast<int>(mask)) - 1);
#else
  return static_cast<uint32_t>(__builtin_ctz(mask));
#endif
}

// The first i in [lo, hi) for which before(i) fails, or hi; before must hold on a prefix of
// [lo, hi) and fail on the rest (sorted targets compared with one value). Each round the
// lanes probe the last index of 32 equal segments at once and the vote names the segment
// holding the first failure, so a range shrinks 32-fold a round: four rounds of loads over
// 10^6 rows, where a binary search waits for twenty loads one after another. On an H200 the
// chunk starts found by two binary searches per chunk took 20.6 us at 10^6 x 512, the
// largest part of the scatter's time outside its streaming kernel (docs/benchmarks/gpu.md).
template <class Warp, class Before>
ZFC_HOST_DEVICE uint32_t warp_partition_point(const Warp& warp, uint32_t lo, uint32_t hi,
                                              Before before) {
  while (lo < hi) {
    const uint32_t step = (hi - lo - 1) / 32 + 1;  // 32 segments of step indices cover it
    // Lane l probes segment l's last index; the lanes that pass are a prefix.
    const uint32_t passed = set_bits(warp.ballot([&](uint32_t l) {
      const uint64_t probe = uint64_t{lo} + uint64_t{l + 1} * step - 1;
      return probe < hi && before(static_cast<uint32_t>(probe));
    }));
    // The first failure is in segment `passed`: after the last passing probe, at or before
    // its own probe (which failed, or lies at or past hi). All 32 passed: it is hi.
    const uint64_t first = uint64_t{lo} + uint64_t{passed} * step;
    const uint64_t last = first + step - 1;
    lo = first < hi ? static_cast<uint32_t>(first) : hi;
    hi = last < hi ? static_cast<uint32_t>(last) : hi;
  }
  return lo;
}

// The first cut at or after k * kStreamChunk over sorted targets (n when none): a run start,
// or the start of a later block of a run (its start + j * kSumBlockRows). Cuts are at most
// kSumBlockRows apart, so every chunk but an empty last one holds rows. One warp finds one
// chunk's; every lane gets the answer.
template <class Warp>
ZFC_HOST_DEVICE ChunkStart chunk_start_and_folds(const Warp& warp, const uint32_t* target,
                                                 uint32_t n, uint32_t k) {
  const uint64_t nominal = static_cast<uint64_t>(k) * kStreamChunk;
  const uint32_t at = nominal >= n ? n : static_cast<uint32_t>(nominal);
  if (at == 0 || at == n) return {at, 0};
  const uint32_t t = target[at];
  if (target[at - 1] != t) return {at, 0};
  // Inside t's run: its start, the first index whose target is t; its end, the first index
  // whose target exceeds t...
  const uint32_t run = warp_partition_point(warp, 0, at, [&](uint32_t i) { return target[i] < t; });
  const uint32_t end =
      warp_partition_point(warp, at + 1, n, [&](uint32_t i) { return target[i] <= t; });
  // ...and its next block start, if the run reaches it.
  const uint64_t block = (static_cast<uint64_t>(at - run) + kSumBlockRows - 1) / kSumBlockRows;
  const uint64_t next = run + block * kSumBlockRows;
  if (next >= end) return {end, 0};
  const uint64_t blocks = (static_cast<uint64_t>(end - run) + kSumBlockRows - 1) / kSumBlockRows;
  return {static_cast<uint32_t>(next), block == 1 ? static_cast<uint32_t>(blocks - 1) : 0u};
}

ZFC_HOST_DEVICE inline uint32_t chunk_start(const uint32_t* target, uint32_t n, uint32_t k) {
  return chunk_start_and_folds(SerialWarp{}, target, n, k).start;
}

// Whether chunk k starts inside a run: its first rows are a later block of that run, summed
// into partial row k.
ZFC_HOST_DEVICE inline bool chunk_continues(const uint32_t* target, uint32_t n,
                                            const uint32_t* chunk_starts, uint32_t k) {
  const uint32_t b = chunk_starts[k];
  return b > 0 && b < n && target[b - 1] == target[b];
}

// Column `col` of the run whose second block starts chunk k (nothing for any other chunk,
// whose folds[k] is 0): its partial rows, chunk k's and those of the folds[k] - 1 chunks
// after it, added in block order onto the target row, which holds the first block's sum.
ZFC_HOST_DEVICE inline void fold_partials(const uint32_t* target, const uint32_t* chunk_starts,
                                          const uint32_t* folds, const float* partials,
                                          size_t dim, uint32_t k, size_t col, float* dense) {
  const uint32_t count = folds[k];
  if (count == 0) return;
  float* out = dense + static_cast<size_t>(target[chunk_starts[k]]) * dim + col;
  float acc = *out;
  for (uint32_t j = k; j < k + count; ++j) acc += partials[static_cast<size_t>(j) * dim + col];
  *out = acc;
}

ZFC_HOST_DEVICE inline uint32_t rows_in_batch(uint32_t rows, uint32_t b) {
  const uint32_t left = rows - b * kBatchRows;
  return left < kBatchRows ? left : kBatchRows;
}

// A lane's 4 bytes of a row: one fp32 column (kKind 0) or two fp16 (1) / bf16 (2) columns,
// low half first, converted by the host's code.
template <int kKind>
struct LaneColumns {
  static constexpr uint32_t kCount = kKind == 0 ? 1 : 2;
  ZFC_HOST_DEVICE static void add(float* acc, uint32_t raw) {
    if constexpr (kKind == 0) {
      acc[0] += kernels::f32_from_bits(raw);
    } else if constexpr (kKind == 1) {
      acc[0] += kernels::f16_to_f32(static_cast<uint16_t>(raw & 0xffffu));
      acc[1] += kernels::f16_to_f32(static_cast<uint16_t>(raw >> 16));
    } else {
      acc[0] += kernels::bf16_to_f32(static_cast<uint16_t>(raw & 0xffffu));
      acc[1] += kernels::bf16_to_f32(static_cast<uint16_t>(raw >> 16));
    }
  }
};

// What one lane needs to stream one item: its rows [begin, end) of the sorted order and its
// bytes and columns.
struct StreamItem {
  const char* lane_bytes;  // this lane's first byte of input row 0
  size_t row_bytes;
  const uint32_t* target;  // sorted
  const uint32_t* order;
  uint32_t begin, end;
  float* out;              // this lane's first column of dense row 0
  float* partial;          // this lane's first column of the chunk's partial row
  size_t dim;
  bool mine;               // the lane's columns lie inside the row
  bool accumulate;
  bool continues;          // the first rows are a later block of a run (chunk_continues)
};

// Item (chunk k, slice s) for lane `lane`, over `chunk_starts` (chunks + 1 of them) of n
// sorted rows; `partials` has a row of width dim per chunk. A lane takes kLaneBytes of each
// row (4 for the ring; 8 or 16 for the register kernel, stream_wide_rows.cuh), so a slice is
// 32 * kLaneBytes bytes; the row's bytes are a multiple of kLaneBytes, so a lane's bytes lie
// wholly inside the row or wholly past it.
template <int kKind, uint32_t kLaneBytes = 4>
ZFC_HOST_DEVICE StreamItem make_item(const void* rows, size_t row_bytes, const uint32_t* target,
                                     const uint32_t* order, uint32_t n,
                                     const uint32_t* chunk_starts, uint32_t k, uint32_t s,
                                     uint32_t lane, size_t dim, float* dense, float* partials,
                                     bool accumulate) {
  const size_t byte = static_cast<size_t>(s) * 32 * kLaneBytes + lane * kLaneBytes;
  const size_t col = byte / (4 / LaneColumns<kKind>::kCount);
  StreamItem it;
  it.lane_bytes = static_cast<const char*>(rows) + byte;
  it.row_bytes = row_bytes;
  it.target = target;
  it.order = order;
  it.begin = chunk_starts[k];
  it.end = chunk_starts[k + 1];
  it.out = dense + col;
  it.partial = partials + static_cast<size_t>(k) * dim + col;
  it.dim = dim;
  it.mine = col < dim;
  it.accumulate = accumulate;
  it.continues = chunk_continues(target, n, chunk_starts, k);
  return it;
}

// The copies of batch b's indices (one per lane) into their ring slot.
template <class Lane>
ZFC_HOST_DEVICE void copy_indices(Lane& lane, StreamRing& ring, const StreamItem& it,
                                  uint32_t b, uint32_t batches) {
  if (b >= batches) return;
  const uint32_t j = it.begin + b * kBatchRows + lane.id;
  if (j >= it.end) return;
  lane.copy4(&ring.order[b % kIndexSlots][lane.id], &it.order[j]);
  lane.copy4(&ring.target[b % kIndexSlots][lane.id], &it.target[j]);
}

// The copies of batch b's rows, this lane's 4 bytes of each, into their ring slot. The
// batch's indices must have arrived and be visible to the warp.
template <class Lane>
ZFC_HOST_DEVICE void copy_rows(Lane& lane, StreamRing& ring, const StreamItem& it, uint32_t b,
                               uint32_t batches) {
  if (b >= batches || !it.mine) return;
  const uint32_t rows = rows_in_batch(it.end - it.begin, b);
  const uint32_t* order = ring.order[b % kIndexSlots];
  uint32_t* dst = &ring.rows[b % kBatchesInFlight][0][lane.id];
  for (uint32_t u = 0; u < rows; ++u) {
    lane.copy4(dst + u * 32, it.lane_bytes + static_cast<size_t>(order[u]) * it.row_bytes);
  }
}

// A lane's running sums of its columns: LaneColumns<kKind>::kCount per 4-byte word, kWords
// words.
template <int kKind, uint32_t kWords = 1>
struct RunSum {
  static constexpr uint32_t kCols = LaneColumns<kKind>::kCount * kWords;
  float acc[kCols];
  uint32_t target = kNoTarget;
  bool partial = false;  // the sum is a later block's, bound for the chunk's partial row

  ZFC_HOST_DEVICE void flush(const StreamItem& it) {
    if (target == kNoTarget || !it.mine) return;
    float* out = partial ? it.partial : it.out + static_cast<size_t>(target) * it.dim;
    for (uint32_t c = 0; c < kCols; ++c) out[c] = acc[c];
  }
  // Starts target t's sum: a later block's from +0; a run's first block from +0, or from its
  // row as it is when accumulating (the host's first addend). Only the item's first target
  // can be a later block.
  ZFC_HOST_DEVICE void start(const StreamItem& it, uint32_t t) {
    flush(it);
    partial = target == kNoTarget && it.continues;
    target = t;
    if (!it.mine) return;
    const float* row = it.out + static_cast<size_t>(t) * it.dim;
    for (uint32_t c = 0; c < kCols; ++c) {
      acc[c] = it.accumulate && !partial ? row[c] : 0.0f;
    }
  }
};

// Adds batch t's rows, in order, into the running sums; a change of target ends a run.
template <int kKind, class Lane>
ZFC_HOST_DEVICE void add_batch(Lane& lane, StreamRing& ring, const StreamItem& it, uint32_t t,
                               RunSum<kKind>& sum) {
  const uint32_t rows = rows_in_batch(it.end - it.begin, t);
  const uint32_t* target = ring.target[t % kIndexSlots];
  const uint32_t* value = &ring.rows[t % kBatchesInFlight][0][lane.id];
  if (rows == kBatchRows && target[kBatchRows - 1] == sum.target) {
    // Targets are sorted: the whole batch continues the current run (a hot id's case).
    if (it.mine) {
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
      for (uint32_t u = 0; u < kBatchRows; ++u) LaneColumns<kKind>::add(sum.acc, value[u * 32]);
    }
    return;
  }
  for (uint32_t u = 0; u < rows; ++u) {
    if (target[u] != sum.target) sum.start(it, target[u]);
    if (it.mine) LaneColumns<kKind>::add(sum.acc, value[u * 32]);
  }
}

// One lane streams one item. Copy groups are committed one per step, so waiting for all but
// the newest kBatchesInFlight - 1 groups means: at step t, batch t's rows and batch t +
// kBatchesInFlight's indices have arrived (both were in the group committed kBatchesInFlight
// steps before). Rows are copied and read by the same lane; indices are read by every lane,
// hence the sync after each wait.
template <int kKind, class Lane>
ZFC_HOST_DEVICE void stream_item(Lane& lane, StreamRing& ring, const StreamItem& it) {
  constexpr uint32_t kAhead = kBatchesInFlight;
  const uint32_t batches = (it.end - it.begin + kBatchRows - 1) / kBatchRows;
  for (uint32_t b = 0; b < kAhead; ++b) copy_indices(lane, ring, it, b, batches);
  lane.commit();
  lane.template wait_prior<0>();
  lane.sync();
  for (uint32_t b = 0; b < kAhead; ++b) {
    copy_rows(lane, ring, it, b, batches);
    copy_indices(lane, ring, it, b + kAhead, batches);
    lane.commit();
  }
  RunSum<kKind> sum;
  for (uint32_t t = 0; t < batches; ++t) {
    lane.template wait_prior<kAhead - 1>();
    lane.sync();
    add_batch(lane, ring, it, t, sum);
    // Batch t + kAhead's rows reuse batch t's slot, which this lane alone has just read.
    copy_rows(lane, ring, it, t + kAhead, batches);
    copy_indices(lane, ring, it, t + 2 * kAhead, batches);
    lane.commit();
  }
  sum.flush(it);
  lane.template wait_prior<0>();
  lane.sync();  // every lane is done with the ring before the next item's copies
}

// ---- the zeros of a scatter into zeroed rows ---------------------------------------------
// The sums write every row that has input whole, its first block starting from +0, so only
// the rows without input are zeroed (has_input[t] != 0 marks the others: mark_run_starts).
// An item is a tile of kZeroTile columns of 32 rows, one warp's: the lanes read the 32 rows'
// flags at once, and the warp zeroes the tile of each row without input. Where every row has
// input (a rank's local sums) the zeroing reads m flags, 32 to a warp, and writes nothing;
// tiles spread a wide row over many warps. (One warp per row, reading one flag per warp, took
// 7.7 us at 65 000 rows on an H200: docs/benchmarks/gpu.md.)
constexpr uint32_t kZeroTile = 1024;  // 4 KiB of stores per row of an item

// has_input[t] = 1 for every target t whose run starts among sorted rows [k * kStreamChunk,
// (k + 1) * kStreamChunk), lane `lane`'s rows of them: the warp that finds chunk k's start
// marks these too, so no pass of its own reads the targets again. Every run starts in
// exactly one such range. Each lane loads its rows' targets kMarkBatch at a time before it
// stores any flag.
constexpr uint32_t kMarkBatch = 8;

ZFC_HOST_DEVICE inline void mark_run_starts(const uint32_t* target, uint32_t n, uint32_t k,
                                            uint32_t lane, uint32_t* has_input) {
  const uint64_t first = static_cast<uint64_t>(k) * kStreamChunk;
  if (first >= n) return;
  const uint32_t begin = static_cast<uint32_t>(first);
  const uint32_t end = n - begin > kStreamChunk ? begin + kStreamChunk : n;
  for (uint32_t j0 = begin + lane; j0 < end; j0 += 32 * kMarkBatch) {
    // Unconditional loads (of a row in range either way), so none waits for a branch.
    uint32_t t[kMarkBatch], before[kMarkBatch];
    for (uint32_t i = 0; i < kMarkBatch; ++i) {
      const uint32_t j = j0 + i * 32;
      const uint32_t at = j < end ? j : end - 1;
      t[i] = target[at];
      before[i] = target[at > 0 ? at - 1 : 0];
    }
    for (uint32_t i = 0; i < kMarkBatch; ++i) {
      const uint32_t j = j0 + i * 32;
      if (j < end && (j == 0 || before[i] != t[i])) has_input[t[i]] = 1u;
    }
  }
}

ZFC_HOST_DEVICE inline uint64_t zero_items(uint32_t m, size_t dim) {
  return (static_cast<uint64_t>(m) + 31) / 32 * ((dim + kZeroTile - 1) / kZeroTile);
}

// Lane `lane`'s zeros of item `item` of dense (m x dim): its columns of the item's tile, in
// each of the item's rows without input.
template <class Warp>
ZFC_HOST_DEVICE void zero_item(const Warp& warp, const uint32_t* has_input, uint32_t m,
                               size_t dim, float* dense, uint64_t item, uint32_t lane) {
  const uint64_t tiles = (dim + kZeroTile - 1) / kZeroTile;
  const uint64_t group = tiles == 1 ? item : item / tiles;
  const uint64_t row0 = group * 32;
  uint32_t empty = warp.ballot(
      [&](uint32_t l) { return row0 + l < m && has_input[row0 + l] == 0; });
  const size_t begin = static_cast<size_t>(item - group * tiles) * kZeroTile;
  const size_t end = begin + kZeroTile < dim ? begin + kZeroTile : dim;
  while (empty != 0) {
    float* out = dense + (row0 + lowest_bit(empty)) * dim;
    empty &= empty - 1;
    for (size_t c = begin + lane; c < end; c += 32) out[c] = 0.0f;
  }
}

}  // namespace stream
}  // namespace cuda
}  // namespace zfc

// Row kernels on the device: the deterministic scatter-to-dense and table update. Inputs are
// grouped by target row: by a stable radix sort, or in an order the caller kept from its
// unique (scatter_to_dense_grouped). The scatter sums each target row in the
// host's order (input order in blocks: host_device/sum_order.hpp) and the update applies
// each row's updates in input order, so no floating-point atomics are used and the host's
// bits come out. The scatter streams its rows through shared memory, a hot id's blocks in
// parallel (stream_runs.cuh); sum_runs_kernel below is its fallback for rows whose slices
// are not 4-byte aligned.
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_select.cuh>

#include <algorithm>

#include "cuda_check.hpp"
#include "device_kernels.hpp"
#include "grid_kernels.cuh"
#include "host_device/half_bits.hpp"
#include "host_device/sum_order.hpp"
#include "stream_runs.cuh"
#include "stream_wide_rows.cuh"

namespace zfc {
namespace cuda {
namespace {

constexpr uint32_t kNotHead = 0xffffffffu;

__device__ inline float load_as_f32(const void* rows, zfcDataType_t type, size_t i) {
  if (type == zfcFloat32) return static_cast<const float*>(rows)[i];
  const uint16_t h = static_cast<const uint16_t*>(rows)[i];
  return type == zfcFloat16 ? kernels::f16_to_f32(h) : kernels::bf16_to_f32(h);
}

// heads[i] = i where sorted target i starts a run of equal targets, else kNotHead.
template <class K>
__global__ void mark_heads_kernel(const K* target, uint32_t n, uint32_t* heads) {
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    heads[i] = (i == 0 || target[i] != target[i - 1]) ? i : kNotHead;
  }
}

// target[j] = key[order[j]]: the targets in an order that groups them, given by the caller.
template <class K>
__global__ void gather_targets_kernel(const K* key, const uint32_t* order, uint32_t n,
                                      K* target) {
  for (uint32_t j = blockIdx.x * blockDim.x + threadIdx.x; j < n; j += gridDim.x * blockDim.x) {
    target[j] = key[order[j]];
  }
}

struct IsHead {
  __device__ bool operator()(uint32_t v) const { return v != kNotHead; }
};

// has_input[t] = 1 for every target t among the sorted targets (set at its run's first row),
// for the fallback's zeros; a streaming scatter's chunk-start warps mark them instead.
__global__ void mark_inputs_kernel(const uint32_t* target, uint32_t n, uint32_t* has_input) {
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    if (i == 0 || target[i] != target[i - 1]) has_input[target[i]] = 1u;
  }
}

// The rows of dense (m x dim) without input zeroed, one warp per item of
// stream::zero_item (a tile of columns of 32 rows, their flags read at once). Whole warps take
// the same item, so every ballot has all 32 lanes.
__global__ void zero_rows_without_input_kernel(const uint32_t* has_input, uint32_t m,
                                               size_t dim, float* dense) {
  const DeviceWarp warp{threadIdx.x % 32};
  const uint32_t warps_per_block = blockDim.x / 32;
  const uint64_t items = stream::zero_items(m, dim);
  const uint64_t stride = static_cast<uint64_t>(gridDim.x) * warps_per_block;
  for (uint64_t item = static_cast<uint64_t>(blockIdx.x) * warps_per_block + threadIdx.x / 32;
       item < items; item += stride) {
    stream::zero_item(warp, has_input, m, dim, dense, item, warp.lane);
  }
}

// Rows of a run whose input numbers are staged in shared memory at a time, the threads of a
// block (one column each), and the rows whose values a thread loads before it adds them.
constexpr uint32_t kOrderTile = 256;
constexpr uint32_t kSliceThreads = 128;
constexpr uint32_t kRowsInFlight = 64;
static_assert(kSumBlockRows % kOrderTile == 0, "a tile would straddle two blocks");

// Block (b, s) handles columns [s * blockDim.x, (s + 1) * blockDim.x) of runs b, b +
// gridDim.x, ...: each thread sums the run's rows of its column in the host's order -- the
// first block onto +0, or with `accumulate` onto the target row's value, every later block
// from +0 and added on when it ends -- in sorted (= input) order. A hot id's columns are
// spread over many blocks (and SMs), and every thread issues kRowsInFlight rows' loads
// before it adds them in order: the run streams at the memory's pace instead of one load's
// latency per row. The rows of a block are summed serially here; the streaming kernel is
// the one that sums a hot id's blocks side by side.
__global__ void __launch_bounds__(kSliceThreads)
    sum_runs_kernel(const void* rows, zfcDataType_t type, const uint32_t* target,
                    const uint32_t* order, const uint32_t* run_start, const uint32_t* num_runs,
                    uint32_t n, size_t dim, float* dense, bool accumulate) {
  __shared__ uint32_t tile[kOrderTile];
  const uint32_t runs = *num_runs;
  const size_t slices = static_cast<size_t>(gridDim.y) * blockDim.x;
  for (size_t c0 = static_cast<size_t>(blockIdx.y) * blockDim.x; c0 < dim; c0 += slices) {
    const size_t col = c0 + threadIdx.x;
    const bool mine = col < dim;
    for (uint32_t r = blockIdx.x; r < runs; r += gridDim.x) {
      const uint32_t begin = run_start[r];
      const uint32_t end = r + 1 < runs ? run_start[r + 1] : n;
      float* out = dense + static_cast<size_t>(target[begin]) * dim;
      float first = 0.0f;  // the first block's sum, once a later block has begun
      float acc = accumulate && mine ? out[col] : 0.0f;  // the open block's sum
      for (uint32_t j0 = begin; j0 < end; j0 += kOrderTile) {
        if (j0 != begin && (j0 - begin) % kSumBlockRows == 0) {
          first = j0 - begin == kSumBlockRows ? acc : first + acc;
          acc = 0.0f;
        }
        const uint32_t m = min(kOrderTile, end - j0);
        __syncthreads();  // the tile's last readers are done
        for (uint32_t t = threadIdx.x; t < m; t += blockDim.x) tile[t] = order[j0 + t];
        __syncthreads();
        if (!mine) continue;
        uint32_t t = 0;
        for (; t + kRowsInFlight <= m; t += kRowsInFlight) {
          float v[kRowsInFlight];
#pragma unroll
          for (uint32_t u = 0; u < kRowsInFlight; ++u) {
            v[u] = load_as_f32(rows, type, static_cast<size_t>(tile[t + u]) * dim + col);
          }
#pragma unroll
          for (uint32_t u = 0; u < kRowsInFlight; ++u) acc += v[u];
        }
        for (; t < m; ++t) {
          acc += load_as_f32(rows, type, static_cast<size_t>(tile[t]) * dim + col);
        }
      }
      if (mine) out[col] = end - begin > kSumBlockRows ? first + acc : acc;
    }
  }
}

// One update of a table value w (and its state s) with the gradient g, as the host's
// kernels::update_row makes it: each product, quotient, root and sum rounded alone (no
// contraction), so a device table gets the host's bits.
template <int kKind>
__device__ __forceinline__ float update_value(float w, float* s, float g, float alpha,
                                              float epsilon) {
  if (kKind == zfcUpdateAdd) return __fadd_rn(w, __fmul_rn(alpha, g));
  if (kKind == zfcUpdateSgd) return __fsub_rn(w, __fmul_rn(alpha, g));
  *s = __fadd_rn(*s, __fmul_rn(g, g));
  return __fsub_rn(w, __fmul_rn(alpha, __fdiv_rn(g, __fadd_rn(__fsqrt_rn(*s), epsilon))));
}

// The same grouping for the table update: each table row (and Adagrad's state row) gets its
// updates in input order, so repeated indices give the host's result too.
template <int kKind, class K>
__global__ void update_runs_kernel(float* table, float* state, size_t dim, const K* target,
                                   const uint32_t* order, const uint32_t* run_start,
                                   const uint32_t* num_runs, uint32_t n, const float* rows,
                                   float alpha, float epsilon) {
  const uint32_t runs = *num_runs;
  for (uint32_t r = blockIdx.x; r < runs; r += gridDim.x) {
    const uint32_t begin = run_start[r];
    const uint32_t end = r + 1 < runs ? run_start[r + 1] : n;
    const size_t at = static_cast<size_t>(target[begin]) * dim;
    for (size_t c = threadIdx.x; c < dim; c += blockDim.x) {
      float w = table[at + c];
      float s = kKind == zfcUpdateAdagrad ? state[at + c] : 0.0f;
      for (uint32_t j = begin; j < end; ++j) {
        w = update_value<kKind>(w, &s, rows[static_cast<size_t>(order[j]) * dim + c], alpha,
                                epsilon);
      }
      table[at + c] = w;
      if (kKind == zfcUpdateAdagrad) state[at + c] = s;
    }
  }
}

int bits_for(uint64_t bound) {
  int bits = 1;
  while (bits < 64 && ((bound - 1) >> bits) != 0) ++bits;
  return bits;
}

unsigned row_blocks(uint32_t rows) { return std::max(1u, std::min(rows, 65535u * 4)); }

unsigned row_threads(size_t dim) {
  return dim >= 256 ? 256u : std::max(32u, static_cast<unsigned>((dim + 31) / 32 * 32));
}

// Groups n inputs by target: a stable radix sort of (target, input number) over the bits of
// bound, or, where the caller gives an order that groups them already, the targets gathered
// in that order; then the start of every run of equal targets. Scratch is laid out by `l`;
// with l's base NULL only *cub_bytes is set.
template <class K>
struct Grouping {
  K* target = nullptr;              // sorted targets
  const uint32_t* order = nullptr;  // input number of each sorted target
  uint32_t* run_start = nullptr;
  uint32_t* num_runs = nullptr;
  uint32_t* sorted_order = nullptr;  // the sort's output (order), when it sorts
  uint32_t* order_in = nullptr;
  uint32_t* heads = nullptr;
  bool given = false;  // order is the caller's
  int bits = 1;

  // given_order_used: the rows come in an order that groups them (given_order, which a size
  // query may leave NULL), so the sort's scratch is not taken; else they are sorted here.
  Grouping(ScratchLayout& l, uint32_t n, uint64_t bound, bool given_order_used,
           const uint32_t* given_order) {
    given = given_order_used;
    target = l.take<K>(n);
    if (given) {
      order = given_order;
    } else {
      sorted_order = l.take<uint32_t>(n);
      order_in = l.take<uint32_t>(n);
      order = sorted_order;
    }
    heads = l.take<uint32_t>(n);
    run_start = l.take<uint32_t>(n);
    num_runs = l.take<uint32_t>(1);
    bits = bits_for(std::max<uint64_t>(bound, 1));
  }

  Status cub_bytes(const K* keys, uint32_t n, cudaStream_t s, size_t* bytes) const {
    size_t sort_bytes = 0, select_bytes = 0;
    if (!given) {
      ZFC_RETURN_IF_ERROR(cuda_check(
          cub::DeviceRadixSort::SortPairs(nullptr, sort_bytes, keys, target, order_in,
                                          sorted_order, n, 0, bits, s),
          "cub::DeviceRadixSort::SortPairs (size)"));
    }
    ZFC_RETURN_IF_ERROR(cuda_check(cub::DeviceSelect::If(nullptr, select_bytes, heads, run_start,
                                                         num_runs, n, IsHead{}, s),
                                   "cub::DeviceSelect::If (size)"));
    *bytes = std::max(sort_bytes, select_bytes);
    return Status::Ok();
  }

  // With runs == false only the sort or the gather: the streaming scatter finds its runs
  // from the sorted targets themselves.
  Status run(const K* keys, uint32_t n, void* cub_temp, size_t cub_bytes, cudaStream_t s,
             bool runs = true) const {
    if (given) {
      gather_targets_kernel<<<grid_for(n), kBlock, 0, s>>>(keys, order, n, target);
      ZFC_RETURN_IF_ERROR(launch_check("gather_targets_kernel"));
    } else {
      iota_kernel<<<grid_for(n), kBlock, 0, s>>>(order_in, n);
      ZFC_RETURN_IF_ERROR(launch_check("iota_kernel"));
      // Stable: equal targets keep their input order.
      ZFC_RETURN_IF_ERROR(cuda_check(
          cub::DeviceRadixSort::SortPairs(cub_temp, cub_bytes, keys, target, order_in,
                                          sorted_order, n, 0, bits, s),
          "cub::DeviceRadixSort::SortPairs"));
    }
    if (!runs) return Status::Ok();
    mark_heads_kernel<<<grid_for(n), kBlock, 0, s>>>(target, n, heads);
    ZFC_RETURN_IF_ERROR(launch_check("mark_heads_kernel"));
    return cuda_check(cub::DeviceSelect::If(cub_temp, cub_bytes, heads, run_start, num_runs, n,
                                            IsHead{}, s),
                      "cub::DeviceSelect::If");
  }
};

template <class K>
Status update_grouped(void* d_temp, size_t* temp_bytes, float* d_table, float* d_state,
                      size_t dim, const K* keys, uint64_t vocab, const float* d_rows,
                      uint32_t n, int kind, float alpha, float epsilon, cudaStream_t s) {
  ScratchLayout l(d_temp);
  Grouping<K> g(l, n, vocab, false, nullptr);
  size_t cub_bytes = 0;
  ZFC_RETURN_IF_ERROR(g.cub_bytes(keys, n, s, &cub_bytes));
  if (d_temp == nullptr) {
    *temp_bytes = l.bytes() + cub_bytes;
    return Status::Ok();
  }
  if (n == 0 || dim == 0) return Status::Ok();
  ZFC_RETURN_IF_ERROR(g.run(keys, n, l.rest(), cub_bytes, s));
  const unsigned blocks = row_blocks(n), threads = row_threads(dim);
  switch (kind) {
    case zfcUpdateAdd:
      update_runs_kernel<zfcUpdateAdd><<<blocks, threads, 0, s>>>(
          d_table, d_state, dim, g.target, g.order, g.run_start, g.num_runs, n, d_rows, alpha,
          epsilon);
      break;
    case zfcUpdateSgd:
      update_runs_kernel<zfcUpdateSgd><<<blocks, threads, 0, s>>>(
          d_table, d_state, dim, g.target, g.order, g.run_start, g.num_runs, n, d_rows, alpha,
          epsilon);
      break;
    case zfcUpdateAdagrad:
      update_runs_kernel<zfcUpdateAdagrad><<<blocks, threads, 0, s>>>(
          d_table, d_state, dim, g.target, g.order, g.run_start, g.num_runs, n, d_rows, alpha,
          epsilon);
      break;
    default:
      return error(zfcInvalidArgument, "update kind %d is not an update", kind);
  }
  return launch_check("update_runs_kernel");
}

unsigned scatter_block_limit = 0;  // set_scatter_block_limit_for_tests

size_t row_bytes_of(zfcDataType_t row_type, size_t dim) {
  return dim * (row_type == zfcFloat32 ? 4 : 2);
}

unsigned scatter_lane_words = 0;  // set_scatter_lane_words_for_tests

// Items the register kernel needs at 4 and at 2 words per lane before it is chosen. Wide
// loads cut a row into fewer slices, so fewer items (one warp each), and the register kernel
// hides the loads' latency with warps in flight where the ring keeps 256 rows in flight per
// warp. On an H200 (docs/benchmarks/gpu.md) at 10^5 x 512 fp32, 392 items of 16-byte loads
// ran at 0.16 of copy bandwidth and 784 of 8-byte loads at 0.18, where the ring's 1568 ran
// at 0.23; at 10^5 x 1024, 1568 items of 8-byte loads ran at 0.33 against the ring's 0.28;
// from 10^6 x 512 (3908 items of 16 bytes) up, the wide loads ran at twice the ring's pace.
// The choice changes the speed only: every width sums each column in the same order.
constexpr uint64_t kWideItems[] = {0, 0, 1024, 0, 2048};

// 4-byte words per lane of the streaming scatter: 4 or 2 where the rows' bytes and base allow
// 16- or 8-byte loads and there are enough items for the register kernel, else 1 (the ring).
uint32_t lane_words(const void* d_rows, size_t row_bytes, uint32_t chunks) {
  const uintptr_t base = reinterpret_cast<uintptr_t>(d_rows);
  // A forced width other than 1, 2 or 4 takes the widest of those below it.
  const uint32_t forced = scatter_lane_words >= 4 ? 4 : scatter_lane_words >= 2 ? 2 : 1;
  const uint32_t widest = scatter_lane_words != 0 ? forced : 4;
  for (uint32_t w = widest; w > 1; w /= 2) {
    if (row_bytes % (4 * w) != 0 || base % (4 * w) != 0) continue;
    const size_t slice_bytes = stream::kSliceBytes * w;
    const uint64_t items = uint64_t{chunks} * ((row_bytes + slice_bytes - 1) / slice_bytes);
    if (scatter_lane_words != 0 || items >= kWideItems[w]) return w;
  }
  return 1;
}

template <int kKind>
Status launch_stream_runs(uint32_t words, uint64_t limit, const void* d_rows, size_t row_bytes,
                          const Grouping<uint32_t>& g, uint32_t n, const uint32_t* chunk_start,
                          uint32_t chunks, size_t dim, float* d_dense, float* partials,
                          bool accumulate, cudaStream_t s) {
  const size_t slice_bytes = stream::kSliceBytes * words;
  const uint32_t slices = static_cast<uint32_t>((row_bytes + slice_bytes - 1) / slice_bytes);
  const uint64_t items = static_cast<uint64_t>(chunks) * slices;
  if (words == 1) {
    const unsigned blocks = static_cast<unsigned>(std::min<uint64_t>(items, limit));
    stream_runs_kernel<kKind><<<blocks, 32, 0, s>>>(d_rows, row_bytes, g.target, g.order, n,
                                                    chunk_start, chunks, slices, dim, d_dense,
                                                    partials, accumulate);
    return launch_check("stream_runs_kernel");
  }
  constexpr unsigned kWarps = kWideThreads / 32;
  const unsigned blocks =
      static_cast<unsigned>(std::min<uint64_t>((items + kWarps - 1) / kWarps, limit));
  // Eight rows in flight per lane either way: at most 80 registers at 16 bytes (three blocks
  // of 8 warps per SM), 64 at 8 bytes (four); ptxas reports no spill in either
  // (docs/benchmarks/raw_gpu/ptxas_rows_sm90.txt).
  auto kernel =
      words == 4 ? stream_wide_kernel<kKind, 4, 8, 3> : stream_wide_kernel<kKind, 2, 8, 4>;
  kernel<<<blocks, kWideThreads, 0, s>>>(d_rows, row_bytes, g.target, g.order, n, chunk_start,
                                         chunks, slices, dim, d_dense, partials, accumulate);
  return launch_check("stream_wide_kernel");
}

// The rows of dense (m x dim) without input zeroed, once has_input marks the others.
Status zero_unmarked_rows(const uint32_t* has_input, uint32_t m, size_t dim, float* d_dense,
                          cudaStream_t s) {
  // A warp per item: kBlock / 32 items per block.
  zero_rows_without_input_kernel<<<grid_for(stream::zero_items(m, dim) * 32), kBlock, 0, s>>>(
      has_input, m, dim, d_dense);
  return launch_check("zero_rows_without_input_kernel");
}

// The streaming scatter over grouped rows: the chunks' starts at cuts (and each run's count
// of later blocks, in `folds`), one warp per (chunk, slice) item, then the runs' later
// blocks folded onto their targets. Into zeroed rows (has_input, m x 1 zeroed words, not
// NULL), the rows without input are zeroed too, marked as the chunk starts are found.
Status stream_runs(const void* d_rows, zfcDataType_t row_type, const Grouping<uint32_t>& g,
                   uint32_t* chunk_start, uint32_t* folds, float* partials, uint32_t n,
                   size_t dim, float* d_dense, uint32_t m, uint32_t* has_input, bool accumulate,
                   cudaStream_t s) {
  const uint32_t chunks = stream::stream_chunks(n);
  // A warp per chunk start: kBlock / 32 to a block.
  chunk_starts_kernel<<<grid_for(static_cast<size_t>(chunks + 1) * 32), kBlock, 0, s>>>(
      g.target, n, chunks, chunk_start, folds, has_input);
  ZFC_RETURN_IF_ERROR(launch_check("chunk_starts_kernel"));
  if (has_input != nullptr) ZFC_RETURN_IF_ERROR(zero_unmarked_rows(has_input, m, dim, d_dense, s));
  const size_t row_bytes = row_bytes_of(row_type, dim);
  const uint64_t limit = scatter_block_limit != 0 ? scatter_block_limit : uint64_t{1} << 20;
  // The kernel's kind is the row type: 0 fp32, 1 fp16, 2 bf16.
  auto launch = row_type == zfcFloat32   ? launch_stream_runs<0>
                : row_type == zfcFloat16 ? launch_stream_runs<1>
                                         : launch_stream_runs<2>;
  ZFC_RETURN_IF_ERROR(launch(lane_words(d_rows, row_bytes, chunks), limit, d_rows, row_bytes, g,
                             n, chunk_start, chunks, dim, d_dense, partials, accumulate, s));
  if (chunks < 2) return Status::Ok();  // no chunk can start inside a run
  // A block per span of kFoldChunks chunks and tile of kFoldCols columns (the test hook's
  // limit, where set, on each of the two, so that blocks take several).
  const uint64_t spans = (chunks + kFoldChunks - 1) / kFoldChunks;
  const uint64_t tiles = (dim + kFoldCols - 1) / kFoldCols;
  const dim3 fold_grid(static_cast<unsigned>(std::min<uint64_t>(spans, limit)),
                       static_cast<unsigned>(std::min<uint64_t>({tiles, limit, 65535})));
  fold_partials_kernel<<<fold_grid, kFoldCols * kFoldGroups, 0, s>>>(
      g.target, chunk_start, folds, chunks, partials, dim, d_dense);
  return launch_check("fold_partials_kernel");
}

// How scatter_rows groups its rows by target.
enum class RowGrouping {
  kSort,     // a stable radix sort of (position, input number)
  kGiven,    // the caller's d_order
  kInOrder,  // none: positions never decrease in input order, which is the grouping
};

// Groups the rows by target and sums each target row in the host's order, into zeroed rows
// (scatter_to_dense) or into the rows as they are (scatter_add_rows).
Status scatter_rows(void* d_temp, size_t* temp_bytes, const void* d_rows, zfcDataType_t row_type,
                    const int32_t* d_pos, RowGrouping grouping, const uint32_t* d_order,
                    uint32_t n, size_t dim, float* d_dense, uint32_t m, bool accumulate,
                    void* stream) {
  cudaStream_t s = as_stream(stream);
  ScratchLayout l(d_temp);
  // Positions are checked to lie in [0, m) by the caller, so as unsigned keys they are below
  // m and the sort needs only the bits of m - 1.
  const uint32_t* keys = reinterpret_cast<const uint32_t*>(d_pos);
  // In input order the order is the identity, written below: it and the gather of the
  // targets in it are two passes over n words in place of the sort. The layout is the same
  // for the size query, where every pointer taken is NULL.
  uint32_t* identity = grouping == RowGrouping::kInOrder ? l.take<uint32_t>(n) : nullptr;
  Grouping<uint32_t> g(l, n, m, grouping != RowGrouping::kSort,
                       grouping == RowGrouping::kGiven ? d_order : identity);
  const bool streamed = scatter_streams(d_rows, row_type, dim);
  // Taken whether or not they are used, so that a size query made with other row pointers
  // still covers the call. A partial row per chunk: at 10^6 rows of 512 fp32, 2 MB.
  uint32_t* chunk_start = l.take<uint32_t>(stream::stream_chunks(n) + 1);
  uint32_t* folds = l.take<uint32_t>(stream::stream_chunks(n));
  float* partials = l.take<float>(static_cast<size_t>(stream::stream_chunks(n)) * dim);
  uint32_t* has_input = accumulate ? nullptr : l.take<uint32_t>(m);
  size_t cub_bytes = 0;
  ZFC_RETURN_IF_ERROR(g.cub_bytes(keys, n, s, &cub_bytes));
  if (d_temp == nullptr) {
    *temp_bytes = l.bytes() + cub_bytes;
    return Status::Ok();
  }
  if (n == 0 || dim == 0) {
    if (accumulate || static_cast<size_t>(m) * dim == 0) return Status::Ok();
    return cuda_check(
        cudaMemsetAsync(d_dense, 0, static_cast<size_t>(m) * dim * sizeof(float), s),
        "cudaMemsetAsync");
  }
  if (identity != nullptr) {
    iota_kernel<<<grid_for(n), kBlock, 0, s>>>(identity, n);
    ZFC_RETURN_IF_ERROR(launch_check("iota_kernel"));
  }
  ZFC_RETURN_IF_ERROR(g.run(keys, n, l.rest(), cub_bytes, s, /*runs=*/!streamed));
  // The zeros of scatter_to_dense: rows with no input, found from the sorted targets. Where
  // every row has input (a rank's local sums, m = U_i) nothing is written there, where an
  // m x dim fill before the sums would write as many bytes as the result again.
  if (!accumulate) {
    ZFC_RETURN_IF_ERROR(cuda_check(cudaMemsetAsync(has_input, 0, m * sizeof(uint32_t), s),
                                   "cudaMemsetAsync"));
  }
  if (streamed) {
    return stream_runs(d_rows, row_type, g, chunk_start, folds, partials, n, dim, d_dense, m,
                       has_input, accumulate, s);
  }
  if (!accumulate) {
    mark_inputs_kernel<<<grid_for(n), kBlock, 0, s>>>(g.target, n, has_input);
    ZFC_RETURN_IF_ERROR(launch_check("mark_inputs_kernel"));
    ZFC_RETURN_IF_ERROR(zero_unmarked_rows(has_input, m, dim, d_dense, s));
  }
  const unsigned threads = std::min(row_threads(dim), kSliceThreads);
  const size_t slices = std::min<size_t>((dim + threads - 1) / threads, 65535);
  const dim3 grid(row_blocks(n), static_cast<unsigned>(slices));
  sum_runs_kernel<<<grid, threads, 0, s>>>(d_rows, row_type, g.target, g.order, g.run_start,
                                           g.num_runs, n, dim, d_dense, accumulate);
  return launch_check("sum_runs_kernel");
}

}  // namespace

// The streaming kernel copies 4 aligned bytes per lane: fp32 rows, or 16-bit rows of even
// width, from a 4-byte aligned base.
bool scatter_streams(const void* d_rows, zfcDataType_t row_type, size_t dim) {
  return row_bytes_of(row_type, dim) % 4 == 0 && reinterpret_cast<uintptr_t>(d_rows) % 4 == 0;
}

void set_scatter_block_limit_for_tests(unsigned blocks) { scatter_block_limit = blocks; }

void set_scatter_lane_words_for_tests(unsigned words) { scatter_lane_words = words; }

Status scatter_to_dense(void* d_temp, size_t* temp_bytes, const void* d_rows,
                        zfcDataType_t row_type, const int32_t* d_pos, uint32_t n, size_t dim,
                        float* d_dense, uint32_t m, void* stream) {
  return scatter_rows(d_temp, temp_bytes, d_rows, row_type, d_pos, RowGrouping::kSort, nullptr,
                      n, dim, d_dense, m, false, stream);
}

Status scatter_to_dense_grouped(void* d_temp, size_t* temp_bytes, const void* d_rows,
                                zfcDataType_t row_type, const int32_t* d_pos,
                                const uint32_t* d_order, uint32_t n, size_t dim,
                                float* d_dense, uint32_t m, void* stream) {
  const RowGrouping grouping = d_order != nullptr ? RowGrouping::kGiven : RowGrouping::kSort;
  return scatter_rows(d_temp, temp_bytes, d_rows, row_type, d_pos, grouping, d_order, n, dim,
                      d_dense, m, false, stream);
}

Status scatter_add_rows(void* d_temp, size_t* temp_bytes, const void* d_rows,
                        zfcDataType_t row_type, const int32_t* d_pos, uint32_t n, size_t dim,
                        float* d_dst, uint32_t m, void* stream) {
  return scatter_rows(d_temp, temp_bytes, d_rows, row_type, d_pos, RowGrouping::kSort, nullptr,
                      n, dim, d_dst, m, true, stream);
}

Status scatter_add_rows_in_order(void* d_temp, size_t* temp_bytes, const void* d_rows,
                                 zfcDataType_t row_type, const int32_t* d_pos, uint32_t n,
                                 size_t dim, float* d_dst, uint32_t m, void* stream) {
  return scatter_rows(d_temp, temp_bytes, d_rows, row_type, d_pos, RowGrouping::kInOrder,
                      nullptr, n, dim, d_dst, m, true, stream);
}

Status update_rows(void* d_temp, size_t* temp_bytes, float* d_table, float* d_state,
                   int64_t vocab, size_t dim, const void* d_idx, zfcDataType_t index_type,
                   const float* d_rows, uint32_t n, int kind, float alpha, float epsilon,
                   void* stream) {
  // Indices are checked to lie in [0, vocab) by the caller: as unsigned keys they are below
  // vocab.
  const uint64_t bound = static_cast<uint64_t>(vocab);
  if (index_type == zfcInt32) {
    return update_grouped(d_temp, temp_bytes, d_table, d_state, dim,
                          static_cast<const uint32_t*>(d_idx), bound, d_rows, n, kind, alpha,
                          epsilon, as_stream(stream));
  }
  return update_grouped(d_temp, temp_bytes, d_table, d_state, dim,
                        static_cast<const uint64_t*>(d_idx), bound, d_rows, n, kind, alpha,
                        epsilon, as_stream(stream));
}

namespace {

__global__ void gather_rows_kernel(const float* table, size_t dim, const uint64_t* rows,
                                   uint32_t n, float* out) {
  for (uint32_t p = blockIdx.x; p < n; p += gridDim.x) {
    const float* from = table + rows[p] * dim;
    float* to = out + static_cast<size_t>(p) * dim;
    for (size_t c = threadIdx.x; c < dim; c += blockDim.x) to[c] = from[c];
  }
}

}  // namespace

Status gather_rows(const float* d_table, size_t dim, const uint64_t* d_rows, uint32_t n,
                   float* d_out, void* stream) {
  if (n == 0 || dim == 0) return Status::Ok();
  gather_rows_kernel<<<row_blocks(n), row_threads(dim), 0, as_stream(stream)>>>(
      d_table, dim, d_rows, n, d_out);
  return launch_check("gather_rows_kernel");
}

Status apply_rows(void* d_temp, size_t* temp_bytes, float* d_table, int64_t vocab, size_t dim,
                  const void* d_idx, zfcDataType_t index_type, const float* d_rows, uint32_t n,
                  float alpha, void* stream) {
  return update_rows(d_temp, temp_bytes, d_table, nullptr, vocab, dim, d_idx, index_type,
                     d_rows, n, zfcUpdateAdd, alpha, 0.0f, stream);
}

}  // namespace cuda
}  // namespace zfc

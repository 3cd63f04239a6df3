// Every CUDA kernel against the host kernel it mirrors, bit for bit. Skips, saying why, on a
// machine without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

#include "device_kernels.hpp"
#include "device_test_util.hpp"
#include "host_device/sum_order.hpp"
#include "kernels/cast.hpp"
#include "kernels/radix_sort.hpp"
#include "kernels/rows.hpp"
#include "kernels/unique.hpp"
#include "kernels/wire_format.hpp"
#include "workload/random.hpp"
#include "workload/zipf.hpp"

namespace zfc {
namespace {

using test::DeviceVector;
using test::with_scratch;

template <class K>
std::vector<K> zipf_keys(size_t n, uint64_t bound, uint64_t seed) {
  workload::SplitMix64 rng(seed);
  std::vector<K> keys(n);
  for (K& k : keys) {
    // A Zipf-like skew at any bound: small keys repeat, large ones are rare.
    const double u = rng.uniform();
    k = static_cast<K>(static_cast<double>(bound - 1) * u * u * u * u);
  }
  return keys;
}

template <class K>
void check_unique(size_t n, uint64_t bound, uint64_t seed) {
  const std::vector<K> keys = zipf_keys<K>(n, bound, seed);
  std::vector<K> uniq(n + 1);
  std::vector<int32_t> inverse(n + 1);
  std::vector<char> scratch(kernels::unique_scratch_bytes<K>(n, bound, true));
  const size_t u = kernels::unique_with_inverse(keys.data(), n, bound, uniq.data(),
                                                inverse.data(), scratch.data());
  DeviceVector<K> d_keys(keys), d_uniq(n + 1);
  DeviceVector<int32_t> d_inverse(n + 1);
  DeviceVector<uint32_t> d_num(1);
  const int bits = kernels::key_bits_for_bound(bound);
  ASSERT_TRUE(with_scratch([&](void* t, size_t* b) {
                return cuda::unique_with_inverse(t, b, d_keys.get(), static_cast<uint32_t>(n),
                                                 bits, d_uniq.get(), d_inverse.get(),
                                                 d_num.get(), nullptr, nullptr);
              }).ok());
  ASSERT_EQ(d_num.value(), u);
  const std::vector<K> got = d_uniq.to_host(u);
  ASSERT_TRUE(std::equal(got.begin(), got.end(), uniq.begin()));
  const std::vector<int32_t> inv = d_inverse.to_host(n);
  ASSERT_TRUE(std::equal(inv.begin(), inv.end(), inverse.begin()));

  // Keeping the sort's order: the same results, and the input numbers by key, equal keys in
  // input order.
  DeviceVector<uint32_t> d_order(n + 1);
  DeviceVector<int32_t> d_inverse2(n + 1);
  ASSERT_TRUE(with_scratch([&](void* t, size_t* b) {
                return cuda::unique_with_inverse(t, b, d_keys.get(), static_cast<uint32_t>(n),
                                                 bits, d_uniq.get(), d_inverse2.get(),
                                                 d_num.get(), d_order.get(), nullptr);
              }).ok());
  ASSERT_EQ(d_num.value(), u);
  const std::vector<int32_t> inv2 = d_inverse2.to_host(n);
  ASSERT_TRUE(std::equal(inv2.begin(), inv2.end(), inverse.begin()));
  std::vector<uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t a, uint32_t b) { return keys[a] < keys[b]; });
  ASSERT_EQ(d_order.to_host(n), order);

  ASSERT_TRUE(with_scratch([&](void* t, size_t* b) {
                return cuda::sorted_unique(t, b, d_keys.get(), static_cast<uint32_t>(n), bits,
                                           d_uniq.get(), d_num.get(), nullptr);
              }).ok());
  ASSERT_EQ(d_num.value(), u);
  const std::vector<K> got2 = d_uniq.to_host(u);
  ASSERT_TRUE(std::equal(got2.begin(), got2.end(), uniq.begin()));
}

TEST(DeviceUnique, MatchesTheHostOnEverySize) {
  ZFC_REQUIRE_GPU();
  for (size_t n : {0, 1, 2, 640, 5000, 100003}) {
    check_unique<uint32_t>(n, 100000, n + 1);
    check_unique<uint32_t>(n, uint64_t{1} << 31, n + 2);
    check_unique<uint64_t>(n, uint64_t{1} << 40, n + 3);
  }
}

TEST(DeviceUnique, LocateAndComposeMatchTheHost) {
  ZFC_REQUIRE_GPU();
  std::vector<uint32_t> full, sub;
  for (uint32_t k = 0; k < 20000; ++k) full.push_back(3 * k + 1);
  for (size_t i = 0; i < full.size(); i += 7) sub.push_back(full[i]);
  std::vector<int32_t> pos(sub.size());
  kernels::locate_sorted(sub.data(), sub.size(), full.data(), full.size(), pos.data());
  DeviceVector<uint32_t> d_sub(sub), d_full(full);
  DeviceVector<uint32_t> d_n_full(std::vector<uint32_t>{static_cast<uint32_t>(full.size())});
  DeviceVector<int32_t> d_pos(sub.size());
  ASSERT_TRUE(cuda::locate_sorted(d_sub.get(), static_cast<uint32_t>(sub.size()), d_full.get(),
                                  d_n_full.get(), d_pos.get(), nullptr)
                  .ok());
  EXPECT_EQ(d_pos.to_host(), pos);
  // Compose token -> local -> global.
  std::vector<int32_t> index = {2, 0, 1, 1, 5};
  DeviceVector<int32_t> d_index(index), d_out(index.size());
  ASSERT_TRUE(cuda::compose_positions(d_index.get(), 5, d_pos.get(), d_out.get(), nullptr).ok());
  const std::vector<int32_t> out = d_out.to_host();
  for (size_t i = 0; i < index.size(); ++i) EXPECT_EQ(out[i], pos[index[i]]);
}

TEST(DeviceChecks, FindTheFirstBadPositionAndIndex) {
  ZFC_REQUIRE_GPU();
  std::vector<int32_t> pos = {0, 3, 9, 2, -1, 10, 4};
  DeviceVector<int32_t> d_pos(pos);
  DeviceVector<uint32_t> d_bad(1);
  ASSERT_TRUE(cuda::find_bad_position(d_pos.get(), 7, 10, d_bad.get(), nullptr).ok());
  EXPECT_EQ(d_bad.value(), 4u);
  ASSERT_TRUE(cuda::find_bad_position(d_pos.get(), 4, 10, d_bad.get(), nullptr).ok());
  EXPECT_EQ(d_bad.value(), 4u);  // none among the first 4: n
  std::vector<int64_t> idx = {5, 99, 100, 7};
  DeviceVector<int64_t> d_idx(idx);
  ASSERT_TRUE(cuda::find_bad_index(d_idx.get(), zfcInt64, 4, 100, d_bad.get(), nullptr).ok());
  EXPECT_EQ(d_bad.value(), 2u);
}

// Indices outside [0, vocab) load as key 0, so the unique's radix sort over the bits of vocab
// orders every key.
TEST(DeviceChecks, IndicesOutsideTheVocabularyLoadAsKeyZero) {
  ZFC_REQUIRE_GPU();
  const std::vector<int32_t> idx32 = {5, -1, 1024, 1023, 0, 2047};
  const std::vector<int64_t> idx64 = {5, -1, 1024, 1023, 0, int64_t{1} << 40};
  DeviceVector<int32_t> d32(idx32);
  DeviceVector<int64_t> d64(idx64);
  // Not zeros to begin with: an entry the kernel does not write shows up.
  DeviceVector<uint32_t> keys32(std::vector<uint32_t>(6, 0xdeadbeefu));
  DeviceVector<uint64_t> keys64(std::vector<uint64_t>(6, 0xdeadbeefdeadbeefu));
  ASSERT_TRUE(cuda::load_keys(d32.get(), zfcInt32, 6, 1024, keys32.get(), nullptr).ok());
  ASSERT_TRUE(cuda::load_keys(d64.get(), zfcInt64, 6, 1024, keys64.get(), nullptr).ok());
  EXPECT_EQ(keys32.to_host(), (std::vector<uint32_t>{5, 0, 0, 1023, 0, 0}));
  EXPECT_EQ(keys64.to_host(), (std::vector<uint64_t>{5, 0, 0, 1023, 0, 0}));
}

// Rows of `type` with values that exercise rounding: random fp32, converted to the type.
std::vector<uint16_t> half_rows(const std::vector<float>& v, zfcDataType_t type) {
  std::vector<uint16_t> h(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    h[i] = type == zfcFloat16 ? kernels::f32_to_f16(v[i]) : kernels::f32_to_bf16(v[i]);
  }
  return h;
}

TEST(DeviceRows, ScatterToDenseHasTheHostBits) {
  ZFC_REQUIRE_GPU();
  workload::SplitMix64 rng(11);
  for (zfcDataType_t type : {zfcFloat32, zfcFloat16, zfcBFloat16}) {
    // fp32 rows stream at every width; 16-bit ones at 34 (a partial last slice) and 512,
    // while 1 and 33 take the fallback.
    for (size_t dim : {1, 33, 34, 512}) {
      const size_t n = 3000, m = 700;
      std::vector<float> rows(n * dim);
      for (float& f : rows) f = static_cast<float>((rng.uniform() * 2 - 1) * 1e3);
      std::vector<int32_t> pos(n);
      for (int32_t& p : pos) p = static_cast<int32_t>(zipf_keys<uint32_t>(1, m, rng.next())[0]);
      const std::vector<uint16_t> half = half_rows(rows, type);
      const void* host_rows = type == zfcFloat32 ? static_cast<const void*>(rows.data())
                                                 : static_cast<const void*>(half.data());
      std::vector<float> want(m * dim, 0.0f);
      kernels::scatter_add_rows(host_rows, type, pos.data(), n, dim, want.data());

      // Zipf positions leave rows of the 700 without input: they must come out zero.
      DeviceVector<float> d_rows32(rows), d_dense(std::vector<float>(m * dim, 7.0f));
      DeviceVector<uint16_t> d_rows16(half);
      DeviceVector<int32_t> d_pos(pos);
      const void* d_rows = type == zfcFloat32 ? static_cast<const void*>(d_rows32.get())
                                              : static_cast<const void*>(d_rows16.get());
      EXPECT_EQ(cuda::scatter_streams(d_rows, type, dim), type == zfcFloat32 || dim % 2 == 0);
      ASSERT_TRUE(with_scratch([&](void* t, size_t* b) {
                    return cuda::scatter_to_dense(t, b, d_rows, type, d_pos.get(),
                                                  static_cast<uint32_t>(n), dim, d_dense.get(),
                                                  static_cast<uint32_t>(m), nullptr);
                  }).ok());
      const std::vector<float> got = d_dense.to_host();
      for (size_t i = 0; i < got.size(); ++i) {
        ASSERT_EQ(kernels::f32_bits(got[i]), kernels::f32_bits(want[i])) << type << " " << i;
      }
    }
  }
}

// f(blocks, words) under each schedule of the streaming scatter: unlimited blocks (an item
// each) and 3 (each block's ring, or warp, serving many items in turn), and each load width
// (the ring's 4 bytes, 8 and 16 bytes into registers, or the widest below that the rows
// allow), whatever the library would choose at this size. Its choices are restored after.
template <class F>
void for_each_scatter_schedule(F&& f) {
  struct Restore {
    ~Restore() {
      cuda::set_scatter_block_limit_for_tests(0);
      cuda::set_scatter_lane_words_for_tests(0);
    }
  } restore;
  for (unsigned blocks : {0u, 3u}) {
    for (unsigned words : {1u, 2u, 4u}) {
      cuda::set_scatter_block_limit_for_tests(blocks);
      cuda::set_scatter_lane_words_for_tests(words);
      f(blocks, words);
    }
  }
}

// The rows of the scatters' edge cases: for every row type, the widths 2, 34, 130 and 264
// (part of the last slice idle; 8-byte loads for fp32 at the first three, 16-byte ones at
// 264, the ring for 16-bit rows but at 264) and a base one element off: for 16-bit rows two
// bytes off 4-byte alignment (the fallback kernel), for fp32 rows four bytes off 8-byte
// alignment (the ring, whatever width is asked for). n random rows on the host and the
// device and m x dim random values to add them into: f(type, dim, offset, host_rows,
// d_rows, dst).
template <class F>
void for_each_row_case(workload::SplitMix64& rng, size_t n, size_t m, F&& f) {
  for (zfcDataType_t type : {zfcFloat32, zfcFloat16, zfcBFloat16}) {
    for (size_t dim : {2, 34, 130, 264}) {
      for (size_t offset : {0, 1}) {
        std::vector<float> rows((n + offset) * dim);
        for (float& v : rows) v = static_cast<float>((rng.uniform() * 2 - 1) * 1e3);
        std::vector<float> dst(m * dim);
        for (float& v : dst) v = static_cast<float>(rng.uniform() * 10 - 5);
        const std::vector<uint16_t> half = half_rows(rows, type);
        const void* host_rows = type == zfcFloat32
                                    ? static_cast<const void*>(rows.data() + offset)
                                    : static_cast<const void*>(half.data() + offset);
        DeviceVector<float> d_rows32(rows);
        DeviceVector<uint16_t> d_rows16(half);
        const void* d_rows = type == zfcFloat32
                                 ? static_cast<const void*>(d_rows32.get() + offset)
                                 : static_cast<const void*>(d_rows16.get() + offset);
        f(type, dim, offset, host_rows, d_rows, dst);
      }
    }
  }
}

// The streaming scatter's edges: runs longer than its ring and than a sum block (so they are
// cut into blocks whose partial rows are folded, one run starting inside a chunk), rows
// added into rows that are not zero and into zeroed ones, widths that leave part of the
// last slice idle, and a base two bytes off 4-byte alignment (the fallback kernel).
TEST(DeviceRows, ScattersHaveTheHostBitsOnLongRunsAndPartialSlices) {
  ZFC_REQUIRE_GPU();
  workload::SplitMix64 rng(13);
  const size_t n = 7000, m = 320;
  std::vector<int32_t> pos(n);
  for (size_t i = 0; i < n; ++i) {
    // Target 7 takes 4200 rows spread through the input (five blocks), target 250 1400 (two);
    // the rest fall below 300, so rows 300 to 319 have no input.
    pos[i] = (i % 5 < 3) ? 7 : i % 5 == 3 ? 250 : static_cast<int32_t>(rng.next() % 300);
  }
  DeviceVector<int32_t> d_pos(pos);
  for_each_row_case(rng, n, m, [&](zfcDataType_t type, size_t dim, size_t offset,
                                   const void* host_rows, const void* d_rows,
                                   const std::vector<float>& dst) {
    EXPECT_EQ(cuda::scatter_streams(d_rows, type, dim), offset == 0 || type == zfcFloat32);
    // Into rows as they are (scatter_add_rows) and into zeroed ones (scatter_to_dense, given
    // rows of 7s to clear), under every schedule.
    for (bool accumulate : {true, false}) {
      std::vector<float> want = accumulate ? dst : std::vector<float>(m * dim, 0.0f);
      kernels::scatter_add_rows(host_rows, type, pos.data(), n, dim, want.data());
      for_each_scatter_schedule([&](unsigned blocks, unsigned words) {
        DeviceVector<float> d_dst(accumulate ? dst : std::vector<float>(m * dim, 7.0f));
        const Status s = with_scratch([&](void* t, size_t* b) {
          const uint32_t n32 = static_cast<uint32_t>(n), m32 = static_cast<uint32_t>(m);
          return accumulate ? cuda::scatter_add_rows(t, b, d_rows, type, d_pos.get(), n32, dim,
                                                     d_dst.get(), m32, nullptr)
                            : cuda::scatter_to_dense(t, b, d_rows, type, d_pos.get(), n32, dim,
                                                     d_dst.get(), m32, nullptr);
        });
        ASSERT_TRUE(s.ok()) << s.message();
        const std::vector<float> got = d_dst.to_host();
        for (size_t i = 0; i < got.size(); ++i) {
          ASSERT_EQ(kernels::f32_bits(got[i]), kernels::f32_bits(want[i]))
              << type << " dim " << dim << " offset " << offset << " accumulate "
              << accumulate << " blocks " << blocks << " words " << words << " at " << i;
        }
      });
    }
  });
}

// Hot ids whose later blocks outnumber or fill the rows the fold stages at once (64 partial
// rows): of 150 000 rows, target 3 takes half (74 sum blocks: a chain of 73 partial rows,
// staged as 64 and then 9) and target 5 66 000 or a few more (65 blocks: a chain of exactly
// 64); the rest fall below 200, so rows 200 to 259 have no input and are zeroed. Widths of
// one column tile, one and a bit, and several; under the block limit of 3, some of the fold's
// blocks take two spans of chunks, and at width 130 several tiles, reusing their shared
// memory. (Two chains in one span: ScattersHaveTheHostBitsOnLongRunsAndPartialSlices.)
TEST(DeviceRows, FoldsChainsLongerThanOneStagedBatch) {
  ZFC_REQUIRE_GPU();
  workload::SplitMix64 rng(29);
  const size_t n = 150000, m = 260;
  std::vector<int32_t> pos(n);
  for (size_t i = 0; i < n; ++i) {
    pos[i] = i % 150 < 75 ? 3 : i % 150 < 141 ? 5 : static_cast<int32_t>(rng.next() % 200);
  }
  DeviceVector<int32_t> d_pos(pos);
  for (size_t dim : {32, 34, 130}) {
    std::vector<float> rows(n * dim);
    for (float& v : rows) v = static_cast<float>((rng.uniform() * 2 - 1) * 1e3);
    std::vector<float> want(m * dim, 0.0f);
    kernels::scatter_add_rows(rows.data(), zfcFloat32, pos.data(), n, dim, want.data());
    DeviceVector<float> d_rows(rows);
    for_each_scatter_schedule([&](unsigned blocks, unsigned words) {
      DeviceVector<float> d_dst(std::vector<float>(m * dim, 7.0f));
      const Status s = with_scratch([&](void* t, size_t* b) {
        return cuda::scatter_to_dense(t, b, d_rows.get(), zfcFloat32, d_pos.get(),
                                      static_cast<uint32_t>(n), dim, d_dst.get(),
                                      static_cast<uint32_t>(m), nullptr);
      });
      ASSERT_TRUE(s.ok()) << s.message();
      const std::vector<float> got = d_dst.to_host();
      for (size_t i = 0; i < got.size(); ++i) {
        ASSERT_EQ(kernels::f32_bits(got[i]), kernels::f32_bits(want[i]))
            << "dim " << dim << " blocks " << blocks << " words " << words << " at " << i;
      }
    });
  }
}

// The add whose positions never decrease in input order (an owner adding one sender's
// rows at its keys' places): the rows taken as they come, without a sort, give the host's
// bits -- distinct increasing places with gaps (the owner's case), and places that repeat
// in runs, one of them three sum blocks long -- for every row type, streamed widths and the
// fallback's (a base two bytes off), under every schedule of the streaming scatter.
TEST(DeviceRows, InOrderAddHasTheHostBits) {
  ZFC_REQUIRE_GPU();
  workload::SplitMix64 rng(23);
  const size_t n = 5000;
  std::vector<int32_t> gaps(n), runs(n);
  for (size_t i = 0; i < n; ++i) gaps[i] = static_cast<int32_t>(2 * i + rng.next() % 2);
  for (size_t i = 0; i < n; ++i) runs[i] = i < 3000 ? 4 : 5 + static_cast<int32_t>(i / 7);
  for (const std::vector<int32_t>* pos : {&gaps, &runs}) {
    const uint32_t m = static_cast<uint32_t>(pos->back() + 3);
    DeviceVector<int32_t> d_pos(*pos);
    // No sort, so none of the sort's scratch.
    size_t sorted_bytes = 0, in_order_bytes = 0;
    const uint32_t n32 = static_cast<uint32_t>(n);
    ASSERT_TRUE(cuda::scatter_add_rows(nullptr, &sorted_bytes, nullptr, zfcFloat32,
                                       d_pos.get(), n32, 34, nullptr, m, nullptr).ok());
    ASSERT_TRUE(cuda::scatter_add_rows_in_order(nullptr, &in_order_bytes, nullptr, zfcFloat32,
                                                d_pos.get(), n32, 34, nullptr, m, nullptr)
                    .ok());
    EXPECT_LT(in_order_bytes, sorted_bytes);
    for_each_row_case(rng, n, m, [&](zfcDataType_t type, size_t dim, size_t offset,
                                     const void* host_rows, const void* d_rows,
                                     const std::vector<float>& dst) {
      std::vector<float> want = dst;
      kernels::scatter_add_rows(host_rows, type, pos->data(), n, dim, want.data());
      for_each_scatter_schedule([&](unsigned blocks, unsigned words) {
        DeviceVector<float> d_dst(dst);
        const Status s = with_scratch([&](void* t, size_t* b) {
          return cuda::scatter_add_rows_in_order(t, b, d_rows, type, d_pos.get(), n32, dim,
                                                 d_dst.get(), m, nullptr);
        });
        ASSERT_TRUE(s.ok()) << s.message();
        const std::vector<float> got = d_dst.to_host();
        for (size_t i = 0; i < got.size(); ++i) {
          ASSERT_EQ(kernels::f32_bits(got[i]), kernels::f32_bits(want[i]))
              << type << " dim " << dim << " offset " << offset << " blocks " << blocks
              << " words " << words << " at " << i << (pos == &gaps ? " (distinct)" : " (runs)");
        }
      });
    });
  }
}

// The scatter over the unique's grouping (no sort of its own): positions that are the
// inverse itself and the inverse's places in a larger set, a hot key of three sum blocks,
// every row type, streamed widths and the fallback's (16-bit rows of odd width), under every
// schedule of the streaming scatter.
TEST(DeviceRows, GroupedScatterHasTheHostBits) {
  ZFC_REQUIRE_GPU();
  const size_t n = 12000;  // key 0 takes about a fifth
  const uint64_t bound = 500;
  const std::vector<uint32_t> keys = zipf_keys<uint32_t>(n, bound, 17);
  DeviceVector<uint32_t> d_keys(keys), d_uniq(n + 1), d_num(1), d_order(n + 1);
  DeviceVector<int32_t> d_inverse(n + 1);
  ASSERT_TRUE(with_scratch([&](void* t, size_t* b) {
                return cuda::unique_with_inverse(t, b, d_keys.get(), static_cast<uint32_t>(n),
                                                 kernels::key_bits_for_bound(bound),
                                                 d_uniq.get(), d_inverse.get(), d_num.get(),
                                                 d_order.get(), nullptr);
              }).ok());
  const uint32_t u = d_num.value();
  const std::vector<int32_t> inverse = d_inverse.to_host(n);
  ASSERT_GT(std::count(inverse.begin(), inverse.end(), 0), 2 * static_cast<long>(kSumBlockRows));
  // Local i's place in a set of 3u + 2 rows: 3i + 1, so rows without input lie between.
  std::vector<int32_t> spread(n);
  for (size_t i = 0; i < n; ++i) spread[i] = 3 * inverse[i] + 1;
  workload::SplitMix64 rng(19);
  for (bool global : {false, true}) {
    const std::vector<int32_t>& pos = global ? spread : inverse;
    const uint32_t m = global ? 3 * u + 2 : u;
    DeviceVector<int32_t> d_pos(pos);
    for (zfcDataType_t type : {zfcFloat32, zfcFloat16, zfcBFloat16}) {
      for (size_t dim : {2, 33, 130, 264}) {
        std::vector<float> rows(n * dim);
        for (float& f : rows) f = static_cast<float>((rng.uniform() * 2 - 1) * 1e3);
        const std::vector<uint16_t> half = half_rows(rows, type);
        const void* host_rows = type == zfcFloat32 ? static_cast<const void*>(rows.data())
                                                   : static_cast<const void*>(half.data());
        std::vector<float> want(static_cast<size_t>(m) * dim, 0.0f);
        kernels::scatter_add_rows(host_rows, type, pos.data(), n, dim, want.data());
        DeviceVector<float> d_rows32(rows);
        DeviceVector<uint16_t> d_rows16(half);
        const void* d_rows = type == zfcFloat32 ? static_cast<const void*>(d_rows32.get())
                                                : static_cast<const void*>(d_rows16.get());
        for_each_scatter_schedule([&](unsigned blocks, unsigned words) {
          DeviceVector<float> d_dense(std::vector<float>(static_cast<size_t>(m) * dim, 7.0f));
          const Status s = with_scratch([&](void* t, size_t* b) {
            return cuda::scatter_to_dense_grouped(t, b, d_rows, type, d_pos.get(),
                                                  d_order.get(), static_cast<uint32_t>(n), dim,
                                                  d_dense.get(), m, nullptr);
          });
          ASSERT_TRUE(s.ok()) << s.message();
          const std::vector<float> got = d_dense.to_host();
          for (size_t i = 0; i < got.size(); ++i) {
            ASSERT_EQ(kernels::f32_bits(got[i]), kernels::f32_bits(want[i]))
                << type << " dim " << dim << " global " << global << " blocks " << blocks
                << " words " << words << " at " << i;
          }
        });
      }
    }
  }
}

TEST(DeviceRows, ApplyRowsHasTheHostBits) {
  ZFC_REQUIRE_GPU();
  const size_t vocab = 5000, dim = 96, n = 700;
  workload::SplitMix64 rng(12);
  std::vector<float> table(vocab * dim), rows(n * dim);
  for (float& f : table) f = static_cast<float>(rng.uniform());
  for (float& f : rows) f = static_cast<float>(rng.uniform() * 3 - 1);
  // Distinct indices (a sparse reduce's), then repeats, which are applied in order.
  for (bool repeats : {false, true}) {
    std::vector<int64_t> idx(n);
    for (size_t p = 0; p < n; ++p) idx[p] = static_cast<int64_t>(repeats ? (p * p) % 37 : p * 7);
    DeviceVector<float> d_table(table), d_rows(rows);
    DeviceVector<int64_t> d_idx(idx);
    std::vector<float> want = table;
    kernels::apply_rows(want.data(), dim, idx.data(), zfcInt64, rows.data(), n, -0.37f);
    ASSERT_TRUE(with_scratch([&](void* t, size_t* b) {
                  return cuda::apply_rows(t, b, d_table.get(), static_cast<int64_t>(vocab), dim,
                                          d_idx.get(), zfcInt64, d_rows.get(),
                                          static_cast<uint32_t>(n), -0.37f, nullptr);
                }).ok());
    const std::vector<float> got = d_table.to_host();
    for (size_t i = 0; i < got.size(); ++i) {
      ASSERT_EQ(kernels::f32_bits(got[i]), kernels::f32_bits(want[i])) << repeats << " " << i;
    }
  }
}

uint16_t to_wire_on_host(float x, zfcDataType_t wire) {
  return wire == zfcFloat16 ? kernels::f32_to_f16(x) : kernels::f32_to_bf16(x);
}

TEST(DeviceCasts, EncodeDecodeSumsAndAddsHaveTheHostBits) {
  ZFC_REQUIRE_GPU();
  workload::SplitMix64 rng(13);
  const size_t n = 100003;
  std::vector<float> v(n);
  for (float& f : v) {
    // Finite values of every magnitude, fp16 subnormals and overflow included.
    const int exponent = static_cast<int>(rng.below(60)) - 30;
    f = std::ldexp(static_cast<float>(rng.uniform() * 2 - 1), exponent);
  }
  DeviceVector<float> d_v(v), d_back(n);
  DeviceVector<uint16_t> d_wire(n);
  DeviceVector<int> d_flag(std::vector<int>{0});
  for (zfcDataType_t wire : {zfcFloat16, zfcBFloat16}) {
    // One element off the fp32 side's alignment, the 16-bit side's, or both takes the
    // scalar kernels; aligned, the four-wide ones and a scalar tail (n - 1 = 4k + 2).
    // Element off.f32 + i of the fp32 side pairs with off.wire + i of the 16-bit side.
    struct Offsets {
      size_t f32, wire;
    };
    for (Offsets off : {Offsets{1, 1}, Offsets{0, 1}, Offsets{1, 0}, Offsets{0, 0}}) {
      const size_t count = n - 1;
      std::vector<uint16_t> fill(n, 0xabcd);
      ASSERT_TRUE(cuda::copy_to_device(d_wire.get(), fill.data(), n * 2, nullptr).ok());
      ASSERT_TRUE(cuda::encode(d_v.get() + off.f32, count, wire, 5.0f, d_wire.get() + off.wire,
                               nullptr).ok());
      const std::vector<uint16_t> h = d_wire.to_host();
      for (size_t i = 0; i < count; ++i) {
        ASSERT_EQ(h[off.wire + i], to_wire_on_host(v[off.f32 + i] * 5.0f, wire)) << i;
      }
      // The one element outside the range is left as it was.
      ASSERT_EQ(h[off.wire == 1 ? 0 : n - 1], 0xabcd);
      std::vector<float> back(count);
      const bool finite = kernels::decode(h.data() + off.wire, count, wire, 5.0f, back.data());
      ASSERT_TRUE(cuda::copy_to_device(d_flag.get(), std::vector<int>{0}.data(), sizeof(int),
                                       nullptr).ok());
      const std::vector<float> sevens(n, 7.0f);
      ASSERT_TRUE(cuda::copy_to_device(d_back.get(), sevens.data(), n * 4, nullptr).ok());
      ASSERT_TRUE(cuda::decode(d_wire.get() + off.wire, count, wire, 5.0f,
                               d_back.get() + off.f32, d_flag.get(), nullptr).ok());
      EXPECT_EQ(d_flag.value() != 0, !finite);
      const std::vector<float> got = d_back.to_host();
      for (size_t i = 0; i < count; ++i) {
        ASSERT_EQ(kernels::f32_bits(got[off.f32 + i]), kernels::f32_bits(back[i])) << i;
      }
      ASSERT_EQ(got[off.f32 == 1 ? 0 : n - 1], 7.0f);
    }
    for (float scale : {1.0f, 3.0f, 1024.0f}) {
      ASSERT_TRUE(cuda::encode(d_v.get(), n, wire, scale, d_wire.get(), nullptr).ok());
      const std::vector<uint16_t> h = d_wire.to_host();
      bool any_inf = false;
      for (size_t i = 0; i < n; ++i) {
        const float x = v[i] * scale;
        const uint16_t want =
            wire == zfcFloat16 ? kernels::f32_to_f16(x) : kernels::f32_to_bf16(x);
        ASSERT_EQ(h[i], want) << i;
        any_inf |= wire == zfcFloat16 ? (want & 0x7c00) == 0x7c00 : (want & 0x7f80) == 0x7f80;
      }
      std::vector<float> back(n);
      const bool finite = kernels::decode(h.data(), n, wire, scale, back.data());
      ASSERT_TRUE(cuda::copy_to_device(d_flag.get(), std::vector<int>{0}.data(), sizeof(int),
                                       nullptr).ok());
      ASSERT_TRUE(
          cuda::decode(d_wire.get(), n, wire, scale, d_back.get(), d_flag.get(), nullptr).ok());
      EXPECT_EQ(d_flag.value() != 0, !finite);
      EXPECT_EQ(finite, !any_inf);
      const std::vector<float> got = d_back.to_host();
      for (size_t i = 0; i < n; ++i) {
        ASSERT_EQ(kernels::f32_bits(got[i]), kernels::f32_bits(back[i]));
      }
    }
  }
  // Rank-ordered sums of 5 blocks, from +0.
  const int blocks = 5;
  const size_t len = n / blocks;
  std::vector<float> acc(len);
  kernels::sum_blocks(v.data(), blocks, len, zfcFloat32, acc.data());
  DeviceVector<float> d_acc(len);
  ASSERT_TRUE(cuda::sum_blocks(d_v.get(), blocks, len, zfcFloat32, d_acc.get(), nullptr).ok());
  const std::vector<float> got = d_acc.to_host();
  for (size_t i = 0; i < len; ++i) {
    ASSERT_EQ(kernels::f32_bits(got[i]), kernels::f32_bits(acc[i]));
  }
  // One more block joining a running sum, from each wire type: the host's add_to.
  std::vector<uint16_t> halves(len), brains(len);
  for (size_t i = 0; i < len; ++i) {
    halves[i] = kernels::f32_to_f16(v[i] * 7.0f);
    brains[i] = kernels::f32_to_bf16(v[i] * 7.0f);
  }
  DeviceVector<uint16_t> d_halves(halves), d_brains(brains);
  for (zfcDataType_t wire : {zfcFloat32, zfcFloat16, zfcBFloat16}) {
    const void* src = wire == zfcFloat32   ? static_cast<const void*>(v.data() + len)
                      : wire == zfcFloat16 ? static_cast<const void*>(halves.data())
                                           : static_cast<const void*>(brains.data());
    const void* d_src = wire == zfcFloat32   ? static_cast<const void*>(d_v.get() + len)
                        : wire == zfcFloat16 ? static_cast<const void*>(d_halves.get())
                                             : static_cast<const void*>(d_brains.get());
    std::vector<float> sum = acc;
    kernels::add_to(src, wire, len, sum.data());
    DeviceVector<float> d_sum(acc);
    ASSERT_TRUE(cuda::add_to(d_src, wire, len, d_sum.get(), nullptr).ok());
    const std::vector<float> added = d_sum.to_host();
    for (size_t i = 0; i < len; ++i) {
      ASSERT_EQ(kernels::f32_bits(added[i]), kernels::f32_bits(sum[i])) << wire << " " << i;
    }
  }
  // Non-finite flag and division.
  std::vector<float> w = {1.0f, -2.0f, 3.0f};
  DeviceVector<float> d_w(w);
  const int zero = 0;
  ASSERT_TRUE(cuda::copy_to_device(d_flag.get(), &zero, sizeof(int), nullptr).ok());
  ASSERT_TRUE(cuda::flag_nonfinite(d_w.get(), 3, d_flag.get(), nullptr).ok());
  EXPECT_EQ(d_flag.value(), 0);
  ASSERT_TRUE(cuda::divide(d_w.get(), 3, 3.0f, nullptr).ok());
  EXPECT_EQ(d_w.to_host()[2], 1.0f);
  w[1] = INFINITY;
  DeviceVector<float> d_inf(w);
  ASSERT_TRUE(cuda::flag_nonfinite(d_inf.get(), 3, d_flag.get(), nullptr).ok());
  EXPECT_EQ(d_flag.value(), 1);
}

TEST(DeviceRuntime, ReportsWhyThereIsNoDevice) {
  if (cuda::device_count() > 0) {
    EXPECT_STREQ(cuda::no_device_reason(), "");
    int x = 0;
    EXPECT_FALSE(cuda::is_device_pointer(&x));
  } else {
    EXPECT_STRNE(cuda::no_device_reason(), "");
    int x = 0;
    EXPECT_FALSE(cuda::is_device_pointer(&x));
    cuda::DeviceBuffer b;
    EXPECT_FALSE(b.reserve(16).ok());  // no device: a clear error, not a crash
  }
}

}  // namespace
}  // namespace zfc

namespace zfc {
namespace {

// The eight-bit rows and the stochastically rounded 16-bit rows on the device have the
// host format encode's bits (kernels/wire_format.hpp), to nearest and stochastically, rows
// numbered from 5; the decode and the decoding add give the host's values and the flag.
TEST(DeviceEightBit, RowsHaveTheHostBits) {
  ZFC_REQUIRE_GPU();
  const size_t rows = 300, dim = 77;  // a tail of columns past the last eight
  workload::SplitMix64 rng(21);
  std::vector<float> v(rows * dim);
  for (size_t i = 0; i < v.size(); ++i) {
    const int exponent = static_cast<int>(i / dim % 40) - 20;  // each row its own range
    v[i] = std::ldexp(static_cast<float>(rng.uniform() * 2 - 1), exponent);
  }
  v[7 * dim + 3] = std::numeric_limits<float>::infinity();  // a row that is not finite
  std::fill(v.begin() + 9 * dim, v.begin() + 10 * dim, 0.0f);  // a row of zeros
  DeviceVector<float> d_v(v), d_back(rows * dim);
  DeviceVector<char> d_wire(rows * (dim + 4) * 2);
  DeviceVector<int> d_flag(std::vector<int>{0});
  const struct {
    zfcCompressionKind_t kind;
    cuda::RowCode code;
  } formats[] = {{zfcCompressFp16, cuda::RowCode::kFp16},
                 {zfcCompressBf16, cuda::RowCode::kBf16},
                 {zfcCompressFp8E4M3, cuda::RowCode::kFp8E4M3},
                 {zfcCompressFp8E5M2, cuda::RowCode::kFp8E5M2},
                 {zfcCompressInt8, cuda::RowCode::kInt8}};
  for (const auto& fmt : formats) {
    const kernels::WireFormat& f = kernels::wire_format(fmt.kind);
    for (bool stochastic : {false, true}) {
      kernels::Rounding r;
      r.stochastic = stochastic;
      r.seed = 17;
      r.step = 3;
      r.rank = 2;
      r.hop = kernels::kHopOwnerSum;
      r.rows = kernels::RowIds::counting(5);
      std::vector<char> want(rows * f.row_bytes(dim));
      f.encode_rows(v.data(), rows, dim, 4.0f, want.data(), r);
      const cuda::RowRounding dr{stochastic, 17, 3, 2u << 8 | kernels::kHopOwnerSum,
                                 nullptr, 0, 5};
      ASSERT_TRUE(cuda::encode_rows(d_v.get(), rows, dim, fmt.code, f.value_scale(4.0f), dr,
                                    d_wire.get(), nullptr).ok());
      const std::vector<char> got = d_wire.to_host(want.size());
      ASSERT_TRUE(test::same_bits(got, want)) << f.name << (stochastic ? " stochastic" : "");
      if (f.element_only()) continue;
      std::vector<float> back(rows * dim);
      const bool finite = f.decode_rows(want.data(), rows, dim, 1.0f, back.data());
      EXPECT_FALSE(finite);  // row 7
      ASSERT_TRUE(cuda::fill_zero(d_flag.get(), sizeof(int), nullptr).ok());
      ASSERT_TRUE(cuda::decode_eight_bit_rows(d_wire.get(), rows, dim, fmt.code, nullptr, false,
                                              d_back.get(), d_flag.get(), nullptr).ok());
      EXPECT_NE(d_flag.value(), 0);
      ASSERT_TRUE(test::same_bits(d_back.to_host(), back)) << f.name;
      // Added onto what is there: 1 + value, as the host's decoding sum without first touch.
      std::vector<float> ones(rows * dim, 1.0f);
      std::vector<int32_t> pos(rows);
      for (size_t i = 0; i < rows; ++i) pos[i] = static_cast<int32_t>(rows - 1 - i);
      DeviceVector<int32_t> d_pos(pos);
      DeviceVector<float> d_sum(ones);
      f.accumulate_rows(want.data(), pos.data(), rows, dim, ones.data(), nullptr);
      ASSERT_TRUE(cuda::decode_eight_bit_rows(d_wire.get(), rows, dim, fmt.code, d_pos.get(),
                                              true, d_sum.get(), d_flag.get(), nullptr).ok());
      ASSERT_TRUE(test::same_bits(d_sum.to_host(), ones)) << f.name;
    }
  }
}

}  // namespace
}  // namespace zfc

// The wire format as a unit: the three formats of the table, and a format with a per-row
// part (defined here, as a new format's file would) going through the execution layer's
// format calls -- pair packing, the placing decode, and the sums that write each target's
// first row -- with rows of its own size.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "exec/step_kernels.hpp"
#include "exec/workspace.hpp"
#include "kernels/cast.hpp"
#include "kernels/rows.hpp"
#include "kernels/wire_format.hpp"

namespace zfc {
namespace {

// A test format: fp16 values divided by a per-row power of two (the row's largest magnitude
// rounded up), the power stored after the values as an fp32: a per-row scale.
float row_power(const float* v, size_t dim) {
  float most = 0.0f;
  for (size_t k = 0; k < dim; ++k) most = std::max(most, std::fabs(v[k]));
  return most > 0.0f ? std::exp2(std::ceil(std::log2(most))) : 1.0f;
}

void encode_scaled(const kernels::WireFormat& f, const float* src, size_t rows, size_t dim,
                   float scale, const kernels::Rounding&, void* dst) {
  std::vector<float> row(dim);
  for (size_t r = 0; r < rows; ++r) {
    char* out = static_cast<char*>(dst) + r * f.row_bytes(dim);
    for (size_t k = 0; k < dim; ++k) row[k] = src[r * dim + k] * scale;
    const float p = row_power(row.data(), dim);
    kernels::encode(row.data(), dim, zfcFloat16, 1.0f / p, out);
    std::memcpy(out + 2 * dim, &p, sizeof p);
  }
}

bool decode_scaled(const kernels::WireFormat& f, const void* src, size_t rows, size_t dim,
                   float scale, float* dst) {
  bool finite = true;
  for (size_t r = 0; r < rows; ++r) {
    const char* in = static_cast<const char*>(src) + r * f.row_bytes(dim);
    float p;
    std::memcpy(&p, in + 2 * dim, sizeof p);
    finite &= kernels::decode(in, dim, zfcFloat16, scale / p, dst + r * dim);
  }
  return finite;
}

void accumulate_scaled(const kernels::WireFormat& f, const void* rows, const int32_t* pos,
                       size_t n, size_t dim, float* dst, uint8_t* touched) {
  std::vector<float> row(dim);
  for (size_t i = 0; i < n; ++i) {
    decode_scaled(f, static_cast<const char*>(rows) + i * f.row_bytes(dim), 1, dim, 1.0f,
                  row.data());
    float* t = dst + static_cast<size_t>(pos[i]) * dim;
    const bool first = touched != nullptr && touched[pos[i]] == 0;
    for (size_t k = 0; k < dim; ++k) t[k] = (first ? 0.0f : t[k]) + row[k];
    if (touched != nullptr) touched[pos[i]] = 1;
  }
}

const kernels::WireRowOps kScaledRows = {encode_scaled, decode_scaled, accumulate_scaled};
const kernels::WireFormat kScaled = {zfcCompressFp16, "fp16 per-row power", zfcFloat16, 2,
                                     sizeof(float), false, &kScaledRows};

TEST(WireFormat, TheTableHasTheThreeFormatsOfValuesOnly) {
  for (int kind : {zfcCompressNone, zfcCompressFp16, zfcCompressBf16}) {
    const kernels::WireFormat* f = kernels::find_wire_format(kind);
    ASSERT_NE(f, nullptr);
    EXPECT_TRUE(f->element_only());
    EXPECT_EQ(f->row_bytes(10), 10 * kernels::float_type_bytes(f->element));
  }
  EXPECT_EQ(kernels::find_wire_format(99), nullptr);
  EXPECT_EQ(kScaled.row_bytes(10), 24u);
  EXPECT_FALSE(kScaled.element_only());
}

// Pairs packed in a format with a per-row part, decoded at their places and summed with a
// first touch: the same as the format's own encode, decode and adds.
TEST(WireFormat, APerRowFormatGoesThroughPackingDecodeAndSums) {
  const size_t dim = 6, n = 5;
  std::vector<float> rows(n * dim);
  for (size_t i = 0; i < rows.size(); ++i) rows[i] = static_cast<float>(i) * 0.37f - 3.0f;
  const uint32_t keys[n] = {2, 5, 7, 11, 13};
  const int32_t owner_of[n] = {0, 1, 0, 1, 1};
  const uint64_t counts[2] = {2, 3};
  const PairBlock block{sizeof(uint64_t), sizeof(uint32_t), kScaled.row_bytes(dim)};
  const size_t displs[2] = {0, block.bytes(2)};
  const PairPacking packing{block, counts, displs, 2};
  std::vector<char> packed(block.bytes(2) + block.bytes(3), '\x55');
  Workspace ws;
  HostStepKernels<uint32_t> k(ws);
  ASSERT_TRUE(k.pack_wire_pairs(kScaled, keys, owner_of, n, rows.data(), dim, 1.0f, packing,
                                packed.data(), kernels::Rounding{})
                  .ok());
  // Owner 1's rows are rows 1, 3 and 4, each of row_bytes(dim), after its keys.
  const char* owner1 = packed.data() + displs[1];
  uint64_t c = 0;
  std::memcpy(&c, owner1, sizeof c);
  EXPECT_EQ(c, 3u);
  EXPECT_EQ(reinterpret_cast<const uint32_t*>(owner1 + block.lead)[1], 11u);
  std::vector<char> want(kScaled.row_bytes(dim));
  kScaled.encode_rows(rows.data() + 3 * dim, 1, dim, 1.0f, want.data());
  EXPECT_EQ(std::memcmp(owner1 + block.rows_at(3) + kScaled.row_bytes(dim), want.data(),
                        want.size()),
            0);

  // The placing decode: owner 1's three rows into places 2, 0, 1.
  const int32_t dest[3] = {2, 0, 1};
  std::vector<float> placed(3 * dim, -1.0f), expect(3 * dim);
  ASSERT_TRUE(k.decode_wire_rows_to(kScaled, owner1 + block.rows_at(3), dest, 3, dim, 1.0f,
                                    placed.data())
                  .ok());
  for (size_t q = 0; q < 3; ++q) {
    kScaled.decode_rows(owner1 + block.rows_at(3) + q * kScaled.row_bytes(dim), 1, dim, 1.0f,
                        expect.data() + static_cast<size_t>(dest[q]) * dim);
  }
  EXPECT_EQ(placed, expect);
  bool finite = false;
  ASSERT_TRUE(k.wire().all_finite(&finite).ok());
  EXPECT_TRUE(finite);

  // A first-touch sum of the three rows into targets {1, 1, 3} of 4: row 0 and 2 are zeroed
  // at end_sum, row 1 is the sum of two, row 3 one.
  const int32_t pos[3] = {1, 1, 3};
  std::vector<float> sums(4 * dim, 9.0f), rows_back(3 * dim);
  kScaled.decode_rows(owner1 + block.rows_at(3), 3, dim, 1.0f, rows_back.data());
  ASSERT_TRUE(k.begin_sum(sums.data(), 4, dim).ok());
  ASSERT_TRUE(k.add_wire_rows(kScaled, owner1 + block.rows_at(3), pos, 3, dim, sums.data(), 4,
                              true)
                  .ok());
  ASSERT_TRUE(k.end_sum().ok());
  for (size_t d = 0; d < dim; ++d) {
    EXPECT_EQ(sums[0 * dim + d], 0.0f);
    EXPECT_EQ(sums[2 * dim + d], 0.0f);
    EXPECT_EQ(sums[1 * dim + d], (0.0f + rows_back[d]) + rows_back[dim + d]);
    EXPECT_EQ(sums[3 * dim + d], 0.0f + rows_back[2 * dim + d]);
  }
}

}  // namespace
}  // namespace zfc

// CUDA kernels for every local step of the exchange, in the manner of CUB: device pointers
// (d_), the caller's stream (a cudaStream_t passed as void*; nullptr is the default stream),
// nothing synchronised, and scratch memory supplied by the caller: call once with
// d_temp == nullptr to learn *temp_bytes, then again with that much device memory.
//
// Every result is the same bits the host kernels (lib/kernels) give for the same input:
// sums run from +0 in the host's order (token order within a row, rank order across
// blocks), the 16-bit conversions are the host's own code (host_device/half_bits.hpp), and the
// kernels are compiled without fused multiply-add contraction. A sum that is NaN is NaN on
// both, but not always the same NaN (a GPU's arithmetic gives the canonical one, x86's
// another or the operand's payload). Counts are below 2^31.
#pragma once

#include <cstddef>
#include <cstdint>

#include "host_device/bounded_step.hpp"
#include "host_device/status.hpp"
#include "zipfcoll/zipfcoll.h"

namespace zfc {
namespace cuda {

// ---- bytes -------------------------------------------------------------------------------

// The `bytes` (at most kInlineStoreBytes) at host `src` into d_dst, carried as a kernel's
// argument: nothing waits, and a CUDA graph captures it (cuda/inline_store.cu).
constexpr size_t kInlineStoreBytes = 128;
Status store_inline(void* d_dst, const void* src, size_t bytes, void* stream);

// ---- indices -----------------------------------------------------------------------------

// The sorted distinct keys of d_keys[0..n) into d_uniq (room for n), their number into
// *d_num_unique (device memory), and for every i the position of d_keys[i] among them into
// d_inverse[i]. Keys are K = uint32_t or uint64_t below 2^key_bits: the radix sort looks at
// those bits only. With d_order (room for n; may be NULL), the sort's order is kept there:
// the input numbers by key, equal keys in input order (the sort is stable), which is the
// grouping scatter_to_dense_grouped takes in place of a sort of its own. The scratch is
// smaller then: ask with the same d_order.
template <class K>
Status unique_with_inverse(void* d_temp, size_t* temp_bytes, const K* d_keys, uint32_t n,
                           int key_bits, K* d_uniq, int32_t* d_inverse,
                           uint32_t* d_num_unique, uint32_t* d_order, void* stream);

// The sorted distinct keys of d_keys[0..n) into d_uniq (room for n), their number into
// *d_num_unique.
template <class K>
Status sorted_unique(void* d_temp, size_t* temp_bytes, const K* d_keys, uint32_t n,
                     int key_bits, K* d_uniq, uint32_t* d_num_unique, void* stream);

// For sorted distinct d_sub, every element of which is in sorted distinct d_full, the index
// in d_full of each d_sub[i] into d_pos[i]. n_full is read from the device (*d_n_full), so
// that a set computed on the device needs no copy to the host first.
template <class K>
Status locate_sorted(const K* d_sub, uint32_t n_sub, const K* d_full, const uint32_t* d_n_full,
                     int32_t* d_pos, void* stream);

// d_out[i] = d_table[d_index[i]] for i in [0, n) (composes a token -> local position map with
// a local -> global one).
Status compose_positions(const int32_t* d_index, uint32_t n, const int32_t* d_table,
                         int32_t* d_out, void* stream);

// The smallest i with d_pos[i] outside [0, bound) into *d_first_bad, or n when there is none.
Status find_bad_position(const int32_t* d_pos, uint32_t n, uint32_t bound,
                         uint32_t* d_first_bad, void* stream);

// The smallest i with an index outside [0, vocab) into *d_first_bad (n when none); indices
// are zfcInt32 or zfcInt64.
Status find_bad_index(const void* d_indices, zfcDataType_t type, uint32_t n, int64_t vocab,
                      uint32_t* d_first_bad, void* stream);

// ---- rows (row-major, width dim) ---------------------------------------------------------

// d_dense (m x dim) = zero, then row i of d_rows (n x dim, zfcFloat32/Float16/BFloat16) added
// into row d_pos[i] in fp32, in blocked input order (host_device/sum_order.hpp): the host's
// scatter_add_rows into zeroed rows. Rows are sorted by target (a stable radix sort); one
// warp sums a slice of a chunk of them (loaded 16 or 8 bytes per lane into registers, or
// copied 4 bytes per lane through shared memory), a hot target's later blocks into partial
// rows that a second kernel adds on in block order; no floating-point atomics are used. Rows
// with input are written whole, never read; only the others are zeroed. Every d_pos[i] must
// be in [0, m).
Status scatter_to_dense(void* d_temp, size_t* temp_bytes, const void* d_rows,
                        zfcDataType_t row_type, const int32_t* d_pos, uint32_t n, size_t dim,
                        float* d_dense, uint32_t m, void* stream);

// scatter_to_dense over rows already grouped by target: d_order[0..n) must list the inputs
// so that d_pos[d_order[j]] never decreases in j. unique_with_inverse keeps such an order
// for positions that never decrease as its inverse grows: the local positions themselves,
// their places in a global set, and those clamped to a capacity. The targets are gathered
// in that order instead of sorted: one pass over n positions in place of a radix sort.
// Where equal positions come in input order -- the rows of one key do -- the bits are
// scatter_to_dense's; where two keys share a position (only the bounded step's spare row,
// whose sum a failed verdict drops) their rows are summed key by key instead. With d_order
// NULL it is scatter_to_dense. The scratch it needs depends on whether d_order is NULL: ask
// with the same d_order.
Status scatter_to_dense_grouped(void* d_temp, size_t* temp_bytes, const void* d_rows,
                                zfcDataType_t row_type, const int32_t* d_pos,
                                const uint32_t* d_order, uint32_t n, size_t dim,
                                float* d_dense, uint32_t m, void* stream);

// Row i of d_rows added into row d_pos[i] of d_dst (m x dim, fp32, as it is) in blocked
// input order: the host's scatter_add_rows. Every d_pos[i] must be in [0, m).
Status scatter_add_rows(void* d_temp, size_t* temp_bytes, const void* d_rows,
                        zfcDataType_t row_type, const int32_t* d_pos, uint32_t n, size_t dim,
                        float* d_dst, uint32_t m, void* stream);

// scatter_add_rows where d_pos[i] never decreases in i (an owner's located keys of one
// sender, which are sorted and distinct): the input order groups the rows by target, so
// they are not sorted. The same bits as scatter_add_rows. Positions that do decrease stay
// in bounds, but their sums are in no fixed order.
Status scatter_add_rows_in_order(void* d_temp, size_t* temp_bytes, const void* d_rows,
                                 zfcDataType_t row_type, const int32_t* d_pos, uint32_t n,
                                 size_t dim, float* d_dst, uint32_t m, void* stream);

// Whether the two scatters above stream rows of this type, width and base in sum blocks
// side by side (4-byte aligned slices: 16- or 8-byte loads into registers where the rows'
// bytes and base allow, else 4-byte copies through a ring in shared memory), or take the
// fallback that sums each run's rows serially.
bool scatter_streams(const void* d_rows, zfcDataType_t row_type, size_t dim);

// For tests: at most `blocks` blocks for the streaming scatter, and at most `blocks` on each
// side of the fold's grid (0: the usual grids), so that one block's ring, one warp, or one
// fold block serves several work items. Not thread-safe; the library never sets it.
void set_scatter_block_limit_for_tests(unsigned blocks);

// For tests and benchmarks: the load of the streaming scatter, in 4-byte words (4 or 2 for the
// register kernel, or the widest below that the rows allow; 1 for the ring), whatever the
// number of work items; 0 restores the library's choice. Not thread-safe; the library never
// sets it.
void set_scatter_lane_words_for_tests(unsigned words);

// d_table[d_idx[p]] += alpha * d_rows[p] for p in [0, n) in order of p (indices zfcInt32 or
// zfcInt64, each in [0, vocab); repeated indices are applied in order, as on the host).
Status apply_rows(void* d_temp, size_t* temp_bytes, float* d_table, int64_t vocab, size_t dim,
                  const void* d_idx, zfcDataType_t index_type, const float* d_rows, uint32_t n,
                  float alpha, void* stream);

// d_out[p] = row d_rows[p] of d_table (dim fp32 values each), p in [0, n).
Status gather_rows(const float* d_table, size_t dim, const uint64_t* d_rows, uint32_t n,
                   float* d_out, void* stream);

// The row update `kind` (zfcUpdateKind_t) of d_table[d_idx[p]] (and of d_state[d_idx[p]],
// Adagrad's accumulator; unused otherwise) with d_rows[p], for p in [0, n) in order of p, with
// the host's bits (kernels::update_rows). Indices as for apply_rows.
Status update_rows(void* d_temp, size_t* temp_bytes, float* d_table, float* d_state,
                   int64_t vocab, size_t dim, const void* d_idx, zfcDataType_t index_type,
                   const float* d_rows, uint32_t n, int kind, float alpha, float epsilon,
                   void* stream);

// ---- the key-routed step's pairs -----------------------------------------------------------

// d_keys[i] = d_indices[i] (zfcInt32 or zfcInt64) as K, or 0 for an index outside
// [0, vocab); the range is checked apart (find_bad_index). Every key is thus below vocab,
// whatever the caller passed: the unique's radix sort over the bits of vocab orders them
// all, so its order still groups the scatter's positions (scatter_to_dense_grouped) in a
// step that a bad index fails, or whose caller turned the check off.
template <class K>
Status load_keys(const void* d_indices, zfcDataType_t type, uint32_t n, int64_t vocab,
                 K* d_keys, void* stream);

// d_out[i] = d_keys[i] as `type` (zfcInt32 or zfcInt64).
template <class K>
Status store_keys(const K* d_keys, uint32_t n, zfcDataType_t type, void* d_out, void* stream);

// For i below min(room, *d_count) (a device word, such as a unique's count, that the host
// need not have read): d_owner_of[i] = key_owner(d_keys[i], ranks)
// (host_device/key_owner.hpp), and d_counts[j] (ranks words) the number of keys of owner j.
template <class K>
Status owner_counts(const K* d_keys, uint32_t room, const uint64_t* d_count, int ranks,
                    int32_t* d_owner_of, uint64_t* d_counts, void* stream);

// The layout of one owner's block of pairs: `lead` bytes (its count), then the keys, then
// the rows, each part padded to 8 bytes (exec/step_kernels.hpp's PairBlock).
struct PairFrame {
  size_t lead, key_bytes, row_bytes;
};

// The pairs of n sorted distinct keys packed by owner into d_packed: owner j's block at
// d_displs[j], led by d_counts[j] as a uint64_t (frame.lead is its 8 bytes), its keys and
// rows (row i of d_rows encoded as the host's encode does) in key order, each part's padding
// zeroed, so that every byte of blocks laid back to back is written. Scratch as above.
template <class K>
Status pack_pairs(void* d_temp, size_t* temp_bytes, const K* d_keys, const int32_t* d_owner_of,
                  uint32_t n, int ranks, const float* d_rows, size_t dim, zfcDataType_t wire,
                  float scale, const PairFrame& frame, const uint64_t* d_counts,
                  const uint64_t* d_displs, char* d_packed, void* stream);

// Row k of d_rows (n x dim of the wire type, back to back) decoded as the host's decode into
// row d_dest[k] of d_out; ORs 1 into *d_nonfinite when some value is inf or NaN.
Status decode_rows_to(const void* d_rows, const int32_t* d_dest, uint32_t n, size_t dim,
                      zfcDataType_t wire, float scale, float* d_out, int* d_nonfinite,
                      void* stream);

// *d_out = *d_in (a count the CUB kernels wrote as 32 bits, for a 64-bit word).
Status widen_count(const uint32_t* d_in, uint64_t* d_out, void* stream);

// ---- the bounded step (cuda/bounded.cu): sizes read from device words --------------------

// d_keys[i] = value for *d_count <= i < room.
template <class K>
Status fill_keys_after(K* d_keys, uint32_t room, const uint64_t* d_count, K value,
                       void* stream);
// d_out[i] = min(d_table[d_index[i]], limit), and limit where d_index[i] >= n_table.
Status compose_clamped(const int32_t* d_index, uint32_t n, const int32_t* d_table,
                       uint32_t n_table, int32_t limit, int32_t* d_out, void* stream);
// bounded_verdict_of (host_device/bounded_step.hpp) in one thread: the gathered headers and
// their sizes (both nullptr when the host agreed), `ranks` blocks of block_bytes at
// d_gathered, each led by a BoundedLead, and the global set (*d_count keys).
template <class K>
Status bounded_verdict(const char* d_gathered, size_t block_bytes, int ranks,
                       const OpHeader* d_headers, const uint64_t* d_sizes, const K* d_global,
                       const uint64_t* d_count, K sentinel, size_t capacity,
                       BoundedVerdict* d_out, void* stream);
// With a successful *d_verdict: the U_g keys of d_global as index_type into d_indices, then -1
// up to `capacity`; capacity x dim floats of d_dense into d_rows; *d_status = {U_g, success,
// *d_nonfinite != 0}. Else only *d_status = {U_g, the failure, 0}.
template <class K>
Status bounded_finish(const BoundedVerdict* d_verdict, const K* d_global, const float* d_dense,
                      size_t dim, void* d_indices, zfcDataType_t index_type, float* d_rows,
                      uint32_t capacity, const int* d_nonfinite, zfcBoundedStatus_t* d_status,
                      void* stream);

// ---- wire formats ------------------------------------------------------------------------

// d_dst[i] = wire(d_src[i] * scale); a plain copy for a zfcFloat32 wire.
Status encode(const float* d_src, size_t n, zfcDataType_t wire, float scale, void* d_dst,
              void* stream);

// d_dst[i] = fp32(d_src[i]) / scale (no division for zfcFloat32). ORs 1 into *d_nonfinite
// when some d_dst[i] is inf or NaN (a finite input too, where a scale below 1 takes it there).
Status decode(const void* d_src, size_t n, zfcDataType_t wire, float scale, float* d_dst,
              int* d_nonfinite, void* stream);

// d_acc[i] = ((+0 + block_0[i]) + block_1[i]) + ... over `nblocks` consecutive blocks of n
// wire elements (d_acc may be block 0 when the wire is zfcFloat32).
Status sum_blocks(const void* d_blocks, int nblocks, size_t n, zfcDataType_t wire,
                  float* d_acc, void* stream);

// d_acc[i] += fp32(d_src[i]) for n wire elements (the host's kernels::add_to).
Status add_to(const void* d_src, zfcDataType_t wire, size_t n, float* d_acc, void* stream);

// ---- rows rounded stochastically, and the eight-bit formats (cuda/eight_bit.cu) ---------

// The wire of a row encode: 16 bits times a scale, or eight bits with the row's own scale
// after the codes (D + 4 bytes; lib/kernels/wire_eight_bit.cpp gives the rule).
enum class RowCode : int { kFp16, kBf16, kFp8E4M3, kFp8E5M2, kInt8 };

// How a row encode rounds: to nearest, or stochastically with the bits of
// host_device/eight_bit.hpp for (seed, step, rank << 8 | hop, row id, column); row i's id is
// d_ids[i] (id_bytes 4 or 8, device memory), or base + i without d_ids.
struct RowRounding {
  bool stochastic;
  uint64_t seed;
  uint32_t step;
  uint32_t rank_hop;
  const void* d_ids;
  uint32_t id_bytes;
  uint64_t base;
};

// rows x dim values of d_src to rows of `code` at d_dst, as the host's format encode does
// (`scale`: the 16-bit formats' compression scale).
Status encode_rows(const float* d_src, uint32_t rows, size_t dim, RowCode code, float scale,
                   const RowRounding& r, void* d_dst, void* stream);

// Row k of d_src (eight-bit rows of `code`) decoded into row d_dest[k] (k without d_dest) of
// d_out, or added to it (`add`); ORs 1 into *d_nonfinite when some value is inf or NaN.
Status decode_eight_bit_rows(const void* d_src, uint32_t rows, size_t dim, RowCode code,
                             const int32_t* d_dest, bool add, float* d_out, int* d_nonfinite,
                             void* stream);

// ORs 1 into *d_nonfinite when some d_v[i] is inf or NaN.
Status flag_nonfinite(const float* d_v, size_t n, int* d_nonfinite, void* stream);

// d_v[i] /= divisor.
Status divide(float* d_v, size_t n, float divisor, void* stream);

}  // namespace cuda
}  // namespace zfc

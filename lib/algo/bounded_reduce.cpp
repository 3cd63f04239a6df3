#include "algo/bounded_reduce.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>

#include "algo/allreduce.hpp"
#include "core/stats.hpp"

namespace zfc {

template <class K>
Status bounded_local(StepKernels<K>& k, int64_t vocab, const void* indices,
                     zfcDataType_t index_type, size_t count, bool check, BoundedLocal<K>* out) {
  BoundedLocal<K> l;
  l.count = count;
  ZFC_RETURN_IF_ERROR(scratch_for(k, Slot::kStepWords, 3, &l.words));
  ZFC_RETURN_IF_ERROR(scratch_for(k, Slot::kKeys, count, &l.keys));
  ZFC_RETURN_IF_ERROR(scratch_for(k, Slot::kLocalUnique, count, &l.uniq));
  ZFC_RETURN_IF_ERROR(scratch_for(k, Slot::kInverse, count, &l.inverse));
  ZFC_RETURN_IF_ERROR(k.load_keys(indices, index_type, count, vocab, check, l.keys, &l.words[0]));
  // A bad index leaves keys the kernels can still sort; the verdict drops the result.
  ZFC_RETURN_IF_ERROR(k.unique_with_inverse(l.keys, count, static_cast<uint64_t>(vocab), l.uniq,
                                            l.inverse, &l.words[1], &l.grouping));
  *out = l;
  return Status::Ok();
}

namespace {

// Rank r's block in the key allgather: its lead, then `room` keys (its distinct keys, then
// the sentinel), padded to 8 bytes.
struct KeyBlock {
  size_t room, key_bytes;
  size_t bytes() const { return sizeof(BoundedLead) + pad8(room * key_bytes); }
};

// This rank's block into `send`: the lead (its first bad index, count and distinct count)
// and its first `room` distinct keys padded with the sentinel; every byte defined. Of its
// count only min(count, room) keys are copied: U_i is not known to the host.
template <class K>
Status pack_key_block(StepKernels<K>& k, const BoundedLocal<K>& local, const KeyBlock& b,
                      K sentinel, char* send) {
  ZFC_RETURN_IF_ERROR(k.copy(send, &local.words[0], sizeof(uint64_t)));
  const uint64_t count = local.count;
  ZFC_RETURN_IF_ERROR(k.upload(send + offsetof(BoundedLead, count), &count, sizeof count));
  ZFC_RETURN_IF_ERROR(
      k.copy(send + offsetof(BoundedLead, distinct), &local.words[1], sizeof(uint64_t)));
  K* keys = reinterpret_cast<K*>(send + sizeof(BoundedLead));
  ZFC_RETURN_IF_ERROR(k.copy(keys, local.uniq, std::min(local.count, b.room) * sizeof(K)));
  ZFC_RETURN_IF_ERROR(k.fill_keys_after(keys, b.room, &local.words[1], sentinel));
  const size_t used = sizeof(BoundedLead) + b.room * sizeof(K);
  return k.zero(send + used, b.bytes() - used);
}

}  // namespace

namespace {

// How many of this rank's distinct keys its block may hold: all U_i of them (at most its
// count) up to the room, and they are located in the global set.
template <class K>
size_t mine_keys(const BoundedLocal<K>& local, const KeyBlock& block) {
  return std::min(local.count, block.room);
}

// What the merge leaves in k's memory: the global set (all_keys sorted keys, the sentinel
// past the set), the verdict, and the global positions of this rank's distinct keys.
template <class K>
struct Merged {
  K* global = nullptr;
  BoundedVerdict* verdict = nullptr;
  int32_t* located = nullptr;
};

// Every rank's block of keys merged into the global set, the verdict, and this rank's keys
// located in the set.
template <class K>
Status merge_blocks(const BoundedStep& s, StepKernels<K>& k, const BoundedLocal<K>& local,
                    const char* gathered, const KeyBlock& block, const OpHeader* headers,
                    const uint64_t* sizes, Merged<K>* out) {
  Transport& t = s.transport;
  const size_t G = static_cast<size_t>(t.size()), all_keys = G * block.room;
  const K sentinel = bounded_sentinel<K>(s.spec.vocab);
  Merged<K> m;
  K* keys = nullptr;
  ZFC_RETURN_IF_ERROR(scratch_for(k, Slot::kGatheredKeys, all_keys, &keys));
  ZFC_RETURN_IF_ERROR(scratch_for(k, Slot::kGlobalUnique, all_keys, &m.global));
  ZFC_RETURN_IF_ERROR(scratch_for(k, Slot::kOwnerReports, 1, &m.verdict));
  ZFC_RETURN_IF_ERROR(scratch_for(k, Slot::kLocate, mine_keys(local, block), &m.located));
  for (size_t r = 0; r < G; ++r) {
    ZFC_RETURN_IF_ERROR(k.copy(keys + r * block.room,
                               gathered + r * block.bytes() + sizeof(BoundedLead),
                               block.room * sizeof(K)));
  }
  uint64_t* global_count = &local.words[2];
  ZFC_RETURN_IF_ERROR(k.sorted_unique(keys, all_keys, static_cast<uint64_t>(s.spec.vocab) + 1,
                                      m.global, global_count));
  // Past the set, the sentinel: the lookups below see a sorted array of all_keys keys.
  ZFC_RETURN_IF_ERROR(k.fill_keys_after(m.global, all_keys, global_count, sentinel));
  ZFC_RETURN_IF_ERROR(k.bounded_verdict(gathered, block.bytes(), t.size(), headers, sizes,
                                        m.global, global_count, sentinel, block.room,
                                        m.verdict));
  // This rank's distinct keys as it sent them (sorted, then the sentinel, which the global
  // array holds whenever this rank padded).
  const K* mine =
      reinterpret_cast<const K*>(gathered + t.rank() * block.bytes() + sizeof(BoundedLead));
  ZFC_RETURN_IF_ERROR(
      k.locate_sorted(mine, mine_keys(local, block), m.global, all_keys, m.located));
  *out = m;
  return Status::Ok();
}

// This rank's rows summed at their global positions into *dense ((cap + 1) x dim; row cap
// takes what has no row below the capacity, only when U_g exceeds it and the verdict then
// drops the result, so every write stays in the matrix).
template <class K>
Status scatter_rows(const BoundedStep& s, StepKernels<K>& k, const BoundedLocal<K>& local,
                    const int32_t* located, size_t n_located, const void* rows, size_t cap,
                    float** dense) {
  const size_t dim = s.spec.dim;
  int32_t* positions = nullptr;
  ZFC_RETURN_IF_ERROR(scratch_for(k, Slot::kPositions, local.count, &positions));
  ZFC_RETURN_IF_ERROR(scratch_for(k, Slot::kDense, (cap + 1) * dim, dense));
  // A key past the block's room (U_i above the capacity, so the verdict fails) takes the
  // spare row too. The positions never decrease as the keys grow (the located keys are
  // sorted, and the clamp keeps that), so the unique's grouping serves the scatter.
  ZFC_RETURN_IF_ERROR(k.compose_clamped(local.inverse, local.count, located, n_located,
                                        static_cast<int32_t>(cap), positions));
  return k.scatter_to_dense(rows, s.spec.row_type, positions, local.count, dim, *dense,
                            cap + 1, local.grouping);
}

}  // namespace

template <class K>
Status bounded_exchange(const BoundedStep& s, StepKernels<K>& k, const BoundedLocal<K>& local,
                        const OpHeader* headers, const uint64_t* sizes, const void* rows,
                        const BoundedOutput& out, const BoundedVerdict** verdict) {
  Transport& t = s.transport;
  const size_t G = static_cast<size_t>(t.size()), dim = s.spec.dim, cap = out.capacity;
  // Every rank's block has room for the capacity: the host knows no rank's U_i, and a step
  // that succeeds has U_i <= U_g <= capacity everywhere.
  const KeyBlock block{cap, sizeof(K)};
  char* gathered = nullptr;
  {
    PhaseTimer timer(s.op, zfcPhaseIndexExchange);
    char* send = nullptr;
    ZFC_RETURN_IF_ERROR(scratch_for(k, Slot::kRoutedPairs, block.bytes(), &send));
    ZFC_RETURN_IF_ERROR(scratch_for(k, Slot::kGatheredRows, G * block.bytes(), &gathered));
    ZFC_RETURN_IF_ERROR(
        pack_key_block(k, local, block, bounded_sentinel<K>(s.spec.vocab), send));
    ZFC_RETURN_IF_ERROR(k.wire().settle());  // the transport reads it next
    ZFC_RETURN_IF_ERROR(t.allgather(send, block.bytes(), gathered));
  }
  Merged<K> m;
  {
    PhaseTimer timer(s.op, zfcPhaseMerge);
    ZFC_RETURN_IF_ERROR(merge_blocks(s, k, local, gathered, block, headers, sizes, &m));
  }
  float* dense = nullptr;
  {
    PhaseTimer timer(s.op, zfcPhaseScatter);
    ZFC_RETURN_IF_ERROR(scatter_rows(s, k, local, m.located, mine_keys(local, block), rows, cap,
                                     &dense));
  }
  {
    PhaseTimer timer(s.op, zfcPhaseRowExchange);
    // The overflow flag stays in k's memory for bounded_finish (finite == nullptr).
    ZFC_RETURN_IF_ERROR(allreduce_sum(t, s.ws, k.wire(), dense, dense, cap * dim,
                                      s.compression, nullptr, s.nodes,
                                      RecvWrites::kInPlace, dim));
  }
  if (out.status != nullptr) {
    ZFC_RETURN_IF_ERROR(k.bounded_finish(m.verdict, m.global, dense, dim, out));
  }
  *verdict = m.verdict;
  return Status::Ok();
}

#define ZFC_INSTANTIATE_BOUNDED(K)                                                           \
  template Status bounded_local<K>(StepKernels<K>&, int64_t, const void*, zfcDataType_t,     \
                                   size_t, bool, BoundedLocal<K>*);                          \
  template Status bounded_exchange<K>(const BoundedStep&, StepKernels<K>&,                   \
                                      const BoundedLocal<K>&, const OpHeader*,               \
                                      const uint64_t*, const void*, const BoundedOutput&,    \
                                      const BoundedVerdict**);
ZFC_INSTANTIATE_BOUNDED(uint32_t)
ZFC_INSTANTIATE_BOUNDED(uint64_t)
#undef ZFC_INSTANTIATE_BOUNDED

}  // namespace zfc

#include "core/stats.hpp"

#include <algorithm>
#include <cstddef>
#include <cstring>

namespace zfc {

zfcOpStats_t empty_op_stats() {
  zfcOpStats_t s;
  std::memset(&s, 0, sizeof s);
  s.algorithm = -1;
  return s;
}

void StatsBook::reset() {
  last_ = empty_op_stats();
  total_ = empty_op_stats();
}

void StatsBook::record(const zfcOpStats_t& op) {
  last_ = op;
  total_.calls += op.calls;
  total_.tokens += op.tokens;
  total_.local_unique += op.local_unique;
  total_.global_unique += op.global_unique;
  total_.bytes_sent += op.bytes_sent;
  total_.bytes_received += op.bytes_received;
  total_.internode_bytes_sent += op.internode_bytes_sent;
  total_.internode_bytes_received += op.internode_bytes_received;
  total_.peak_workspace_bytes = std::max(total_.peak_workspace_bytes, op.peak_workspace_bytes);
  total_.overflows += op.overflows;
  total_.rounds += op.rounds;
  total_.bytes_received_max += op.bytes_received_max;
  total_.bytes_received_sum += op.bytes_received_sum;
  if (op.algorithm >= 0) total_.algorithm = op.algorithm;
  if (op.path[zfcPhaseTotal] != zfcPathNone) {
    std::memcpy(total_.path, op.path, sizeof total_.path);
  }
  total_.host_syncs += op.host_syncs;
  for (int p = 0; p < zfcNumPhases; ++p) total_.seconds[p] += op.seconds[p];
}

namespace {

// zfcOpStats_t and zfcStats_t as released in 0.1.0, before the internode fields.
struct OpStats010 {
  uint64_t calls, tokens, local_unique, global_unique, bytes_sent, bytes_received,
      peak_workspace_bytes, overflows;
  int32_t algorithm, reserved;
  double seconds[zfcNumPhases];
};
struct Stats010 {
  size_t size;
  OpStats010 last, total;
};

OpStats010 to_010(const zfcOpStats_t& s) {
  OpStats010 o{s.calls,         s.tokens,     s.local_unique,
               s.global_unique, s.bytes_sent, s.bytes_received,
               s.peak_workspace_bytes, s.overflows, s.algorithm, s.rounds, {}};
  std::memcpy(o.seconds, s.seconds, sizeof o.seconds);
  return o;
}

// zfcOpStats_t and zfcStats_t as released in 0.2.0 and 0.3.0: the current layout up to the
// phase times, before the busiest rank's and the summed received bytes.
constexpr size_t kOpStats020 = offsetof(zfcOpStats_t, bytes_received_max);
constexpr size_t kStats020 = sizeof(size_t) + 2 * kOpStats020;

// As released in 0.4.0 to 0.8.0: up to the summed received bytes, before the paths. The
// struct's alignment (of its doubles) pads it to a multiple of 8.
constexpr size_t kOpStats040 = (offsetof(zfcOpStats_t, path) + 7) / 8 * 8;
constexpr size_t kStats040 = sizeof(size_t) + 2 * kOpStats040;

// Writes the first `op_bytes` of last and total after the size of a caller's older struct,
// which is only that big.
void copy_prefix(const StatsBook& book, size_t op_bytes, zfcStats_t* stats) {
  char* out = reinterpret_cast<char*>(stats) + sizeof(size_t);
  std::memcpy(out, &book.last(), op_bytes);
  std::memcpy(out + op_bytes, &book.total(), op_bytes);
}

}  // namespace

Status copy_stats_out(const StatsBook& book, zfcStats_t* stats) {
  if (stats->size == sizeof(zfcStats_t)) {
    stats->last = book.last();
    stats->total = book.total();
    return Status::Ok();
  }
  if (stats->size == sizeof(Stats010)) {
    // The caller's struct is only sizeof(Stats010) bytes: write exactly those.
    const Stats010 old{sizeof(Stats010), to_010(book.last()), to_010(book.total())};
    std::memcpy(static_cast<void*>(stats), &old, sizeof old);
    return Status::Ok();
  }
  if (stats->size == kStats020) {
    // The caller's struct is only kStats020 bytes: its two stats follow the size, each the
    // current struct's first kOpStats020 bytes.
    copy_prefix(book, kOpStats020, stats);
    return Status::Ok();
  }
  if (stats->size == kStats040) {
    copy_prefix(book, kOpStats040, stats);
    return Status::Ok();
  }
  return error(zfcInvalidUsage, "stats size %zu is not one of the layouts this library knows "
               "(%zu, %zu, %zu, %zu): initialise it with ZFC_STATS_INITIALIZER", stats->size,
               sizeof(Stats010), kStats020, kStats040, sizeof(zfcStats_t));
}

}  // namespace zfc

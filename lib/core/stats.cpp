#include "core/stats.hpp"

#include <algorithm>
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
  if (op.algorithm >= 0) total_.algorithm = op.algorithm;
  for (int p = 0; p < zfcNumPhases; ++p) total_.seconds[p] += op.seconds[p];
}

}  // namespace zfc

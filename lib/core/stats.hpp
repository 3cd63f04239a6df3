// Per-call accounting and the communicator's running totals.
#pragma once

#include <chrono>

#include "host_device/status.hpp"
#include "core/fault_hook.hpp"
#include "zipfcoll/zipfcoll.h"

namespace zfc {

// Zeroed zfcOpStats_t with algorithm -1 (none).
zfcOpStats_t empty_op_stats();

class StatsBook {
 public:
  StatsBook() { reset(); }
  void reset();
  // Folds one finished call into last and total.
  void record(const zfcOpStats_t& op);
  const zfcOpStats_t& last() const { return last_; }
  const zfcOpStats_t& total() const { return total_; }

 private:
  zfcOpStats_t last_;
  zfcOpStats_t total_;
};

// Copies the book into the caller's zfcStats_t of any released layout (stats->size tells
// which); zfcInvalidUsage for an unknown size, with nothing written.
Status copy_stats_out(const StatsBook& book, zfcStats_t* stats);

// Adds the wall time between construction and destruction to op->seconds[phase]. A phase's
// start is also where the reliability tests inject their faults (core/fault_hook.hpp).
class PhaseTimer {
 public:
  PhaseTimer(zfcOpStats_t* op, zfcPhase_t phase)
      : op_(op), phase_(phase), start_(std::chrono::steady_clock::now()) {
    fault_point(phase);
  }
  ~PhaseTimer() { stop(); }
  void stop() {
    if (op_ == nullptr) return;
    std::chrono::duration<double> d = std::chrono::steady_clock::now() - start_;
    op_->seconds[phase_] += d.count();
    op_ = nullptr;
  }

 private:
  zfcOpStats_t* op_;
  zfcPhase_t phase_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace zfc

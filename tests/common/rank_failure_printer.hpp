// A GoogleTest listener for programs run as several ranks: ranks other than 0 drop the usual
// report and print only their failures, each tagged with the rank.
#pragma once

#include <gtest/gtest.h>

#include <cstdio>

namespace zfc {
namespace test {

class RankFailurePrinter : public testing::EmptyTestEventListener {
 public:
  explicit RankFailurePrinter(int rank) : rank_(rank) {}
  void OnTestPartResult(const testing::TestPartResult& r) override {
    if (!r.failed()) return;
    std::fprintf(stderr, "[rank %d] %s:%d: failure\n%s\n", rank_,
                 r.file_name() ? r.file_name() : "?", r.line_number(), r.summary());
  }

 private:
  int rank_;
};

// Keeps rank 0's report, and every rank's failures.
inline void report_failures_per_rank(int rank) {
  testing::TestEventListeners& listeners = testing::UnitTest::GetInstance()->listeners();
  if (rank != 0) delete listeners.Release(listeners.default_result_printer());
  listeners.Append(new RankFailurePrinter(rank));
}

}  // namespace test
}  // namespace zfc

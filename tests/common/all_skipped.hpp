// A test program all of whose tests skipped (for want of a GPU, say) exits with
// kAllSkipped, which ctest is told is "skipped" (SKIP_RETURN_CODE): the suite's summary then
// shows it as not run instead of passed.
#pragma once

#include <gtest/gtest.h>

namespace zfc {
namespace test {

constexpr int kAllSkipped = 77;

// After RUN_ALL_TESTS: whether some test was to run and every one of them skipped.
inline bool all_tests_skipped() {
  const ::testing::UnitTest* u = ::testing::UnitTest::GetInstance();
  return u->test_to_run_count() > 0 && u->skipped_test_count() == u->test_to_run_count();
}

}  // namespace test
}  // namespace zfc

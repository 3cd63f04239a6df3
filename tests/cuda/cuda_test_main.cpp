// main() of the CUDA tests: gtest's, except that a run where every test skipped (no GPU)
// exits with kAllSkipped, so ctest reports the program as not run.
#include <gtest/gtest.h>

#include "common/all_skipped.hpp"

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  if (RUN_ALL_TESTS() != 0) return 1;
  return zfc::test::all_tests_skipped() ? zfc::test::kAllSkipped : 0;
}

// The device casts' grid-stride loop (cuda/strided_rounds.hpp), run on the host: over every
// thread of a grid, each element is loaded once and stored once, with the value loaded for
// it, whatever the grid's size next to the element count.
#include <gtest/gtest.h>

#include <cstddef>
#include <string>
#include <vector>

#include "strided_rounds.hpp"

namespace zfc {
namespace {

TEST(StridedRounds, EveryElementIsLoadedAndStoredOnce) {
  for (size_t stride : {1, 3, 32, 256}) {
    for (size_t n = 0; n <= 4 * stride + 9; ++n) {
      std::vector<int> loads(n, 0), stores(n, 0);
      std::vector<size_t> stored(n, 0);
      for (size_t first = 0; first < stride; ++first) {
        cuda::strided_in_rounds<4>(
            first, stride, n,
            [&](size_t j) {
              ++loads.at(j);
              return j * 7 + 1;
            },
            [&](size_t j, size_t v) {
              ++stores.at(j);
              stored.at(j) = v;
            });
      }
      for (size_t j = 0; j < n; ++j) {
        ASSERT_EQ(loads[j], 1) << "stride " << stride << " n " << n << " j " << j;
        ASSERT_EQ(stores[j], 1) << "stride " << stride << " n " << n << " j " << j;
        ASSERT_EQ(stored[j], j * 7 + 1) << "stride " << stride << " n " << n << " j " << j;
      }
    }
  }
}

// Within a round every load comes before the first store: the point of the loop.
TEST(StridedRounds, ARoundLoadsAllItsElementsBeforeItStoresAny) {
  const size_t stride = 5, n = 5 * 9 + 2;
  std::vector<char> events;  // 'l' or 's', for thread 0 only
  cuda::strided_in_rounds<4>(
      0, stride, n,
      [&](size_t j) {
        events.push_back('l');
        return j;
      },
      [&](size_t, size_t) { events.push_back('s'); });
  // Thread 0 owns 0, 5, ..., 45: two rounds of four, then 40 and 45 one by one.
  EXPECT_EQ(std::string(events.begin(), events.end()), "llllssssllllsssslsls");
}

}  // namespace
}  // namespace zfc

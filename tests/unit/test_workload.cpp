// The workload generators the demo, benchmarks and tests share.
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/test_env.hpp"
#include "workload/corpus.hpp"
#include "workload/zipf.hpp"

namespace zfc {
namespace workload {
namespace {

TEST(Words, SplitLikeTheDocumentedRule) {
  std::vector<std::string> w;
  split_words("Don't STOP,\r\nbelieving'  rock-n-roll 1:1 na\xe6ve 'tis", &w);
  const std::vector<std::string> want = {"don't", "stop", "believing", "rock", "n",
                                         "roll",  "na",   "ve",        "tis"};
  EXPECT_EQ(w, want);
}

TEST(Corpus, VocabularyByFrequencyAndWindows) {
  char dir[] = "/tmp/zfc_corpus_XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  {
    std::ofstream(std::string(dir) + "/b.txt") << "the cat saw the dog. The END";
    std::ofstream(std::string(dir) + "/a.txt") << "a cat";
    std::ofstream(std::string(dir) + "/skip.md") << "zebra zebra zebra zebra";
  }
  const Corpus c = Corpus::load(dir, 4);
  EXPECT_EQ(c.files(), 2u);
  // "the" x3, "cat" x2, then ties broken by spelling: "a" < "dog" < "end" < "saw".
  EXPECT_EQ(c.vocabulary(), (std::vector<std::string>{"<unk>", "the", "cat", "a"}));
  // a.txt comes first: "a cat the cat saw the dog the end".
  EXPECT_EQ(c.tokens(), (std::vector<int32_t>{3, 2, 1, 2, 0, 1, 0, 1, 0}));
  EXPECT_NEAR(c.unknown_fraction(), 3.0 / 9.0, 1e-12);
  const std::vector<int32_t> win = c.windows(5, 4, 42);
  ASSERT_EQ(win.size(), 20u);
  EXPECT_EQ(win, c.windows(5, 4, 42));  // seeded
  EXPECT_THROW(Corpus::load("/nonexistent/dir", 10), std::runtime_error);
  for (const char* f : {"/a.txt", "/b.txt", "/skip.md"}) std::remove((std::string(dir) + f).c_str());
  rmdir(dir);
}

TEST(Zipf, FrequentIdsComeFirstAndSeedsReproduce) {
  const ZipfDistribution z(1.1, 1000);
  const std::vector<int32_t> a = z.draw(20000, 7);
  EXPECT_EQ(a, z.draw(20000, 7));
  EXPECT_NE(a, z.draw(20000, 8));
  std::vector<int> count(1000);
  for (int32_t v : a) {
    ASSERT_GE(v, 0);
    ASSERT_LT(v, 1000);
    ++count[static_cast<size_t>(v)];
  }
  EXPECT_GT(count[0], count[1]);
  EXPECT_GT(count[1], count[10]);
  EXPECT_GT(count[10], count[500]);
  // P(0) = 1 / H(1000, 1.1) ~ 0.16
  EXPECT_NEAR(count[0] / 20000.0, 0.16, 0.02);
}

TEST(Corpus, GutenbergHasZipfianWindows) {
  ZFC_REQUIRE_CORPUS(dir, "gutenberg");
  const Corpus c = Corpus::load(dir, 10000);
  EXPECT_EQ(c.files(), 18u);
  EXPECT_GT(c.tokens().size(), 2000000u);
  EXPECT_EQ(c.vocabulary()[1], "the");
  // The data's README measures about 5% out of vocabulary at 10k words on held-out text;
  // over the whole corpus it is lower.
  EXPECT_LT(c.unknown_fraction(), 0.06);
}

}  // namespace
}  // namespace workload
}  // namespace zfc

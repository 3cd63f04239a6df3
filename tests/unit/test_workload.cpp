// The workload generators the demo, benchmarks and tests share.
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/test_env.hpp"
#include "workload/corpus.hpp"
#include "workload/heaps.hpp"
#include "workload/step_source.hpp"
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
  for (const char* f : {"/a.txt", "/b.txt", "/skip.md"}) {
    std::remove((std::string(dir) + f).c_str());
  }
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

TEST(Heaps, SizesSpanTheRangeGeometrically) {
  const std::vector<size_t> n = heaps_sizes(1000, 2118911, 4);
  ASSERT_GE(n.size(), 14u);
  EXPECT_EQ(n.front(), 1000u);
  EXPECT_EQ(n.back(), 2118911u);
  EXPECT_EQ(n[4], 10000u);
  for (size_t i = 1; i < n.size(); ++i) EXPECT_GT(n[i], n[i - 1]);
  EXPECT_TRUE(heaps_sizes(10, 5, 4).empty());
}

TEST(Heaps, CountsAreExactOnKnownText) {
  // All ids distinct: U(N) = N at every N. A cycle of 100 ids: the whole text holds 100.
  std::vector<int32_t> distinct(10007), cycle(10007);
  for (size_t i = 0; i < distinct.size(); ++i) {
    distinct[i] = static_cast<int32_t>(i);
    cycle[i] = static_cast<int32_t>(i % 100);
  }
  const std::vector<size_t> sizes = {1, 20, 999, 5000, 10007, 20000};
  for (const HeapsPoint& p : measure_heaps(distinct, 10007, sizes, 20, 3, 7)) {
    EXPECT_EQ(p.mean_unique, static_cast<double>(p.tokens));
    EXPECT_EQ(p.min_unique, p.max_unique);
  }
  const std::vector<HeapsPoint> c = measure_heaps(cycle, 100, sizes, 20, 3, 7);
  EXPECT_EQ(c.back().tokens, 10007u);  // capped at the corpus size
  EXPECT_EQ(c.back().mean_unique, 100.0);
  EXPECT_EQ(c[1].mean_unique, 20.0);  // one window of 20 consecutive ids
  EXPECT_THROW(measure_heaps(cycle, 50, sizes, 20, 1, 7), std::out_of_range);
}

TEST(Heaps, FitRecoversAPowerLaw) {
  std::vector<HeapsPoint> pts;
  for (size_t n : heaps_sizes(1000, 1000000, 5)) {
    HeapsPoint p;
    p.tokens = n;
    p.mean_unique = 3.0 * std::pow(static_cast<double>(n), 0.64);
    pts.push_back(p);
  }
  const PowerFit f = fit_power_law(pts, 0, 1000000);
  EXPECT_EQ(f.points, pts.size());
  EXPECT_NEAR(f.beta, 0.64, 1e-9);
  EXPECT_NEAR(f.k, 3.0, 1e-6);
  EXPECT_NEAR(f.r2, 1.0, 1e-12);
  EXPECT_NEAR(f.local_min, 0.64, 1e-9);
  EXPECT_NEAR(f.local_max, 0.64, 1e-9);
  const PowerFit part = fit_power_law(pts, 10000, 100000);
  EXPECT_EQ(part.n_min, 10000u);
  EXPECT_EQ(part.n_max, 100000u);
  EXPECT_LT(fit_power_law(pts, 2000, 2001).points, 2u);
}

TEST(Heaps, GutenbergExponentIsInTheDataReadmeRange) {
  ZFC_REQUIRE_CORPUS(dir, "gutenberg");
  const Corpus c = Corpus::load_all(dir);
  EXPECT_EQ(c.vocab_size(), 43494 + 1);  // every distinct word, plus the unused <unk>
  const std::vector<HeapsPoint> pts =
      measure_heaps(c.tokens(), c.vocab_size(), heaps_sizes(10000, c.tokens().size(), 4), 20, 2, 1);
  EXPECT_EQ(pts.back().mean_unique, 43494.0);  // the whole corpus
  const PowerFit f = fit_power_law(pts, 10000, c.tokens().size());
  // The data's README fits 0.53 over 1e4..N.
  EXPECT_GT(f.beta, 0.45);
  EXPECT_LT(f.beta, 0.60);
}

TEST(StepSource, StepsAreReproducibleAndDifferPerRank) {
  StepSpec spec;
  spec.vocab = 1000;
  spec.tokens = 64;
  const StepSource a(spec), b(spec);
  EXPECT_EQ(a.indices(3, 1), b.indices(3, 1));
  EXPECT_NE(a.indices(3, 1), a.indices(3, 2));
  EXPECT_NE(a.indices(3, 1), a.indices(4, 1));
  EXPECT_EQ(a.indices(3, 1).size(), 64u);
  EXPECT_EQ(a.rows(3, 1, 5, 7), b.rows(3, 1, 5, 7));
  EXPECT_EQ(a.rows(3, 1, 5, 7).size(), 35u);
  spec.corpus = "/nonexistent";
  spec.window_len = 20;
  spec.tokens = 30;  // not a multiple of the window length
  EXPECT_THROW(StepSource{spec}, std::invalid_argument);
}

}  // namespace
}  // namespace workload
}  // namespace zfc

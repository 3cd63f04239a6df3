// The tokens and gradient rows of one rank in one training step, reproducible from a seed:
// windows of real text or a seeded Zipf stream, and rows uniform in [-1, 1). Every rank can
// regenerate every other rank's step, which is how the benchmarks check results.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "corpus.hpp"
#include "zipf.hpp"

namespace zfc {
namespace workload {

struct StepSpec {
  std::string corpus;      // directory of .txt files; empty: Zipf stream
  int64_t vocab = 100000;  // V: corpus ids of the V-1 most frequent words, or Zipf's range
  double zipf_s = 1.1;
  size_t tokens = 640;     // K per rank and step
  size_t window_len = 20;  // words per window of real text (K must be a multiple)
  uint64_t seed = 1;
};

class StepSource {
 public:
  // Loads the corpus or builds the Zipf table; throws std::runtime_error or
  // std::invalid_argument on a bad spec.
  explicit StepSource(const StepSpec& spec);

  std::vector<int32_t> indices(int64_t step, int rank) const;
  std::vector<float> rows(int64_t step, int rank, size_t count, size_t dim) const;

  const StepSpec& spec() const { return spec_; }
  const Corpus* corpus() const { return corpus_.get(); }
  // "gutenberg (18 files, 2118911 words, V=100000, 0.0% <unk>)" or "Zipf(s=1.10, V=100000)".
  std::string describe() const;

 private:
  StepSpec spec_;
  std::unique_ptr<Corpus> corpus_;
  std::unique_ptr<ZipfDistribution> zipf_;
};

}  // namespace workload
}  // namespace zfc

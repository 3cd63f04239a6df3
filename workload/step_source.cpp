#include "step_source.hpp"

#include <cstdio>
#include <stdexcept>

#include "random.hpp"

namespace zfc {
namespace workload {

StepSource::StepSource(const StepSpec& spec) : spec_(spec) {
  if (!spec.corpus.empty()) {
    if (spec.window_len == 0 || spec.tokens % spec.window_len != 0) {
      throw std::invalid_argument("tokens per rank must be a multiple of the window length");
    }
    corpus_ = std::make_unique<Corpus>(Corpus::load(spec.corpus, spec.vocab));
  } else {
    zipf_ = std::make_unique<ZipfDistribution>(spec.zipf_s, spec.vocab);
  }
}

std::vector<int32_t> StepSource::indices(int64_t step, int rank) const {
  const uint64_t seed =
      mix_seed(spec_.seed, static_cast<uint64_t>(step), static_cast<uint64_t>(rank));
  if (corpus_) return corpus_->windows(spec_.tokens / spec_.window_len, spec_.window_len, seed);
  return zipf_->draw(spec_.tokens, seed);
}

std::vector<float> StepSource::rows(int64_t step, int rank, size_t count, size_t dim) const {
  SplitMix64 rng(
      mix_seed(spec_.seed + 1, static_cast<uint64_t>(step), static_cast<uint64_t>(rank)));
  std::vector<float> r(count * dim);
  for (float& v : r) v = static_cast<float>(rng.uniform() * 2.0 - 1.0);
  return r;
}

std::string StepSource::describe() const {
  char buf[512];
  if (corpus_) {
    std::snprintf(buf, sizeof buf, "%s (%zu files, %zu words, V=%lld, %.1f%% <unk>)",
                  spec_.corpus.c_str(), corpus_->files(), corpus_->tokens().size(),
                  static_cast<long long>(spec_.vocab), 100.0 * corpus_->unknown_fraction());
  } else {
    std::snprintf(buf, sizeof buf, "Zipf(s=%.2f, V=%lld)", spec_.zipf_s,
                  static_cast<long long>(spec_.vocab));
  }
  return buf;
}

}  // namespace workload
}  // namespace zfc

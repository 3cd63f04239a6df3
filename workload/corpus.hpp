// Real text as word ids: every .txt file of a directory (in name order), read as bytes,
// lower-cased and split into words of the form [a-z]+('[a-z]+)*; a vocabulary of the V-1
// most frequent words gets ids 1..V-1 by falling frequency, and every other word is
// id 0 (<unk>). Steps draw windows of consecutive words at seeded random offsets.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace zfc {
namespace workload {

// Splits text into lower-case words (the rule above); '\r' and non-ASCII bytes separate.
void split_words(const std::string& text, std::vector<std::string>* words);

class Corpus {
 public:
  // Loads every .txt file in `dir`; throws std::runtime_error when there is none.
  static Corpus load(const std::string& dir, int64_t vocab_size);
  // Loads every .txt file in `dir` with an id for every distinct word (id 0 stays <unk>,
  // unused): for counting distinct words.
  static Corpus load_all(const std::string& dir);

  const std::vector<int32_t>& tokens() const { return tokens_; }
  const std::vector<std::string>& vocabulary() const { return vocab_; }
  int64_t vocab_size() const { return static_cast<int64_t>(vocab_.size()); }
  size_t files() const { return files_; }
  double unknown_fraction() const;

  // `windows` windows of `length` consecutive ids each, at offsets drawn from `seed`.
  std::vector<int32_t> windows(size_t windows, size_t length, uint64_t seed) const;

 private:
  // vocab_size 0: every word gets an id.
  static Corpus build(const std::string& dir, int64_t vocab_size);

  std::vector<int32_t> tokens_;
  std::vector<std::string> vocab_;
  size_t files_ = 0;
};

}  // namespace workload
}  // namespace zfc

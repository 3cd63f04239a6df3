// The trainer's data: text files as word ids (or bytes), a vocabulary, the held-out split,
// and the streams each rank trains on.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace lm {

struct Vocabulary {
  std::vector<std::string> words;  // id -> spelling; word mode: ids by falling frequency
  int32_t unk = -1;                // word mode only
  int32_t eos = -1;
  bool bytes = false;              // char mode: id = byte value
  int64_t size() const { return static_cast<int64_t>(words.size()); }
  std::string spell(int32_t id) const;
};

struct Corpus {
  Vocabulary vocab;
  std::vector<int32_t> train;  // the first 90% of every file, files in name order
  std::vector<int32_t> valid;  // the last 10% of every file
  size_t files = 0;
  double unk_rate = 0;         // of the held-out split
};

// Word mode: lower-cased words [a-z]+('[a-z]+)*, <eos> at each line end; the vocab_size-2
// most frequent training words, then <unk> and <eos> ranked by their own counts, so ids run
// by falling frequency as the log-uniform sampler assumes. Char mode: bytes, '\r' dropped.
// Throws std::runtime_error naming the path when it holds no text.
Corpus load_corpus(const std::string& path, bool words, int64_t vocab_size);

// The ids of `text` under `vocab` (word mode: unknown words are <unk>).
std::vector<int32_t> encode_text(const std::string& text, const Vocabulary& vocab);

// Training streams: the sequence is cut into `streams` equal contiguous pieces; stream s is
// piece s. A rank of G with B streams each owns streams [rank*B, rank*B + B), so G ranks
// with B streams see exactly the data of one process with G*B streams.
class Streams {
 public:
  Streams(const std::vector<int32_t>& tokens, int total_streams, int first, int count);
  // Steps of `bptt` per pass over the data.
  int64_t steps_per_epoch(int bptt) const;
  // Inputs and targets (count x bptt, stream-major) of step `step` of an epoch.
  void batch(int64_t step, int bptt, std::vector<int32_t>* inputs,
             std::vector<int32_t>* targets) const;
  int count() const { return count_; }

 private:
  const std::vector<int32_t>& tokens_;
  size_t length_;
  int first_;
  int count_;
};

}  // namespace lm

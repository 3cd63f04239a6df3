#include "corpus.hpp"

#include <dirent.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <unordered_map>

#include "random.hpp"

namespace zfc {
namespace workload {
namespace {

bool is_letter(unsigned char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
char lower(unsigned char c) { return static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c); }

std::vector<std::string> txt_files(const std::string& dir) {
  std::vector<std::string> names;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) throw std::runtime_error("cannot open corpus directory " + dir);
  while (dirent* e = readdir(d)) {
    std::string n = e->d_name;
    if (n.size() > 4 && n.compare(n.size() - 4, 4, ".txt") == 0) names.push_back(n);
  }
  closedir(d);
  std::sort(names.begin(), names.end());
  if (names.empty()) throw std::runtime_error("no .txt files in " + dir);
  return names;
}

}  // namespace

void split_words(const std::string& text, std::vector<std::string>* words) {
  const size_t n = text.size();
  size_t i = 0;
  while (i < n) {
    if (!is_letter(static_cast<unsigned char>(text[i]))) {
      ++i;
      continue;
    }
    std::string w;
    for (;;) {
      while (i < n && is_letter(static_cast<unsigned char>(text[i]))) {
        w.push_back(lower(static_cast<unsigned char>(text[i++])));
      }
      // An apostrophe joins two runs of letters ("don't"), and nothing else does.
      if (i + 1 < n && text[i] == '\'' && is_letter(static_cast<unsigned char>(text[i + 1]))) {
        w.push_back('\'');
        ++i;
        continue;
      }
      break;
    }
    words->push_back(std::move(w));
  }
}

Corpus Corpus::load(const std::string& dir, int64_t vocab_size) {
  if (vocab_size < 2) throw std::invalid_argument("corpus vocabulary needs at least 2 ids");
  return build(dir, vocab_size);
}

Corpus Corpus::load_all(const std::string& dir) { return build(dir, 0); }

Corpus Corpus::build(const std::string& dir, int64_t vocab_size) {
  Corpus c;
  std::vector<std::string> words;
  for (const std::string& name : txt_files(dir)) {
    std::ifstream in(dir + "/" + name, std::ios::binary);
    std::stringstream buf;
    buf << in.rdbuf();
    split_words(buf.str(), &words);
    ++c.files_;
  }
  std::unordered_map<std::string, int64_t> counts;
  for (const std::string& w : words) ++counts[w];
  std::vector<std::pair<std::string, int64_t>> ranked(counts.begin(), counts.end());
  std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  const size_t keep =
      vocab_size == 0 ? ranked.size()
                      : std::min(ranked.size(), static_cast<size_t>(vocab_size - 1));
  std::unordered_map<std::string, int32_t> id;
  c.vocab_.push_back("<unk>");
  for (size_t i = 0; i < keep; ++i) {
    id[ranked[i].first] = static_cast<int32_t>(i + 1);
    c.vocab_.push_back(ranked[i].first);
  }
  // Ids are fixed by the requested size even when the text has fewer distinct words.
  while (c.vocab_.size() < static_cast<size_t>(vocab_size)) c.vocab_.push_back("");
  c.tokens_.reserve(words.size());
  for (const std::string& w : words) {
    auto it = id.find(w);
    c.tokens_.push_back(it == id.end() ? 0 : it->second);
  }
  return c;
}

double Corpus::unknown_fraction() const {
  if (tokens_.empty()) return 0.0;
  return static_cast<double>(std::count(tokens_.begin(), tokens_.end(), 0)) /
         static_cast<double>(tokens_.size());
}

std::vector<int32_t> Corpus::windows(size_t windows, size_t length, uint64_t seed) const {
  std::vector<int32_t> out;
  out.reserve(windows * length);
  if (tokens_.size() < length) throw std::runtime_error("corpus shorter than one window");
  SplitMix64 rng(seed);
  const uint64_t starts = tokens_.size() - length + 1;
  for (size_t w = 0; w < windows; ++w) {
    const size_t at = static_cast<size_t>(rng.below(starts));
    out.insert(out.end(), tokens_.begin() + static_cast<std::ptrdiff_t>(at),
               tokens_.begin() + static_cast<std::ptrdiff_t>(at + length));
  }
  return out;
}

}  // namespace workload
}  // namespace zfc

#include "text_data.hpp"

#include <algorithm>
#include <dirent.h>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <sys/stat.h>
#include <unordered_map>

namespace lm {
namespace {

std::vector<std::string> text_files(const std::string& path) {
  struct stat st{};
  if (stat(path.c_str(), &st) != 0) throw std::runtime_error("cannot open corpus " + path);
  if (!S_ISDIR(st.st_mode)) return {path};
  std::vector<std::string> files;
  if (DIR* d = opendir(path.c_str())) {
    while (dirent* e = readdir(d)) {
      const std::string name = e->d_name;
      if (name.size() > 4 && name.compare(name.size() - 4, 4, ".txt") == 0) {
        files.push_back(path + "/" + name);
      }
    }
    closedir(d);
  }
  std::sort(files.begin(), files.end());
  if (files.empty()) throw std::runtime_error("no .txt file in " + path);
  return files;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

bool letter(unsigned char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
char lower(unsigned char c) { return static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c); }

// Words and line ends of `text`, in order ("\n" stands for a line end that ends a line with
// words on it).
std::vector<std::string> word_tokens(const std::string& text) {
  std::vector<std::string> out;
  std::string w;
  bool line_has_words = false;
  const size_t n = text.size();
  for (size_t i = 0; i < n; ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    const bool apostrophe_inside = c == '\'' && !w.empty() && i + 1 < n &&
                                   letter(static_cast<unsigned char>(text[i + 1]));
    if (letter(c) || apostrophe_inside) {
      w.push_back(lower(c));
      continue;
    }
    if (!w.empty()) {
      out.push_back(w);
      w.clear();
      line_has_words = true;
    }
    if (c == '\n' && line_has_words) {
      out.emplace_back("\n");
      line_has_words = false;
    }
  }
  if (!w.empty()) out.push_back(w);
  if (!w.empty() || line_has_words) out.emplace_back("\n");
  return out;
}

std::vector<int32_t> byte_tokens(const std::string& text) {
  std::vector<int32_t> out;
  out.reserve(text.size());
  for (unsigned char c : text) {
    if (c != '\r') out.push_back(c);
  }
  return out;
}

Vocabulary word_vocabulary(const std::vector<std::vector<std::string>>& train_parts,
                           int64_t vocab_size) {
  std::unordered_map<std::string, int64_t> counts;
  int64_t eos_count = 0;
  for (const auto& part : train_parts) {
    for (const std::string& w : part) {
      if (w == "\n") ++eos_count; else ++counts[w];
    }
  }
  std::vector<std::pair<int64_t, std::string>> ranked;
  for (const auto& kv : counts) ranked.push_back({-kv.second, kv.first});
  std::sort(ranked.begin(), ranked.end());
  const size_t keep = std::min(ranked.size(), static_cast<size_t>(vocab_size - 2));
  int64_t unk_count = 0;
  for (size_t i = keep; i < ranked.size(); ++i) unk_count -= ranked[i].first;
  ranked.resize(keep);
  ranked.push_back({-unk_count, "<unk>"});
  ranked.push_back({-eos_count, "<eos>"});
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  Vocabulary v;
  for (size_t i = 0; i < ranked.size(); ++i) {
    v.words.push_back(ranked[i].second);
    if (ranked[i].second == "<unk>") v.unk = static_cast<int32_t>(i);
    if (ranked[i].second == "<eos>") v.eos = static_cast<int32_t>(i);
  }
  return v;
}

}  // namespace

std::string Vocabulary::spell(int32_t id) const {
  if (bytes) return std::string(1, static_cast<char>(id));
  if (id == eos) return "\n";
  return words[static_cast<size_t>(id)];
}

std::vector<int32_t> encode_text(const std::string& text, const Vocabulary& vocab) {
  if (vocab.bytes) return byte_tokens(text);
  std::unordered_map<std::string, int32_t> ids;
  for (size_t i = 0; i < vocab.words.size(); ++i) ids[vocab.words[i]] = static_cast<int32_t>(i);
  std::vector<int32_t> out;
  for (const std::string& w : word_tokens(text)) {
    if (w == "\n") { out.push_back(vocab.eos); continue; }
    const auto it = ids.find(w);
    out.push_back(it == ids.end() ? vocab.unk : it->second);
  }
  return out;
}

namespace {

// Char mode: every byte value is a token; each file's last 10% is held out.
void split_bytes(const std::vector<std::vector<int32_t>>& parts, Corpus* c) {
  c->vocab.bytes = true;
  for (int b = 0; b < 256; ++b) c->vocab.words.push_back(std::string(1, static_cast<char>(b)));
  for (const auto& p : parts) {
    const auto cut = p.begin() + static_cast<std::ptrdiff_t>(p.size() - p.size() / 10);
    c->train.insert(c->train.end(), p.begin(), cut);
    c->valid.insert(c->valid.end(), cut, p.end());
  }
}

// Word mode: the vocabulary of the training parts, then both splits as ids.
void index_words(const std::vector<std::vector<std::string>>& train_parts,
                 const std::vector<std::vector<std::string>>& valid_parts, int64_t vocab_size,
                 Corpus* c) {
  c->vocab = word_vocabulary(train_parts, vocab_size);
  std::unordered_map<std::string, int32_t> ids;
  for (size_t i = 0; i < c->vocab.words.size(); ++i) {
    ids[c->vocab.words[i]] = static_cast<int32_t>(i);
  }
  ids["\n"] = c->vocab.eos;
  int64_t unk = 0;
  auto map_parts = [&](const auto& parts, std::vector<int32_t>* out, bool count_unk) {
    for (const auto& part : parts) {
      for (const std::string& w : part) {
        const auto it = ids.find(w);
        const bool known = it != ids.end();
        if (!known && count_unk) ++unk;
        out->push_back(known ? it->second : c->vocab.unk);
      }
    }
  };
  map_parts(train_parts, &c->train, false);
  map_parts(valid_parts, &c->valid, true);
  c->unk_rate = c->valid.empty() ? 0 : static_cast<double>(unk) / c->valid.size();
}

}  // namespace

Corpus load_corpus(const std::string& path, bool words, int64_t vocab_size) {
  Corpus c;
  std::vector<std::vector<std::string>> train_parts, valid_parts;
  std::vector<std::vector<int32_t>> byte_parts;
  for (const std::string& file : text_files(path)) {
    const std::string text = read_file(file);
    ++c.files;
    if (!words) {
      byte_parts.push_back(byte_tokens(text));
      continue;
    }
    std::vector<std::string> toks = word_tokens(text);
    const size_t cut = toks.size() - toks.size() / 10;
    valid_parts.emplace_back(toks.begin() + static_cast<std::ptrdiff_t>(cut), toks.end());
    toks.resize(cut);
    train_parts.push_back(std::move(toks));
  }
  if (words) {
    index_words(train_parts, valid_parts, vocab_size, &c);
  } else {
    split_bytes(byte_parts, &c);
  }
  if (c.train.size() < 2) {
    throw std::runtime_error("corpus " + path + " has no text to train on");
  }
  return c;
}

Streams::Streams(const std::vector<int32_t>& tokens, int total_streams, int first, int count)
    : tokens_(tokens), length_(tokens.size() / static_cast<size_t>(total_streams)),
      first_(first), count_(count) {}

int64_t Streams::steps_per_epoch(int bptt) const {
  // Each step reads bptt inputs and the target after the last.
  return length_ > 1 ? static_cast<int64_t>((length_ - 1) / static_cast<size_t>(bptt)) : 0;
}

void Streams::batch(int64_t step, int bptt, std::vector<int32_t>* inputs,
                    std::vector<int32_t>* targets) const {
  inputs->resize(static_cast<size_t>(count_) * bptt);
  targets->resize(inputs->size());
  for (int s = 0; s < count_; ++s) {
    const size_t base =
        static_cast<size_t>(first_ + s) * length_ + static_cast<size_t>(step) * bptt;
    for (int t = 0; t < bptt; ++t) {
      (*inputs)[static_cast<size_t>(s) * bptt + t] = tokens_[base + t];
      (*targets)[static_cast<size_t>(s) * bptt + t] = tokens_[base + t + 1];
    }
  }
}

}  // namespace lm

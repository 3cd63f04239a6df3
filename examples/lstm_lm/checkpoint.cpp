#include "checkpoint.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <stdexcept>

namespace lm {
namespace {

constexpr char kMagic[8] = {'Z', 'F', 'C', 'L', 'S', 'T', 'M', '1'};

template <class T>
void put(std::ofstream& f, const T& v) {
  f.write(reinterpret_cast<const char*>(&v), sizeof v);
}

void put_floats(std::ofstream& f, const std::vector<float>& v) {
  put(f, static_cast<uint64_t>(v.size()));
  f.write(reinterpret_cast<const char*>(v.data()), static_cast<std::streamsize>(v.size() * 4));
}

template <class T>
T get(std::ifstream& f) {
  T v{};
  f.read(reinterpret_cast<char*>(&v), sizeof v);
  return v;
}

std::vector<float> get_floats(std::ifstream& f, const std::string& path) {
  const uint64_t n = get<uint64_t>(f);
  if (!f || n > (uint64_t{1} << 34)) throw std::runtime_error(path + ": truncated checkpoint");
  std::vector<float> v(n);
  f.read(reinterpret_cast<char*>(v.data()), static_cast<std::streamsize>(n * 4));
  if (!f) throw std::runtime_error(path + ": truncated checkpoint");
  return v;
}

}  // namespace

bool save_checkpoint(const std::string& path, const Model& model, const Vocabulary& vocab,
                     const Optimizer& opt, int64_t step) {
  std::ofstream f(path, std::ios::binary);
  f.write(kMagic, sizeof kMagic);
  const ModelShape& s = model.shape();
  put(f, s.vocab);
  put(f, static_cast<int32_t>(s.dim));
  put(f, static_cast<int32_t>(s.hidden));
  put(f, static_cast<int32_t>(s.layers));
  put(f, static_cast<int32_t>(s.projection));
  put(f, static_cast<int32_t>(vocab.bytes));
  put(f, vocab.unk);
  put(f, vocab.eos);
  put(f, step);
  for (const std::string& w : vocab.words) {
    put(f, static_cast<uint32_t>(w.size()));
    f.write(w.data(), static_cast<std::streamsize>(w.size()));
  }
  for (const auto* v : {&model.emb_in, &model.emb_out, &model.dense, &opt.acc_dense,
                        &opt.acc_in, &opt.acc_out}) {
    put_floats(f, *v);
  }
  return static_cast<bool>(f);
}

Checkpoint load_checkpoint(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  char magic[8] = {};
  f.read(magic, sizeof magic);
  if (!f || std::memcmp(magic, kMagic, sizeof kMagic) != 0) {
    throw std::runtime_error(path + " is not an lstm_lm checkpoint");
  }
  Checkpoint c;
  c.shape.vocab = get<int64_t>(f);
  c.shape.dim = get<int32_t>(f);
  c.shape.hidden = get<int32_t>(f);
  c.shape.layers = get<int32_t>(f);
  c.shape.projection = get<int32_t>(f) != 0;
  c.vocab.bytes = get<int32_t>(f) != 0;
  c.vocab.unk = get<int32_t>(f);
  c.vocab.eos = get<int32_t>(f);
  c.step = get<int64_t>(f);
  if (!f || c.shape.vocab <= 0 || c.shape.vocab > (int64_t{1} << 31)) {
    throw std::runtime_error(path + ": bad checkpoint header");
  }
  for (int64_t i = 0; i < c.shape.vocab; ++i) {
    const uint32_t n = get<uint32_t>(f);
    std::string w(n, '\0');
    f.read(&w[0], n);
    c.vocab.words.push_back(w);
  }
  c.model = Model(c.shape, 0, 0.0f);
  c.model.emb_in = get_floats(f, path);
  c.model.emb_out = get_floats(f, path);
  c.model.dense = get_floats(f, path);
  c.acc_dense = get_floats(f, path);
  c.acc_in = get_floats(f, path);
  c.acc_out = get_floats(f, path);
  if (c.model.emb_in.size() != static_cast<size_t>(c.shape.vocab) * c.shape.dim) {
    throw std::runtime_error(path + ": parameter sizes do not match the shape");
  }
  return c;
}

double compare_checkpoints(const std::string& a, const std::string& b) {
  const Checkpoint x = load_checkpoint(a), y = load_checkpoint(b);
  const char* names[] = {"emb_in", "emb_out", "dense"};
  const std::vector<float>* xs[] = {&x.model.emb_in, &x.model.emb_out, &x.model.dense};
  const std::vector<float>* ys[] = {&y.model.emb_in, &y.model.emb_out, &y.model.dense};
  double worst = 0;
  for (int t = 0; t < 3; ++t) {
    if (xs[t]->size() != ys[t]->size()) {
      std::printf("%-8s sizes differ: %zu vs %zu\n", names[t], xs[t]->size(), ys[t]->size());
      return INFINITY;
    }
    double diff = 0, scale = 0;
    size_t differing = 0;
    for (size_t i = 0; i < xs[t]->size(); ++i) {
      const double d = std::fabs(static_cast<double>((*xs[t])[i]) - (*ys[t])[i]);
      diff = std::max(diff, d);
      scale = std::max(scale, std::fabs(static_cast<double>((*xs[t])[i])));
      if (std::memcmp(&(*xs[t])[i], &(*ys[t])[i], sizeof(float)) != 0) ++differing;
    }
    const double rel = scale > 0 ? diff / scale : diff;
    std::printf("%-8s %zu values, %zu differ in their bits, max |a-b| / max |a| = %.3g\n",
                names[t], xs[t]->size(), differing, rel);
    worst = std::max(worst, rel);
  }
  return worst;
}

}  // namespace lm

#include "checkpoint.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <stdexcept>

namespace lm {
namespace {

// The first format had no optimizer kind and no position; the second has both.
constexpr char kMagicV1[8] = {'Z', 'F', 'C', 'L', 'S', 'T', 'M', '1'};
constexpr char kMagic[8] = {'Z', 'F', 'C', 'L', 'S', 'T', 'M', '2'};

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

void write_checkpoint(std::ofstream& f, const Model& model, const Vocabulary& vocab,
                      OptimizerKind optimizer, const Optimizer& opt, const Progress& p) {
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
  put(f, static_cast<int32_t>(optimizer));
  put(f, p.step);
  put(f, p.epoch);
  put(f, p.position);
  put(f, p.ranks);
  put(f, p.batch);
  put(f, p.bptt);
  for (const std::string& w : vocab.words) {
    put(f, static_cast<uint32_t>(w.size()));
    f.write(w.data(), static_cast<std::streamsize>(w.size()));
  }
  for (const auto* v : {&model.emb_in, &model.emb_out, &model.dense, &opt.acc_dense,
                        &opt.acc_in, &opt.acc_out, &p.states}) {
    put_floats(f, *v);
  }
}

OptimizerKind optimizer_from(int32_t v, const std::string& path) {
  if (v != static_cast<int32_t>(OptimizerKind::kSgd) &&
      v != static_cast<int32_t>(OptimizerKind::kAdagrad)) {
    throw std::runtime_error(path + ": unknown optimizer " + std::to_string(v));
  }
  return static_cast<OptimizerKind>(v);
}

}  // namespace

const char* optimizer_name(OptimizerKind kind) {
  return kind == OptimizerKind::kSgd ? "sgd" : "adagrad";
}

bool save_checkpoint(const std::string& path, const Model& model, const Vocabulary& vocab,
                     OptimizerKind optimizer, const Optimizer& opt, const Progress& progress) {
  const std::string partial = path + ".partial";
  bool ok = false;
  {
    std::ofstream f(partial, std::ios::binary | std::ios::trunc);
    if (f) {
      write_checkpoint(f, model, vocab, optimizer, opt, progress);
      f.close();  // an error the close reports (a full disk) counts too
      ok = !f.fail();
    }
  }
  if (ok) ok = std::rename(partial.c_str(), path.c_str()) == 0;
  if (!ok) std::remove(partial.c_str());
  return ok;
}

Checkpoint load_checkpoint(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  char magic[8] = {};
  f.read(magic, sizeof magic);
  const bool v1 = f && std::memcmp(magic, kMagicV1, sizeof kMagicV1) == 0;
  if (!f || (!v1 && std::memcmp(magic, kMagic, sizeof kMagic) != 0)) {
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
  if (!v1) c.optimizer = optimizer_from(get<int32_t>(f), path);
  c.progress.step = get<int64_t>(f);
  if (!v1) {
    c.progress.epoch = get<int32_t>(f);
    c.progress.position = get<int64_t>(f);
    c.progress.ranks = get<int32_t>(f);
    c.progress.batch = get<int32_t>(f);
    c.progress.bptt = get<int32_t>(f);
  }
  if (!f || c.shape.vocab <= 0 || c.shape.vocab > (int64_t{1} << 31) || c.progress.step < 0 ||
      c.progress.epoch < 0 || c.progress.position < 0) {
    throw std::runtime_error(path + ": bad checkpoint header");
  }
  for (int64_t i = 0; i < c.shape.vocab; ++i) {
    const uint32_t n = get<uint32_t>(f);
    if (!f || n > (1u << 20)) throw std::runtime_error(path + ": truncated checkpoint");
    std::string w(n, '\0');
    f.read(&w[0], n);
    c.vocab.words.push_back(w);
  }
  c.model = Model(c.shape, 0, 0.0f);
  const size_t dense_size = c.model.dense.size();
  c.model.emb_in = get_floats(f, path);
  c.model.emb_out = get_floats(f, path);
  c.model.dense = get_floats(f, path);
  c.acc_dense = get_floats(f, path);
  c.acc_in = get_floats(f, path);
  c.acc_out = get_floats(f, path);
  if (!v1) c.progress.states = get_floats(f, path);
  // The first format did not name the optimizer: Adagrad's state is there, SGD has none.
  if (v1) c.optimizer = c.acc_dense.empty() ? OptimizerKind::kSgd : OptimizerKind::kAdagrad;
  if (c.model.emb_in.size() != static_cast<size_t>(c.shape.vocab) * c.shape.dim ||
      c.model.emb_out.size() != c.model.emb_in.size() + static_cast<size_t>(c.shape.vocab) ||
      c.model.dense.size() != dense_size) {
    throw std::runtime_error(path + ": parameter sizes do not match the shape");
  }
  const bool ada = c.optimizer == OptimizerKind::kAdagrad;
  if (ada != !c.acc_dense.empty() ||
      (ada && (c.acc_dense.size() != c.model.dense.size() ||
               c.acc_in.size() != c.model.emb_in.size() ||
               c.acc_out.size() != c.model.emb_out.size()))) {
    throw std::runtime_error(path + ": optimizer state does not match its " +
                             optimizer_name(c.optimizer) + " optimizer");
  }
  return c;
}

double compare_checkpoints(const std::string& a, const std::string& b) {
  const Checkpoint x = load_checkpoint(a), y = load_checkpoint(b);
  std::printf("steps %lld and %lld, optimizers %s and %s\n",
              static_cast<long long>(x.progress.step), static_cast<long long>(y.progress.step),
              optimizer_name(x.optimizer), optimizer_name(y.optimizer));
  const char* names[] = {"emb_in", "emb_out", "dense", "acc_in", "acc_out", "acc_dense"};
  const std::vector<float>* xs[] = {&x.model.emb_in, &x.model.emb_out, &x.model.dense,
                                    &x.acc_in, &x.acc_out, &x.acc_dense};
  const std::vector<float>* ys[] = {&y.model.emb_in, &y.model.emb_out, &y.model.dense,
                                    &y.acc_in, &y.acc_out, &y.acc_dense};
  // The optimizer's state is compared only where both have one.
  const int tensors = x.optimizer == y.optimizer && !x.acc_in.empty() ? 6 : 3;
  double worst = 0;
  for (int t = 0; t < tensors; ++t) {
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

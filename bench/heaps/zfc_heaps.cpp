// zfc_heaps: Heaps' law on any text. For N from 1e3 tokens to the corpus size, counts the
// distinct words U(N) in N tokens drawn the way a training step draws them (windows of
// consecutive words at random offsets), and fits U = k * N^beta, so the paper's Figure 1
// (U proportional to N^0.64 on its corpus) can be checked on the text a user trains on.
//
//   zfc_heaps --corpus DIR [--window-len 20] [--trials 5] [--csv out.csv]
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <string>

#include "workload/corpus.hpp"
#include "workload/heaps.hpp"

namespace {

struct HeapsOptions {
  std::string corpus;
  size_t window_len = 20;
  int trials = 5;
  size_t min_tokens = 1000;
  size_t max_tokens = 0;  // 0: the corpus size
  size_t fit_min = 10000;
  int per_decade = 4;
  uint64_t seed = 1;
  std::string csv;
};

void usage() {
  std::printf(
      "usage: zfc_heaps --corpus DIR [options]\n"
      "  --corpus DIR       every .txt file in DIR (lower-cased [a-z]+('[a-z]+)* words)\n"
      "  --window-len L     words per window (20)\n"
      "  --trials T         samples per N (5)\n"
      "  --min N            smallest N (1000)\n"
      "  --max N            largest N (the corpus size)\n"
      "  --fit-min N        lower end of the second fit (10000)\n"
      "  --per-decade P     N values per factor of 10 (4)\n"
      "  --seed S           sampling seed (1)\n"
      "  --csv FILE         write N, U mean/min/max to FILE\n");
}

bool to_size(const char* v, size_t* out) {
  char* end = nullptr;
  errno = 0;
  const double d = std::strtod(v, &end);  // accepts 1e4
  if (errno != 0 || end == v || *end != '\0' || d < 0) return false;
  *out = static_cast<size_t>(d);
  return true;
}

bool parse(int argc, char** argv, HeapsOptions* o) {
  for (int i = 1; i < argc; i += 2) {
    const char* a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : nullptr;
    size_t n = 0;
    if (v == nullptr) return false;
    if (!std::strcmp(a, "--corpus")) o->corpus = v;
    else if (!std::strcmp(a, "--csv")) o->csv = v;
    else if (!to_size(v, &n)) return false;
    else if (!std::strcmp(a, "--window-len")) o->window_len = n;
    else if (!std::strcmp(a, "--trials")) o->trials = static_cast<int>(n);
    else if (!std::strcmp(a, "--min")) o->min_tokens = n;
    else if (!std::strcmp(a, "--max")) o->max_tokens = n;
    else if (!std::strcmp(a, "--fit-min")) o->fit_min = n;
    else if (!std::strcmp(a, "--per-decade")) o->per_decade = static_cast<int>(n);
    else if (!std::strcmp(a, "--seed")) o->seed = n;
    else return false;
  }
  return !o->corpus.empty() && o->window_len > 0 && o->trials > 0 && o->min_tokens > 0 &&
         o->per_decade > 0;
}

void print_fit(const char* what, const zfc::workload::PowerFit& f) {
  if (f.points < 2) {
    std::printf("# fit %s: fewer than two points\n", what);
    return;
  }
  std::printf("# fit %s over N in [%zu, %zu] (%zu points): beta = %.3f +- %.3f (95%%: %.3f .. "
              "%.3f), k = %.2f, r^2 = %.4f; local slope %.3f .. %.3f\n",
              what, f.n_min, f.n_max, f.points, f.beta, 1.96 * f.beta_stderr,
              f.beta - 1.96 * f.beta_stderr, f.beta + 1.96 * f.beta_stderr, f.k, f.r2,
              f.local_min, f.local_max);
}

}  // namespace

bool asks_for_help(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--help") || !std::strcmp(argv[i], "-h")) return true;
  }
  return false;
}

int main(int argc, char** argv) {
  HeapsOptions o;
  if (asks_for_help(argc, argv)) {
    usage();
    return 0;
  }
  if (!parse(argc, argv, &o)) {
    usage();
    return 2;
  }
  try {
    const zfc::workload::Corpus corpus = zfc::workload::Corpus::load_all(o.corpus);
    const size_t total = corpus.tokens().size();
    const size_t max_n = o.max_tokens == 0 ? total : std::min(o.max_tokens, total);
    const std::vector<size_t> sizes =
        zfc::workload::heaps_sizes(std::min(o.min_tokens, max_n), max_n, o.per_decade);
    const std::vector<zfc::workload::HeapsPoint> points = zfc::workload::measure_heaps(
        corpus.tokens(), corpus.vocab_size(), sizes, o.window_len, o.trials, o.seed);
    std::printf("# zfc_heaps: distinct words U(N) in N tokens drawn as windows of %zu words at "
                "random offsets, %d samples per N\n",
                o.window_len, o.trials);
    std::printf("# corpus: %s (%zu files, %zu words, %lld distinct)\n", o.corpus.c_str(),
                corpus.files(), total, static_cast<long long>(corpus.vocab_size() - 1));
    std::printf("# %12s %12s %10s %10s %8s %8s\n", "N", "U(N)", "min", "max", "U/N", "slope");
    for (size_t i = 0; i < points.size(); ++i) {
      const auto& p = points[i];
      double slope = NAN;
      if (i > 0) {
        slope = std::log(p.mean_unique / points[i - 1].mean_unique) /
                std::log(static_cast<double>(p.tokens) / static_cast<double>(points[i - 1].tokens));
      }
      std::printf("  %12zu %12.1f %10.0f %10.0f %8.4f %8.3f\n", p.tokens, p.mean_unique,
                  p.min_unique, p.max_unique, p.mean_unique / static_cast<double>(p.tokens),
                  slope);
    }
    print_fit("(all N)", zfc::workload::fit_power_law(points, 0, max_n));
    print_fit("(large N)", zfc::workload::fit_power_law(points, o.fit_min, max_n));
    std::printf("# the paper's Figure 1 (1-Billion-word benchmark): U proportional to "
                "N^0.64\n");
    if (!o.csv.empty()) {
      std::ofstream out(o.csv);
      out << "corpus,N,U_mean,U_min,U_max,trials,window_len\n";
      for (const auto& p : points) {
        out << o.corpus << ',' << p.tokens << ',' << p.mean_unique << ',' << p.min_unique << ','
            << p.max_unique << ',' << p.trials << ',' << o.window_len << '\n';
      }
      if (!out) throw std::runtime_error("cannot write " + o.csv);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "zfc_heaps: %s\n", e.what());
    return 1;
  }
  return 0;
}

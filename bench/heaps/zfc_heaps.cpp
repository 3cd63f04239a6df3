// zfc_heaps: Heaps' law on any text. For N from 1e3 tokens to the corpus size, counts the
// distinct words U(N) in N tokens drawn the way a training step draws them (windows of
// consecutive words at random offsets), and fits U = k * N^beta, so the paper's Figure 1
// (U proportional to N^0.64 on its corpus) can be checked on the text a user trains on.
//
//   zfc_heaps --corpus DIR [-L 20] [--trials 5] [--csv out.csv]
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <string>

#include "tools/tool_options.hpp"
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

// Parses argv into *o. Returns -1 to go on, else the status to exit with (0: --help).
int parse(int argc, char** argv, HeapsOptions* o) {
  using zfc::tools::add_int;
  CLI::App app("Heaps' law on any text\nrun as: zfc_heaps --corpus DIR [options]", "zfc_heaps");
  app.footer("exit status: 0 done (and after --help), 1 the corpus or the CSV failed, 2 a bad "
             "option");
  app.add_option("--corpus", o->corpus,
                 "every .txt file in DIR (lower-cased [a-z]+('[a-z]+)* words)")
      ->type_name("DIR")
      ->required();
  add_int<size_t>(app, "-L,--window-len", &o->window_len, "words per window", 1);
  add_int(app, "--trials", &o->trials, "samples per N", 1, 1 << 20);
  add_int<size_t>(app, "--min", &o->min_tokens, "smallest N", 1);
  add_int<size_t>(app, "--max", &o->max_tokens, "largest N (0: the corpus size)");
  add_int<size_t>(app, "--fit-min", &o->fit_min, "lower end of the second fit");
  add_int(app, "--per-decade", &o->per_decade, "N values per factor of 10", 1, 1000);
  add_int<uint64_t>(app, "--seed", &o->seed, "sampling seed");
  app.add_option("--csv", o->csv, "write N, U mean/min/max to FILE")->type_name("FILE");
  return zfc::tools::parse_command_line(app, argc, argv, true);
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

int main(int argc, char** argv) {
  HeapsOptions o;
  const int refused = parse(argc, argv, &o);
  if (refused >= 0) return refused;
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

// Checks the hand-written backward pass against central finite differences (in double
// precision sums of fp32 losses) for a tiny model: two layers with a projection, and both
// output layers. Prints the worst relative error per parameter group; exits 1 above 1e-2.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "model.hpp"
#include "softmax.hpp"

namespace {

using lm::Gradients;
using lm::Model;
using lm::OutputSpec;

double loss_of(const Model& m, const std::vector<int32_t>& in, const std::vector<int32_t>& tg,
               int B, int T, const OutputSpec& spec) {
  lm::State st = m.zero_state(B);
  Gradients g;
  return m.train_batch(m.tables(), &st, in, tg, B, T, spec, 1.0f, &g);
}

// The analytic gradient of parameter p (a pointer into m) against finite differences.
double check(Model& m, float* p, double analytic, const std::vector<int32_t>& in,
             const std::vector<int32_t>& tg, int B, int T, const OutputSpec& spec) {
  const float keep = *p, h = 1e-2f;
  *p = keep + h;
  const double up = loss_of(m, in, tg, B, T, spec);
  *p = keep - h;
  const double down = loss_of(m, in, tg, B, T, spec);
  *p = keep;
  const double numeric = (up - down) / (2.0 * h);
  return std::fabs(numeric - analytic) / std::max(1e-2, std::fabs(numeric) + std::fabs(analytic));
}

}  // namespace

int main() {
  const int B = 2, T = 3;
  lm::ModelShape shape{40, 6, 8, 2, true};
  Model m(shape, 5, 0.5f);
  const std::vector<int32_t> in = {1, 5, 7, 3, 3, 9}, tg = {5, 7, 2, 3, 9, 11};
  OutputSpec full;
  OutputSpec sampled;
  sampled.full = false;
  sampled.samples = {0, 2, 4, 6, 8, 30};
  sampled.sample_expected = {0.9f, 0.5f, 0.4f, 0.3f, 0.2f, 0.05f};
  sampled.target_expected = {0.3f, 0.2f, 0.5f, 0.4f, 0.3f, 0.2f};
  double worst = 0;
  for (const OutputSpec* spec : {&full, &sampled}) {
    lm::State st = m.zero_state(B);
    Gradients g;
    m.train_batch(m.tables(), &st, in, tg, B, T, *spec, 1.0f, &g);
    double e_dense = 0, e_in = 0, e_out = 0;
    for (size_t i = 0; i < m.dense.size(); i += 7) {
      e_dense = std::max(e_dense, check(m, &m.dense[i], g.dense[i], in, tg, B, T, *spec));
    }
    // Input rows: the gradient of emb_in[w] is the sum of its tokens' rows.
    const int D = shape.dim;
    for (int w : {3, 7}) {
      for (int k = 0; k < D; ++k) {
        double a = 0;
        for (size_t n = 0; n < in.size(); ++n) {
          if (in[n] == w) a += g.in_rows[n * D + k];
        }
        e_in = std::max(e_in, check(m, &m.emb_in[static_cast<size_t>(w) * D + k], a, in, tg, B,
                                    T, *spec));
      }
    }
    for (int w : {2, 9, 30}) {
      for (int k = 0; k <= D; ++k) {
        double a = 0;
        if (spec->full) {
          a = g.out_dense[static_cast<size_t>(w) * (D + 1) + k];
        } else {
          for (size_t r = 0; r < g.out_indices.size(); ++r) {
            if (g.out_indices[r] == w) a += g.out_rows[r * (D + 1) + k];
          }
        }
        e_out = std::max(e_out, check(m, &m.emb_out[static_cast<size_t>(w) * (D + 1) + k], a,
                                      in, tg, B, T, *spec));
      }
    }
    std::printf("%s softmax: worst relative error dense %.2e, input rows %.2e, output rows "
                "%.2e\n", spec->full ? "full" : "sampled", e_dense, e_in, e_out);
    worst = std::max({worst, e_dense, e_in, e_out});
  }
  std::printf("gradient check %s (worst %.2e)\n", worst < 1e-2 ? "passed" : "FAILED", worst);
  return worst < 1e-2 ? 0 : 1;
}

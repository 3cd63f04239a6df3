#include "demo_options.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

void usage() {
  std::printf(
      "usage: mpirun -np G zfc_demo [options]\n"
      "  --corpus DIR     real text: every .txt file in DIR (default: seeded Zipf stream)\n"
      "  --vocab V        vocabulary size, most frequent words; the rest map to <unk> "
      "(100000)\n"
      "  --zipf S         exponent of the synthetic stream (1.1)\n"
      "  --windows N      windows per rank per step (32)\n"
      "  --window-len L   words per window (20); K = N * L tokens per rank\n"
      "  --dim D          embedding width (512)\n"
      "  --steps S        measured steps (10)\n"
      "  --warmup W       unmeasured steps first (2)\n"
      "  --scale F        fp16 compression scale (1)\n"
      "  --seed N         workload seed (1)\n");
}

}  // namespace

bool parse_demo_options(int argc, char** argv, bool print, DemoOptions* o) {
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : nullptr;
    auto takes = [&](const char* name) { return std::strcmp(a, name) == 0 && v != nullptr; };
    if (takes("--corpus")) o->corpus = v;
    else if (takes("--vocab")) o->vocab = std::atoll(v);
    else if (takes("--zipf")) o->zipf_s = std::atof(v);
    else if (takes("--windows")) o->windows = std::atoi(v);
    else if (takes("--window-len")) o->window_len = std::atoi(v);
    else if (takes("--dim")) o->dim = static_cast<size_t>(std::atoll(v));
    else if (takes("--steps")) o->steps = std::atoi(v);
    else if (takes("--warmup")) o->warmup = std::atoi(v);
    else if (takes("--scale")) o->fp16_scale = static_cast<float>(std::atof(v));
    else if (takes("--seed")) o->seed = static_cast<uint64_t>(std::atoll(v));
    else {
      o->help = std::strcmp(a, "--help") == 0 || std::strcmp(a, "-h") == 0;
      if (print) {
        if (!o->help) std::fprintf(stderr, "unknown option %s\n", a);
        usage();
      }
      return false;
    }
    ++i;
  }
  if (o->vocab < 2 || o->windows < 0 || o->window_len <= 0 || o->dim == 0 || o->steps <= 0 ||
      o->warmup < 0 || !(o->fp16_scale > 0)) {
    if (print) std::fprintf(stderr, "zfc_demo: an option is out of range\n");
    return false;
  }
  return true;
}

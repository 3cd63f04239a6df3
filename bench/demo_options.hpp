// Command line of zfc_demo (the names shared by every program:
// common/tools/tool_options.hpp).
#pragma once

#include <cstdint>
#include <string>

struct DemoOptions {
  std::string corpus;     // directory of .txt files; empty: seeded Zipf stream
  int64_t vocab = 100000;
  double zipf_s = 1.1;    // exponent of the synthetic stream
  int windows = 32;       // windows per rank per step
  int window_len = 20;    // words per window
  size_t dim = 512;
  int steps = 10;         // -n, --iters: measured steps
  int warmup = 2;         // -w, --warmup_iters
  float fp16_scale = 1.0f;
  uint64_t seed = 1;
};

// Parses argv. Returns -1 when the run goes on; otherwise the status to exit with: 0 after
// --help, 2 for a bad option (printed, when `print`, naming the option and its value).
int parse_demo_options(int argc, char** argv, bool print, DemoOptions* out);

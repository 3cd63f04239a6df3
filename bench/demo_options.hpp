// Command line of zfc_demo.
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
  int steps = 10;
  int warmup = 2;
  float fp16_scale = 1.0f;
  uint64_t seed = 1;
  bool help = false;      // --help was asked for (exit 0), not a bad option (exit 2)
};

// Parses argv; prints usage and returns false on --help or a bad option.
bool parse_demo_options(int argc, char** argv, bool print, DemoOptions* out);

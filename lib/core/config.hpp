// The validated, library-side copy of a zfcConfig_t.
#pragma once

#include <cstdint>
#include <string>

#include "host_device/status.hpp"

namespace zfc {

// A compression: its format (a kind without ZFC_COMPRESS_STOCHASTIC), the scale, and how it
// rounds. A call sets seed and step, which key stochastic rounding's random bits.
struct Compression {
  zfcCompressionKind_t kind = zfcCompressNone;
  float scale = 1.0f;
  bool stochastic = false;
  uint64_t seed = 0;  // the communicator's rounding_seed
  uint64_t step = 0;  // the call's place in the communicator's sequence of calls

  // The zfcCompressionKind_t a caller names it by (the flag included).
  int code() const { return kind | (stochastic ? ZFC_COMPRESS_STOCHASTIC : 0); }
};

// One link class of the alpha-beta cost model, in seconds per step and bytes per second.
struct LinkParams {
  double latency_s = 0.0;
  double bytes_per_s = 0.0;
};

// The machine model's figures in the C API's units (microseconds, GB/s), as given in the
// config or the environment; a link with bandwidth 0, or local_gbs 0, is not given.
struct ModelFigures {
  double intra_latency_us = 0.0;
  double intra_gbs = 0.0;
  double inter_latency_us = 0.0;
  double inter_gbs = 0.0;
  double local_gbs = 0.0;
  // Counted, never given: ranks per core on the most crowded host (the figures above are a
  // rank's with a core to itself).
  double ranks_per_core = 1.0;
  bool intra_given() const { return intra_gbs > 0.0; }
  bool inter_given() const { return inter_gbs > 0.0; }
  bool local_given() const { return local_gbs > 0.0; }
  // Bit 0: intra given, bit 1: inter, bit 2: local (what the ranks must agree on).
  int given_mask() const {
    return (intra_given() ? 1 : 0) | (inter_given() ? 2 : 0) | (local_given() ? 4 : 0);
  }
};

struct Config {
  zfcTransport_t transport = zfcTransportAuto;
  int device = -1;
  int timeout_ms = ZFC_DEFAULT_TIMEOUT_MS;  // a NULL config's; 0: no bound
  zfcAlgorithm_t algorithm = zfcAlgoAuto;
  Compression compression;
  bool bounds_check = true;
  std::string name;
  int ranks_per_node = 0;  // 0: by host
  ModelFigures model;      // the machine model's given figures (the rest are measured)
  uint64_t rounding_seed = 0;
};

// Checks the struct's guard fields and every value; `user` may be NULL for defaults. The
// struct may have the layout of any release since 0.1.0 (told apart by its size).
Status parse_config(const zfcConfig_t* user, Config* out);

// Copies the caller's struct of `user_size` bytes into *full (which holds the defaults of
// the current layout) when user_size is one of `known` sizes; else zfcInvalidUsage naming
// `what`, the size and the sizes known. For the versioned structs of the C API.
Status copy_versioned(const void* user, size_t user_size, const size_t* known, size_t count,
                      const char* what, const char* initializer, void* full, size_t full_size);

// Checks a compression request: a known kind and, unless none, a finite scale > 0.
Status check_compression(const Compression& c);

// The same check on a kind given as the integer a C caller passed (any value, which a C++
// enum may not hold), then *out = {kind, scale}; *out is set only on success.
Status make_compression(int kind, float scale, Compression* out);

}  // namespace zfc

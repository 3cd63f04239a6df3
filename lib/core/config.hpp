// The validated, library-side copy of a zfcConfig_t.
#pragma once

#include <string>

#include "base/status.hpp"

namespace zfc {

struct Compression {
  zfcCompressionKind_t kind = zfcCompressNone;
  float scale = 1.0f;
};

// One link class of the alpha-beta cost model, in seconds per step and bytes per second;
// zeros: not given (measured when the communicator is made).
struct LinkParams {
  double latency_s = 0.0;
  double bytes_per_s = 0.0;
  bool given() const { return bytes_per_s > 0.0; }
};

struct Config {
  zfcTransport_t transport = zfcTransportAuto;
  int device = -1;
  int timeout_ms = 0;
  zfcAlgorithm_t algorithm = zfcAlgoAuto;
  Compression compression;
  bool bounds_check = true;
  std::string name;
  int ranks_per_node = 0;  // 0: by host
  LinkParams intra_node;
  LinkParams inter_node;
};

// Checks the struct's guard fields and every value; `user` may be NULL for defaults.
Status parse_config(const zfcConfig_t* user, Config* out);

// Checks a compression request: a known kind and, unless none, a finite scale > 0.
Status check_compression(const Compression& c);

// The same check on a kind given as the integer a C caller passed (any value, which a C++
// enum may not hold), then *out = {kind, scale}; *out is set only on success.
Status make_compression(int kind, float scale, Compression* out);

}  // namespace zfc

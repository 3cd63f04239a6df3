// The validated, library-side copy of a zfcConfig_t.
#pragma once

#include <string>

#include "base/status.hpp"

namespace zfc {

struct Compression {
  zfcCompressionKind_t kind = zfcCompressNone;
  float scale = 1.0f;
};

struct Config {
  zfcTransport_t transport = zfcTransportAuto;
  int device = -1;
  int timeout_ms = 0;
  zfcAlgorithm_t algorithm = zfcAlgoAuto;
  Compression compression;
  bool bounds_check = true;
  std::string name;
};

// Checks the struct's guard fields and every value; `user` may be NULL for defaults.
Status parse_config(const zfcConfig_t* user, Config* out);

// Checks a compression request: a known kind and, unless none, a finite scale > 0.
Status check_compression(const Compression& c);

}  // namespace zfc

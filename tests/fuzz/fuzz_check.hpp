// What every fuzz target asserts of a Status: a failure has a known code and a message.
#pragma once

#include <cstdio>
#include <cstdlib>

#include "host_device/status.hpp"

namespace zfc {
namespace fuzz {

// Stops the run (libFuzzer then saves the input) with a reason.
[[noreturn]] inline void fail(const char* why) {
  std::fprintf(stderr, "fuzz check failed: %s\n", why);
  std::abort();
}

inline void require(bool ok, const char* why) {
  if (!ok) fail(why);
}

inline void check_status(const Status& s) {
  if (s.ok()) return;
  require(s.code() > zfcSuccess && s.code() < zfcNumResults, "a failure with an unknown code");
  require(!s.message().empty(), "a failure without a message");
}

}  // namespace fuzz
}  // namespace zfc

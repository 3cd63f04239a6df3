// The floor a sparse step could reach on this machine: the bytes each rank's step must touch
// at the least, over the copy bandwidth its ranks reach together, plus its rounds times a
// small message's latency, both measured in the same run as the steps they judge.
#pragma once

#include "perf_common.hpp"

struct FloorRates {
  double copy_bytes_per_s = 0.0;  // bytes read + written per second per rank, all copying
  double round_seconds = 0.0;     // one round of 8-byte messages between every pair
  // Bytes sent + received per second per rank when every pair exchanges at once over MPI's
  // point-to-point messages (0 with one rank): what the transport itself reaches for the
  // wire bytes that the floor prices at copy_bytes_per_s.
  double exchange_bytes_per_s = 0.0;
};

// Collective: every rank copies a buffer at once (bytes read + written over the time until
// the last rank is done, median of repeats), then an 8-byte MPI_Alltoall (the same way), then
// an exchange of the buffer's size between every pair (the same way).
FloorRates measure_floor_rates(const PerfContext& ctx);

// What one rank's step must touch at the least, in bytes: what it sends and receives, its
// K x D fp32 input read once, the U_g x D fp32 result written once, and, for a compressed
// wire, the fp32 side of the encode of what it sends and of the decode of what it receives
// (their wire side is the wire bytes): fp32_per_wire_byte is 0 in fp32, 2 for a 16-bit
// wire, 4 for an eight-bit one.
double least_touched_bytes(double sent, double received, double tokens, double dim,
                           double global_unique, double fp32_per_wire_byte);

// The floor of a step in seconds: the busiest rank's least bytes over the copy rate, plus
// the step's rounds times the round latency.
double floor_seconds(const FloorRates& rates, double busiest_bytes, double rounds);

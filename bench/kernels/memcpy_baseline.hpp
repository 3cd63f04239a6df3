// This machine's memcpy bandwidth at a given working-set size, measured once per size in the
// running process, so every kernel can be reported as a fraction of it.
#pragma once

#include <cstddef>

namespace zfc_bench {

// Bytes moved (read + written) per second by memcpy when it reads and writes `moved` bytes
// in all, i.e. copies moved/2 bytes; the best of several timed repetitions.
double memcpy_bytes_per_second(size_t moved);

}  // namespace zfc_bench

// This machine's memcpy bandwidth at a given working-set size, measured right after each
// kernel's own timing, so that a kernel is compared with memcpy under the same conditions
// (on a shared machine, a baseline taken minutes earlier can be off by a third).
#pragma once

#include <cstddef>

namespace zfc_bench {

// Bytes moved (read + written) per second by memcpy when it reads and writes `moved` bytes
// in all, i.e. copies moved/2 bytes; the best of several timed repetitions of about 5 ms.
double memcpy_bytes_per_second(size_t moved);

}  // namespace zfc_bench

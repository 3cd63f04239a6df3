// The deterministic (compressed) allreduce, written against the transport interface:
// a reduce-scatter by alltoallv, in which rank j receives every rank's wire copy of chunk j
// and sums them in fp32 in the library's order of sums (algo/rank_order.hpp), then an allgatherv of the summed
// chunks on the same wire. Every element is summed by exactly one rank in a fixed order, so
// the result is bit-identical on every rank and from run to run, and each rank sends and
// receives about 2*(G-1)/G of the buffer, the same as a ring allreduce.
#pragma once

#include <cstddef>

#include "host_device/status.hpp"
#include "core/config.hpp"
#include "core/node_map.hpp"
#include "exec/wire_kernels.hpp"
#include "exec/workspace.hpp"
#include "transport/transport.hpp"

namespace zfc {

// Where the result is written. kInPlace gathers it straight into recv, for the library's
// own buffers; kAfterLastTransfer gathers it in scratch and copies it into recv once every
// transfer has succeeded, for a caller's buffer that a failure must leave unmodified.
enum class RecvWrites { kInPlace, kAfterLastTransfer };

// The values of one row of a wire format with a per-row part in zfcAllReduce.
constexpr size_t kAllReduceRowValues = ZFC_ALLREDUCE_BLOCK_VALUES;

// Sums n fp32 values over all ranks into recv (recv may equal send), in the order of
// algo/rank_order.hpp for `nodes` (NULL: rank order). The callers have agreed n and the
// compression. *finite is false when some result element is not finite. A wire format with
// a per-row part (kernels/wire_format.hpp) cuts the values into rows of `row_values` (the
// sparse exchanges' rows, or kAllReduceRowValues), each with its own scale: host memory
// only in this version.
Status allreduce_sum(Transport& t, Workspace& ws, const float* send, float* recv, size_t n,
                     const Compression& compression, bool* finite,
                     const NodeMap* nodes = nullptr,
                     RecvWrites writes = RecvWrites::kInPlace,
                     size_t row_values = kAllReduceRowValues);

// The same on the memory space of `k` (send, recv and the wire copies are there; ws holds
// the host-side size lists). With device kernels the transport must take device buffers.
// finite == NULL: the overflow flag stays in k (a later kernel reads it), and the call does
// not wait for it.
Status allreduce_sum(Transport& t, Workspace& ws, WireKernels& k, const float* send,
                     float* recv, size_t n, const Compression& compression, bool* finite,
                     const NodeMap* nodes, RecvWrites writes,
                     size_t row_values = kAllReduceRowValues);

// The allreduce of a format with a per-row part, on the host (algo/allreduce_rows.cpp).
// recv is written after the last transfer.
Status allreduce_rows_sum(Transport& t, Workspace& ws, const float* send, float* recv, size_t n,
                          const Compression& c, size_t row_values, bool* finite,
                          const NodeMap* nodes);

// zfcUnsupported for a format with a per-row part where the values are not in host memory
// (`k` a device's): no device kernels for them in this version.
Status check_row_wire_on(const WireKernels& k, const Compression& compression);

}  // namespace zfc

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

// zfcUnsupported for a wire format with a per-row part (kernels/wire_format.hpp): the
// allreduce cuts its values into chunks anywhere, and such a format needs them at rows.
Status check_element_wire(const Compression& compression);

// Sums n fp32 values over all ranks into recv (recv may equal send), in the order of
// algo/rank_order.hpp for `nodes` (NULL: rank order). The callers have agreed n and the
// compression. *finite is false when some result element is not finite.
Status allreduce_sum(Transport& t, Workspace& ws, const float* send, float* recv, size_t n,
                     const Compression& compression, bool* finite,
                     const NodeMap* nodes = nullptr,
                     RecvWrites writes = RecvWrites::kInPlace);

// The same on the memory space of `k` (send, recv and the wire copies are there; ws holds
// the host-side size lists). With device kernels the transport must take device buffers.
// finite == NULL: the overflow flag stays in k (a later kernel reads it), and the call does
// not wait for it.
Status allreduce_sum(Transport& t, Workspace& ws, WireKernels& k, const float* send,
                     float* recv, size_t n, const Compression& compression, bool* finite,
                     const NodeMap* nodes, RecvWrites writes);

}  // namespace zfc

// Error feedback for the dense allreduce (zfcAllReduceWithResidual): the caller's residual
// is added to the values before they are encoded, and afterwards holds what this rank's
// encode of them left out, so that the next call sends it. Only the first encode (each
// rank's own values, hop kHopSend) is fed back: the summed chunks' rounding on the way back
// is the same on every rank and would need a residual per chunk owner.
#pragma once

#include <cstddef>

#include "core/config.hpp"
#include "exec/workspace.hpp"

namespace zfc {

// fed[i] = send[i] + residual[i].
void add_residual(const float* send, const float* residual, size_t n, float* fed);

// fed[i] -= the value its encode decodes to: what rank `rank`'s encode of fed left out, with
// the rounding the allreduce gives it (rows of row_values for a format with a per-row part
// and for stochastic rounding's ids). Scratch from ws.
void left_by_encode(Workspace& ws, const Compression& c, int rank, size_t row_values,
                    float* fed, size_t n);

}  // namespace zfc

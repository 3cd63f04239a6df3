// The fixed order in which one scatter-add sums the rows it adds into one target row (a
// rank's token rows per distinct id, zfcScatterToDense's rows per position), the same on
// the host and on a device.
//
// A target's rows are taken in input order and cut into blocks of kSumBlockRows. The first
// block is added, row by row, onto the target's starting value (+0, or the row as it is for
// an accumulating call); every later block is summed row by row from +0; then the later
// blocks' sums are added, in block order, onto the first block's result. A target with at
// most kSumBlockRows rows is therefore summed exactly in input order.
//
// Why blocks: a Zipf head id holds about an eighth of a large step's tokens, and a sum that
// is one serial chain per column cannot be spread over a GPU without changing its bits. With
// blocks, a device sums every block of a hot id on its own SM and the bits stay the host's.
// The block length is public (ZFC_SUM_BLOCK_ROWS) because it is part of what the bits are.
// It lives in common/host_device, which both lib/ and cuda/ include.
#pragma once

#include <cstdint>

#include "zipfcoll/zipfcoll.h"

namespace zfc {

constexpr uint32_t kSumBlockRows = ZFC_SUM_BLOCK_ROWS;

}  // namespace zfc

// The plugin libzipfcoll-nccl.so: the NCCL transport, built apart from libzipfcoll so that only
// a program that asks for it loads it and the system libraries it needs.
#include "base/plugin_abi.hpp"
#include "transport/nccl/nccl_transport.hpp"

namespace {
const zfc::NcclPlugin kEntries{&zfc::create_nccl_transport};
}  // namespace

ZFC_DEFINE_PLUGIN("nccl", kEntries)

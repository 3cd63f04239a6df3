// The plugin libzipfcoll-ucx.so: the UCX transport, built apart from libzipfcoll so that only
// a program that asks for it loads it and the system libraries it needs.
#include "base/plugin_abi.hpp"
#include "transport/ucx/ucx_transport.hpp"

namespace {
const zfc::UcxPlugin kEntries{&zfc::create_ucx_transport};
}  // namespace

ZFC_DEFINE_PLUGIN("ucx", kEntries)

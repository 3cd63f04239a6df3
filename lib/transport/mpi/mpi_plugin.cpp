// The plugin libzipfcoll-mpi.so: the MPI transport, built apart from libzipfcoll so that only
// a program that asks for it loads it and the system libraries it needs.
#include "base/plugin_abi.hpp"
#include "transport/mpi/mpi_transport.hpp"

namespace {
const zfc::MpiPlugin kEntries{&zfc::create_mpi_transport};
}  // namespace

ZFC_DEFINE_PLUGIN("mpi", kEntries)

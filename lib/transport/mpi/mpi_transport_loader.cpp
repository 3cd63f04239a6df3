// The MPI transport in libzipfcoll: its plugin, loaded on first use, so that the library
// itself does not need libmpi.
#include "base/plugin_loader.hpp"
#include "transport/mpi/mpi_transport.hpp"

namespace zfc {

Status mpi_transport_check() {
  const MpiPlugin* plugin = nullptr;
  return load_plugin("mpi", "the MPI transport", &plugin);
}

Status create_mpi_transport(const void* mpi_comm, int timeout_ms,
                            std::unique_ptr<Transport>* out) {
  const MpiPlugin* plugin = nullptr;
  ZFC_RETURN_IF_ERROR(load_plugin("mpi", "the MPI transport", &plugin));
  return plugin->create(mpi_comm, timeout_ms, out);
}

}  // namespace zfc

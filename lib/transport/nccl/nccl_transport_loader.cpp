// The NCCL transport in libzipfcoll: its plugin, loaded on first use, so that the library
// itself does not need libnccl.
#include "base/plugin_loader.hpp"
#include "transport/nccl/nccl_transport.hpp"

namespace zfc {

Status nccl_transport_check() {
  const NcclPlugin* plugin = nullptr;
  return load_plugin("nccl", "the NCCL transport", &plugin);
}

Status create_nccl_transport(Transport& bootstrap, int device, int timeout_ms,
                             std::unique_ptr<Transport>* out) {
  const NcclPlugin* plugin = nullptr;
  ZFC_RETURN_IF_ERROR(load_plugin("nccl", "the NCCL transport", &plugin));
  return plugin->create(bootstrap, device, timeout_ms, out);
}

}  // namespace zfc

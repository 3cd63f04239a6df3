// The UCX transport in libzipfcoll: its plugin, loaded on first use, so that the library
// itself does not need libucp.
#include "base/plugin_loader.hpp"
#include "transport/ucx/ucx_transport.hpp"

namespace zfc {

Status ucx_transport_check() {
  const UcxPlugin* plugin = nullptr;
  return load_plugin("ucx", "the UCX transport", &plugin);
}

Status create_ucx_transport(Transport& bootstrap, int timeout_ms,
                            std::unique_ptr<Transport>* out) {
  const UcxPlugin* plugin = nullptr;
  ZFC_RETURN_IF_ERROR(load_plugin("ucx", "the UCX transport", &plugin));
  return plugin->create(bootstrap, timeout_ms, out);
}

}  // namespace zfc

// Finds and loads libzipfcoll-<kind>.so: in the folders of ZIPFCOLL_PLUGIN_PATH (a
// colon-separated list) when it is set, else in the folder of the libzipfcoll that runs; the
// first folder holding the file decides (a file there that does not load is the error, not
// a reason to look further, so that the plugin used is always the one named). A plugin that
// loads is kept for the life of the process (MPI, UCX and NCCL cannot be unloaded
// safely); one that does not is tried again on the next call. Safe from several threads.
#pragma once

#include "host_device/status.hpp"

namespace zfc {

// The plugin's table of entries. `what` names the plugin in errors ("the MPI transport").
// zfcUnsupported, naming the file, the folders searched and the reason, when the file is
// missing, when it or a library it needs cannot be loaded (dlopen's reason names that
// library), or when it was built by another build of zipfcoll.
Status load_plugin(const char* kind, const char* what, const void** entries);

template <typename Entries>
Status load_plugin(const char* kind, const char* what, const Entries** out) {
  const void* entries = nullptr;
  ZFC_RETURN_IF_ERROR(load_plugin(kind, what, &entries));
  *out = static_cast<const Entries*>(entries);
  return Status::Ok();
}

}  // namespace zfc

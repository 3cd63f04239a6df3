#include "base/plugin_loader.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <vector>

#include "base/plugin_abi.hpp"

namespace zfc {
namespace {

// The folder of the shared object this function is in: the libzipfcoll that runs.
std::string own_folder() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<const void*>(&own_folder), &info) == 0 ||
      info.dli_fname == nullptr) {
    return ".";
  }
  const std::string path = info.dli_fname;
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

std::vector<std::string> folders() {
  std::vector<std::string> out;
  const char* env = std::getenv("ZIPFCOLL_PLUGIN_PATH");
  if (env == nullptr) {
    out.push_back(own_folder());
    return out;
  }
  const std::string list = env;
  size_t at = 0;
  while (at <= list.size()) {
    size_t end = list.find(':', at);
    if (end == std::string::npos) end = list.size();
    if (end > at) out.push_back(list.substr(at, end - at));
    at = end + 1;
  }
  return out;
}

std::string joined(const std::vector<std::string>& v) {
  std::string out;
  for (const std::string& s : v) out += (out.empty() ? "" : ":") + s;
  return out.empty() ? "(ZIPFCOLL_PLUGIN_PATH is empty)" : out;
}

// Opens `path` and checks its table; the handle is kept only when the table is ours.
Status open_plugin(const std::string& path, const char* kind, const char* what,
                   const void** entries) {
  dlerror();
  // RTLD_LOCAL: the transport's libraries (libmpi, libucp, libnccl) stay out of the global
  // namespace, as they would be had the application not loaded them itself.
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    return error(zfcUnsupported, "%s's plugin %s cannot be loaded: %s", what, path.c_str(),
                 why != nullptr ? why : "unknown dlopen failure");
  }
  using Entry = const PluginTable* (*)();
  auto entry = reinterpret_cast<Entry>(dlsym(handle, ZFC_PLUGIN_ENTRY_NAME));
  const PluginTable* table = entry != nullptr ? entry() : nullptr;
  Status s = Status::Ok();
  if (table == nullptr) {
    s = error(zfcUnsupported, "%s is not a zipfcoll plugin (no %s)", path.c_str(),
              ZFC_PLUGIN_ENTRY_NAME);
  } else if (std::strcmp(table->abi, kPluginAbi) != 0 || std::strcmp(table->kind, kind) != 0) {
    s = error(zfcUnsupported, "%s is the %s plugin of %s; this library is %s and needs its "
              "own %s plugin", path.c_str(), table->kind, table->abi, kPluginAbi, kind);
  }
  if (!s.ok()) {
    dlclose(handle);
    return s;
  }
  *entries = table->entries;
  return Status::Ok();
}

}  // namespace

Status load_plugin(const char* kind, const char* what, const void** entries) {
  static std::mutex lock;
  static std::map<std::string, const void*> loaded;
  std::lock_guard<std::mutex> hold(lock);
  const auto found = loaded.find(kind);
  if (found != loaded.end()) {
    *entries = found->second;
    return Status::Ok();
  }
  const std::string file = std::string("libzipfcoll-") + kind + ".so";
  const std::vector<std::string> where = folders();
  for (const std::string& folder : where) {
    const std::string path = folder + "/" + file;
    if (access(path.c_str(), F_OK) != 0) continue;
    const void* table = nullptr;
    ZFC_RETURN_IF_ERROR(open_plugin(path, kind, what, &table));
    loaded[kind] = table;
    *entries = table;
    return Status::Ok();
  }
  return error(zfcUnsupported, "%s's plugin %s is not in %s (install it beside libzipfcoll, "
               "or name its folder in ZIPFCOLL_PLUGIN_PATH)", what, file.c_str(),
               joined(where).c_str());
}

}  // namespace zfc

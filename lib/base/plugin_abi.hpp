// How libzipfcoll meets its plugins: one shared library per transport (MPI, UCX, NCCL) and one
// for hwloc, loaded on first use so that libzipfcoll itself needs only the C and C++
// runtimes. A plugin is built with the library from the same sources, so its table holds C++
// function pointers and objects cross between them; the ABI string names the build's version
// and compiler, and a plugin from any other build is refused rather than trusted.
#pragma once

#include "zipfcoll/zipfcoll_version.h"

namespace zfc {

constexpr const char* kPluginAbi = "zipfcoll " ZFC_VERSION_STRING " built by " __VERSION__;

struct PluginTable {
  const char* abi;      // kPluginAbi of the build that made the plugin
  const char* kind;     // "mpi", "ucx", "nccl" or "hwloc": the file is libzipfcoll-<kind>.so
  const void* entries;  // the kind's table of functions (MpiPlugin, UcxPlugin, ...)
};

}  // namespace zfc

// The one symbol a plugin exports.
#define ZFC_PLUGIN_ENTRY_NAME "zipfcoll_plugin_v1"

// Defines that symbol for a plugin of `kind` whose table is the static object `entries`.
#define ZFC_DEFINE_PLUGIN(kind, entries)                                                  \
  extern "C" __attribute__((visibility("default"))) const ::zfc::PluginTable*            \
  zipfcoll_plugin_v1() {                                                                  \
    static const ::zfc::PluginTable table{::zfc::kPluginAbi, kind, &(entries)};          \
    return &table;                                                                        \
  }

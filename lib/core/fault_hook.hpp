// Where the reliability tests inject faults: fault_point() runs as each phase of a
// collective begins (zfcPhaseTotal first, as the call starts), and calls the hook a test
// installed, which may kill, stop or end its own process there. Not part of the C API;
// without a hook it costs one predictable branch per phase.
#pragma once

#include "zipfcoll/zipfcoll.h"

namespace zfc {

using FaultHook = void (*)(zfcPhase_t phase, void* arg);

// Installs (or with nullptr removes) the process's hook.
void set_fault_hook(FaultHook hook, void* arg);

namespace detail {
extern FaultHook g_fault_hook;
extern void* g_fault_arg;
}  // namespace detail

inline void fault_point(zfcPhase_t phase) {
  if (detail::g_fault_hook != nullptr) detail::g_fault_hook(phase, detail::g_fault_arg);
}

}  // namespace zfc

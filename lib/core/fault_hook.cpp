#include "core/fault_hook.hpp"

namespace zfc {
namespace detail {
FaultHook g_fault_hook = nullptr;
void* g_fault_arg = nullptr;
}  // namespace detail

void set_fault_hook(FaultHook hook, void* arg) {
  detail::g_fault_arg = arg;
  detail::g_fault_hook = hook;
}

}  // namespace zfc

#include "exec/workspace.hpp"

namespace zfc {
namespace {
constexpr std::align_val_t kAlign{64};
}

Workspace::~Workspace() {
  for (Buffer& b : buffers_) ::operator delete(b.data, kAlign);
}

void Workspace::begin_call() {
  for (Buffer& b : buffers_) b.call_max = 0;
}

void* Workspace::raw(Slot s, size_t bytes) {
  Buffer& b = buffers_[static_cast<size_t>(s)];
  if (bytes > b.call_max) b.call_max = bytes;
  if (bytes > b.capacity) {
    void* fresh = ::operator new(bytes, kAlign);
    ::operator delete(b.data, kAlign);
    b.data = fresh;
    b.capacity = bytes;
  }
  return b.data;
}

size_t Workspace::call_bytes() const {
  size_t total = 0;
  for (const Buffer& b : buffers_) total += b.call_max;
  return total;
}

}  // namespace zfc

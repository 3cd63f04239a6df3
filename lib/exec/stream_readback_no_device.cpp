// A build without CUDA: no stream is a device's, so nothing is ever queued here.
#include "exec/stream_readback.hpp"

namespace zfc {

StreamReadback::~StreamReadback() = default;

Status StreamReadback::capturing(const void*, bool*) {
  return error(zfcUnsupported, "device buffers need a build with CUDA");
}

Status StreamReadback::reserve(size_t) {
  return error(zfcUnsupported, "device buffers need a build with CUDA");
}

Status StreamReadback::queue(const void*, size_t, const void*) {
  return error(zfcUnsupported, "device buffers need a build with CUDA");
}

StreamReadback::State StreamReadback::query(std::string* detail) const {
  *detail = "no device work exists in a build without CUDA";
  return State::kFailed;
}

}  // namespace zfc

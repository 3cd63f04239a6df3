// A transport for one process that stands for `size` ranks: every peer mirrors this rank.
#pragma once

#include <algorithm>
#include <cstring>
#include <memory>

#include "transport/transport.hpp"

namespace zfc {
namespace test {

// `size` ranks, this one rank 0, every peer sending what this rank sends; data operation
// number `fail_at` (counted from 1; 0: none) fails.
class MirrorTransport final : public Transport {
 public:
  explicit MirrorTransport(int size, int fail_at = 0) : Transport(0, size), fail_at_(fail_at) {}
  const char* name() const override { return "mirror"; }
  Status split(int, int, std::unique_ptr<Transport>*) override {
    return error(zfcUnsupported, "mirror transport: no split");
  }
  void abandon() override {}

 protected:
  Status do_allgather(const void* send, size_t bytes, void* recv) override {
    ZFC_RETURN_IF_ERROR(step());
    for (int r = 0; r < size(); ++r) std::memmove(at(recv, r * bytes), send, bytes);
    return Status::Ok();
  }
  Status do_allgatherv(const void* send, void* recv, const size_t* bytes,
                       const size_t* displs) override {
    ZFC_RETURN_IF_ERROR(step());
    // Peer r's block is taken to equal this rank's (true when every element of the result
    // is equal; a longer block ends in zeros).
    for (int r = 0; r < size(); ++r) {
      std::memset(at(recv, displs[r]), 0, bytes[r]);
      std::memcpy(at(recv, displs[r]), send, std::min(bytes[r], bytes[0]));
    }
    return Status::Ok();
  }
  Status do_alltoallv(const void* send, const size_t* send_bytes, const size_t* send_displs,
                      void* recv, const size_t* recv_bytes,
                      const size_t* recv_displs) override {
    ZFC_RETURN_IF_ERROR(step());
    // Every peer sends this rank what this rank sends itself.
    for (int r = 0; r < size(); ++r) {
      std::memcpy(at(recv, recv_displs[r]), static_cast<const char*>(send) + send_displs[0],
                  std::min(recv_bytes[r], send_bytes[0]));
    }
    return Status::Ok();
  }
  Status do_barrier() override { return step(); }

 private:
  static char* at(void* base, size_t offset) { return static_cast<char*>(base) + offset; }
  Status step() {
    if (++ops_ == fail_at_) return error(zfcTransportError, "injected failure of operation %d",
                                         ops_);
    return Status::Ok();
  }
  int fail_at_;
  int ops_ = 0;
};

}  // namespace test
}  // namespace zfc

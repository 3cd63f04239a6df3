#include "bootstrap/rendezvous_transport.hpp"

#include <cstring>
#include <string>
#include <vector>

namespace zfc {
namespace {

class RendezvousTransport final : public Transport {
 public:
  explicit RendezvousTransport(std::unique_ptr<Rendezvous> meeting)
      : Transport(meeting->rank(), meeting->size()), meeting_(std::move(meeting)) {}

  const char* name() const override { return "tcp-bootstrap"; }

  Status split(int, int, std::unique_ptr<Transport>*) override {
    return error(zfcInternalError, "rank %d: the bootstrap transport cannot be split", rank());
  }

  // Closing the sockets is all there is; peers see the connection end.
  void abandon() override {}

 protected:
  Status do_allgather(const void* send, size_t bytes, void* recv) override {
    std::vector<std::string> all;
    ZFC_RETURN_IF_ERROR(gather(send, bytes, &all));
    for (size_t r = 0; r < all.size(); ++r) {
      ZFC_RETURN_IF_ERROR(expect(all[r].size(), bytes, r));
      std::memcpy(static_cast<char*>(recv) + r * bytes, all[r].data(), bytes);
    }
    return Status::Ok();
  }

  Status do_allgatherv(const void* send, void* recv, const size_t* recv_bytes,
                       const size_t* displs) override {
    std::vector<std::string> all;
    ZFC_RETURN_IF_ERROR(gather(send, recv_bytes[rank()], &all));
    for (size_t r = 0; r < all.size(); ++r) {
      ZFC_RETURN_IF_ERROR(expect(all[r].size(), recv_bytes[r], r));
      std::memmove(static_cast<char*>(recv) + displs[r], all[r].data(), recv_bytes[r]);
    }
    return Status::Ok();
  }

  // Every rank's blocks for every peer travel to all; each keeps what was sent to it.
  Status do_alltoallv(const void* send, const size_t* send_bytes, const size_t* send_displs,
                      void* recv, const size_t* recv_bytes,
                      const size_t* recv_displs) override {
    std::vector<std::string> all;
    ZFC_RETURN_IF_ERROR(gather_packed(send, send_bytes, send_displs, &all));
    for (size_t r = 0; r < all.size(); ++r) {
      std::string block;
      ZFC_RETURN_IF_ERROR(unpack(all[r], r, &block));
      ZFC_RETURN_IF_ERROR(expect(block.size(), recv_bytes[r], r));
      std::memcpy(static_cast<char*>(recv) + recv_displs[r], block.data(), block.size());
    }
    return Status::Ok();
  }

  Status do_barrier() override {
    std::vector<std::string> all;
    return meeting_->allgather(std::string(), &all);
  }

  // One round: the rendezvous's blocks carry their lengths.
  Status do_allgather_blocks(const void* send, size_t bytes, size_t* recv_bytes, size_t* displs,
                             const PlaceFn& place, uint32_t* rounds) override {
    std::vector<std::string> all;
    *rounds = 1;
    ZFC_RETURN_IF_ERROR(gather(send, bytes, &all));
    place_blocks(all, recv_bytes, displs, place);
    return Status::Ok();
  }

  Status do_alltoallv_blocks(const void* send, const size_t* send_bytes,
                             const size_t* send_displs, size_t* recv_bytes, size_t* recv_displs,
                             const PlaceFn& place, uint32_t* rounds) override {
    std::vector<std::string> all;
    *rounds = 1;
    ZFC_RETURN_IF_ERROR(gather_packed(send, send_bytes, send_displs, &all));
    std::vector<std::string> mine(all.size());
    for (size_t r = 0; r < all.size(); ++r) ZFC_RETURN_IF_ERROR(unpack(all[r], r, &mine[r]));
    place_blocks(mine, recv_bytes, recv_displs, place);
    return Status::Ok();
  }

 private:
  // Packs `blocks` in rank order at place(total), with their lengths and offsets.
  static void place_blocks(const std::vector<std::string>& blocks, size_t* bytes,
                           size_t* displs, const PlaceFn& place) {
    size_t total = 0;
    for (size_t r = 0; r < blocks.size(); ++r) {
      bytes[r] = blocks[r].size();
      displs[r] = total;
      total += blocks[r].size();
    }
    char* out = place(total);
    for (size_t r = 0; r < blocks.size(); ++r) {
      std::memcpy(out + displs[r], blocks[r].data(), blocks[r].size());
    }
  }

  Status gather(const void* send, size_t bytes, std::vector<std::string>* all) {
    return meeting_->allgather(std::string(static_cast<const char*>(send), bytes), all);
  }

  // This rank's block for each peer j, as (length, bytes) in peer order.
  Status gather_packed(const void* send, const size_t* send_bytes, const size_t* send_displs,
                       std::vector<std::string>* all) {
    std::string packed;
    for (int j = 0; j < size(); ++j) {
      const uint64_t n = send_bytes[j];
      packed.append(reinterpret_cast<const char*>(&n), sizeof n);
      packed.append(static_cast<const char*>(send) + send_displs[j], send_bytes[j]);
    }
    return meeting_->allgather(packed, all);
  }

  // The block rank `from` packed for this rank.
  Status unpack(const std::string& packed, size_t from, std::string* block) const {
    size_t at = 0;
    for (int j = 0; j < size(); ++j) {
      uint64_t n = 0;
      if (packed.size() - at < sizeof n) return short_block(from);
      std::memcpy(&n, packed.data() + at, sizeof n);
      at += sizeof n;
      if (packed.size() - at < n) return short_block(from);
      if (j == rank()) {
        block->assign(packed, at, static_cast<size_t>(n));
        return Status::Ok();
      }
      at += static_cast<size_t>(n);
    }
    return short_block(from);
  }

  Status short_block(size_t from) const {
    return error(zfcTransportError, "rank %d: rank %zu's exchange through the bootstrap "
                 "is cut short", rank(), from);
  }

  Status expect(size_t got, size_t want, size_t from) const {
    if (got == want) return Status::Ok();
    return error(zfcTransportError, "rank %d: rank %zu sent %zu bytes through the bootstrap "
                 "where %zu were expected", rank(), from, got, want);
  }

  std::unique_ptr<Rendezvous> meeting_;
};

}  // namespace

std::unique_ptr<Transport> make_rendezvous_transport(std::unique_ptr<Rendezvous> meeting) {
  return std::unique_ptr<Transport>(new RendezvousTransport(std::move(meeting)));
}

}  // namespace zfc

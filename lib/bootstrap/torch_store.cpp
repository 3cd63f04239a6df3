#include "bootstrap/torch_store.hpp"

#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <thread>

#include "bootstrap/socket_io.hpp"
#include "bootstrap/unique_id.hpp"

namespace zfc {
namespace {

// The command byte's values and the number a client sends first, as
// torch/csrc/distributed/c10d/store/TCPStoreBackend.hpp gives them (checked against torch
// 2.15 by the torchrun tests).
enum Command : uint8_t { kValidate = 0, kSet = 1, kGet = 3, kCheck = 5, kPing = 13 };
enum CheckAnswer : uint8_t { kReady = 0, kNotReady = 1 };
constexpr uint32_t kValidationMagic = 0x3C85F7CEu;
constexpr uint64_t kLargestValue = uint64_t{1} << 24;  // far above any address we store

// One command: its byte, then each field; sent as one buffer.
class Message {
 public:
  explicit Message(Command c) { bytes_.push_back(static_cast<char>(c)); }
  template <class T>
  Message& value(T v) {
    const char* p = reinterpret_cast<const char*>(&v);
    bytes_.append(p, sizeof v);
    return *this;
  }
  Message& text(const std::string& s) {
    value<uint64_t>(s.size());
    bytes_ += s;
    return *this;
  }
  const std::string& bytes() const { return bytes_; }

 private:
  std::string bytes_;
};

SocketClock::time_point after(int ms) {
  return SocketClock::now() + std::chrono::milliseconds(ms);
}

}  // namespace

TorchStore::TorchStore(int fd, int timeout_ms, std::string where)
    : fd_(fd), timeout_ms_(timeout_ms), where_(std::move(where)) {}

TorchStore::~TorchStore() { close(fd_); }

Status TorchStore::connect(const std::string& addr, int port, int timeout_ms,
                           std::unique_ptr<TorchStore>* out) {
  const SocketClock::time_point deadline = after(timeout_ms);
  int fd = -1;
  ZFC_RETURN_IF_ERROR(connect_until(addr, port, deadline, "torchrun's store (MASTER_ADDR)",
                                    &fd));
  std::unique_ptr<TorchStore> store(
      new TorchStore(fd, timeout_ms, addr + ":" + std::to_string(port)));
  const uint32_t nonce = static_cast<uint32_t>(getpid());
  Message hello(kValidate);
  hello.value(kValidationMagic);
  Message ping(kPing);
  ping.value(nonce);
  const std::string both = hello.bytes() + ping.bytes();
  uint32_t answer = 0;
  Status s = send_all(fd, both.data(), both.size(), deadline, "greeting torchrun's store");
  if (s.ok()) s = recv_all(fd, &answer, sizeof answer, deadline, "pinging torchrun's store");
  if (!s.ok() || answer != nonce) {
    return error(zfcInvalidUsage, "TORCHELASTIC_USE_AGENT_STORE is set, but what answers at "
                 "MASTER_ADDR:MASTER_PORT (%s) is not a torch.distributed TCPStore%s%s",
                 store->where_.c_str(), s.ok() ? "" : ": ", s.ok() ? "" : s.message().c_str());
  }
  *out = std::move(store);
  return Status::Ok();
}

Status TorchStore::set(const std::string& key, const std::string& value) {
  Message m(kSet);
  m.text(key).text(value);
  return send_all(fd_, m.bytes().data(), m.bytes().size(), after(timeout_ms_),
                  "setting a key in torchrun's store");
}

Status TorchStore::check(const std::string& key, bool* ready) {
  const SocketClock::time_point deadline = after(timeout_ms_);
  Message m(kCheck);
  m.value<uint64_t>(1).text(key);
  ZFC_RETURN_IF_ERROR(send_all(fd_, m.bytes().data(), m.bytes().size(), deadline,
                               "asking torchrun's store for a key"));
  uint8_t answer = 0;
  ZFC_RETURN_IF_ERROR(recv_all(fd_, &answer, 1, deadline, "asking torchrun's store for a key"));
  if (answer != kReady && answer != kNotReady) {
    return error(zfcRemoteError, "torchrun's store at %s answered %u to a check", where_.c_str(),
                 static_cast<unsigned>(answer));
  }
  *ready = answer == kReady;
  return Status::Ok();
}

Status TorchStore::get(const std::string& key, std::string* value) {
  // Polling rather than the store's own wait: a wait that times out must be cancelled with a
  // second command whose answer races the first, and a rank waits here only while rank 0
  // starts, so a few milliseconds between checks cost nothing.
  const SocketClock::time_point deadline = after(timeout_ms_);
  for (bool ready = false;;) {
    ZFC_RETURN_IF_ERROR(check(key, &ready));
    if (ready) break;
    if (remaining_ms(deadline) == 0) {
      return error(zfcTimeout, "key '%s' did not appear in torchrun's store at %s within %d ms "
                   "(did rank 0 start?)", key.c_str(), where_.c_str(), timeout_ms_);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  Message m(kGet);
  m.text(key);
  const SocketClock::time_point until = after(timeout_ms_);
  ZFC_RETURN_IF_ERROR(send_all(fd_, m.bytes().data(), m.bytes().size(), until,
                               "reading a key from torchrun's store"));
  uint64_t n = 0;
  ZFC_RETURN_IF_ERROR(recv_all(fd_, &n, sizeof n, until, "reading a key from torchrun's store"));
  if (n > kLargestValue) {
    return error(zfcRemoteError, "torchrun's store at %s sent a value of %llu bytes for '%s'",
                 where_.c_str(), static_cast<unsigned long long>(n), key.c_str());
  }
  std::string v(n, '\0');
  if (n > 0) {
    ZFC_RETURN_IF_ERROR(recv_all(fd_, &v[0], n, until, "reading a key from torchrun's store"));
  }
  *value = std::move(v);
  return Status::Ok();
}

std::string TorchStore::local_address() const { return zfc::local_address(fd_); }

Status meet_through_torch_store(const LaunchInfo& launch, int timeout_ms, std::string* addr,
                                int* port, int* listen_fd) {
  // Every rank makes its communicators from the environment in the same order, so the n-th
  // of one rank meets the n-th of the others.
  static std::atomic<int> made{0};
  const int n = made++;
  const std::string key = "zipfcoll/" + launch.run_id + "/" +
                          std::to_string(launch.restart_count) + "/comm" + std::to_string(n);
  std::unique_ptr<TorchStore> store;
  const Status c =
      TorchStore::connect(launch.master_addr, launch.master_port, timeout_ms, &store);
  if (!c.ok()) return error(c.code(), "rank %d: %s", launch.rank, c.message().c_str());
  if (launch.rank != 0) {
    std::string id;
    Status g = store->get(key, &id);
    if (g.ok() && id.size() != kUniqueIdBytes) {
      g = error(zfcRemoteError, "key '%s' of torchrun's store holds %zu bytes, not rank 0's "
                "%zu-byte unique id", key.c_str(), id.size(), kUniqueIdBytes);
    }
    if (g.ok()) g = parse_unique_id(id.data(), addr, port);
    if (!g.ok()) return error(g.code(), "rank %d: %s", launch.rank, g.message().c_str());
    *listen_fd = -1;
    return Status::Ok();
  }
  // Rank 0 makes a unique id, as zfcGetUniqueId does, with its address on the route to the
  // store (what the other ranks can reach) unless ZIPFCOLL_SOCKET_ADDR names one.
  char id[kUniqueIdBytes];
  ZFC_RETURN_IF_ERROR(make_unique_id(id, store->local_address()));
  ZFC_RETURN_IF_ERROR(parse_unique_id(id, addr, port));
  const int fd = take_listener(*port);
  const Status s = store->set(key, std::string(id, kUniqueIdBytes));
  if (!s.ok()) {
    close(fd);
    return s;
  }
  *listen_fd = fd;
  return Status::Ok();
}

}  // namespace zfc
